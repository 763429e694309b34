#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The tree cross-builds: every program the build runs (policy/gen-policy, units/render-template)
# is built for the build machine (native: true), everything installed for the host.
#
# A real cross toolchain needs the host architecture's libsystemd, libseccomp, inih, json-c
# and libcrypto too (dpkg --add-architecture on the machine that runs this), which a CI host
# shared with other jobs should not get. So the "host" here is a machine the build machine
# cannot execute: its compiler is the build compiler under another name, linking every
# executable against a dynamic loader that does not exist. A build-time tool built for the
# host then fails to run during `meson compile`, exactly as an aarch64 binary would on an
# x86_64 builder, and this check fails. It also checks that the cross file took effect
# (installed programs carry the foreign loader, the build tools do not).
#
#   check-cross.sh SOURCE_ROOT [WORK_DIR]
set -euo pipefail
src=$(realpath "${1:?usage: check-cross.sh SOURCE_ROOT [WORK_DIR]}")
work=${2:-}
if [ -z "$work" ]; then
        work=$(mktemp -d /var/tmp/cloister-cross.XXXXXX)
        trap 'rm -rf "$work"' EXIT
fi
mkdir -p "$work"
work=$(realpath "$work")
loader=/nonexistent/cloister-cross/ld-host.so.1
n=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
not_ok() { n=$((n + 1)); echo "not ok $n - $*"; failed=1; }
failed=0

build_cc=$(command -v cc)
cat >"$work/host-cc" <<WRAP
#!/bin/sh
# the "host" compiler: the build compiler, with executables the build machine cannot run
for a in "\$@"; do [ "\$a" = -c ] && exec $build_cc "\$@"; done
exec $build_cc "\$@" -Wl,--dynamic-linker=$loader
WRAP
chmod +x "$work/host-cc"
cat >"$work/cross.ini" <<INI
[binaries]
c = '$work/host-cc'
ar = 'ar'
strip = 'strip'
pkgconfig = '$(command -v pkg-config)'

[properties]
needs_exe_wrapper = true

[host_machine]
system = 'linux'
cpu_family = '$(uname -m)'
cpu = '$(uname -m)'
endian = 'little'
INI

echo "TAP version 13"
echo "1..4"
# The wrapper itself must produce what a foreign binary is on this machine: a program that
# cannot be executed. Otherwise the check below proves nothing.
printf 'int main(void){return 0;}\n' >"$work/probe.c"
"$work/host-cc" -o "$work/probe" "$work/probe.c"
if "$work/probe" 2>/dev/null; then
        not_ok "a program the host compiler links does not run on the build machine"
else
        ok "a program the host compiler links does not run on the build machine"
fi

rm -rf "$work/build"
if meson setup "$work/build" "$src" --cross-file "$work/cross.ini" --prefix=/usr \
        -Dtests=false -Dman=disabled -Dwerror=true >"$work/setup.log" 2>&1 &&
   meson compile -C "$work/build" >"$work/compile.log" 2>&1; then
        ok "configure and build with a cross file (-Dtests=false)"
else
        not_ok "configure and build with a cross file (-Dtests=false)"
        tail -n 30 "$work/setup.log" "$work/compile.log" 2>/dev/null | sed 's/^/# /'
        # the remaining checks need the build
        for t in "build-time tools are built for the build machine" "installed programs are built for the host"; do
                not_ok "$t (no build)"
        done
        exit 1
fi

interp() { readelf -l "$1" 2>/dev/null | sed -n 's/.*Requesting program interpreter: \(.*\)]/\1/p'; }
# Which built programs the build runs: those named in a custom command of build.ninja.
split=$(python3 - "$work/build" <<'PY'
import json, re, subprocess, sys
build = sys.argv[1]
targets = json.loads(subprocess.check_output(["meson", "introspect", build, "--targets"]))
exes = [f for t in targets if t["type"] == "executable" for f in t["filename"]]
commands = re.findall(r"^ COMMAND = (.*)$", open(build + "/build.ninja").read(), re.M)
for f in exes:
    rel = f[len(build) + 1:]
    used = any(re.search(r"(^|[\s'\"])(\./)?" + re.escape(rel) + r"($|[\s'\"])", c) or f in c
               for c in commands)
    print("RUN" if used else "HOST", f)
PY
)
tools=$(sed -n 's/^RUN //p' <<<"$split")
hosts=$(sed -n 's/^HOST //p' <<<"$split")
msg=""
for t in $tools; do
        [ "$(interp "$t")" = "$loader" ] && msg+=" $t"
done
if [ -n "$tools" ] && [ -z "$msg" ]; then
        ok "build-time tools are built for the build machine ($(for t in $tools; do basename "$t"; done | tr '\n' ' '))"
else
        not_ok "build-time tools are built for the build machine${msg:+ (for the host:$msg)}"
        [ -n "$tools" ] || echo "# no build-time tool found in build.ninja"
fi
msg=""
for h in $hosts; do
        [ "$(interp "$h")" = "$loader" ] || msg+=" $h"
done
if [ -n "$hosts" ] && [ -z "$msg" ]; then
        ok "installed programs are built for the host ($(echo "$hosts" | wc -w) programs)"
else
        not_ok "installed programs are built for the host${msg:+ (not:$msg)}"
fi
exit $failed

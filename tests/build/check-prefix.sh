#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# A non-default prefix is honoured: configured with --prefix=P and installed with DESTDIR,
# every installed file is below P, except systemd's own directories (units, generators,
# tmpfiles.d: taken from systemd.pc, where systemd reads them) and $sysconfdir; and every
# path written into the installed units (ExecStart=, the shim) points below P.
#
#   check-prefix.sh SOURCE_ROOT [PREFIX…]      (default: /opt/cloister /usr/local)
set -euo pipefail
src=$(realpath "${1:?usage: check-prefix.sh SOURCE_ROOT [PREFIX…]}")
shift
prefixes=("$@")
[ ${#prefixes[@]} -gt 0 ] || prefixes=(/opt/cloister /usr/local)
work=$(mktemp -d /var/tmp/cloister-prefix.XXXXXX)
trap 'rm -rf "$work"' EXIT
sd_dirs=$(pkg-config --variable=systemdsystemunitdir systemd)$'\n'$(pkg-config --variable=systemdsystemgeneratordir systemd)$'\n'$(pkg-config --variable=tmpfilesdir systemd)
n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
not_ok() { n=$((n + 1)); echo "not ok $n - $*"; failed=1; }
echo "TAP version 13"
echo "1..$(( ${#prefixes[@]} * 3 ))"
for p in "${prefixes[@]}"; do
        b=$work/build${p//\//-} d=$work/dest${p//\//-}
        meson setup "$b" "$src" --prefix="$p" -Dtests=false -Dman=disabled >"$b.log" 2>&1 &&
                meson compile -C "$b" >>"$b.log" 2>&1 && DESTDIR="$d" meson install -C "$b" >>"$b.log" 2>&1 ||
                { not_ok "$p: build and install"; tail -20 "$b.log" | sed 's/^/# /'; continue; }
        sysconf=$(meson introspect "$b" --buildoptions | python3 -c 'import json,sys; print([o["value"] for o in json.load(sys.stdin) if o["name"]=="sysconfdir"][0])')
        case $sysconf in /*) ;; *) sysconf=$p/$sysconf ;; esac
        stray=$(cd "$d" && find . \( -type f -o -type l -o -type d -empty \) | sed 's|^\.||' | while read -r f; do
                case $f in "$p"/*|"$sysconf"/*) continue ;; esac
                grep -qxF "$(dirname "$f")" <<<"$sd_dirs" || echo "$f"
        done)
        [ -z "$stray" ] && ok "$p: every installed file below $p, $sysconf or systemd's directories" ||
                { not_ok "$p: files outside the prefix"; sed 's/^/# /' <<<"$stray"; }
        units=$(find "$d" -name '*.service' -o -name '*.socket' -o -name 'cloister.conf' -path '*tmpfiles*')
        # cloister's own programs and files; the system's (ExecReload=/bin/kill) are not below any prefix
        bad=$(grep -hoE '(ExecStart|ExecStartPre|ExecReload)=[^ ]*cloister[^ ]*|/(usr|opt)/[^ ]*cloister[^ ]*' $units | sed 's/^[A-Za-z]*=//; s/^[-@+!:]*//' |
                while read -r path; do case $path in "$p"/*) ;; *) echo "$path" ;; esac; done | sort -u)
        [ -n "$units" ] && [ -z "$bad" ] && ok "$p: paths in the installed units point below $p" ||
                { not_ok "$p: paths in the installed units"; sed 's/^/# /' <<<"${bad:-no units}"; }
        # cloisterctl --root reads the configuration below DIR in this build's directories
        mkdir -p "$d$sysconf/cloister/roles"
        printf '[Role]\nExec=/bin/true\n' >"$d$sysconf/cloister/roles/prefixcheck.role"
        if "$b/helpers/ctl/cloisterctl" --root="$d" list 2>&1 | grep -q prefixcheck; then
                ok "$p: cloisterctl --root finds a role in DIR$sysconf/cloister"
        else
                not_ok "$p: cloisterctl --root finds a role in DIR$sysconf/cloister"
        fi
done
exit $failed

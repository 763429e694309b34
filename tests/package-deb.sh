#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# What an admin gets with apt install: packaging/debian built into a .deb from a copy of the
# tree (dpkg-buildpackage -us -uc -b, its tests included: DEB_BUILD_OPTIONS is honoured),
# checked with lintian (any error or warning fails), then installed with dpkg into a
# throwaway systemd (systemd-nspawn over this machine's /usr, as the nspawn tier boots, but
# with /usr writable through an overlay and a copy of the dpkg database), where the README's
# demo runs from the installed package and an upgrade (0.1-1 to 0.1-2, then 0.1-2 again)
# and the removal must leave no running agent@ or agent-run@ unit behind
# (tests/package-deb-suite.sh). Nothing on the machine changes: the overlay's upper layer,
# the dpkg database copy and /run are thrown away.
#
#   package-deb.sh SOURCE_ROOT [WORK_DIR]      (as root; Debian: debhelper, lintian)
set -euo pipefail
src=$(realpath "${1:?usage: package-deb.sh SOURCE_ROOT [WORK_DIR]}")
work=${2:-}
[ "$(id -u)" = 0 ] || { echo "package-deb.sh: run it as root (systemd-nspawn, dpkg in the container)" >&2; exit 2; }
if [ -z "$work" ]; then
        work=$(mktemp -d /var/tmp/cloister-deb.XXXXXX)
        trap 'rm -rf "$work"' EXIT
fi
mkdir -p "$work"
work=$(realpath "$work")
n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
not_ok() { n=$((n + 1)); echo "not ok $n - $*"; failed=1; }
diag() { sed 's/^/# /'; }
echo "TAP version 13"

# --- build: a copy of the tree (what git tracks, and new files not ignored), debian/ from
#     packaging/debian, as a distribution lays it out --------------------------------------
version=$(sed -n "s/^ *version : '\(.*\)',$/\1/p" "$src/meson.build" | head -1)
tree=$work/build/cloister-$version
rm -rf "$work/build" && mkdir -p "$tree"
if [ -e "$src/.git" ]; then
        (cd "$src" && git ls-files -z --cached --others --exclude-standard |
                tar --null --ignore-failed-read -T - -cf - 2>/dev/null) | tar -C "$tree" -xf -
else
        cp -a "$src/." "$tree/"
fi
cp -a "$tree/packaging/debian" "$tree/debian"
export DEB_BUILD_OPTIONS=${DEB_BUILD_OPTIONS:-parallel=$(nproc)}
if (cd "$tree" && dpkg-buildpackage -us -uc -b) >"$work/build.log" 2>&1; then
        debs=("$work"/build/cloister_*_*.deb)
        ok "dpkg-buildpackage -us -uc -b (DEB_BUILD_OPTIONS=$DEB_BUILD_OPTIONS): $(cd "$work/build" && echo *.deb)"
else
        not_ok "dpkg-buildpackage -us -uc -b (DEB_BUILD_OPTIONS=$DEB_BUILD_OPTIONS)"
        tail -40 "$work/build.log" | diag
        echo "1..$n"
        exit 1
fi

# --- lintian: no error and no warning (overrides only with their reason, in packaging/debian)
changes=$(ls "$work"/build/cloister_*.changes)
lintian --fail-on error,warning "$changes" >"$work/lintian.log" 2>&1 && rc=0 || rc=$?
tags=$(grep -E '^[EW]: ' "$work/lintian.log" || true)
if [ "$rc" = 0 ] && [ -z "$tags" ]; then
        ok "lintian $(basename "$changes"): no error, no warning ($(grep -cE '^[IPX]: ' "$work/lintian.log" || true) info/pedantic tags)"
else
        not_ok "lintian $(basename "$changes") (exit $rc): errors or warnings"
        diag <"$work/lintian.log"
fi

# --- 0.1-2: the same files under the next revision, for the upgrade path --------------------
deb1=$(ls "$work"/build/cloister_*-1_*.deb)
mkdir -p "$work/payload/debs"
cp "$deb1" "$work/payload/debs/"
deb2=$work/payload/debs/$(basename "$deb1" | sed 's/-1_/-2_/')
rm -rf "$work/repack" && dpkg-deb -R "$deb1" "$work/repack"
sed -i 's/^\(Version: .*\)-1$/\1-2/' "$work/repack/DEBIAN/control"
if dpkg-deb --root-owner-group -b "$work/repack" "$deb2" >"$work/repack.log" 2>&1 &&
        [ "$(dpkg-deb -f "$deb2" Version)" = "$version-2" ]; then
        ok "$(basename "$deb2"): the same package as revision 2"
else
        not_ok "$(basename "$deb2"): the same package as revision 2"
        diag <"$work/repack.log"
fi

# --- install, demo, upgrade, removal in a throwaway systemd ----------------------------------
command -v systemd-nspawn >/dev/null || { not_ok "systemd-nspawn is installed (Debian: systemd-container)"; echo "1..$n"; exit 1; }
mkdir -p "$work/payload/extra" "$work/out" "$work/usr-upper"
cp "$src/tests/integration/tap.sh" "$src/tests/package-deb-suite.sh" "$work/payload/"
cp "$src"/docs/examples/* "$src/tests/broker/fake-openai.py" "$src/tests/broker/llm-upstream.sh" "$work/payload/extra/"
chmod -R a+rX "$work/payload"
# The machine's dpkg database, so that cloister's dependencies are there; less its
# statoverrides: they name groups of the machine's /etc (ssl-cert…), which the container's
# fresh /etc does not have, and dpkg refuses to run with an override for an unknown group.
rm -rf "$work/dpkg" && cp -a /var/lib/dpkg "$work/dpkg" && : >"$work/dpkg/statoverride"
. "$src/tests/suite-unit.sh"
suite_unit "$work/cloister-test.service" "cloister package suite" "PAYLOAD=/payload" \
        "/bin/bash -c 'exec /bin/bash /payload/package-deb-suite.sh >/out/tap 2>/out/stderr'" \
        "Requires=dbus.socket" ""
set +e
timeout -k 10 "${CLOISTER_NSPAWN_TIMEOUT:-600}" unshare -m --propagation private bash -c '
        mount -t tmpfs tmpfs /run &&
        exec script -qec "systemd-nspawn -D / --volatile=yes --register=no --keep-unit --private-network \
                --overlay=/usr:$1/usr-upper:/usr --bind=$1/dpkg:/var/lib/dpkg \
                --bind=$1/out:/out --bind-ro=$1/payload:/payload \
                --bind-ro=$1/cloister-test.service:/etc/systemd/system/cloister-test.service \
                -b systemd.unit=cloister-test.service systemd.firstboot=off" /dev/null
' _ "$work" >"$work/console.log" 2>&1 </dev/null
rc=$?
set -e
if grep -qE '^1\.\.[0-9]+' "$work/out/tap" 2>/dev/null; then
        # the container's points, numbered after ours; its comments as they are
        while IFS= read -r line; do
                case $line in
                "ok "*) ok "${line#ok [0-9]* - }" ;;
                "not ok "*) not_ok "${line#not ok [0-9]* - }" ;;
                "#"*) echo "$line" ;;
                esac
        done <"$work/out/tap"
else
        not_ok "the container produced no complete TAP (nspawn exit $rc)"
        tail -40 "$work/console.log" | diag
        tail -40 "$work/out/stderr" 2>/dev/null | diag
fi
echo "1..$n"
exit $failed

#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# `meson test` as a distribution's package build runs it (sbuild, mock): a normal user, no
# network, no nspawn or qemu, a clean environment. From a copy of the tree (readable by that
# user wherever the checkout lives), with the default options: the integration and VM tiers
# are then not registered (-Dintegration-tests=auto, and this is not root). Every test that
# is registered must pass; its SKIPs are held against tests/skips.list by run-all.sh.
#
#   package-build.sh SOURCE_ROOT BUILD_DIR      (as root: it drops to nobody itself)
set -euo pipefail
src=$(realpath "${1:?usage: package-build.sh SOURCE_ROOT BUILD_DIR}")
build=${2:?usage: package-build.sh SOURCE_ROOT BUILD_DIR}
[ "$(id -u)" = 0 ] || { echo "package-build.sh: run it as root (it becomes nobody itself)" >&2; exit 2; }

top=$(mktemp -d /var/tmp/cloister-package-build.XXXXXX)
trap 'rm -rf "$top"' EXIT
mkdir -p "$top/src"
if [ -e "$src/.git" ]; then   # a checkout: what git tracks, and new files not ignored
        (cd "$src" && git ls-files -z --cached --others --exclude-standard |
                tar --null --ignore-failed-read -T - -cf - 2>/dev/null) | tar -C "$top/src" -xf -
else                          # a release tarball
        cp -a "$src/." "$top/src/"
fi
mkdir -p "$top/home"
chown -R nobody:nogroup "$top"
rm -rf "$build"
mkdir -p "$build" && chown nobody:nogroup "$build"

# A network namespace of its own with only lo, up (as sbuild's unshare backend gives a build).
as_builder() {
        unshare --net -- sh -c 'ip link set lo up && exec "$@"' sh \
                setpriv --reuid=nobody --regid=nogroup --clear-groups \
                env -i HOME="$top/home" PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
                LANG=C.UTF-8 "$@"
}
as_builder meson setup "$build" "$top/src" --prefix=/usr -Dwerror=true >/dev/null
as_builder meson compile -C "$build" >/dev/null
echo "# package build: meson test as $(as_builder id -un), no network, integration tiers: $(
        as_builder meson introspect "$build" --tests | python3 -c 'import json,sys; t=json.load(sys.stdin); print(sum(1 for x in t if x["name"].startswith(("nspawn-","vm-"))), "registered")')"
as_builder meson test -C "$build" --print-errorlogs

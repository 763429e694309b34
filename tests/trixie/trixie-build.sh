#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Builds cloister inside the cached Debian 13 root (trixie-root.sh) as a packager there
# would: gcc 14, libsystemd 257, inih 58, json-c 0.18, -Dwerror=true. The root is not
# changed (a volatile overlay, systemd-nspawn without boot, no network); the source is bound
# read-only and BUILD (on the host) receives the build directory.
#
#   trixie-build.sh SOURCE_ROOT BUILD [MESON_TEST_ARGS... | --install]
#
# --install: `meson install` into BUILD/dest (what nspawn-trixie.sh boots with).
# With MESON_TEST_ARGS, `meson test -C BUILD --print-errorlogs MESON_TEST_ARGS` runs in the
# root after the build (e.g. --suite unit --suite generator). Exit status: that of the build
# or the tests; 2 when the root is not prepared.
set -euo pipefail

src=$(cd "$1" && pwd) build=$2
shift 2
here=$(cd "$(dirname "$0")" && pwd)
[ "$(id -u)" = 0 ] || { echo "trixie-build: needs root (systemd-nspawn)" >&2; exit 2; }
root=$("$here/trixie-root.sh" path) || exit 2
mkdir -p "$build"
build=$(cd "$build" && pwd)

# The build directory keeps its absolute path inside the root, so that meson's files (and a
# test log) name the same paths on both sides.
inner="set -e
cd /src
[ -f '$build/build.ninja' ] || meson setup '$build' --prefix=/usr -Dwerror=true -Dintegration-tests=disabled
meson compile -C '$build'"
if [ "${1:-}" = --install ]; then
        # DESTDIR inside BUILD (bound): what nspawn-trixie.sh boots with
        inner="$inner
rm -rf '$build/dest'
DESTDIR='$build/dest' meson install -C '$build' --no-rebuild --quiet >/dev/null"
elif [ $# -gt 0 ]; then
        inner="$inner
meson test -C '$build' --print-errorlogs $(printf '%q ' "$@")"
fi

# SYSTEMD_SECCOMP=0: no seccomp filter of nspawn's own on the build and its tests, as on a
# packager's build machine (shim-selfcheck shows the shim naming a missing filter: under
# nspawn's, there always is one).
exec unshare -m --propagation private bash -c '
        mount -t tmpfs tmpfs /run &&
        SYSTEMD_SECCOMP=0 exec systemd-nspawn -q -D "$1" --volatile=overlay --register=no --keep-unit --private-network \
                --pipe --bind-ro="$2:/src" --bind="$3:$3" --setenv=LANG=C.UTF-8 \
                --setenv=CLOISTER_TIER=trixie-build \
                /bin/bash -c "$4"
' _ "$root" "$src" "$build" "$inner"

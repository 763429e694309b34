#!/bin/bash
# The whole test suite, as CI runs it (as root, on Debian 12): installs what is missing,
# builds with -Werror, runs every tier (unit, generator, nspawn real-systemd), then the unit
# and generator tiers again under ASan+UBSan.
set -euo pipefail
cd "$(dirname "$0")/.."
bash .ci/install-deps

build=${BUILD_DIR:-build-ci}
rm -rf "$build" "$build-asan"
meson setup "$build" --prefix=/usr -Dwerror=true
meson compile -C "$build"
meson test -C "$build" --print-errorlogs

meson setup "$build-asan" --prefix=/usr -Dwerror=true -Db_sanitize=address,undefined -Db_lundef=false \
        -Dintegration-tests=false
meson compile -C "$build-asan"
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
        meson test -C "$build-asan" --print-errorlogs --suite unit --suite generator

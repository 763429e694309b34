#!/bin/bash
# The whole test suite, as CI runs it (as root, on Debian 12): installs what is missing,
# builds with -Werror, runs every tier (unit, generator, nspawn real-systemd), then the unit
# and generator tiers again under ASan+UBSan, then a bounded run of each libFuzzer target.
set -euo pipefail
cd "$(dirname "$0")/.."
bash .ci/install-deps

build=${BUILD_DIR:-build-ci}
rm -rf "$build" "$build-asan" "$build-fuzz"
meson setup "$build" --prefix=/usr -Dwerror=true
meson compile -C "$build"
meson test -C "$build" --print-errorlogs

meson setup "$build-asan" --prefix=/usr -Dwerror=true -Db_sanitize=address,undefined -Db_lundef=false \
        -Dintegration-tests=false
meson compile -C "$build-asan"
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
        meson test -C "$build-asan" --print-errorlogs --suite unit --suite generator

# Tier 5: every libFuzzer target over its seed corpus plus a bounded number of new inputs
# (a smoke run; longer runs by hand: tests/fuzz/meson.build).
CC=clang meson setup "$build-fuzz" -Dfuzz=true -Db_lundef=false -Dintegration-tests=false -Dman=disabled >/dev/null
meson compile -C "$build-fuzz" tests/fuzz/fuzz-role tests/fuzz/fuzz-conf tests/fuzz/fuzz-broker-request
for fuzzer in role conf broker-request; do
        work=$(mktemp -d)
        cp tests/fuzz/corpus/"$fuzzer"/* "$work/"
        "$build-fuzz/tests/fuzz/fuzz-$fuzzer" -runs=30000 -max_len=4096 "$work" 2>&1 | tail -n 1
        rm -rf "$work"
done

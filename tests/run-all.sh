#!/bin/bash
# The whole test suite, as CI runs it (as root, on Debian 12): installs what is missing,
# builds with -Werror, runs every tier (unit, generator, nspawn real-systemd, and the qemu VM
# tier with real cgroup v2 limits: tests/vm/README.md), then the unit and generator tiers
# again under valgrind and under ASan+UBSan (and the broker's nspawn suite with the ASan
# build), then a bounded run of each libFuzzer target (docs/security.md).
set -euo pipefail
cd "$(dirname "$0")/.."
bash .ci/install-deps

build=${BUILD_DIR:-build-ci}
rm -rf "$build" "$build-asan" "$build-fuzz"
meson setup "$build" --prefix=/usr -Dwerror=true
meson compile -C "$build"
meson test -C "$build" --print-errorlogs

# Leaks and memory errors under valgrind: the C test programs (unit tests, the fuzz corpora
# replayed) and the generator as the generator tests run it (tests/meson.build).
meson test -C "$build" --print-errorlogs --setup=valgrind --suite unit --suite fuzz-replay
meson test -C "$build" --print-errorlogs --setup=valgrindgenerator --suite generator

meson setup "$build-asan" --prefix=/usr -Dwerror=true -Db_sanitize=address,undefined -Db_lundef=false
meson compile -C "$build-asan"
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
        meson test -C "$build-asan" --print-errorlogs --suite unit --suite generator --suite fuzz-replay
# The broker (and shim, generator) of that build through the nspawn broker suite: sanitizer
# reports go to the journal, and the suite fails if there is one. LeakSanitizer is off there:
# it needs ptrace, which the broker's SystemCallFilter= refuses (leaks: valgrind above).
CLOISTER_NSPAWN_SANITIZER_ENV="ASAN_OPTIONS=detect_leaks=0:abort_on_error=1:quarantine_size_mb=16 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1" \
        meson test -C "$build-asan" --print-errorlogs nspawn-broker

# Tier 5: every libFuzzer target (the table in tests/fuzz/meson.build) over its seed corpus
# plus a bounded number of new inputs; longer runs: bench/fuzz.sh.
CC=clang meson setup "$build-fuzz" -Dfuzz=true -Db_lundef=false -Dintegration-tests=disabled -Dman=disabled >/dev/null
meson test -C "$build-fuzz" --print-errorlogs --suite fuzz

#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The whole test suite, as CI runs it (as root, on Debian 12; docs/testing.md):
#  1. installs what is missing, and prepares what the tests fetch (the VM tier's kernel, the
#     pinned MCP SDK packages): explicit steps, so that `meson test` never reaches the network;
#  2. builds with -Werror and runs every tier: unit, generator, ctl, docs, the nspawn
#     real-systemd tier and, beside it in parallel, the qemu VM tier (real cgroup v2 limits);
#  3. the unit and generator tiers again under valgrind and under ASan+UBSan (and the broker's
#     nspawn suite with the ASan build), then a bounded run of each libFuzzer target;
#  4. `meson test` as a package build runs it: a normal user, no network (package-build.sh);
#     then the release checks: cross build, prefixes, the `meson dist` tarball, the .deb;
#  5. the proof checks: every SKIP listed with its reason and allowed by tests/skips.list,
#     every claim of docs/security.md carried by a test that passed in this run, and the
#     mutation tier (every security-relevant piece disabled in turn is caught by a test).
# Prints how long each step took; the whole run must stay well under CI's 90 minutes.
set -euo pipefail
cd "$(dirname "$0")/.."
t_all=$SECONDS
step() { echo "### run-all: $* ($(( SECONDS - t_all )) s)"; }

step "dependencies"
bash .ci/install-deps
step "prepare: the VM tier's kernel and initramfs, the pinned MCP SDK"
bash tests/vm/vm-image.sh prepare
bash tests/mcp-sdk/nspawn-mcp-sdk.sh prepare
step "prepare: the Debian 13 root and its VM tier's kernel (tests/trixie/)"
bash tests/trixie/trixie-root.sh prepare
bash tests/trixie/vm-trixie.sh prepare
# every nspawn suite of tests/integration/meson.build, and the MCP SDK's
trixie_nspawn_suites="sandbox lifecycle broker gpu run ctl quickstart sidecar deps mcp-sdk battery"

build=${BUILD_DIR:-build-ci}
rm -rf "$build" "$build-asan" "$build-fuzz" "$build-package" "$build-trixie"
# On failure, what the failed tests printed (their TAP diagnostics), as the last thing shown.
on_exit() {
        local rc=$?
        [ "$rc" = 0 ] || python3 tests/show-failures.py "$build" "$build-asan" "$build-fuzz" "$build-trixie" || true
        return "$rc"
}
trap on_exit EXIT
step "build"
meson setup "$build" --prefix=/usr -Dwerror=true -Dintegration-tests=enabled
meson compile -C "$build"

# The VM tier (qemu under TCG, minutes per suite) runs beside the rest: its own log base, so
# the two meson test runs do not write the same testlog.
step "tests (the VM tier in parallel)"
meson test -C "$build" --print-errorlogs --suite vm --logbase testlog-vm > "$build/vm-tier.log" 2>&1 &
vm_pid=$!
rc=0
meson test -C "$build" --print-errorlogs --no-suite vm --no-suite after-vm || rc=$?
wait "$vm_pid" || rc=$?
step "the VM tier's output"
cat "$build/vm-tier.log"
# nspawn-broker once came back with empty agent results when it ran beside the VM tier
# (3x its time alone): it runs once the VM tier is done, its diagnostics then say more.
step "tests after the VM tier"
meson test -C "$build" --print-errorlogs --suite after-vm --logbase testlog-after-vm || rc=$?
[ "$rc" = 0 ] || { echo "run-all: the tests failed"; exit 1; }

# Debian 13 (tests/trixie/, docs/testing.md): cloister built in the cached trixie root as a
# packager there would, its tests that need no booted systemd run there, then every nspawn
# suite with systemd 257 as PID 1 and the VM tier's suites in a trixie guest (kernel 6.12,
# pure cgroup v2). Each suite's TAP goes into a test log of $build-trixie, which the proof
# checks below read beside meson's.
step "Debian 13: build and test in the trixie root"
bash tests/trixie/trixie-build.sh . "$build-trixie" --no-suite integration
step "Debian 13: the nspawn tier (systemd 257 as PID 1)"
bash tests/trixie/nspawn-trixie.sh . "$build-trixie" $trixie_nspawn_suites > "$build/trixie-nspawn.tap" ||
        { grep -E '^(not ok|# suite|Bail out)' "$build/trixie-nspawn.tap"; echo "run-all: the Debian 13 nspawn tier failed"; exit 1; }
grep '^# suite .*: ' "$build/trixie-nspawn.tap"
step "Debian 13: the VM tier (systemd 257, kernel 6.12, cgroup v2)"
bash tests/trixie/vm-trixie.sh . "$build-trixie" limits sandbox battery > "$build/trixie-vm.tap" ||
        { grep -E '^(not ok|# suite|Bail out)' "$build/trixie-vm.tap"; echo "run-all: the Debian 13 VM tier failed"; exit 1; }
grep '^# suite .*: ' "$build/trixie-vm.tap"

# Leaks and memory errors under valgrind: the C test programs (unit tests, the fuzz corpora
# replayed) and the generator as the generator tests run it (tests/meson.build).
step "valgrind"
meson test -C "$build" --print-errorlogs --setup=valgrind --suite unit --suite fuzz-replay
meson test -C "$build" --print-errorlogs --setup=valgrindgenerator --suite generator

step "ASan+UBSan"
meson setup "$build-asan" --prefix=/usr -Dwerror=true -Db_sanitize=address,undefined -Db_lundef=false \
        -Dintegration-tests=enabled
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
step "fuzz"
CC=clang meson setup "$build-fuzz" -Dfuzz=true -Db_lundef=false -Dintegration-tests=disabled -Dman=disabled >/dev/null
meson test -C "$build-fuzz" --print-errorlogs --suite fuzz

step "package build (meson test as nobody, no network)"
bash tests/package-build.sh . "$build-package"

# What a distribution gets: the tree cross-builds, a non-default prefix is honoured, the
# `meson dist` tarball is this clean clone's bytes and builds and tests on its own, and the
# Debian package builds lintian-clean, installs, runs the demo, upgrades and is removed
# without leaving an agent running (docs/packaging.md). A SKIP here is a failure: each of
# them must run in CI.
step "release: cross build, prefixes, dist tarball, Debian package"
release_check() {
        local name=$1; shift
        bash "$@" | tee "$build/release-$name.tap"
        if grep -iq '# skip' "$build/release-$name.tap"; then echo "run-all: $1 skipped a check"; exit 1; fi
}
release_check check-cross tests/build/check-cross.sh .
release_check check-prefix tests/build/check-prefix.sh .
release_check dist-check tests/dist-check.sh "$build"
# nocheck: the package build's meson test is the package-build step above (docs/packaging.md).
DEB_BUILD_OPTIONS=nocheck release_check package-deb tests/package-deb.sh .

step "proof: SKIPs, docs/security.md, mutants"
python3 tests/check-skips.py tests/skips.list "$build" "$build-asan" "$build-fuzz" "$build-trixie=tests/skips-trixie.list" "$build-package=tests/skips-package.list"
python3 docs/check-security.py . --testlog "$build"/meson-logs/testlog*.json "$build-asan"/meson-logs/testlog*.json \
        "$build-trixie"/meson-logs/testlog*.json > "$build/security-md.tap" ||
        { grep -v '^ok' "$build/security-md.tap"; echo "run-all: docs/security.md names a test that did not pass in this run"; exit 1; }
echo "docs/security.md: $(grep -c '^ok' "$build/security-md.tap") claims, each carried by a test that passed in this run"
python3 tests/mutation/run-mutants.py .

step "done"
echo "run-all: every tier ran and passed in $(( (SECONDS - t_all) / 60 )) min $(( (SECONDS - t_all) % 60 )) s"

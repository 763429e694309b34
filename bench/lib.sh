# SPDX-License-Identifier: LGPL-2.1-or-later
# Sourced by bench/start.sh and bench/start-latency.sh: the host-side preparation they share.
#
#   bench_prepare NAME BUILD_DIR
#
# Checks root and a --prefix=/usr build, builds it (unless CLOISTER_NSPAWN_DEST names an
# installed build for another root, as tests/trixie/nspawn-trixie.sh makes one), makes $tmp (removed on exit) with
# $tmp/payload holding a static bench/stamp.c, ITERATIONS, WARMUP and GAP, and
# bench/suite-lib.sh (what the two suites share). Sets build,
# src and tmp; die() prefixes its message with NAME.

bench_prepare() {
        bench_name=$1
        build=$(realpath "${2:?usage: $0 BUILD_DIR (configured with --prefix=/usr)}")
        src=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
        [ "$(id -u)" = 0 ] || die "needs root (systemd-nspawn)"
        grep -q '^#define CLOISTER_SHIM_PATH "/usr/' "$build/config.h" 2>/dev/null ||
                die "$build is not configured with --prefix=/usr (meson setup $build --prefix=/usr)"
        # another root (CLOISTER_NSPAWN_ROOT, CLOISTER_NSPAWN_DEST: tests/trixie/) comes with its
        # build made and installed there, by that root's tools
        [ -n "${CLOISTER_NSPAWN_DEST:-}" ] || ninja -C "$build" >/dev/null

        tmp=$(mktemp -d "/tmp/cloister-$bench_name.XXXXXX")
        trap 'rm -rf "$tmp"' EXIT
        mkdir -p "$tmp/payload"
        ${CC:-cc} -O2 -static -o "$tmp/payload/stamp" "$src/bench/stamp.c" ||
                die "cannot build a static bench/stamp.c (Debian: apt-get install libc6-dev)"
        cp "$src/bench/suite-lib.sh" "$tmp/payload/"
        echo "$ITERATIONS" > "$tmp/payload/iterations"
        echo "$WARMUP" > "$tmp/payload/warmup"
        echo "$GAP" > "$tmp/payload/gap"
}

die() { echo "$bench_name.sh: $*" >&2; exit 1; }

# bench_run_suite TITLE SUITE: the header, then SUITE (bench/SUITE) run in a throwaway systemd
# (tests/integration/nspawn-run.sh) with $tmp/payload; its TAP lands in $tmp/tap (and BENCH_TAP).
bench_run_suite() {
        echo "# $1"
        echo "# build:   $build (source ${BENCH_REV:-$(git -C "$src" describe --always --dirty 2>/dev/null || echo '?')})"
        echo "# machine: $(nproc) CPU(s), $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1), kernel $(uname -r)"

        CLOISTER_NSPAWN_PAYLOAD=$tmp/payload CLOISTER_NSPAWN_TIMEOUT=${CLOISTER_NSPAWN_TIMEOUT:-1500} \
                "$src/tests/integration/nspawn-run.sh" "$build" "$src" "$src/bench/$2" > "$tmp/tap" || true
        if [ -n "${BENCH_TAP:-}" ]; then cp "$tmp/tap" "$BENCH_TAP"; fi
}

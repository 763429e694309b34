#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# cloister-broker's cost as a proxy: req/s, added latency over talking to the upstream
# directly, SSE per-event delay, CPU per request and RSS, beside systemd-socket-proxyd and
# nginx in front of the same upstream, interleaved in one run.
#
#   bench/broker.sh BUILD_DIR
#
# BUILD_DIR must be configured with --prefix=/usr (it is installed over the container's
# /usr), e.g.:  meson setup /tmp/build-bench --prefix=/usr && ninja -C /tmp/build-bench
#
# The broker answers only peers inside an agent@ROLE unit, so everything runs in a throwaway
# systemd (tests/integration/nspawn-run.sh: systemd-nspawn, private network, volatile root;
# nothing on the host is started or changed), and the load generator is the agent of a
# daemon-only role. bench/broker-suite.sh is the suite run there; see docs/benchmarks.md.
#
# Needs root, systemd-nspawn, a C compiler, python3, curl. nginx: /usr/sbin/nginx if
# installed, else Debian's "nginx" package is fetched with "apt-get download" and unpacked
# into the payload only (no service is installed or started on the host).
#
# Environment (defaults in brackets):
#   ROUNDS [2]               rounds of the matrix (each cell: every target once, interleaved)
#   DURATION [2] WARMUP [0.5] seconds measured / not measured per run
#   CONNS ["1 8 64"]         concurrent clients
#   BODIES ["200 102400"]    request body sizes in bytes
#   TARGETS [all]            subset of: direct-unix direct-tcp proxyd nginx broker
#                            broker-relay broker-nosb broker-base
#   SSE_GAP [5000]           µs between events in the SSE pass-through pass
#   LONG [120]               seconds of the long run through the broker (RSS)
#   BASE_BROKER=PATH         another build's cloister-broker (say, of the commit before a change):
#                            target broker-base runs it like broker-nosb, beside it in one run
#   BENCH_TAP=FILE           also keep the suite's whole TAP output (raw results) in FILE
#   BENCH_REV=…              what to call the source in the header (default: git describe)
set -euo pipefail

build=$(realpath "${1:?usage: $0 BUILD_DIR (configured with --prefix=/usr)}")
src=$(cd "$(dirname "$0")/.." && pwd)

die() { echo "broker.sh: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "needs root (systemd-nspawn)"
grep -q '^#define CLOISTER_SHIM_PATH "/usr/' "$build/config.h" 2>/dev/null ||
        die "$build is not configured with --prefix=/usr (meson setup $build --prefix=/usr)"
command -v curl >/dev/null || die "curl missing (Debian: apt-get install curl)"
[ -x /usr/bin/python3 ] || die "/usr/bin/python3 missing (Debian: apt-get install python3)"
ninja -C "$build" >/dev/null

tmp=$(mktemp -d /tmp/cloister-broker-bench.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
P=$tmp/payload
mkdir "$P"

if [ ! -x /usr/sbin/nginx ]; then
        # Only the binary, unpacked into the payload: installing the package would start a
        # host-wide nginx on port 80 on a systemd host.
        fetch() { (cd "$tmp" && apt-get download -q nginx >/dev/null 2>&1); }
        fetch || { apt-get update -q >/dev/null 2>&1 && fetch; } || die "no nginx (apt-get download nginx failed)"
        dpkg-deb -x "$tmp"/nginx_*.deb "$tmp/nginx"
        cp "$tmp/nginx/usr/sbin/nginx" "$P/nginx-bin"
fi

for f in broker-upstream broker-load; do
        ${CC:-cc} -O2 -Wall -o "$P/$f" "$src/bench/$f.c" || die "cannot build bench/$f.c"
done
cp "$src/bench/broker-agent.sh" "$src/bench/broker-sample.py" "$src/bench/broker-report.py" \
   "$src/tests/broker/fake-openai.py" "$src/tests/broker/llm-upstream.sh" "$P/"
chmod 0755 "$P"/*
echo "${ROUNDS:-2}" > "$P/rounds"
echo "${DURATION:-2}" > "$P/duration"
echo "${WARMUP:-0.5}" > "$P/warmup"
echo "${LONG:-120}" > "$P/long"
echo "${SSE_GAP:-5000}" > "$P/sse-gap"
[ -n "${CONNS:-}" ] && echo "$CONNS" > "$P/conns"
[ -n "${BODIES:-}" ] && echo "$BODIES" > "$P/bodies"
[ -n "${TARGETS:-}" ] && echo "$TARGETS" > "$P/targets"
libexec=$(sed -n 's/^#define CLOISTER_SHIM_PATH "\(.*\)\/cloister-shim"$/\1/p' "$build/config.h")
[ -n "$libexec" ] && echo "$libexec/cloister-broker" > "$P/broker-bin"
if [ -n "${BASE_BROKER:-}" ]; then
        [ -x "$BASE_BROKER" ] || die "BASE_BROKER=$BASE_BROKER is not an executable"
        cp "$BASE_BROKER" "$P/broker-base-bin"
fi

echo "# cloister broker benchmark"
echo "# build:   $build (source ${BENCH_REV:-$(git -C "$src" describe --always --dirty 2>/dev/null || echo '?')})"
echo "# machine: $(nproc) CPU(s), $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1), kernel $(uname -r)"

CLOISTER_NSPAWN_PAYLOAD=$P CLOISTER_NSPAWN_TIMEOUT=${CLOISTER_NSPAWN_TIMEOUT:-2400} \
        "$src/tests/integration/nspawn-run.sh" "$build" "$src" "$src/bench/broker-suite.sh" > "$tmp/tap" || true
[ -n "${BENCH_TAP:-}" ] && cp "$tmp/tap" "$BENCH_TAP"

# Everything but the raw lines; the tables are in the "# " lines.
grep -v -e '^# raw ' -e '^# rss ' "$tmp/tap" | sed 's/^# //'
grep -q '^not ok' "$tmp/tap" && die "some checks failed (see above)"
grep -q '^1\.\.[1-9]' "$tmp/tap" || die "the container produced no results"
exit 0

#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Start latency of an agent: from just before "systemctl start agent@ROLE" to the agent's
# first instruction, beside systemd-run --wait with the same sandbox properties, with a
# hand-typed hardening set, with none, and "systemd-run --wait /bin/true" as the floor.
#
#   bench/start-latency.sh BUILD_DIR
#
# BUILD_DIR must be configured with --prefix=/usr (it is installed over the container's
# /usr), e.g.:  meson setup /tmp/build-bench --prefix=/usr && ninja -C /tmp/build-bench
#
# It boots a throwaway systemd as PID 1 with tests/integration/nspawn-run.sh (systemd-nspawn
# over the host's /usr with the build overlaid; nothing on the host is started or changed)
# and runs bench/start-latency-suite.sh in it. Needs root, systemd-nspawn and a C compiler
# with a static libc (Debian: libc6-dev).
#
# Environment:
#   ITERATIONS=30      samples per variant (interleaved: one of each variant per round)
#   WARMUP=3           rounds before those, not recorded
#   GAP=1.2            seconds of quiet before each sample in the second ("spaced") pass;
#                      the first pass runs the samples back to back
#   BENCH_TAP=FILE     also keep the suite's whole TAP output (every sample) in FILE
#   BENCH_REV=…        what to call the source in the header (default: git describe)
set -euo pipefail

ITERATIONS=${ITERATIONS:-30}
WARMUP=${WARMUP:-3}
GAP=${GAP:-1.2}

. "$(dirname "$0")/lib.sh"
bench_prepare start-latency "${1:-}"

bench_run_suite "cloister start latency" start-latency-suite.sh

# Everything but the raw samples; the results table is in the "# " lines.
grep -v '^# sample ' "$tmp/tap" | sed 's/^# //'
grep -q '^not ok' "$tmp/tap" && die "some variants failed (see above)"
grep -q '^1\.\.[1-9]' "$tmp/tap" || die "the container produced no results"
exit 0

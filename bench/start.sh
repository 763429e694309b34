#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Start benchmark of cloisterctl run: start-to-first-instruction and start-to-exit of a
# static binary (bench/stamp.c) run with "cloisterctl run --wait", beside "systemd-run
# --wait" with the same properties and "podman run --rm --network=none --read-only
# --cap-drop=ALL --security-opt=no-new-privileges" of the same binary (Debian's podman, the
# image imported from a local tarball: no registry).
#
#   bench/start.sh BUILD_DIR      (BUILD_DIR configured with --prefix=/usr; root)
#
# Runs bench/start-suite.sh in a throwaway systemd (tests/integration/nspawn-run.sh). If
# podman cannot run inside that container, the podman variant (and the harness, for
# reference) is measured on the host instead, and the output says so.
#
# Environment: ITERATIONS=20 WARMUP=2 GAP=1.2 (as bench/start-latency.sh), BENCH_TAP=FILE.
set -euo pipefail

ITERATIONS=${ITERATIONS:-20}
WARMUP=${WARMUP:-2}
GAP=${GAP:-1.2}

. "$(dirname "$0")/lib.sh"
bench_prepare start "${1:-}"
mkdir -p "$tmp/image"
cp "$tmp/payload/stamp" "$tmp/image/stamp"
tar -C "$tmp/image" -cf "$tmp/payload/stamp.tar" stamp # the whole image: one static binary

bench_run_suite "cloisterctl run start benchmark" start-suite.sh
grep -v '^# sample ' "$tmp/tap" | sed 's/^# //'
grep -q '^1\.\.[1-9]' "$tmp/tap" || die "the container produced no results"

# --- podman on the host, when it could not run in the container ------------------------------
if grep -q 'podman does not run in this container\|podman or runc is not installed' "$tmp/tap"; then
        command -v podman >/dev/null && command -v runc >/dev/null || die "podman/runc not installed on the host either (Debian: apt-get install podman runc)"
        echo
        echo "podman on the HOST (not in the container above: see why there), same harness:"
        printf '[containers]\ndefault_ulimits = []\n' > "$tmp/containers.conf"
        export CONTAINERS_CONF=$tmp/containers.conf
        podman import "$tmp/payload/stamp.tar" localhost/cloister-stamp:bench >/dev/null
        echo "podman: $(podman --version), $(runc --version | head -1), cgroups $(podman info --format '{{.Host.CgroupsVersion}} {{.Host.CgroupManager}}'), storage $(podman info --format '{{.Store.GraphDriverName}}')"
        S=$tmp/payload/stamp
        sample() { # VARIANT COMMAND…
                local v=$1 t0 t1 tr; shift
                "$S" "$tmp/t0"; "$@" </dev/null >"$tmp/out" 2>>"$tmp/err" || return 1; "$S" "$tmp/tr"
                t0=$(<"$tmp/t0") t1=$(head -1 "$tmp/out") tr=$(<"$tmp/tr")
                echo "$PASS $v $(( (t1 - t0) / 1000 )) $(( (tr - t0) / 1000 ))" >> "$tmp/host-samples"
        }
        for PASS in back-to-back spaced; do
                for (( i = 1; i <= WARMUP + ITERATIONS; i++ )); do
                        for v in harness podman; do
                                [ "$PASS" = spaced ] && sleep "$GAP"
                                if [ "$v" = harness ]; then sample harness "$S" || die "harness failed"
                                else sample podman podman --runtime runc run --rm --network=none --read-only --cap-drop=ALL \
                                        --security-opt=no-new-privileges localhost/cloister-stamp:bench /stamp ||
                                        die "podman failed: $(tail -3 "$tmp/err")"
                                fi
                                (( i > WARMUP )) || sed -i '$d' "$tmp/host-samples"
                        done
                done
        done
        podman rmi localhost/cloister-stamp:bench >/dev/null 2>&1 || true
        . "$src/bench/suite-lib.sh" # stat(), as the suite computes its table
        SAMPLES=$tmp/host-samples
        for PASS in back-to-back spaced; do
                echo "RESULTS host $PASS (ms; $ITERATIONS samples each)"
                echo "| variant | first instruction: median | p90 | exit: median | p90 |"
                echo "|---|---:|---:|---:|---:|"
                for v in harness podman; do echo "| $v (host) | $(stat "$PASS" "$v" 3) | $(stat "$PASS" "$v" 4) |"; done
        done
fi
grep -q '^not ok' "$tmp/tap" && die "some variants failed (see above)"
exit 0

#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Runs inside a throwaway systemd (tests/integration/nspawn-run.sh, started by bench/start.sh)
# as root. Start-to-first-instruction and start-to-exit of one static binary (bench/stamp.c,
# which prints CLOCK_MONOTONIC in ns as its first action; the container, its sandboxes and
# podman's containers share that clock) started by:
#   harness               stamp directly: what the measurement itself adds
#   cloisterctl-run       cloisterctl run --wait --pipe -q --role bench -- stamp
#   systemd-run-same+shim systemd-run --wait --pipe -q with every [Service] property of
#                         agent@bench (template + drop-in) and its RequiresMountsFor=,
#                         running the role's own ExecStart= (cloister-shim … -- stamp)
#   systemd-run-same      the same, running stamp directly (no shim)
#   systemd-run-plain     systemd-run --wait --pipe -q stamp (no properties: the floor)
#   podman                podman --runtime runc run --rm --network=none --read-only
#                         --cap-drop=ALL --security-opt=no-new-privileges IMAGE /stamp, the
#                         image imported from a local tarball (no registry)
#   podman-no-cgroups     the same with crun and --cgroups=disabled (runc refuses that), only where podman cannot create
#                         its cgroup (systemd-nspawn on a cgroup v1 host: read-only
#                         controllers); a lower bound, not the command the goal names
# interleaved (one sample of each variant per round), in two passes: back to back, and
# spaced by $GAP s of quiet. Prints TAP; the numbers are "# " lines.
set -u
. "$PAYLOAD/tap.sh"
X=$PAYLOAD/extra
. "$X/suite-lib.sh"

suite_setup
OUT=/run/bench-out

cat > "$CFG/roles/bench.role" <<EOF
[Role]
Description=start benchmark
Exec=$STAMP

[Sandbox]
Network=none
Memory=256M
EOF
systemctl daemon-reload

# --- systemd-run with agent@bench's own properties (as bench/start-latency-suite.sh) ------------
unit_props agent@bench.service
diag "load average at start: $(cat /proc/loadavg)"
diag "systemd: $(systemctl --version | head -1); $(nproc) CPU(s); $ITER samples after $WARM warm-up rounds, interleaved; passes: back-to-back, spaced by $GAP s"
diag "same-props: ${same_props[*]}"
diag "shim: ${shim_argv[*]}"

# --- podman in this container -------------------------------------------------------------------
PODMAN=(podman --runtime runc)
PODMAN_ARGS=(run --rm --network=none --read-only --cap-drop=ALL --security-opt=no-new-privileges localhost/cloister-stamp:bench /stamp)
mkdir -p /etc/containers /var/tmp && chmod 1777 /var/tmp
# /etc is empty under --volatile=yes: the defaults Debian ships, and no default ulimits (this
# machine refuses podman's RLIMIT_NPROC default)
[ -e /etc/containers/policy.json ] || echo '{"default":[{"type":"insecureAcceptAnything"}]}' > /etc/containers/policy.json
printf '[containers]\ndefault_ulimits = []\n' > /etc/containers/containers.conf
podman_ok= podman_nocg_ok=
if command -v podman >/dev/null && command -v runc >/dev/null; then
        if podman import "$X/stamp.tar" localhost/cloister-stamp:bench >/run/podman-import.log 2>&1 &&
           "${PODMAN[@]}" "${PODMAN_ARGS[@]}" >/run/podman-try.log 2>&1; then
                podman_ok=1
        else
                diag "podman does not run in this container: $(cat /run/podman-import.log /run/podman-try.log | grep -i error | head -2 | tr '\n' ' ')"
                # Without a cgroup of its own it does: measured too, as a lower bound for podman
                podman --runtime crun run --cgroups=disabled "${PODMAN_ARGS[@]:1}" >/run/podman-nocg.log 2>&1 && podman_nocg_ok=1; [ -n "$podman_nocg_ok" ] || diag "podman --cgroups=disabled: $(grep -i error /run/podman-nocg.log | head -2)"
        fi
        diag "podman: $(podman --version), $(runc --version | head -1), storage $(podman info --format '{{.Store.GraphDriverName}}' 2>/dev/null)"
else
        diag "podman or runc is not installed"
fi

# Until no job for the role's mount units is queued: they stay mounted between starts, and
# cloister-stage empties them (cloister-stage(8)); before that design each start mounted them
# and a start that met their queued stop job was refused as a destructive transaction.
settle_mounts() {
        wait_no_mount_jobs || true
}

# measure VARIANT COMMAND…: one sample; the command's stdout is the stamp
measure() {
        local v=$1 t0 tr t1 rc
        shift
        "$STAMP" "$T0"
        "$@" </dev/null >"$OUT" 2>>"$ERR"
        rc=$?
        "$STAMP" "$TR"
        t1=$(head -1 "$OUT")
        t0=$(<"$T0") tr=$(<"$TR")
        if [ "$rc" != 0 ] || [ -z "$t1" ]; then
                echo "$v: exit $rc, stdout \"$(head -c 200 "$OUT")\"" >> "$ERR"
                return 1
        fi
        echo "$v $(( (t1 - t0) / 1000 )) $(( (tr - t0) / 1000 ))" >> "$SAMPLES.cur"
}

# systemd-run with agent@bench's properties shares the role's two mount units. A sample that
# fails is settled and retried once (counted in the output).
retried=0
shared_mounts() { # VARIANT COMMAND…
        settle_mounts
        if ! measure "$@"; then
                sleep 0.5
                settle_mounts
                retried=$(( retried + 1 ))
                measure "$@" || return 1
        fi
        settle_mounts
}

VARIANTS="harness cloisterctl-run systemd-run-same+shim systemd-run-same systemd-run-plain"
[ -n "$podman_ok" ] && VARIANTS="$VARIANTS podman"
[ -n "$podman_nocg_ok" ] && VARIANTS="$VARIANTS podman-no-cgroups"
one() {
        case $1 in
                harness)               measure "$1" "$STAMP" ;;
                cloisterctl-run)       measure "$1" cloisterctl run --wait --pipe -q --role bench -- "$STAMP" ;;
                systemd-run-same+shim) shared_mounts "$1" systemd-run --wait --pipe -q "${same_props[@]}" -- "${shim_argv[@]}" ;;
                systemd-run-same)      shared_mounts "$1" systemd-run --wait --pipe -q "${same_props[@]}" -- "$STAMP" ;;
                systemd-run-plain)     measure "$1" systemd-run --wait --pipe -q -- "$STAMP" ;;
                podman)                measure "$1" "${PODMAN[@]}" "${PODMAN_ARGS[@]}" ;;
                podman-no-cgroups)     measure "$1" podman --runtime crun run --cgroups=disabled "${PODMAN_ARGS[@]:1}" ;;
        esac
}

run_pass back-to-back 0
run_pass spaced "$GAP"
diag "load average at the end: $(cat /proc/loadavg)"
diag "systemd-run samples retried after a failure: $retried"
report back-to-back "each sample right after the previous one finished" exit
report spaced "$GAP s of quiet before each sample" exit
[ -s "$ERR" ] && head -20 "$ERR" | while read -r l; do diag "stderr: $l"; done
while read -r l; do diag "sample $l"; done < "$SAMPLES"
tap_done

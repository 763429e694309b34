#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Runs inside a throwaway systemd (tests/integration/nspawn-run.sh, started by
# bench/start-latency.sh) as root. Measures how long it takes from just before a start
# command to the agent's first instruction (bench/stamp.c reading CLOCK_MONOTONIC, which
# the container and its sandboxes share), for agent@<role> and for systemd-run with the
# same and with fewer properties, interleaved: one sample of each variant per round, in two
# passes, back to back and spaced by $GAP s of quiet. Prints TAP; the numbers are "# "
# lines. The variants:
#   harness               stamp; stamp: what the measurement itself adds (fork+exec)
#   cloister-none         systemctl start agent@bench-none      (Network=none)
#   cloister-daemon-only  systemctl start agent@bench-daemon    (Network=daemon-only)
#   run-same-props+shim   systemd-run --wait with every [Service] property of
#                         agent@bench-none (template + drop-in, in order) and its
#                         RequiresMountsFor=, running the role's own ExecStart= (the shim)
#   run-same-props        the same, running the agent directly (no shim)
#   run-same-props-tmpfs  the same, with /tmp and /var/tmp as TemporaryFileSystem= instead
#                         of the role's two generated mount units (cost only: on 252 the
#                         size cap does not hold this way, see docs/profile.md)
#   run-core-props        systemd-run --wait with DynamicUser, PrivateNetwork,
#                         ProtectSystem=strict, ProtectHome, PrivateTmp, PrivateDevices,
#                         NoNewPrivileges, SystemCallFilter=@system-service, one BindPaths=
#   run-plain             systemd-run --wait, no properties
#   run-true              systemd-run --wait /bin/true: the command's own time only
set -u
. "$PAYLOAD/tap.sh"
X=$PAYLOAD/extra
. "$X/suite-lib.sh"

suite_setup
B=/srv/bench SLOWLOG=/run/bench-slow
SLOW_US=$(( $(cat "$X/slow-ms" 2>/dev/null || echo 300) * 1000 )) n_slow=0
mkdir -p "$B"

role() { # NAME MODE
        mkdir -p "$B/$1" && chmod 0777 "$B/$1"
        cat > "$CFG/roles/$1.role" <<EOF
[Role]
Description=start latency benchmark ($2)
Exec=$STAMP /output/t1

[Sandbox]
Network=$2
Memory=256M
Output=$B/$1
EOF
}
role bench-none none
role bench-daemon daemon-only
systemctl daemon-reload

# --- systemd-run with the generated unit's own properties ------------------------------
unit_props agent@bench-none.service
# The hardening a careful admin would type by hand (the brief's minimum set).
core_props=(-p DynamicUser=yes -p PrivateNetwork=yes -p ProtectSystem=strict -p ProtectHome=yes
            -p PrivateTmp=yes -p PrivateDevices=yes -p NoNewPrivileges=yes
            -p SystemCallFilter=@system-service -p BindPaths=$B/run-core:/output)
mkdir -p "$B/run-core" "$B/run-plain" "$B/harness" && chmod 0777 "$B/run-core"
# A design experiment: the same properties, but the private /tmp and /var/tmp as
# TemporaryFileSystem= inside the unit's own mount namespace instead of the two per-role
# mount units (before cloister-stage emptied them, PID 1 mounted and unmounted them for every start).
# Each size from its own mount unit: /tmp's from the tmp unit, /var/tmp's from the var-tmp one.
mapfile -t none_mounts < <(mounts_of bench-none)
tmp_size() { systemctl cat "$1" | sed -n 's/^Options=size=\([0-9]*\),.*/\1/p'; }
tmpfs_props=()
for (( i = 0; i < ${#same_props[@]}; i += 2 )); do
        case ${same_props[i + 1]} in
                RequiresMountsFor=/run/cloister/*|BindPaths=/run/cloister/*) ;;
                *) tmpfs_props+=( "${same_props[i]}" "${same_props[i + 1]}" ) ;;
        esac
done
tmpfs_props+=( -p "TemporaryFileSystem=/tmp:size=$(tmp_size "${none_mounts[0]}"),mode=1777,nosuid,nodev"
               -p "TemporaryFileSystem=/var/tmp:size=$(tmp_size "${none_mounts[1]}"),mode=1777,nosuid,nodev" )

diag "systemd: $(systemctl --version | head -1); $(nproc) CPU(s); iterations: $ITER after $WARM warm-up, interleaved; two passes: back-to-back, and spaced by $GAP s"
diag "same-props: systemd-run --wait -q ${same_props[*]} -- $STAMP /output/t1"
diag "same-props+shim: systemd-run --wait -q ${same_props[*]} -- ${shim_argv[*]}"
diag "same-props-tmpfs: systemd-run --wait -q ${tmpfs_props[*]} -- $STAMP /output/t1"
diag "core-props: systemd-run --wait -q ${core_props[*]} -- $STAMP /output/t1"

# measure VARIANT FILE|- COMMAND…: one sample. FILE is where the agent writes its stamp;
# "-" for a command without an agent (only the command's own time is recorded).
measure() {
        local v=$1 out=$2 k first=- t0 tr t1= rc
        shift 2
        [ "$out" = - ] || rm -f "$out"
        "$STAMP" "$T0"
        "$@" >/dev/null 2>>"$ERR"
        rc=$?
        "$STAMP" "$TR"
        if [ "$out" != - ] && [ "$rc" = 0 ]; then
                for (( k = 0; k < 200; k++ )); do [ -s "$out" ] && break; sleep 0.05; done
                t1=$(<"$out")
        fi
        if [ "$out" != - ] && [ -z "${t1:-}" ]; then
                echo "$v: no stamp in $out (exit $rc)" >> "$ERR"
                return 1
        fi
        t0=$(<"$T0") tr=$(<"$TR")
        [ "$out" = - ] || first=$(( (t1 - t0) / 1000 ))
        echo "$v $first $(( (tr - t0) / 1000 )) $rc" >> "$SAMPLES.cur"
        # Keep what PID 1 logged during the first few slow samples, to see where time went.
        if [ "$first" != - ] && (( first > SLOW_US && n_slow < 2 )); then
                n_slow=$(( n_slow + 1 ))
                sleep 0.2
                { echo "slow sample ($PASS) $v: first instruction after $(( first / 1000 )) ms; journal from t0 - 10 ms (monotonic s):"
                  journalctl -b -o short-monotonic --no-pager |
                        awk -v s="$(( t0 / 1000000 - 10 ))" '{ x = $2; gsub(/[][]/, "", x); if (x * 1000 >= s) print }' | head -30
                } >> "$SLOWLOG"
        fi
        return "$rc"
}

# After each sample: the agent unit inactive, and no job queued for the role's /tmp mounts
# (they stay mounted between starts; cloister-stage empties them), so that every sample
# starts from the same state.
settle() { # UNIT [MOUNT UNIT…]
        local u
        for u in "$@"; do
                case $u in
                        *.mount) wait_no_mount_jobs || { echo "a job for $u did not finish" >> "$ERR"; return 1; } ;;
                        *) wait_inactive "$u" || { echo "$u did not stop" >> "$ERR"; return 1; } ;;
                esac
        done
}
mapfile -t none_units < <(echo agent@bench-none.service; printf '%s\n' "${none_mounts[@]}")
mapfile -t daemon_units < <(echo agent@bench-daemon.service; mounts_of bench-daemon)

VARIANTS="harness cloister-none cloister-daemon-only run-same-props+shim run-same-props run-same-props-tmpfs run-core-props run-plain run-true"
one() { # VARIANT
        case $1 in
                harness)              measure "$1" "$B/harness/t1" "$STAMP" "$B/harness/t1" ;;
                cloister-none)        measure "$1" "$B/bench-none/t1" systemctl start agent@bench-none.service &&
                                              settle "${none_units[@]}" ;;
                cloister-daemon-only) measure "$1" "$B/bench-daemon/t1" systemctl start agent@bench-daemon.service &&
                                              settle "${daemon_units[@]}" ;;
                run-same-props+shim)  measure "$1" "$B/bench-none/t1" systemd-run --wait -q "${same_props[@]}" -- "${shim_argv[@]}" &&
                                              settle "${none_units[@]:1}" ;;
                run-same-props)       measure "$1" "$B/bench-none/t1" systemd-run --wait -q "${same_props[@]}" -- "$STAMP" /output/t1 &&
                                              settle "${none_units[@]:1}" ;;
                run-same-props-tmpfs) measure "$1" "$B/bench-none/t1" systemd-run --wait -q "${tmpfs_props[@]}" -- "$STAMP" /output/t1 ;;
                run-core-props)       measure "$1" "$B/run-core/t1" systemd-run --wait -q "${core_props[@]}" -- "$STAMP" /output/t1 ;;
                run-plain)            measure "$1" "$B/run-plain/t1" systemd-run --wait -q -- "$STAMP" "$B/run-plain/t1" ;;
                run-true)             measure "$1" - systemd-run --wait -q /bin/true ;;
        esac
}

run_pass back-to-back 0
run_pass spaced "$GAP"
report back-to-back "each sample right after the previous one finished" "command returned"
report spaced "${GAP} s of quiet before each sample" "command returned"
[ -s "$ERR" ] && sed 's/^/stderr: /' "$ERR" | head -20 | while read -r l; do diag "$l"; done
[ -s "$SLOWLOG" ] && while read -r l; do diag "$l"; done < "$SLOWLOG"
while read -r l; do diag "sample $l"; done < "$SAMPLES"
tap_done

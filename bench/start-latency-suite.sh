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

# With --volatile=yes only /usr comes from the host: /usr/bin/awk points into a missing
# /etc/alternatives. Debian's /usr/bin/mawk is always there.
awk() { if [ -x /usr/bin/mawk ]; then /usr/bin/mawk "$@"; else command awk "$@"; fi; }

X=$PAYLOAD/extra
STAMP=$X/stamp
ITER=$(cat "$X/iterations" 2>/dev/null || echo 30)
WARM=$(cat "$X/warmup" 2>/dev/null || echo 3)
CFG=$CLOISTER_CFG
B=/srv/bench
T0=/run/bench-t0 TR=/run/bench-tret SAMPLES=/run/bench-samples ERR=/run/bench-err SLOWLOG=/run/bench-slow
SLOW_US=$(( $(cat "$X/slow-ms" 2>/dev/null || echo 300) * 1000 )) n_slow=0
GAP=$(cat "$X/gap" 2>/dev/null || echo 1.2)
mkdir -p "$CFG/roles" "$B"
: > "$SAMPLES"

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

# The units of the private /tmp and /var/tmp of a role (generated mount units).
mounts_of() { # ROLE
        systemd-escape -p --suffix=mount "/run/cloister/tmp/$1" "/run/cloister/var-tmp/$1"
}

# --- systemd-run with the generated unit's own properties ------------------------------
# Every [Service] assignment of template + drop-in, in order (so empty assignments reset
# lists exactly as in the unit), except ExecStart=; and the [Unit] RequiresMountsFor= that
# pulls in the role's private /tmp and /var/tmp mount units. Not passed: Description=,
# Documentation=, SourcePath= (no effect on the start).
mapfile -t same_props < <(systemctl cat agent@bench-none.service | awk '
        /^[[:space:]]*[#;]/ || /^[[:space:]]*$/ { next }
        /^\[/ { sec = $0; next }
        sec == "[Service]" && !/^ExecStart=/ { print "-p"; print; next }
        sec == "[Unit]" && /^RequiresMountsFor=/ { print "-p"; print }')
shim_line=$(systemctl cat agent@bench-none.service | sed -n 's/^ExecStart=\(..*\)$/\1/p' | tail -1)
eval "shim_argv=( $shim_line )" # the role's ExecStart=: simple quoted words here
# The hardening a careful admin would type by hand (the brief's minimum set).
core_props=(-p DynamicUser=yes -p PrivateNetwork=yes -p ProtectSystem=strict -p ProtectHome=yes
            -p PrivateTmp=yes -p PrivateDevices=yes -p NoNewPrivileges=yes
            -p SystemCallFilter=@system-service -p BindPaths=$B/run-core:/output)
mkdir -p "$B/run-core" "$B/run-plain" "$B/harness" && chmod 0777 "$B/run-core"
# A design experiment: the same properties, but the private /tmp and /var/tmp as
# TemporaryFileSystem= inside the unit's own mount namespace instead of the two per-role
# mount units that PID 1 mounts (and unmounts) in its namespace for every run.
tmp_size=$(systemctl cat "$(mounts_of bench-none | head -1)" | sed -n 's/^Options=size=\([0-9]*\),.*/\1/p')
tmpfs_props=()
for (( i = 0; i < ${#same_props[@]}; i += 2 )); do
        case ${same_props[i + 1]} in
                RequiresMountsFor=/run/cloister/*|BindPaths=/run/cloister/*) ;;
                *) tmpfs_props+=( "${same_props[i]}" "${same_props[i + 1]}" ) ;;
        esac
done
tmpfs_props+=( -p "TemporaryFileSystem=/tmp:size=$tmp_size,mode=1777,nosuid,nodev"
               -p "TemporaryFileSystem=/var/tmp:size=$tmp_size,mode=1777,nosuid,nodev" )

diag "systemd: $(systemctl --version | head -1); $(nproc) CPU(s); iterations: $ITER after $WARM warm-up, interleaved; two passes: back-to-back, and spaced by $GAP s"
diag "same-props: systemd-run --wait -q ${same_props[*]} -- $STAMP /output/t1"
diag "same-props+shim: systemd-run --wait -q ${same_props[*]} -- ${shim_argv[*]}"
diag "same-props-tmpfs: systemd-run --wait -q ${tmpfs_props[*]} -- $STAMP /output/t1"
diag "core-props: systemd-run --wait -q ${core_props[*]} -- $STAMP /output/t1"

wait_inactive() { # UNIT
        local i s
        for (( i = 0; i < 500; i++ )); do
                s=$(systemctl show -P ActiveState "$1")
                [ "$s" = inactive ] || [ "$s" = failed ] && return 0
                sleep 0.02
        done
        return 1
}

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

# The role's private /tmp and /var/tmp are mount units with StopWhenUnneeded=yes: after each
# sample, wait until they are unmounted again, so that every sample starts from the same
# state (and a start is not refused for colliding with their queued stop job).
settle() { # UNIT…
        local u
        for u in "$@"; do wait_inactive "$u" || { echo "$u did not stop" >> "$ERR"; return 1; }; done
}
mapfile -t none_units < <(echo agent@bench-none.service; mounts_of bench-none)
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

declare -A failed=()
# run_pass NAME GAP_S: WARM + ITER rounds, one sample of each variant per round; GAP_S
# seconds of quiet before each sample.
run_pass() {
        local pass=$1 gap=$2 it v
        PASS=$pass n_slow=0
        for (( it = 1; it <= WARM + ITER; it++ )); do
                for v in $VARIANTS; do
                        [ -n "${failed[$v]:-}" ] && continue # give up on a variant after its first failure
                        [ "$gap" = 0 ] || sleep "$gap"
                        : > "$SAMPLES.cur"
                        one "$v" || failed[$v]=1
                        (( it > WARM )) && sed "s/^/$pass /" "$SAMPLES.cur" >> "$SAMPLES"
                done
        done
}

# median and p90 (nearest rank) in ms of one column of a pass's samples
# (3: first instruction, 4: start command returned)
stat() { # PASS VARIANT COLUMN
        awk -v p="$1" -v v="$2" -v c="$3" '$1 == p && $2 == v && $c != "-" { print $c }' "$SAMPLES" | sort -n | awk '
                { a[NR] = $1 } END {
                        if (!NR) { print "– | –"; exit }
                        med = NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2
                        p = int(NR * 0.9); if (p < NR * 0.9) p++
                        printf "%.1f | %.1f\n", med / 1000, a[p] / 1000 }'
}
report() { # PASS DESCRIPTION
        local v n
        for v in $VARIANTS; do
                n=$(awk -v p="$1" -v v="$v" '$1 == p && $2 == v && $5 == 0' "$SAMPLES" | wc -l)
                if [ -z "${failed[$v]:-}" ] && [ "$n" = "$ITER" ]; then
                        ok "$1: $v: $n/$ITER samples"
                else
                        notok "$1: $v: $n/$ITER samples"
                fi
        done
        diag "RESULTS $1: $2 (ms; $ITER samples each)"
        diag "| variant | first instruction: median | p90 | command returned: median | p90 |"
        diag "|---|---:|---:|---:|---:|"
        for v in $VARIANTS; do
                diag "| $v | $(stat "$1" "$v" 3) | $(stat "$1" "$v" 4) |"
        done
}

run_pass back-to-back 0
run_pass spaced "$GAP"
report back-to-back "each sample right after the previous one finished"
report spaced "${GAP} s of quiet before each sample"
[ -s "$ERR" ] && sed 's/^/stderr: /' "$ERR" | head -20 | while read -r l; do diag "$l"; done
[ -s "$SLOWLOG" ] && while read -r l; do diag "$l"; done < "$SLOWLOG"
while read -r l; do diag "sample $l"; done < "$SAMPLES"
tap_done

# SPDX-License-Identifier: LGPL-2.1-or-later
# Sourced by bench/start-suite.sh and bench/start-latency-suite.sh inside the throwaway systemd
# (bench/lib.sh puts it in the payload), and by bench/start.sh for its host-side table: what
# the two start benchmarks share.
#
# A suite sets ITER, WARM, VARIANTS, SAMPLES (one line a sample: PASS VARIANT FIRST_US
# RETURNED_US [RC]) and one() (VARIANT: takes one sample, appending "VARIANT FIRST_US
# RETURNED_US [RC]" to $SAMPLES.cur), then calls run_pass and report.

# suite_setup: STAMP, the static bench/stamp.c, and ITER, WARM and GAP as bench/lib.sh wrote
# them into the payload ($X); CFG, the configuration directory, with roles/ in it; T0 and TR
# for the stamps around a start command, SAMPLES and ERR, empty.
suite_setup() {
        STAMP=$X/stamp
        ITER=$(cat "$X/iterations")
        WARM=$(cat "$X/warmup")
        GAP=$(cat "$X/gap")
        CFG=$CLOISTER_CFG
        T0=/run/bench-t0 TR=/run/bench-tret SAMPLES=/run/bench-samples ERR=/run/bench-err
        mkdir -p "$CFG/roles"
        : > "$SAMPLES"
        : > "$ERR"
}

# With --volatile=yes only /usr comes from the host: /usr/bin/awk points into a missing
# /etc/alternatives. Debian's /usr/bin/mawk is always there.
awk() { if [ -x /usr/bin/mawk ]; then /usr/bin/mawk "$@"; else command awk "$@"; fi; }

# unit_props UNIT: sets same_props to "-p KEY=VALUE" for every [Service] assignment of the
# template and its drop-ins, in order (so empty assignments reset lists exactly as in the
# unit), except ExecStart=, and for the [Unit] RequiresMountsFor= that pulls in the role's
# private /tmp and /var/tmp mount units; and shim_argv to the unit's ExecStart= (the shim).
# Not passed: Description=, Documentation=, SourcePath= (no effect on the start), and
# ExecStopPost= (cloister-stage stop empties a role's /tmp only from the role's own unit, and
# fails the transient one: its cost is not in these variants' exit times).
unit_props() {
        local shim_line
        mapfile -t same_props < <(systemctl cat "$1" | awk '
                /^[[:space:]]*[#;]/ || /^[[:space:]]*$/ { next }
                /^\[/ { sec = $0; next }
                sec == "[Service]" && !/^ExecStart=/ && !/^ExecStopPost=/ { print "-p"; print; next }
                sec == "[Unit]" && /^RequiresMountsFor=/ { print "-p"; print }')
        shim_line=$(systemctl cat "$1" | sed -n 's/^ExecStart=\(..*\)$/\1/p' | tail -1)
        eval "shim_argv=( $shim_line )" # the role's ExecStart=: simple quoted words here
}

# mounts_of ROLE: the mount units of the role's private /tmp and /var/tmp, one a line
# (systemd-escape prints all its words on one line).
mounts_of() {
        local p
        for p in "/run/cloister/tmp/$1" "/run/cloister/var-tmp/$1"; do
                systemd-escape -p --suffix=mount "$p"
        done
}

# wait_no_mount_jobs: until no job for a run-cloister- mount unit is queued, 10 s at most.
# The roles' /tmp mounts stay mounted between starts (cloister-stage(8)); this only waits out
# a first mount or a run's own mounts being stopped.
wait_no_mount_jobs() {
        local i
        for (( i = 0; i < 500; i++ )); do
                systemctl list-jobs --no-legend 2>/dev/null | grep -q 'run-cloister-' || return 0
                sleep 0.02
        done
        return 1
}

# wait_inactive UNIT…: until each is inactive or failed, 10 s at most each; 1 if one is not.
wait_inactive() {
        local u i s rc=0
        for u in "$@"; do
                for (( i = 0; i < 500; i++ )); do
                        s=$(systemctl show -P ActiveState "$u")
                        [ "$s" = inactive ] || [ "$s" = failed ] && break
                        sleep 0.02
                done
                [ "$s" = inactive ] || [ "$s" = failed ] || rc=1
        done
        return "$rc"
}

declare -A failed=()
# run_pass NAME GAP_S: WARM + ITER rounds, one sample of each variant per round (interleaved);
# GAP_S seconds of quiet before each sample. A variant is given up after its first failure.
run_pass() {
        local pass=$1 gap=$2 it v
        PASS=$pass n_slow=0
        for (( it = 1; it <= WARM + ITER; it++ )); do
                for v in $VARIANTS; do
                        [ -n "${failed[$v]:-}" ] && continue
                        [ "$gap" = 0 ] || sleep "$gap"
                        : > "$SAMPLES.cur"
                        one "$v" || failed[$v]=1
                        (( it > WARM )) && sed "s/^/$pass /" "$SAMPLES.cur" >> "$SAMPLES"
                done
        done
}

# stat PASS VARIANT COLUMN: median and p90 (nearest rank) in ms of one column of a pass's
# samples (3: first instruction, 4: start command returned); "-" values are skipped.
stat() {
        awk -v p="$1" -v v="$2" -v c="$3" '$1 == p && $2 == v && $c != "-" { print $c }' "$SAMPLES" | sort -n | awk '
                { a[NR] = $1 } END {
                        if (!NR) { print "– | –"; exit }
                        med = NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2
                        p = int(NR * 0.9); if (p < NR * 0.9) p++
                        printf "%.1f | %.1f\n", med / 1000, a[p] / 1000 }'
}

# report PASS DESCRIPTION RETURNED: "ok" for a variant with ITER good samples (RC absent or
# 0), then the results table; RETURNED names column 4.
report() {
        local v n
        for v in $VARIANTS; do
                n=$(awk -v p="$1" -v v="$v" '$1 == p && $2 == v && ($5 == "" || $5 == 0)' "$SAMPLES" | wc -l)
                if [ -z "${failed[$v]:-}" ] && [ "$n" = "$ITER" ]; then
                        ok "$1: $v: $n/$ITER samples"
                else
                        notok "$1: $v: $n/$ITER samples"
                fi
        done
        diag "RESULTS $1: $2 (ms; $ITER samples each)"
        diag "| variant | first instruction: median | p90 | $3: median | p90 |"
        diag "|---|---:|---:|---:|---:|"
        for v in $VARIANTS; do
                diag "| $v | $(stat "$1" "$v" 3) | $(stat "$1" "$v" 4) |"
        done
}

#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Benchmark of cloister-generator (docs/overview.md, Generator behaviour: it runs at
# every boot and at every daemon-reload, so it must stay fast). Goal from the issue: 10,000 roles in under 100 ms.
#
#   bench/generator.sh [BUILD_DIR]          (default: ./build)
#
# For each N in $COUNTS it lays out a fake root on tmpfs with N realistic role files (a
# few keys each, a mix of network modes, some projects, mounts, durable roles and
# [Install] sections), the shipped cloister.conf and the rendered agent@.service
# template, then measures, side by side in one hyperfine invocation:
#   - cloister-generator OUT EARLY LATE, exactly as systemd calls it (empty output
#     directories before every run, as systemd gives generators);
#   - cloister-generator --dry-run > /dev/null: the same parsing and rendering, no files;
#   - "cp -r" of the same role files into the same (emptied) tmpfs output directory,
#     the floor: reading N small files and writing N small files, nothing else;
#   - "cp -r" of a copy of the generator's own output: creating exactly the files,
#     directories and symlinks the generator creates, without any parsing.
# Wall time: median/min/max over $RUNS runs (hyperfine if installed, else a loop with
# date +%s%N). Peak RSS: /usr/bin/time -v "Maximum resident set size".
#
# Environment:
#   COUNTS="1 100 1000 10000"   role counts
#   RUNS=15                     timed runs per command and N (after $WARMUP warm-up runs)
#   WARMUP=3
#   BENCH_TMP=/dev/shm          where the tree and the output go (must be tmpfs)
#   BENCH_NO_HYPERFINE=1        use the date loop even if hyperfine is installed
#   BENCH_KEEP=1                keep the temporary tree (its path is printed)
#   BENCH_REV=…                 what to call the source in the header (default: git describe)
#
# Needs: bash, coreutils, /usr/bin/time (Debian: time); hyperfine optional (Debian: hyperfine).
# Does not need root and touches nothing outside $BENCH_TMP.
set -euo pipefail

build=$(realpath "${1:-build}")
gen=$build/generators/cloister-generator
template=$build/units/agent@.service
src=$(cd "$(dirname "$0")/.." && pwd)
conf=$src/units/cloister.conf
COUNTS=${COUNTS:-"1 100 1000 10000"}
RUNS=${RUNS:-15}
WARMUP=${WARMUP:-3}
BENCH_TMP=${BENCH_TMP:-/dev/shm}

die() { echo "generator.sh: $*" >&2; exit 1; }
[ -x "$gen" ] || die "no $gen (build first: meson setup $build && ninja -C $build)"
[ -f "$template" ] || die "no $template (ninja -C $build)"
[ -x /usr/bin/time ] || die "/usr/bin/time missing (Debian: apt-get install time)"
fstype=$(stat -f -c %T "$BENCH_TMP")
[ "$fstype" = tmpfs ] || die "$BENCH_TMP is $fstype, not tmpfs: set BENCH_TMP to a tmpfs"
use_hyperfine=
if [ -z "${BENCH_NO_HYPERFINE:-}" ] && command -v hyperfine >/dev/null; then
        use_hyperfine=1
fi

T=$(mktemp -d "$BENCH_TMP/cloister-bench.XXXXXX")
[ -n "${BENCH_KEEP:-}" ] && echo "# tree kept in $T" >&2 || trap 'rm -rf "$T"' EXIT

# One role file. The mix (by i mod 20) is what a fleet of agents plausibly looks like:
# mostly sealed (daemon-only, explicit or from DefaultNetwork=), some none, a few egress;
# some with input/output directories, a project, extra read-only mounts, environment,
# durable roles and roles started at boot.
write_role() { # DIR I
        local dir=$1 i=$2 m=$(( $2 % 20 )) net
        case $m in
                0|1|2|3|4|5|6) net=daemon-only ;;
                7|8|9|10|11)   net= ;;              # DefaultNetwork= (daemon-only)
                12|13|14|15)   net=none ;;
                *)             net=egress ;;
        esac
        {
                echo "[Role]"
                echo "Description=Benchmark agent $i (reviews patches)"
                echo "Exec=/usr/bin/python3 /opt/agents/agent$(( i % 7 )).py --strict --id=$i"
                (( m % 5 == 0 )) && echo "Environment=LOG_LEVEL=info"
                (( m % 5 == 0 )) && echo "Environment=AGENT_ID=$i"
                (( m % 4 == 1 )) && echo "Project=proj$(( i % 10 ))"
                (( m == 3 || m == 13 )) && echo "Durability=durable"
                echo
                echo "[Sandbox]"
                [ -n "$net" ] && echo "Network=$net"
                echo "Memory=$(( 256 << (i % 3) ))M"
                (( m % 2 == 0 )) && echo "CPUs=1.5"
                echo "Timeout=$(( 5 + i % 30 ))min"
                if (( m % 3 == 0 )); then
                        echo "Input=/srv/agents/in/r$i"
                        echo "Output=/srv/agents/out/r$i"
                fi
                (( m % 6 == 2 )) && echo "ReadOnlyMount=/srv/datasets:/data"
                if (( m == 4 || m == 9 )); then
                        printf '\n[LLM]\nModel=qwen3.6:35b\n'
                fi
                if (( m == 5 )); then
                        printf '\n[Install]\nWantedBy=multi-user.target\n'
                fi
        } > "$dir/r$i.role"
}

# The fake root: the same layout and search order systemd and cloister use (docs/overview.md, Files and search paths,
# systemd.unit(5)), all of it under $root.
setup_tree() { # N ROOT
        local n=$1 root=$2 i
        mkdir -p "$root/etc/cloister/roles" "$root/etc/cloister/projects" \
                 "$root/usr/lib/systemd/system" "$root/etc/systemd/system" "$root/run/systemd/system"
        cp "$conf" "$root/etc/cloister/cloister.conf"
        cp "$template" "$root/usr/lib/systemd/system/agent@.service"
        for i in $(seq 0 9); do
                printf '[Project]\nWorkspace=/srv/projects/proj%d\n' "$i" > "$root/etc/cloister/projects/proj$i.project"
        done
        for (( i = 0; i < n; i++ )); do
                write_role "$root/etc/cloister/roles" "$i"
        done
}

# The commands, each run without a shell (the generator's environment is exported below):
#   gen     the generator, as systemd calls it
#   dry     the generator with --dry-run > /dev/null: parsing and rendering, no file system
#   cproles cp -r of the role files: the floor (read N small files, write N small files)
#   cpout   cp -r of a copy of the generator's own output: creating the same files,
#           directories and symlinks the generator creates, with no parsing at all
cmd() { # WHAT ROOT
        local g=$2/run/systemd
        case $1 in
                gen)     echo "$gen $g/generator $g/generator.early $g/generator.late" ;;
                dry)     echo "$gen --dry-run" ;;
                cproles) echo "cp -r $2/etc/cloister/roles $g/generator/roles" ;;
                cpout)   echo "cp -r $2/golden $g/generator/golden" ;;
        esac
}
COMMANDS="gen dry cproles cpout"

# Empty output directories before every run (hyperfine -N runs --prepare without a shell).
cat > "$T/prepare.sh" <<'PREP'
cd "$1/run/systemd" && rm -rf generator generator.early generator.late && mkdir generator generator.early generator.late
PREP
prep_cmd() { echo "/bin/sh $T/prepare.sh $1"; }
prepare() { /bin/sh "$T/prepare.sh" "$1"; }

# Loop fallback: prints "median min max user sys" in ms for COMMAND (word-split);
# user and sys are not measured here ("–"). Each sample includes two forks of date(1).
time_loop() { # ROOT COMMAND
        local root=$1 cmd=$2 t0 t1 i
        local -a ts=()
        for (( i = 0; i < WARMUP; i++ )); do prepare "$root"; $cmd >/dev/null 2>&1; done
        for (( i = 0; i < RUNS; i++ )); do
                prepare "$root"
                t0=$(date +%s%N)
                $cmd >/dev/null 2>&1 || die "failed: $cmd"
                t1=$(date +%s%N)
                ts+=( $(( t1 - t0 )) )
        done
        printf '%s\n' "${ts[@]}" | sort -n | awk '{ a[NR] = $1 } END {
                med = NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2
                printf "%.2f %.2f %.2f – –\n", med / 1e6, a[1] / 1e6, a[NR] / 1e6 }'
}

# All commands in one hyperfine invocation (one after the other, same prepare step);
# prints one line "median min max user sys" (ms) per command, in $COMMANDS order.
time_all() { # ROOT
        local root=$1 csv=$T/hf.csv c
        local -a cmds=()
        for c in $COMMANDS; do cmds+=( "$(cmd "$c" "$root")" ); done
        if [ -n "$use_hyperfine" ]; then
                hyperfine -N --style none --warmup "$WARMUP" --runs "$RUNS" \
                        --prepare "$(prep_cmd "$root")" --export-csv "$csv" \
                        "${cmds[@]}" >/dev/null 2>"$T/hf.err" || { cat "$T/hf.err" >&2; die "hyperfine failed"; }
                # command,mean,stddev,median,user,system,min,max (seconds; user/system are means)
                awk -F, 'NR > 1 { printf "%.2f %.2f %.2f %.1f %.1f\n", $4 * 1e3, $7 * 1e3, $8 * 1e3, $5 * 1e3, $6 * 1e3 }' "$csv"
        else
                for c in "${cmds[@]}"; do time_loop "$root" "$c"; done
        fi
}

peak_rss_kb() { # ROOT COMMAND (word-split): max over 3 runs
        local root=$1 cmd=$2 best=0 kb i
        for i in 1 2 3; do
                prepare "$root"
                /usr/bin/time -v $cmd >/dev/null 2>"$T/time.err" || die "failed: $cmd"
                kb=$(sed -n 's/^[[:space:]]*Maximum resident set size (kbytes): //p' "$T/time.err")
                (( kb > best )) && best=$kb
        done
        echo "$best"
}
mib() { awk -v k="$1" 'BEGIN { printf "%.1f MiB", k / 1024 }'; }

echo "# cloister-generator benchmark"
echo "# build:   $build (source ${BENCH_REV:-$(git -C "$src" describe --always --dirty 2>/dev/null || echo '?')})"
echo "# machine: $(nproc) CPU(s), $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1), kernel $(uname -r)"
echo "# timing:  ${use_hyperfine:+hyperfine $(hyperfine --version | cut -d' ' -f2), }median (min–max) of $RUNS runs after $WARMUP warm-up; tree and output on $fstype ($BENCH_TMP)"
echo
echo "| roles | generator ms | user / sys ms | µs per role | --dry-run ms | cp -r roles ms | cp -r output ms | generator RSS | cp -r RSS | files written |"
echo "|------:|-------------:|--------------:|------------:|-------------:|---------------:|----------------:|--------------:|----------:|--------------:|"

for n in $COUNTS; do
        root=$T/n$n
        setup_tree "$n" "$root"
        export CLOISTER_CONFIG_PATH=$root/etc/cloister
        export SYSTEMD_UNIT_PATH=$root/etc/systemd/system.control:$root/run/systemd/system.control:$root/run/systemd/transient:$root/run/systemd/generator.early:$root/etc/systemd/system:$root/etc/systemd/system.attached:$root/run/systemd/system:$root/run/systemd/system.attached:$root/run/systemd/generator:$root/usr/local/lib/systemd/system:$root/usr/lib/systemd/system:$root/run/systemd/generator.late
        export SYSTEMD_LOG_TARGET=console

        # Sanity: the generator accepts every role and writes a drop-in for each. Its output
        # is kept as $root/golden for the "cp -r output" floor.
        prepare "$root"
        $(cmd gen "$root") 2>"$T/gen.err" || { cat "$T/gen.err" >&2; die "generator failed for N=$n"; }
        made=$(find "$root/run/systemd/generator" -name 50-cloister.conf | wc -l)
        [ "$made" = "$n" ] || die "N=$n: the generator wrote $made drop-ins"
        files=$(find "$root/run/systemd/generator" ! -type d | wc -l)
        dirs=$(find "$root/run/systemd/generator" -mindepth 1 -type d | wc -l)
        cp -r "$root/run/systemd/generator" "$root/golden"

        mapfile -t t < <(time_all "$root")
        read -r g_med g_min g_max g_usr g_sys <<<"${t[0]}"
        read -r d_med _ _ _ _ <<<"${t[1]}"
        read -r c_med _ _ _ _ <<<"${t[2]}"
        read -r o_med _ _ _ _ <<<"${t[3]}"
        g_rss=$(peak_rss_kb "$root" "$(cmd gen "$root")")
        c_rss=$(peak_rss_kb "$root" "$(cmd cproles "$root")")
        per=$(awk -v t="$g_med" -v n="$n" 'BEGIN { printf "%.1f", t * 1000 / n }')
        echo "| $n | **$g_med** ($g_min–$g_max) | $g_usr / $g_sys | $per | $d_med | $c_med | $o_med | $(mib "$g_rss") | $(mib "$c_rss") | $files + $dirs dirs |"
        [ -n "${BENCH_KEEP:-}" ] || rm -rf "$root"
done
echo
echo "# generator: cloister-generator OUT EARLY LATE into empty tmpfs directories. --dry-run: the same with"
echo "# --dry-run > /dev/null (parse + render, no files). cp -r roles: copy of the N role files (the floor)."
echo "# cp -r output: copy of the generator's own output tree (same files, dirs, symlinks; no parsing)."
echo "# files written: drop-ins, the /tmp and /var/tmp mount units of each role, wants symlinks; dirs: *.service.d, *.wants."
echo "# Goal (issue): 10000 roles < 100 ms."

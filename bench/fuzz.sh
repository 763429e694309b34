#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Long libFuzzer runs of every target in tests/fuzz (the table in tests/fuzz/meson.build is
# the one list: this script reads it back from the build's test list, suite "fuzz").
#
#   bench/fuzz.sh BUILD_DIR [SECONDS [JOBS [TARGET…]]]
#
# BUILD_DIR is configured with CC=clang meson setup BUILD_DIR -Dfuzz=true -Db_lundef=false.
# Each target runs for SECONDS (default 600) with JOBS parallel workers (default: nproc),
# one target after the other. The corpus grows in $FUZZ_WORK/<target>/corpus (default
# /var/tmp/cloister-fuzz; kept between runs, so later runs start where earlier ones
# stopped), seeded from tests/fuzz/corpus/<corpus>/; crashes land in
# $FUZZ_WORK/<target>/artifacts/. A crash found: fix it, then add the input to the target's
# seed directory as regress-<what> (CI replays it from then on: suites fuzz and fuzz-replay).
set -euo pipefail
build=${1:?usage: bench/fuzz.sh BUILD_DIR [SECONDS [JOBS [TARGET…]]]}
seconds=${2:-600}
jobs=${3:-$(nproc)}
shift $(( $# < 3 ? $# : 3 ))
work=${FUZZ_WORK:-/var/tmp/cloister-fuzz}

# name, executable, seed directory of every test in suite "fuzz"
mapfile -t rows < <(meson introspect "$build" --tests | python3 -c '
import json, sys
for t in json.load(sys.stdin):
    if "cloister:fuzz" in t["suite"]:
        print(t["name"], t["cmd"][1], t["cmd"][2])')
[ ${#rows[@]} -gt 0 ] || { echo "no fuzz targets in $build (configure it with -Dfuzz=true)" >&2; exit 1; }
meson compile -C "$build" $(printf '%s\n' "${rows[@]}" | cut -d' ' -f1) >/dev/null

found=0
for row in "${rows[@]}"; do
        read -r name exe seeds <<<"$row"
        [[ $exe = /* ]] || exe=$(cd "$build" && pwd)/$exe
        if [ $# -gt 0 ] && ! printf '%s\n' "$@" | grep -qx "$name"; then
                continue
        fi
        mkdir -p "$work/$name/corpus" "$work/$name/artifacts"
        dict=()
        [ -e "$seeds.dict" ] && dict=(-dict="$seeds.dict")
        echo "== $name: ${seconds}s, $jobs jobs, corpus $work/$name/corpus"
        ( cd "$work/$name" &&
          "$exe" -max_total_time="$seconds" -jobs="$jobs" -workers="$jobs" -max_len=4096 -timeout=20 \
                -rss_limit_mb=2048 -error_exitcode=1 -artifact_prefix="$work/$name/artifacts/" \
                "${dict[@]}" corpus "$seeds" > "$work/$name/log" 2>&1 ) || found=1
        n=$(find "$work/$name/corpus" -type f | wc -l)
        crashes=$(find "$work/$name/artifacts" -type f | wc -l)
        echo "   corpus: $n inputs; crashes, leaks, timeouts: $crashes; $(grep -m1 -oE 'stat::number_of_executed_units: *[0-9]+' "$work/$name/log" || tail -n 1 "$work/$name/log")"
        [ "$crashes" = 0 ] || { found=1; ls "$work/$name/artifacts"; }
done
exit "$found"

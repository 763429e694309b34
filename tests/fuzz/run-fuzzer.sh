#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# A bounded libFuzzer run (meson test --suite fuzz): FUZZER SEED-DIR RUNS [extra libFuzzer args].
# New inputs go to a scratch directory (the first corpus directory), never into the tree; a
# crash leaves its input in the scratch directory's artifacts and is printed.
set -euo pipefail
fuzzer=$1 seeds=$2 runs=$3
shift 3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/corpus" "$work/artifacts"
dict=()
[ -e "$seeds.dict" ] && dict=(-dict="$seeds.dict")   # corpus/<corpus>.dict, if there is one
rc=0
"$fuzzer" -runs="$runs" -max_len=4096 -timeout=20 -rss_limit_mb=2048 -print_final_stats=1 -error_exitcode=1 -timeout_exitcode=1 \
        -artifact_prefix="$work/artifacts/" "${dict[@]}" "$@" "$work/corpus" "$seeds" >"$work/log" 2>&1 || rc=$?
tail -n 25 "$work/log"
for a in "$work"/artifacts/*; do
        [ -e "$a" ] || continue
        echo "crash input $(basename "$a") (base64, add it to $seeds as regress-<what> once fixed):"
        base64 -w 76 "$a" | head -n 100
done
# A run that did fewer inputs than asked (it stopped early, or never started) proves less than
# it says: "Done N runs" must reach RUNS.
done_runs=$(sed -n 's/^Done \([0-9]*\) runs.*/\1/p' "$work/log" | tail -n 1)
if [ "$rc" = 0 ] && [ "${done_runs:-0}" -lt "$runs" ]; then
        echo "the fuzzer ran ${done_runs:-no} inputs, fewer than the $runs asked for"
        rc=1
fi
exit "$rc"

#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The VM tier on Debian 13: the cached trixie root (trixie-root.sh) as the guest's root over
# 9p, Debian 13's kernel (6.12) from that root's archive, systemd 257 as PID 1 on a pure
# cgroup v2 hierarchy, cloister built in the root (trixie-build.sh); the suites of the Debian
# 12 VM tier through tests/vm/vm-run.sh unchanged.
#
#   vm-trixie.sh prepare                     the kernel and initramfs (network: Debian's archive)
#   vm-trixie.sh SOURCE_ROOT BUILD SUITE...  SUITE: limits, sandbox, battery
#
# Cache: $CLOISTER_TRIXIE_VM_CACHE (/var/cache/cloister-tests/vm-trixie). Prints one TAP
# stream per suite ("# suite NAME" first); exits 1 if any failed. Each stream is also
# recorded as the test trixie-vm-NAME in BUILD/meson-logs/testlog-trixie-vm.json
# (tests/trixie/testlog.py), which run-all's SKIP and docs/security.md checks read.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
export CLOISTER_VM_CACHE=${CLOISTER_TRIXIE_VM_CACHE:-/var/cache/cloister-tests/vm-trixie}
root=$("$here/trixie-root.sh" path) || { echo "vm-trixie: run tests/trixie/trixie-root.sh prepare first" >&2; exit 2; }

if [ "${1:-}" = prepare ]; then
        CLOISTER_VM_APT_ROOT=$root exec bash "$here/../vm/vm-image.sh" prepare
fi

src=$(cd "$1" && pwd) build=$2
shift 2
"$here/trixie-build.sh" "$src" "$build" --install >&2
build=$(cd "$build" && pwd)
log=$build/meson-logs/testlog-trixie-vm.json
mkdir -p "$build/meson-logs"
rm -f "$log"

status=0
for suite in "$@"; do
        case $suite in
        limits) args=("$src/tests/vm/suite-limits.sh" "$src/tests/vm/limit-agents") ;;
        sandbox) args=("$src/tests/integration/suite-sandbox.sh" "$build/tests/integration/sandbox-probe") ;;
        battery) args=("$src/tests/integration/suite-battery.sh" "$build/tests/battery/battery") ;;
        *) echo "vm-trixie: no VM suite $suite" >&2; exit 2 ;;
        esac
        echo "# suite $suite"
        t0=$SECONDS
        out=$(CLOISTER_VM_ROOT=$root CLOISTER_VM_DEST=$build/dest CLOISTER_VM_TIMEOUT=${CLOISTER_VM_TIMEOUT:-1200} \
                "$here/../vm/vm-run.sh" "$build" "$src" "${args[@]}") || status=1
        printf '%s\n' "$out"
        result=$(python3 "$here/testlog.py" "$log" "trixie-vm-$suite" <<<"$out")
        echo "# suite $suite: $result, $(grep -c '^ok' <<<"$out") ok, $(grep -c '^not ok' <<<"$out") not ok, $((SECONDS - t0)) s"
        [ "$result" = FAIL ] && status=1
done
exit "$status"

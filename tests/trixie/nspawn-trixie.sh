#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The nspawn tier on Debian 13: systemd 257 as PID 1 (systemd-nspawn --boot of the cached
# trixie root, trixie-root.sh), with cloister built in that root (trixie-build.sh), running
# the integration suites of tests/integration/ through nspawn-run.sh unchanged.
#
#   nspawn-trixie.sh SOURCE_ROOT BUILD SUITE...
#
# SUITE: a suite of tests/integration/ (sandbox, lifecycle, broker, gpu, run, ctl, quickstart,
# sidecar, deps, battery) or mcp-sdk (tests/mcp-sdk/, its packages prepared first), each with
# the payload its nspawn-NAME test of tests/integration/meson.build has.
#
# Prints one TAP stream per suite, each introduced by "# suite NAME", and exits 1 if any
# suite failed (a "not ok", or no complete TAP). Each stream is also recorded as the test
# trixie-nspawn-NAME in BUILD/meson-logs/testlog-trixie-nspawn.json (tests/trixie/testlog.py),
# which run-all's SKIP and docs/security.md checks read. On this tier's hosts (cgroup
# v1/hybrid) the container gets a hybrid hierarchy (systemd's own on cgroup2, the controllers
# on v1), as the Debian 12 nspawn tier does.
set -euo pipefail

src=$(cd "$1" && pwd) build=$2
shift 2
here=$(cd "$(dirname "$0")" && pwd)
root=$("$here/trixie-root.sh" path) || { echo "nspawn-trixie: run tests/trixie/trixie-root.sh prepare first" >&2; exit 2; }

"$here/trixie-build.sh" "$src" "$build" --install >&2
build=$(cd "$build" && pwd)
log=$build/meson-logs/testlog-trixie-nspawn.json
mkdir -p "$build/meson-logs"
rm -f "$log"

status=0
for suite in "$@"; do
        runner=$src/tests/integration/nspawn-run.sh
        payload=$src/tests/broker probe=$build/tests/integration/sandbox-probe
        case $suite in
        battery) payload=$build/tests/battery probe= ;;
        quickstart) payload=$src/README.md probe= ;;
        sidecar) payload=$src/tests/sidecar ;;
        deps) payload=$src/tests/deps ;;
        mcp-sdk) runner=$src/tests/mcp-sdk/nspawn-mcp-sdk.sh payload= ;;
        esac
        script=$src/tests/integration/suite-$suite.sh
        [ -f "$script" ] || { echo "nspawn-trixie: no suite $script" >&2; exit 2; }
        echo "# suite $suite"
        t0=$SECONDS
        out=$(CLOISTER_NSPAWN_ROOT=$root CLOISTER_NSPAWN_DEST=$build/dest CLOISTER_NSPAWN_PAYLOAD=$payload \
                "$runner" "$build" "$src" "$script" $probe) || status=1
        printf '%s\n' "$out"
        result=$(python3 "$here/testlog.py" "$log" "trixie-nspawn-$suite" <<<"$out")
        echo "# suite $suite: $result, $(grep -c '^ok' <<<"$out") ok, $(grep -c '^not ok' <<<"$out") not ok, $((SECONDS - t0)) s"
        [ "$result" = FAIL ] && status=1
done
exit "$status"

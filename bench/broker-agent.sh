#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The load generator of bench/broker.sh, run as the Exec= of role "bench" (Network=daemon-only)
# inside agent@bench.service, so that cloister-broker attributes its requests to that role.
# Runs every line of the plan that bench/broker-suite.sh wrote to $BENCH_PLAN (default
# /srv/bench/plan, read-only in here), in order, and appends one result line per line to
# /output/results. A plan line:
#   PHASE ROUND TARGET CONNS BODY STREAM EVENTS GAP_US WARMUP DURATION
# TARGET is where broker-load connects:
#   direct-unix   bench/broker-upstream.c on a Unix socket (the floor)
#   direct-tcp    the same program on this sandbox's own loopback (TCP floor; started here)
#   proxyd        systemd-socket-proxyd (Unix socket → upstream TCP)
#   nginx         nginx (Unix socket → keep-alive upstream TCP, proxy_buffering off)
#   broker        cloister-broker.service, as shipped, at /run/cloister/broker.sock
#   broker-relay  the same broker through cloister-shim's loopback relay (127.0.0.1:7800)
#   broker-nosb   cloister-broker --listen, in a plain transient unit (no sandbox)
#   broker-base   the same, another build's broker (BASE_BROKER= of bench/broker.sh)
#   pyfake        tests/broker/fake-openai.py on a Unix socket (for scale only)
set -u
X=/payload/extra
S=/srv/bench/sock
plan=${BENCH_PLAN:-/srv/bench/plan}
load=$X/broker-load
[ -r "$plan" ] || { echo "no plan at $plan" >&2; exit 1; }

# The TCP floor: the same upstream program, on this sandbox's loopback (the container's
# loopback, where the real upstream listens, is not reachable from a daemon-only sandbox).
"$X/broker-upstream" --tcp-port 0 --lifetime 7200 > /tmp/local-upstream 2>&1 &
up_pid=$!
for _ in $(seq 100); do grep -q '^PORT ' /tmp/local-upstream 2>/dev/null && break; sleep 0.02; done
local_port=$(sed -n 's/^PORT //p' /tmp/local-upstream)

addr() {
        case $1 in
                direct-unix)  echo --unix "$S/up.sock" ;;
                direct-tcp)   echo --tcp "$local_port" ;;
                proxyd)       echo --unix "$S/proxyd.sock" ;;
                nginx)        echo --unix "$S/nginx.sock" ;;
                broker)       echo --unix /run/cloister/broker.sock ;;
                broker-relay) echo --tcp 7800 ;;
                broker-nosb)  echo --unix "$S/broker-nosb.sock" ;;
                broker-base)  echo --unix "$S/broker-base.sock" ;;
                pyfake)       echo --unix "$S/pyfake.sock" ;;
                *)            return 1 ;;
        esac
}

while read -r phase round target conns body stream events gap warmup duration; do
        case $phase in ''|'#'*) continue ;; esac
        a=$(addr "$target") || { echo "unknown target $target" >&2; continue; }
        s=
        [ "$stream" = 1 ] && s=--stream
        # shellcheck disable=SC2086 # $a is two words on purpose
        r=$("$load" $a --conns "$conns" --body "$body" $s --events "$events" --gap-us "$gap" \
                --warmup "$warmup" --duration "$duration" --label "$target" 2>/tmp/load-err)
        [ -n "$r" ] || r="label=$target error=$(tr -s '\n ' '  ' < /tmp/load-err | cut -c1-200 | tr ' ' _)"
        echo "phase=$phase round=$round target=$target $r" >> /output/results
        sleep 0.2 # a quiet gap, so that CPU samples taken outside separate the runs
done < "$plan"

kill "$up_pid" 2>/dev/null
echo done > /output/done
exit 0

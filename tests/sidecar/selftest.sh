#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The stub runtime behaves as documented (stub-runtime.py), and cloister-sidecar in front of
# it, socket-activated by systemd-socket-activate on a Unix socket in a temporary directory,
# without a sandbox: held then relayed, 503 after --start-timeout, readiness re-checked after
# the runtime went away, no socket → refuses to run. Loopback and Unix sockets only; ends
# only the PIDs it started. TAP.
#
#   selftest.sh CLOISTER_SIDECAR
set -u
SIDECAR=$(realpath "${1:?usage: selftest.sh CLOISTER_SIDECAR}")
cd "$(dirname "$0")"
HERE=$PWD

for t in curl python3; do
        command -v $t >/dev/null 2>&1 || { echo "1..0 # SKIP $t not found"; exit 0; }
done
. "$HERE/../integration/tap.sh"

T=$(mktemp -d "${TMPDIR:-/tmp}/cloister-sidecar-selftest.XXXXXX")
PIDS=()
cleanup() {
        local p
        for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
        for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null; done
        rm -rf "$T"
}
trap cleanup EXIT

stub() { # NAME ARGS… → waits for "PORT n"; sets PORT_<NAME>, PID_<NAME>
        local name=$1 i; shift
        python3 "$HERE/stub-runtime.py" "$@" > "$T/$name.out" 2> "$T/$name.err" &
        PIDS+=($!)
        eval "PID_$name=$!"
        for i in $(seq 100); do grep -q '^PORT ' "$T/$name.out" 2>/dev/null && break; sleep 0.05; done
        eval "PORT_$name=$(sed -n 's/^PORT //p' "$T/$name.out")"
}
code() { curl -s -m 30 -o "$T/body" -w '%{http_code}' "$@"; }

# --- the stub ---------------------------------------------------------------------------
stub slow --port 0 --healthy-after 1
U=http://127.0.0.1:$PORT_slow
check "stub: /health 503 while loading" [ "$(code $U/health)" = 503 ]
sleep 1.2
check "stub: /health 200 after --healthy-after" [ "$(code $U/health)" = 200 ]
check "stub: /id is 16 hex digits" bash -c "[ \"\$(curl -s $U/id)\" != '' ] && curl -s $U/id | grep -Eqx '[0-9a-f]{16}'"
check "stub: GET /echo answers the request line" bash -c "curl -s $U/echo | grep -q '^GET /echo HTTP/1.1'"
check "stub: POST /echo answers the body" [ "$(curl -s --data-binary abc $U/echo)" = abc ]
check "stub: lockstep SSE" [ "$(python3 "$HERE/sse-client.py" "127.0.0.1:$PORT_slow")" = ok ]
check "stub: /connect reports a refused connection" bash -c "curl -s '$U/connect?host=127.0.0.1&port=9' | grep -q '\"connected\": false'"
check "stub: /crash answers" [ "$(code $U/crash)" = 200 ]
wait "$PID_slow"
check "stub: /crash exits with status 3" [ $? = 3 ]
stub never --port 0 --never-healthy
check "stub: --never-healthy stays 503" [ "$(code http://127.0.0.1:$PORT_never/health)" = 503 ]

# --- cloister-sidecar in front of it -----------------------------------------------------
"$SIDECAR" --port=1 --start-timeout=1s --max-connections=1 x 2>"$T/nosock.err"; rc=$?
check "sidecar: refuses to run without a socket from systemd (status $rc)" \
        all "[ $rc -ne 0 ] && [ $rc -ne 127 ]" "grep -q 'no listening socket' '$T/nosock.err'"
"$SIDECAR" --port=1 --health=health --start-timeout=1s --max-connections=1 x 2>"$T/badhealth.err"; rc=$?
check "sidecar: refuses a bad --health= (status $rc)" \
        all "[ $rc -ne 0 ] && [ $rc -ne 127 ]" "grep -qi 'health' '$T/badhealth.err'"
ACT=$(command -v systemd-socket-activate || true)
if [ -z "$ACT" ]; then
        skip "sidecar: socket-activated cases" "systemd-socket-activate not found"
        tap_done; exit 0
fi
proxy() { # NAME PORT [ARGS…] → socket $T/NAME.sock
        local name=$1 port=$2 i; shift 2
        "$ACT" -l "$T/$name.sock" "$SIDECAR" --port="$port" --max-connections=8 "$@" "$name" > "$T/$name.log" 2>&1 &
        PIDS+=($!)
        for i in $(seq 100); do [ -S "$T/$name.sock" ] && break; sleep 0.05; done
}
ucode() { code --unix-socket "$1" "http://sidecar$2"; }

# a runtime that only listens 1 s after the first connection
P=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
proxy cold "$P" --health=/health --start-timeout=20s
ucode "$T/cold.sock" /id > "$T/cold.code" &
c=$!
sleep 1
stub late --port "$P" --healthy-after 1
wait $c
check "sidecar: held until the runtime answered /health 200 ($(cat "$T/cold.code"))" [ "$(cat "$T/cold.code")" = 200 ]
check "sidecar: ... and logged how long it waited" grep -q 'the runtime is ready (after' "$T/cold.log"
check "sidecar: SSE in lockstep through the proxy" [ "$(python3 "$HERE/sse-client.py" "$T/cold.sock")" = ok ]
ucode "$T/cold.sock" /crash > /dev/null
for i in $(seq 100); do kill -0 "$PID_late" 2>/dev/null || break; sleep 0.05; done
kill "$PID_late" 2>/dev/null # bounded: gone by now, unless /crash never reached it
ucode "$T/cold.sock" /id > "$T/again.code" &
c=$!
sleep 0.5
stub again --port "$P" --healthy-after 0.5
wait $c
check "sidecar: after the runtime went away, the next connection waits for it again ($(cat "$T/again.code"))" \
        [ "$(cat "$T/again.code")" = 200 ]
check "sidecar: ... and says so" grep -q 'refused a connection' "$T/cold.log"

proxy broken "$PORT_never" --health=/health --start-timeout=1s
check "sidecar: 503 after --start-timeout=" [ "$(ucode "$T/broken.sock" /id)" = 503 ]
check "sidecar: a JSON error of type sidecar_unavailable" python3 -c "
import json; d = json.load(open('$T/body'))['error']; assert d['type'] == 'sidecar_unavailable' and d['code'] == 503"
check "sidecar: the reason is logged" grep -q 'not ready after StartTimeout=1s.*answered 503' "$T/broken.log"
tap_done

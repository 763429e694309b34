#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# cloister-sidecar beside systemd-socket-proxyd (the anchor) and socat, in one run, on this
# host (no sandbox: the relays are compared, not the confinement). Everything is loopback TCP
# or Unix sockets in a temporary directory; only the PIDs this script starts are ended.
#
#   bench/relay.sh BUILD_DIR
#
# The relays listen on a Unix socket (as sidecar@NAME.socket does) and connect to a backend
# on 127.0.0.1 (bench/relay-load.c, a thread per connection). cloister-sidecar and
# socket-proxyd are started by systemd-socket-activate on the first connection; socat
# listens itself (UNIX-LISTEN,fork), and for the cold start runs inetd-style (one socat per
# connection, systemd-socket-activate --accept). Tunables (environment): BYTES (bulk, default
# 1 GiB), PINGS (latency round trips, 20000), CONNECTS (new connections, 2000), CONNS
# (concurrent connections, 256), ROUNDS (round trips per concurrent connection, 100),
# COLD (cold starts per relay, 20), REPEAT (rounds, 5).
set -euo pipefail

build=$(cd "${1:?usage: bench/relay.sh BUILD_DIR}" && pwd)
src=$(cd "$(dirname "$0")/.." && pwd)
SIDECAR=$build/helpers/sidecar/cloister-sidecar
PROXYD=/lib/systemd/systemd-socket-proxyd
ACTIVATE=$(command -v systemd-socket-activate || true)
SOCAT=$(command -v socat || true)
BYTES=${BYTES:-1073741824} PINGS=${PINGS:-20000} CONNECTS=${CONNECTS:-2000}
CONNS=${CONNS:-256} ROUNDS=${ROUNDS:-100} COLD=${COLD:-20} REPEAT=${REPEAT:-5}

die() { echo "relay.sh: $*" >&2; exit 1; }
[ -x "$SIDECAR" ] || die "no $SIDECAR (meson compile -C $build first)"
[ -x "$PROXYD" ] || die "no $PROXYD"
[ -n "$ACTIVATE" ] || die "no systemd-socket-activate (Debian: systemd)"
[ -n "$SOCAT" ] || die "no socat (Debian: socat)"

tmp=$(mktemp -d /tmp/cloister-relay-bench.XXXXXX)
PIDS=()
cleanup() {
        local p
        for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
        for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
        rm -rf "$tmp"
}
trap cleanup EXIT
${CC:-cc} -O2 -Wall -pthread -o "$tmp/relay-load" "$src/bench/relay-load.c" || die "cannot build bench/relay-load.c"
L=$tmp/relay-load

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
# listening, not only bound (the file exists before listen()); without connecting to it,
# which would start the relay
wait_for() { local i; for i in $(seq 500); do ss -xlnH | grep -qF " $1 " && return 0; sleep 0.01; done; die "nothing listens on $1"; }

backend() { # PORT [LISTEN_AFTER_MS] → BACKEND_PID; waits for LISTEN unless delayed
        "$L" backend --port "$1" --listen-after-ms "${2:-0}" > "$tmp/backend-$1.out" &
        BACKEND_PID=$!
        PIDS+=("$BACKEND_PID")
        if [ "${2:-0}" = 0 ]; then
                local i; for i in $(seq 200); do [ -s "$tmp/backend-$1.out" ] && return 0; sleep 0.01; done
                die "backend on port $1 did not start"
        fi
}

relay() { # NAME PORT SOCKET → RELAY_PID (listening on SOCKET)
        rm -f "$3"
        case $1 in
        cloister-sidecar) # exec: $! must be the relay itself, not a subshell around it
                exec "$ACTIVATE" -l "$3" "$SIDECAR" --port="$2" --start-timeout=60s --max-connections=4096 bench ;;
        socket-proxyd)
                exec "$ACTIVATE" -l "$3" "$PROXYD" --connections-max=4096 "127.0.0.1:$2" ;;
        socat)
                exec "$SOCAT" "UNIX-LISTEN:$3,fork,backlog=4096" "TCP:127.0.0.1:$2" ;;
        socat-inetd)
                exec "$ACTIVATE" --accept -l "$3" "$SOCAT" FD:3 "TCP:127.0.0.1:$2" ;;
        esac > "$tmp/$1.log" 2>&1 &
        RELAY_PID=$!
        PIDS+=("$RELAY_PID")
        wait_for "$3"
}
stop() { kill "$1" 2>/dev/null || true; wait "$1" 2>/dev/null || true; }
val() { sed -n "s/.*\b$1=\([^ ]*\).*/\1/p" <<<"$2"; }

PORT=$(free_port)
backend "$PORT"
ulimit -n "$(ulimit -Hn)"

printf '# bench/relay.sh on %s, %s cores, %s\n' "$(uname -r)" "$(nproc)" "$(date -u +%FT%TZ)"
printf '# cloister-sidecar %s (%s), %s, %s\n' "$(git -C "$src" rev-parse --short HEAD 2>/dev/null || echo '?')" \
        "$(basename "$build")" "$($PROXYD --version | head -1)" "$($SOCAT -V | sed -n 's/^socat version \([^ ]*\).*/socat \1/p')"
echo
# Each round measures every relay once, in turn, so that what else runs on the machine
# meanwhile spreads over all of them; the tables give the median of the rounds.
RELAYS=(direct cloister-sidecar socket-proxyd socat)
R=$tmp/results
mkdir -p "$R"
for round in $(seq "$REPEAT"); do
        for r in "${RELAYS[@]}"; do
                if [ $r = direct ]; then
                        T=(--tcp "$PORT")
                else
                        relay $r "$PORT" "$tmp/$r.sock"
                        T=(--unix "$tmp/$r.sock")
                        "$L" first-byte "${T[@]}" > /dev/null # activation happens here, not in a measurement
                fi
                down=$("$L" bulk "${T[@]}" --bytes "$BYTES" --direction down)
                up=$("$L" bulk "${T[@]}" --bytes "$BYTES" --direction up)
                [ "$(val ok "$down")" = 1 ] && [ "$(val ok "$up")" = 1 ] || die "$r: bulk transfer incomplete: $down / $up"
                rtt=$("$L" latency "${T[@]}" --count "$PINGS" --size 64)
                con=$("$L" connect "${T[@]}" --count "$CONNECTS")
                conc=$("$L" concurrent "${T[@]}" --conns "$CONNS" --count "$ROUNDS" --size 64)
                {
                        echo "down $(val MBps "$down")"; echo "up $(val MBps "$up")"
                        echo "rtt50 $(val p50_us "$rtt")"; echo "rtt99 $(val p99_us "$rtt")"
                        echo "con50 $(val p50_us "$con")"; echo "con99 $(val p99_us "$con")"
                        echo "rps $(val rps "$conc")"; echo "conc99 $(val p99_us "$conc")"
                        if [ $r != direct ]; then
                                echo "rss $(sed -n 's/^VmHWM:[[:space:]]*\([0-9]*\).*/\1/p' "/proc/$RELAY_PID/status" 2>/dev/null)"
                        fi
                } >> "$R/$r"
                [ $r = direct ] || stop "$RELAY_PID"
        done
done
med() { # RELAY KEY
        local v
        v=$(sed -n "s/^$2 //p" "$R/$1" | sort -g | awk '{a[NR]=$1} END {if (NR) print a[int((NR+1)/2)]; else print "-"}')
        echo "${v:--}"
}
echo "Median of $REPEAT rounds. Bulk: $BYTES bytes through one connection. RTT: $PINGS round trips"
echo "of 64 bytes on one connection. New conn: connect, 1 byte each way, close ($CONNECTS times)."
echo "$CONNS conns: $CONNS connections open at once, $ROUNDS round trips of 64 bytes each."
echo
echo "| relay | bulk down MB/s | bulk up MB/s | RTT p50 µs | RTT p99 µs | new conn p50 µs | new conn p99 µs | $CONNS conns req/s | $CONNS conns p99 µs | peak RSS KiB |"
echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
for r in "${RELAYS[@]}"; do
        echo "| $r | $(med $r down) | $(med $r up) | $(med $r rtt50) | $(med $r rtt99) | $(med $r con50) | $(med $r con99) | $(med $r rps) | $(med $r conc99) | $(med $r rss) |"
done

# --- cold start: connect() on a socket whose relay is not running yet → first answer byte --
pct() { sort -g | awk '{a[NR]=$1} END {i=int(NR*0.99); if (i<1) i=1; printf "%.0f %.0f %.0f\n", a[int((NR+1)/2)], a[i], a[NR]}'; }
echo
echo "Cold start, runtime warm: connect() to the first byte through a relay that is started by"
echo "this connection ($COLD runs each; µs)."
echo
echo "| relay | p50 | p99 | max | failed |"
echo "| --- | ---: | ---: | ---: | ---: |"
for r in cloister-sidecar socket-proxyd socat-inetd; do
        for i in $(seq "$COLD"); do
                relay $r "$PORT" "$tmp/cold-$r-$i.sock" # a new path each time: no stale listener in ss
                if out=$("$L" first-byte --unix "$tmp/cold-$r-$i.sock" 2>&1); then
                        val first_byte_us "$out"
                else
                        echo "$r, cold start $i: $out" >> "$tmp/cold-failures"
                fi
                stop "$RELAY_PID"
        done > "$tmp/cold-$r"
        read -r p50 p99 max < <(pct < "$tmp/cold-$r")
        echo "| $r | $p50 | $p99 | $max | $((COLD - $(wc -l < "$tmp/cold-$r"))) |"
done

[ -s "$tmp/cold-failures" ] && { echo; sed 's/^/Failed: /' "$tmp/cold-failures"; }

# --- cold start, runtime not warm: the backend starts listening DELAY ms after the first
# connection. What the relay adds is the time from the backend's listen() to the first byte.
echo
echo "Cold start, runtime not warm (cloister-sidecar only: socket-proxyd and socat refuse a"
echo "connection that arrives before the runtime listens): the first connection arrives, the"
echo "runtime listens DELAY ms later; lag = first byte − the runtime's listen() (ms)."
echo
echo "| DELAY ms | lag ms |"
echo "| ---: | ---: |"
P2=$(free_port)
for delay in 100 300 1000 3000; do
        relay cloister-sidecar "$P2" "$tmp/late-$delay.sock"
        "$L" first-byte --unix "$tmp/late-$delay.sock" > "$tmp/first" &
        client=$!
        PIDS+=("$client")
        backend "$P2" "$delay"
        wait "$client"
        listen=$(sed -n 's/^LISTEN //p' "$tmp/backend-$P2.out")
        at=$(val at_ns "$(cat "$tmp/first")")
        echo "| $delay | $(awk -v a="$at" -v l="$listen" 'BEGIN { printf "%.1f", (a - l) / 1e6 }') |"
        stop "$RELAY_PID"
        stop "$BACKEND_PID"
done
for r in socket-proxyd; do
        relay $r "$P2" "$tmp/none.sock"
        if "$L" first-byte --unix "$tmp/none.sock" > /dev/null 2>&1; then
                echo; echo "($r answered with no runtime listening: unexpected)"
        else
                echo; echo "($r with no runtime listening: the connection is closed at once, as expected.)"
        fi
        stop "$RELAY_PID"
done

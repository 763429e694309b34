#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Runs inside a throwaway systemd (tests/integration/nspawn-run.sh, started by
# bench/broker.sh) as root. Sets up, all on the container's loopback and on Unix sockets:
#   upstream      bench/broker-upstream.c on 127.0.0.1:PORT and on $S/up.sock
#   pyfake        tests/broker/fake-openai.py on $S/pyfake.sock (for scale only)
#   proxyd        systemd-socket-proxyd on $S/proxyd.sock → 127.0.0.1:PORT
#   nginx         nginx on unix:$S/nginx.sock → 127.0.0.1:PORT (keep-alive, proxy_buffering off)
#   broker        cloister-broker.socket/.service as shipped → [LLM] Endpoint=127.0.0.1:PORT
#   broker-nosb   cloister-broker --listen=$S/broker-nosb.sock in a plain transient unit
#   broker-base   the same for another build's broker (BASE_BROKER= of bench/broker.sh)
# and role "bench" (Network=daemon-only, high [Broker] limits), whose agent is
# bench/broker-agent.sh: the load generator, started as agent@bench.service so that the
# broker attributes its requests to the role. bench/broker-sample.py samples the CPU time
# and RSS of every server meanwhile; bench/broker-report.py turns it all into tables.
# Prints TAP; the tables are "# " lines, every raw result a "# raw " line.
set -u
. "$PAYLOAD/tap.sh"
. "$PAYLOAD/extra/llm-upstream.sh"

# With --volatile=yes only /usr comes from the host: /usr/bin/awk points into a missing
# /etc/alternatives. Debian's /usr/bin/mawk is always there.
awk() { if [ -x /usr/bin/mawk ]; then /usr/bin/mawk "$@"; else command awk "$@"; fi; }

X=$PAYLOAD/extra
CFG=$CLOISTER_CFG
B=/srv/bench S=/srv/bench/sock O=/srv/bench/out
PIDS=$B/pids META=$B/meta SAMPLES=$B/samples
MSGID=8d2e4f1a6b7c4e0f9a3b5c7d1e2f4a6b
param() { cat "$X/$1" 2>/dev/null || echo "$2"; }
ROUNDS=$(param rounds 2) DURATION=$(param duration 2) WARMUP=$(param warmup 0.5) LONG=$(param long 120)
CONNS=$(param conns "1 8 64") BODIES=$(param bodies "200 102400")
TARGETS=$(param targets "direct-unix direct-tcp proxyd nginx broker broker-relay broker-nosb")
SSE_GAP=$(param sse-gap 5000)
BROKER_BIN=$(param broker-bin /usr/libexec/cloister/cloister-broker)
NGINX=/usr/sbin/nginx
[ -x "$X/nginx-bin" ] && NGINX=$X/nginx-bin

mkdir -p "$S" "$O" "$B/nginx" "$CFG/roles" "$CFG/cloister.conf.d" /etc/credstore
chmod 0755 "$B" "$S"
chmod 0777 "$O"
: > "$PIDS"
: > "$META"
bail() { diag "$*"; notok "$*"; tap_done; exit 0; }

wait_for() { # FILE [GREP_PATTERN]: up to 10 s
        local i
        for (( i = 0; i < 500; i++ )); do
                if [ -n "${2:-}" ]; then grep -q "$2" "$1" 2>/dev/null && return 0
                else [ -e "$1" ] && return 0; fi
                sleep 0.02
        done
        return 1
}

python3 "$X/broker-sample.py" "$PIDS" "$SAMPLES" 0.05 &
SAMPLER=$!
echo "journald $(systemctl show -P MainPID systemd-journald.service)" >> "$PIDS"

# --- the upstreams --------------------------------------------------------------------------
"$X/broker-upstream" --tcp-port 0 --unix "$S/up.sock" --lifetime 7200 > "$B/upstream.out" 2>&1 &
echo "upstream $!" >> "$PIDS"
wait_for "$B/upstream.out" '^UNIX ' || bail "broker-upstream did not start: $(cat "$B/upstream.out")"
UP_PORT=$(sed -n 's/^PORT //p' "$B/upstream.out")

python3 "$X/fake-openai.py" --unix "$S/pyfake.sock" --lifetime 7200 > "$B/pyfake.out" 2>&1 &
echo "pyfake $!" >> "$PIDS"
wait_for "$B/pyfake.out" '^UNIX ' && chmod 0666 "$S/pyfake.sock"

# --- systemd-socket-proxyd (started by its first connection, as by a .socket unit) ----------
systemd-socket-activate -l "$S/proxyd.sock" /usr/lib/systemd/systemd-socket-proxyd \
        --connections-max=4096 "127.0.0.1:$UP_PORT" > "$B/proxyd.out" 2>&1 &
PROXYD=$!
wait_for "$S/proxyd.sock" && chmod 0666 "$S/proxyd.sock"
curl -s --unix-socket "$S/proxyd.sock" -o /dev/null http://localhost/health
echo "proxyd $PROXYD" >> "$PIDS"

# --- nginx ---------------------------------------------------------------------------------
cat > "$B/nginx/nginx.conf" <<EOF
# One worker: the broker and systemd-socket-proxyd are single-threaded too.
worker_processes 1;
worker_rlimit_nofile 16384;
daemon off;
user root;
pid $B/nginx/nginx.pid;
error_log $B/nginx/error.log warn;
events { worker_connections 4096; }
http {
        # nginx's equivalent of the broker's audit record: its default access log.
        access_log $B/nginx/access.log;
        client_body_temp_path $B/nginx/body;
        proxy_temp_path $B/nginx/proxy;
        fastcgi_temp_path $B/nginx/fastcgi;
        uwsgi_temp_path $B/nginx/uwsgi;
        scgi_temp_path $B/nginx/scgi;
        client_max_body_size 1m;
        # Keep 100 KB bodies in memory, as the broker does (the default spools them to disk).
        client_body_buffer_size 1m;
        keepalive_requests 1000000;
        keepalive_timeout 300s;
        upstream llm {
                server 127.0.0.1:$UP_PORT;
                keepalive 256;
                keepalive_requests 1000000;
        }
        server {
                listen unix:$S/nginx.sock;
                location / {
                        proxy_pass http://llm;
                        proxy_http_version 1.1;
                        proxy_set_header Connection "";
                        proxy_buffering off;
                }
        }
}
EOF
"$NGINX" -c "$B/nginx/nginx.conf" > "$B/nginx/out" 2>&1 &
NGINX_PID=$!
wait_for "$S/nginx.sock" && chmod 0666 "$S/nginx.sock"
sleep 0.2
echo "nginx $NGINX_PID" >> "$PIDS"
for p in $(pgrep -P "$NGINX_PID"); do echo "nginx $p" >> "$PIDS"; done

# --- the broker ----------------------------------------------------------------------------
llm_upstream bench "$UP_PORT" gpt-bench sk-bench-secret
cat > "$CFG/roles/bench.role" <<EOF
[Role]
Description=broker benchmark load generator
Exec=$X/broker-agent.sh

[Sandbox]
Network=daemon-only
Memory=4G
CPUs=2
Timeout=1h
Output=$O

[Broker]
RequestsPerMinute=1000000000
TokensPerMinute=1000000000
MaxRequestBytes=1M
MaxConcurrent=100000
EOF
systemctl daemon-reload
systemctl start cloister-broker.socket cloister-broker.service
BROKER=$(systemctl show -P MainPID cloister-broker.service)
# (the process restarted with the audit drop-in below is "broker" in the samples)
echo "broker-shipped $BROKER" >> "$PIDS"

# The same binary outside the unit's sandbox (and without its syscall filter), with journald's
# rate limit out of the way for its records; config and roles are the same files.
systemd-run -q --unit=bench-broker-nosb -p LogRateLimitIntervalSec=1s -p LogRateLimitBurst=100000000 \
        --setenv=CREDENTIALS_DIRECTORY=/etc/credstore "$BROKER_BIN" --listen="$S/broker-nosb.sock"
wait_for "$S/broker-nosb.sock"
echo "broker-nosb $(systemctl show -P MainPID bench-broker-nosb.service)" >> "$PIDS"
# Another build's broker (bench/broker.sh BASE_BROKER=), the same way: before and after a
# change, interleaved in one run.
if [ -x "$X/broker-base-bin" ]; then
        systemd-run -q --unit=bench-broker-base -p LogRateLimitIntervalSec=1s -p LogRateLimitBurst=100000000 \
                --setenv=CREDENTIALS_DIRECTORY=/etc/credstore "$X/broker-base-bin" --listen="$S/broker-base.sock"
        wait_for "$S/broker-base.sock"
        echo "broker-base $(systemctl show -P MainPID bench-broker-base.service)" >> "$PIDS"
fi

up=1
for s in up proxyd nginx pyfake broker-nosb $([ -x "$X/broker-base-bin" ] && echo broker-base); do
        u=/health
        [ "$s" = pyfake ] && u=/v1/models
        curl -s --max-time 5 --unix-socket "$S/$s.sock" -o /dev/null -w '%{http_code}' "http://localhost$u" 2>/dev/null | grep -q 200 || {
                up=; diag "$s does not answer $u"; }
done
[ "$(curl -s --max-time 5 --unix-socket /run/cloister/broker.sock -o /dev/null -w '%{http_code}' http://localhost/health)" = 200 ] || {
        up=; diag "the broker does not answer /health"; }
[ "$BROKER" != 0 ] || up=
if [ -z "$up" ]; then
        diag "$(cat "$B/nginx/out" "$B/nginx/error.log" "$B/proxyd.out" "$B/pyfake.out" 2>/dev/null | tail -20)"
        diag "$(journalctl -b -u cloister-broker.service -u bench-broker-nosb.service --no-pager | tail -20)"
fi
check "every server is up (upstream :$UP_PORT, proxyd $PROXYD, nginx $NGINX_PID, broker $BROKER)" [ -n "$up" ]

diag "systemd: $(systemctl --version | head -1); $(nproc) CPU(s); nginx: $("$NGINX" -v 2>&1)"
diag "plan: $ROUNDS round(s) of conns {$CONNS} × body {$BODIES} × {plain, streamed} × targets {$TARGETS}, ${WARMUP}s warm-up + ${DURATION}s each, interleaved"

# --- the agent ----------------------------------------------------------------------------
run_agent() { # PLAN_FILE
        local i s
        cp "$1" "$B/plan"
        rm -f "$O/done"
        systemctl start agent@bench.service || return 1
        echo "shim $(systemctl show -P MainPID agent@bench.service)" >> "$PIDS"
        for (( i = 0; ; i++ )); do
                s=$(systemctl show -P ActiveState agent@bench.service)
                [ "$s" = inactive ] || [ "$s" = failed ] && break
                sleep 0.5
        done
        [ -e "$O/done" ] || diag "$(journalctl -b -u agent@bench.service --no-pager | tail -20)"
        [ -e "$O/done" ]
}
# Journal records of one broker process, once journald has caught up (the count stops moving).
count_records() { # PID
        local n=-1 m
        while :; do
                sleep 1
                m=$(journalctl -q --no-pager _PID="$1" MESSAGE_ID=$MSGID -o cat 2>/dev/null | wc -l)
                [ "$m" = "$n" ] && break
                n=$m
        done
        echo "$n"
}

# 1. Audit as shipped: journald's default rate limit applies to cloister-broker.service.
echo "audit-default 1 broker 64 200 0 16 0 0.5 5" > "$B/plan.audit"
run_agent "$B/plan.audit"
echo "records-audit-default $(count_records "$BROKER")" >> "$META"
sup=$(journalctl -q --no-pager -b -o cat | grep -m1 'Suppressed [0-9]* messages from cloister-broker')
[ -n "$sup" ] && echo "suppressed $sup" >> "$META"

# 2. Every record kept: the rest of the run uses the broker with the rate limit off.
mkdir -p /run/systemd/system/cloister-broker.service.d
# (LogRateLimitIntervalSec=0 alone did not lift the limit on systemd 252: a first run of this
# benchmark with it still lost records. A large burst per second does.)
printf '[Service]\nLogRateLimitIntervalSec=1s\nLogRateLimitBurst=100000000\n' > /run/systemd/system/cloister-broker.service.d/90-bench-audit.conf
systemctl daemon-reload
systemctl restart cloister-broker.service
BROKER=$(systemctl show -P MainPID cloister-broker.service)
echo "broker $BROKER" >> "$PIDS"
echo "audit-norl 1 broker 64 200 0 16 0 0.5 5" > "$B/plan.audit"
run_agent "$B/plan.audit"
echo "records-audit-norl $(count_records "$BROKER")" >> "$META"

# 3. The matrix, interleaved: every target once per cell, the order rotated each round.
{
        read -ra T <<< "$TARGETS"
        for (( r = 1; r <= ROUNDS; r++ )); do
                for stream in 0 1; do
                        for body in $BODIES; do
                                for c in $CONNS; do
                                        for (( k = 0; k < ${#T[@]}; k++ )); do
                                                t=${T[(k + r - 1) % ${#T[@]}]}
                                                echo "main $r $t $c $body $stream 16 0 $WARMUP $DURATION"
                                        done
                                done
                        done
                done
        done
        # 4. SSE pass-through: 20 content events SSE_GAP µs apart, each stamped by the upstream.
        for c in 1 64; do
                for t in $TARGETS; do
                        echo "sse 1 $t $c 200 1 20 $SSE_GAP 0.3 3"
                done
        done
        # 5. How far the Python fake would get.
        for stream in 0 1; do
                for c in 1 8; do
                        echo "pyfake 1 pyfake $c 200 $stream 16 0 0.5 2"
                        echo "pyfake 1 direct-unix $c 200 $stream 16 0 0.5 2"
                done
        done
        # 6. Many requests through the broker, for its RSS: plain, streamed and 100 KB bodies.
        for (( i = 1; i * 20 <= LONG; i++ )); do
                echo "long $i broker 64 200 0 16 0 0 10"
                echo "long $i broker 64 200 1 16 0 0 5"
                echo "long $i broker 8 102400 0 16 0 0 5"
        done
} > "$B/plan.main"
n_plan=$(wc -l < "$B/plan.main")
t_main=$SECONDS
run_agent "$B/plan.main"
diag "main plan: $n_plan runs in $(( SECONDS - t_main )) s"

sleep 1
touch "$B/stop-sampler"
wait "$SAMPLER"

# Whole-run audit completeness for the broker process of steps 2–6 (journald may have
# rotated old records away: see the disk usage).
recs=$(timeout 120 journalctl -q --no-pager _PID="$BROKER" MESSAGE_ID=$MSGID -o cat 2>/dev/null | wc -l)
echo "records-broker-all $recs" >> "$META"
diag "journal: $(journalctl --disk-usage 2>&1)"

n_res=$(wc -l < "$O/results" 2>/dev/null || echo 0)
check "every planned run has a result ($n_res of $(( n_plan + 2 )))" [ "$n_res" = $(( n_plan + 2 )) ]
bad=$(grep -c -E 'error=|bad_status=[1-9]|incomplete=[1-9]' "$O/results")
check "no run had an error answer or a broken connection ($bad with)" [ "$bad" = 0 ]

python3 "$X/broker-report.py" "$O/results" "$SAMPLES" "$META" > "$B/report" 2> "$B/report.err"
check "report" [ -s "$B/report" ]
while IFS= read -r l; do diag "$l"; done < "$B/report"
[ -s "$B/report.err" ] && while IFS= read -r l; do diag "report: $l"; done < "$B/report.err"
while IFS= read -r l; do diag "meta $l"; done < "$META"
diag "broker total answers (broker + relay, steps 2–6): $(awk '/target=broker(-relay)? / && !/phase=audit-default/ { for (i = 1; i <= NF; i++) if ($i ~ /^total_ok=/) { split($i, a, "="); s += a[2] } } END { print s + 0 }' "$O/results"), journal records of that process: $recs"
diag "broker warnings: $(journalctl -q --no-pager -b -u cloister-broker.service -p warning -o cat | sort | uniq -c | sort -rn | head -5)"
diag "nginx errors: $(grep -c . "$B/nginx/error.log" 2>/dev/null) lines; $(head -3 "$B/nginx/error.log" 2>/dev/null)"
while IFS= read -r l; do diag "raw $l"; done < "$O/results"
# The broker's RSS about once a second (the samples themselves are too many to print).
awk '$2 == "broker" && $1 - last >= 1e9 { last = $1; print "# rss " $1 " " $6 }' "$SAMPLES"
kill "$NGINX_PID" "$PROXYD" 2>/dev/null
tap_done

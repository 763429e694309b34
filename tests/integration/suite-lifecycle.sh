#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Runs inside a throwaway systemd (nspawn-run.sh) as root: failure semantics (cloister.role(5), DURABILITY AND FAILURE), signal
# forwarding, the wall-clock ceiling, the environment and [Install] WantedBy=.
set -u
. "$PAYLOAD/tap.sh"
CFG=$CLOISTER_CFG
A=$PAYLOAD/agents
mkdir -p "$CFG/roles"

role() { # NAME DURABILITY TIMEOUT STOPGRACE EXEC [EXTRA LINE…]
        local name=$1 dur=$2 to=$3 grace=$4 exec=$5; shift 5
        mkdir -p "/srv/out/$name" && chmod 0777 "/srv/out/$name" && rm -f "/srv/out/$name"/*
        {
                printf '[Role]\nExec=%s\nDurability=%s\n' "$exec" "$dur"
                for l in "$@"; do case $l in Environment=*) echo "$l" ;; esac; done
                printf '[Sandbox]\nNetwork=none\nMemory=256M\nTimeout=%s\nStopGrace=%s\nOutput=/srv/out/%s\n' "$to" "$grace" "$name"
                for l in "$@"; do case $l in Environment=*) ;; *) echo "$l" ;; esac; done
        } > "$CFG/roles/$name.role"
}
prop() { systemctl show -P "$2" "agent@$1.service"; }
wait_state() { # NAME STATE SECONDS
        local i
        for i in $(seq $(($3 * 10))); do
                [ "$(prop "$1" ActiveState)" = "$2" ] && return 0
                sleep 0.1
        done
        return 1
}
wait_file() { local i; for i in $(seq $(($2 * 10))); do [ -s "$1" ] && return 0; sleep 0.1; done; return 1; }

role timeout-durable durable 2s 1s "$A/trap-term.sh"
role timeout-transient transient 2s 1s "$A/sleeper.sh"
role crash-durable durable 1min 1s "$A/crash-once.sh"
role crash-transient transient 1min 1s "$A/crash-once.sh"
role stopper transient 1min 2s "$A/trap-term.sh"
role envrole transient 1min 1s "$A/env-dump.sh" "Environment=GREETING=hello world" "Environment=LOG_LEVEL=debug"
role atboot transient 1min 1s "$A/sleeper.sh" "[Install]" "WantedBy=multi-user.target"
role quick transient 1min 1s /bin/true
role runner transient 1min 1s "$A/sleeper.sh"
role tmpkeeper transient 1min 1s "$A/tmp-leave.sh"
role tmpfork transient 1min 1s "$A/tmp-fork.sh"
systemctl daemon-reload

# --- Timeout= is terminal, also for a durable role ----------------------------------------
systemctl start agent@timeout-durable.service agent@timeout-transient.service
check "timeout: durable agent is killed and the unit fails" wait_state timeout-durable failed 20
check "timeout: durable agent got SIGTERM first" grep -q TERM /srv/out/timeout-durable/signals
check "timeout: shim exit status 124" [ "$(prop timeout-durable ExecMainStatus)" = 124 ]
check "timeout: the unit's result is timeout ($(prop timeout-durable Result))" [ "$(prop timeout-durable Result)" = timeout ]
sleep 3 # longer than RestartSec=2s: a restart would have happened by now
check "timeout: the durable role is not restarted (NRestarts=$(prop timeout-durable NRestarts))" \
        all '[ "$(prop timeout-durable NRestarts)" = 0 ]' '[ "$(prop timeout-durable ActiveState)" = failed ]'
check "timeout: transient agent stopped too (status $(prop timeout-transient ExecMainStatus))" \
        wait_state timeout-transient failed 20
check "timeout: the journal says Timeout= was reached" bash -c \
        'journalctl -b -o cat -u agent@timeout-durable.service | grep -qE "^cloister-shim: Timeout(=[^ ]+)? reached"'

# --- a crash restarts a durable role, not a transient one ---------------------------------
systemctl start agent@crash-durable.service agent@crash-transient.service
check "crash: transient role fails and stays failed" wait_state crash-transient failed 20
check "crash: transient role died of SIGSEGV ($(prop crash-transient ExecMainStatus))" \
        [ "$(prop crash-transient ExecMainStatus)" = 11 ]
sleep 1
check "crash: transient role is not restarted" [ "$(prop crash-transient NRestarts)" = 0 ]
for _ in $(seq 50); do [ "$(prop crash-durable NRestarts)" -ge 1 ] && break; sleep 0.1; done
check "crash: durable role is restarted after SIGSEGV (NRestarts=$(prop crash-durable NRestarts))" \
        [ "$(prop crash-durable NRestarts)" -ge 1 ]
check "crash: durable role is running again" wait_state crash-durable active 20
check "crash: the restart waited RestartSec=2s, a crash loop's first delay ($(prop crash-durable RestartUSec))" \
        [ "$(prop crash-durable RestartUSec)" = 2s ]
check "crash: durable role keeps /var/lib/cloister/<role> across the restart" \
        [ -e /var/lib/private/cloister/crash-durable/crashed-once ]
systemctl stop agent@crash-durable.service

# --- systemctl stop: SIGTERM to the agent, SIGKILL after StopGrace= -----------------------
systemctl start agent@stopper.service
wait_file /srv/out/stopper/signals 10
systemctl kill --kill-who=main -s HUP agent@stopper.service
for _ in $(seq 30); do grep -q HUP /srv/out/stopper/signals && break; sleep 0.1; done
check "signals: SIGHUP to the shim reaches the agent" grep -q HUP /srv/out/stopper/signals
t0=$(date +%s%N)
systemctl stop agent@stopper.service
t1=$(date +%s%N)
check "stop: the agent got SIGTERM" grep -q TERM /srv/out/stopper/signals
check "stop: the agent that ignores SIGTERM is killed (SIGKILL: status $(prop stopper ExecMainStatus))" \
        [ "$(prop stopper ExecMainStatus)" = 9 ]
elapsed_ms=$(( (t1 - t0) / 1000000 ))
check "stop: SIGKILL came after StopGrace=2s, not before (${elapsed_ms} ms)" [ "$elapsed_ms" -ge 2000 ]

# --- exit status and environment ------------------------------------------------------------
manager_path=$(systemctl show-environment | sed -n 's/^PATH=//p')
systemctl set-environment LEAKED_FROM_MANAGER=1 PATH=/var/tmp/evil:/usr/bin:/bin LANG=xx_XX.UTF-8 TZ=:/var/tmp/evil-zone
systemctl start --wait agent@envrole.service
systemctl unset-environment LEAKED_FROM_MANAGER LANG TZ
if [ -n "$manager_path" ]; then systemctl set-environment PATH="$manager_path"; else systemctl unset-environment PATH; fi
check "exit status: the agent's exit status is the unit's (3)" [ "$(prop envrole ExecMainStatus)" = 3 ]
check "env: Environment= reaches the agent, spaces intact" grep -qx "GREETING=hello world" /srv/out/envrole/env
check "env: CLOISTER_ROLE" grep -qx "CLOISTER_ROLE=envrole" /srv/out/envrole/env
check "env: CLOISTER_NETWORK" grep -qx "CLOISTER_NETWORK=none" /srv/out/envrole/env
check "env: nothing from the manager's environment" lacks /srv/out/envrole/env LEAKED_FROM_MANAGER
check "env: PATH is cloister's, not the manager's" grep -qx "PATH=/usr/local/bin:/usr/bin:/bin" /srv/out/envrole/env
check "env: LANG is C.UTF-8, not the manager's" grep -qx "LANG=C.UTF-8" /srv/out/envrole/env
check "env: no TZ from the manager" lacks /srv/out/envrole/env "^TZ="
check "env: HOME=/tmp" grep -qx "HOME=/tmp" /srv/out/envrole/env
systemctl set-environment LEAKED_FROM_MANAGER=1
diag "manager environment control: $(systemd-run --wait -q --pipe env | grep -c LEAKED_FROM_MANAGER) line(s) in a plain service"
systemctl unset-environment LEAKED_FROM_MANAGER

# --- a role started again and again is never refused, and mounts its /tmp once ----------
# Each start used to mount the role's /tmp and /var/tmp again (StopWhenUnneeded= mount
# units): systemd's default start limit (5 in 10 s) then refused the 6th start with
# "Dependency failed", and PID 1's mount-event rate limit slowed back-to-back starts. Now
# the mounts stay and cloister-stage empties them (cloister-stage(8), EMPTYING /tmp).
mounted_at() { systemctl show -P InactiveExitTimestampMonotonic "run-cloister-$1-quick.mount"; }
VT='var\x2dtmp' # as systemd escapes /run/cloister/var-tmp
refused=0 why=
for i in $(seq 20); do
        if ! err=$(systemctl start agent@quick.service 2>&1); then
                refused=$((refused + 1))
                [ -n "$why" ] || why="start $i: $err (Result=$(prop quick Result); $(systemctl list-units --failed --plain --no-legend | tr '\n' ' '))"
        fi
        [ "$i" = 1 ] && first_tmp=$(mounted_at tmp) first_var=$(mounted_at "$VT")
        for j in $(seq 100); do [ "$(prop quick ActiveState)" = active ] || [ "$(prop quick ActiveState)" = activating ] || break; sleep 0.05; done
done
check "restart: 20 back-to-back starts of one role, none refused ($refused refused)" [ "$refused" = 0 ]
[ -z "$why" ] || { diag "the first refusal: $why"; journalctl -q --no-pager -n 15 -u agent@quick.service -u 'run-cloister-*quick.mount' | sed 's/^/# /'; }
check "restart: the role's unit has no start limit (StartLimitIntervalUSec=$(prop quick StartLimitIntervalUSec))" \
        [ "$(prop quick StartLimitIntervalUSec)" = 0 ]
# an admin's restarts, back to back: each stops the running agent (ExecStopPost= empties its
# /tmp) and starts it again
refused=0
for i in $(seq 20); do systemctl restart agent@runner.service 2>/dev/null || refused=$((refused + 1)); done
check "restart: 20 back-to-back systemctl restart of a running role, none refused ($refused refused)" \
        all '[ "$refused" = 0 ]' '[ "$(prop runner ActiveState)" = active ]'
systemctl stop agent@runner.service
check "restart: the role's /tmp mount unit has no start limit" \
        [ "$(systemctl show -P StartLimitIntervalUSec 'run-cloister-tmp-quick.mount')" = 0 ]
check "restart: /tmp and /var/tmp were mounted once for the 20 starts (at $first_tmp, $first_var; now $(mounted_at tmp), $(mounted_at "$VT"))" \
        all '[ -n "$first_tmp" ] && [ "$first_tmp" != 0 ]' '[ "$(mounted_at tmp)" = "$first_tmp" ]' \
            '[ "$(mounted_at "$VT")" = "$first_var" ]' \
            '[ "$(systemctl show -P ActiveState run-cloister-tmp-quick.mount)" = active ]'

# --- what a start leaves in /tmp is gone at the next, and nothing outside it ---------------
mkdir -p /srv/tmp-canary && echo keep > /srv/tmp-canary/keep
tmpkeeper_run() { systemctl start agent@tmpkeeper.service && wait_state tmpkeeper inactive 20; }
seen() { tr '\n' ' ' < "/srv/out/tmpkeeper/seen-$1" 2>/dev/null; }
tmpkeeper_run
check "tmp: the first start sees an empty /tmp and /var/tmp ($(seen 0))" [ "$(seen 0)" = "/tmp:  /var/tmp: " ]
check "tmp: the agent left 4 entries in /tmp and 2 in /var/tmp ($(cat /srv/out/tmpkeeper/left-0 2>/dev/null))" \
        [ "$(cat /srv/out/tmpkeeper/left-0 2>/dev/null)" = "4 2" ]
check "tmp: the stop emptied them on the host (memory freed: $(ls -A /run/cloister/tmp/tmpkeeper /run/cloister/var-tmp/tmpkeeper | tr '\n' ' '))" \
        all '[ -z "$(ls -A /run/cloister/tmp/tmpkeeper)" ]' '[ -z "$(ls -A /run/cloister/var-tmp/tmpkeeper)" ]'
check "tmp: the symlinks the agent left were not followed (the host's files are intact)" \
        all '[ "$(cat /srv/tmp-canary/keep)" = keep ]' '[ -d /srv/tmp-canary ]'
# what a failed stop would leave: the next start must not see it
echo stale > /run/cloister/tmp/tmpkeeper/left-by-a-failed-stop
mkdir -p /run/cloister/var-tmp/tmpkeeper/d/e && ln -s /srv/tmp-canary /run/cloister/var-tmp/tmpkeeper/d/e/l
tmpkeeper_run
check "tmp: the next start sees them empty again ($(seen 1))" [ "$(seen 1)" = "/tmp:  /var/tmp: " ]
check "tmp: ...and the host's files the leftovers pointed to are intact" [ "$(cat /srv/tmp-canary/keep)" = keep ]
[ "$(seen 1)" = "/tmp:  /var/tmp: " ] || diag "$(journalctl -b -o cat -u agent@tmpkeeper.service | tail -20)"

# a process the agent left behind keeps writing when the agent is stopped: it is killed
# before /tmp is emptied
systemctl start agent@tmpfork.service
sleep 1
systemctl stop agent@tmpfork.service
check "tmp: a process the agent left behind was killed before /tmp was emptied, and it stays empty ($(ls /run/cloister/tmp/tmpfork | wc -l) left)" \
        all 'sleep 0.5; [ -z "$(ls -A /run/cloister/tmp/tmpfork)" ]' \
            'journalctl -b -o cat -u agent@tmpfork.service | grep -Eq "Killed [0-9]+ process(es)? the agent left behind"'
diag "$(journalctl -b -o cat -u agent@tmpfork.service | tail -12)"

# --- [Install] WantedBy= --------------------------------------------------------------------
check "install: WantedBy=multi-user.target is in effect without systemctl enable" bash -c \
        'systemctl show -P WantedBy agent@atboot.service | grep -qw multi-user.target'
check "install: a role without [Install] is wanted by nothing ($(systemctl show -P WantedBy agent@envrole.service))" \
        all 'systemctl show -P Id agent@envrole.service | grep -qx agent@envrole.service' \
            '[ -z "$(systemctl show -P WantedBy agent@envrole.service)" ]'

tap_done

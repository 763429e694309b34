#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Runs inside a throwaway systemd (nspawn-run.sh) as root: cloisterctl run, sealed transient
# agent-run@ROLE.ID.service units started over D-Bus with the locked profile (cloisterctl(1)).
set -u
. "$PAYLOAD/tap.sh"
CFG=$CLOISTER_CFG
FAKE=$PAYLOAD/extra/fake-openai.py
mkdir -p "$CFG/roles" "$CFG/cloister.conf.d" /etc/credstore /srv/in /srv/out
echo "input for the run" > /srv/in/data.txt
chmod -R a+rX /srv/in

# --- a fake upstream behind the broker, as in suite-broker.sh ---------------------------------
coproc FAKEP { exec python3 "$FAKE" --port 0 --record /srv/upstream.jsonl --lifetime 300 --require-auth sk-run-secret; }
read -r _ UP_PORT <&"${FAKEP[0]}"
echo -n "sk-run-secret" > /etc/credstore/llm-key
chmod 0600 /etc/credstore/llm-key
cat > "$CFG/cloister.conf.d/50-test.conf" <<EOF
[Sandbox]
Memory=256M
StopGrace=2s

[LLM]
Endpoint=http://127.0.0.1:$UP_PORT/v1
Model=run-model
APIKeyCredential=llm-key
EOF

role() { # NAME MODE [EXTRA LINES…]
        local name=$1 mode=$2; shift 2
        mkdir -p "/srv/out/$name" && chmod 0777 "/srv/out/$name"
        { printf '[Role]\nExec=/bin/true\n[Sandbox]\nNetwork=%s\nTimeout=2min\nInput=/srv/in\nOutput=/srv/out/%s\n' "$mode" "$name"
          for l in "$@"; do echo "$l"; done; } > "$CFG/roles/$name.role"
}
role sealed none "Tasks=77" "CPUs=0.5" "ReadOnlyMount=/srv/in:/data"
role daemon daemon-only
role wide egress
systemctl daemon-reload
systemctl start cloister-broker.socket
CTL=$(command -v cloisterctl)
[ -n "$CTL" ] || { notok "cloisterctl is installed"; tap_done; exit 0; }

# run OUTFILE ERRFILE ARGS…: cloisterctl run, stdin from /dev/null; prints the exit status
run() {
        local out=$1 err=$2; shift 2
        "$CTL" run "$@" </dev/null >"$out" 2>"$err"
        echo $?
}

# --- each sealed mode: exit status and output come back ---------------------------------------
for r in sealed daemon; do
        rc=$(run /srv/$r.out /srv/$r.err --wait --pipe --role $r -- /bin/sh -c \
                'echo "net=$CLOISTER_NETWORK role=$CLOISTER_ROLE broker=${CLOISTER_BROKER_URL:-none}"; cat /input/data.txt; echo to-stderr >&2; exit 3')
        check "$r: run --wait --pipe returns the command's exit status (rc=$rc)" [ "$rc" = 3 ]
        check "$r: stdout comes back" grep -q "input for the run" /srv/$r.out
        check "$r: stderr comes back" grep -q to-stderr /srv/$r.err
        [ "$rc" = 3 ] || diag "$(cat /srv/$r.out /srv/$r.err)"
done
check "none: CLOISTER_NETWORK=none, CLOISTER_ROLE=sealed, no broker" grep -q "net=none role=sealed broker=none" /srv/sealed.out
check "daemon-only: CLOISTER_NETWORK=daemon-only, broker URL on the loopback" grep -q "net=daemon-only role=daemon broker=http://127.0.0.1:7800" /srv/daemon.out
rc=$(run /srv/arg.out /srv/arg.err --wait --pipe --role sealed -- /bin/echo 'a$b %i %% "q"')
check "arguments arrive literally (\$, %, quotes) ($(cat /srv/arg.out))" [ "$(cat /srv/arg.out)" = 'a$b %i %% "q"' ]
rc=$(run /srv/true.out /srv/true.err --wait --role sealed -- true)
check "a bare command name is found in \$PATH; exit 0 (rc=$rc)" [ "$rc" = 0 ]

# --- the sandbox is the role's ---------------------------------------------------------------
rc=$(run /srv/sb.out /srv/sb.err --wait --pipe --role sealed -- /bin/sh -c \
        'id -u; cat /proc/self/status | grep -E "^(NoNewPrivs|Seccomp|CapEff):"; touch /usr/x 2>/dev/null && echo usr-writable; touch /input/x 2>/dev/null && echo input-writable; touch /output/ok && echo output-writable; cat /data/data.txt')
check "sandbox: not root" bash -c '[ "$(head -1 /srv/sb.out)" != 0 ]'
check "sandbox: no new privileges, seccomp filter, no capabilities" bash -c \
        'grep -q "NoNewPrivs:.1" /srv/sb.out && grep -q "Seccomp:.2" /srv/sb.out && grep -q "CapEff:.0000000000000000" /srv/sb.out'
check "sandbox: read-only OS and /input, writable /output" \
        all 'lacks /srv/sb.out usr-writable' 'lacks /srv/sb.out input-writable' 'grep -q output-writable /srv/sb.out'
check "sandbox: the role's ReadOnlyMount= is there" grep -q "input for the run" /srv/sb.out
[ "$rc" = 0 ] || diag "$(cat /srv/sb.out /srv/sb.err)"

# --- a role without Output=: each run gets a directory systemd manages ------------------------
printf '[Role]\nExec=/bin/true\n[Sandbox]\nNetwork=none\nTimeout=2min\n' > "$CFG/roles/managed.role"
systemctl daemon-reload
rc=$(run /srv/m.out /srv/m.err --wait --pipe --role managed -- /bin/sh -c 'id -u; echo written > /output/result')
results=(/var/lib/private/cloister-output/managed.*/result)
check "no Output=: the run wrote /output/result into its own managed directory (rc=$rc): ${results[*]}" \
        all '[ "$rc" = 0 ]' '[ "${#results[@]}" = 1 ]' '[ "$(cat "${results[0]}")" = written ]'
check "... owned by the run's dynamic user ($(stat -c %u "${results[0]}" 2>/dev/null), the run's UID $(head -1 /srv/m.out))" \
        [ "$(stat -c %u "${results[0]}" 2>/dev/null)" = "$(head -1 /srv/m.out)" ]
check "... and not in the directory of agent@managed" [ ! -e /var/lib/private/cloister-output/managed/result ]
[ "$rc" = 0 ] || diag "$(cat /srv/m.out /srv/m.err)"

# --- --output, --timeout, SIGTERM --------------------------------------------------------------
mkdir -p /srv/out/sealed/run-out /srv/elsewhere && chmod 0777 /srv/out/sealed/run-out /srv/elsewhere
rc=$(run /srv/o.out /srv/o.err --wait --role sealed --output /srv/out/sealed/run-out -- /bin/sh -c 'echo written > /output/result')
check "--output below the role's Output= narrows it (rc=$rc)" [ "$(cat /srv/out/sealed/run-out/result 2>/dev/null)" = written ]
rc=$(run /srv/oe.out /srv/oe.err --wait --role sealed --output /srv/elsewhere -- /bin/sh -c 'echo written > /output/result')
check "--output outside the role's Output= is refused (rc=$rc)" [ "$rc" = 1 ]
check "... naming the role's Output=" grep -q "is not below role sealed's Output=/srv/out/sealed" /srv/oe.err
check "... and nothing was written there" [ ! -e /srv/elsewhere/result ]
rc=$(run /srv/ie.out /srv/ie.err --wait --role sealed --input /etc -- /bin/true)
check "--input outside the role's Input= and ReadOnlyMount= is refused (rc=$rc)" [ "$rc" = 1 ]
rc=$(run /srv/to.out /srv/to.err --wait --role sealed --timeout 2s -- /bin/sleep 30)
check "--timeout is terminal: exit status 124 (rc=$rc)" [ "$rc" = 124 ]
rc=$(run /srv/tw.out /srv/tw.err --wait --role sealed --timeout 5min -- /bin/true)
check "--timeout longer than the role's Timeout= is refused (rc=$rc)" [ "$rc" = 1 ]
check "... with a message that says so" grep -q "would widen" /srv/tw.err

rm -f /srv/out/sealed/run-out/ready /srv/out/sealed/run-out/got-term
"$CTL" run --wait --role sealed --output /srv/out/sealed/run-out -- /bin/sh -c \
        'trap "echo term > /output/got-term; exit 7" TERM; echo ready > /output/ready; while :; do sleep 0.1; done' \
        </dev/null >/srv/sig.out 2>/srv/sig.err &
ctl_pid=$!
for (( i = 0; i < 100; i++ )); do [ -s /srv/out/sealed/run-out/ready ] && break; sleep 0.1; done
kill -TERM "$ctl_pid"
wait "$ctl_pid"
rc=$?
check "SIGTERM to cloisterctl reaches the command (its trap ran)" [ -s /srv/out/sealed/run-out/got-term ]
check "... and cloisterctl exits with the command's status (rc=$rc)" [ "$rc" = 7 ]
[ -s /srv/out/sealed/run-out/got-term ] || diag "$(cat /srv/sig.out /srv/sig.err)"

# --- sealed runs: refused, narrowed, never widened ----------------------------------------------
rc=$(run /srv/w.out /srv/w.err --wait --role wide -- /bin/true)
check "an egress role is refused while RequireSealedRuns= holds (rc=$rc)" [ "$rc" = 1 ]
check "... naming RequireSealedRuns" grep -q RequireSealedRuns /srv/w.err
rc=$(run /srv/wn.out /srv/wn.err --wait --pipe --role wide --network=none -- /bin/sh -c 'echo "net=$CLOISTER_NETWORK"')
check "an egress role narrowed with --network=none runs sealed (rc=$rc)" bash -c \
        '[ "'"$rc"'" = 0 ] && grep -q net=none /srv/wn.out'
rc=$(run /srv/n.out /srv/n.err --wait --role sealed --network=daemon-only -- /bin/true)
check "--network=daemon-only for a none role is refused (rc=$rc)" [ "$rc" = 1 ]
rc=$(run /srv/dn.out /srv/dn.err --wait --pipe --role daemon --network=none -- /bin/sh -c 'echo "net=$CLOISTER_NETWORK broker=${CLOISTER_BROKER_URL:-none}"')
check "a daemon-only role narrowed to none has no broker (rc=$rc)" grep -q "net=none broker=none" /srv/dn.out
echo -e "[Runtime]\nRequireSealedRuns=no" > "$CFG/cloister.conf.d/60-unsealed.conf"
rc=$(run /srv/wu.out /srv/wu.err --wait --pipe --role wide -- /bin/sh -c 'echo "net=$CLOISTER_NETWORK"')
if [ "$rc" = 125 ] && grep -q "IPAddressDeny= is not in effect" /srv/wu.err; then
        skip "with RequireSealedRuns=no an egress role runs as egress" "IPAddressDeny= is not enforced on cgroup v1: the shim refuses egress here (exit 125), as for agent@"
else
        check "with RequireSealedRuns=no an egress role runs as egress (rc=$rc)" grep -q net=egress /srv/wu.out
        [ "$rc" = 0 ] || diag "$(cat /srv/wu.err; journalctl -b -o cat | grep -i -e cloister-shim -e agent-run@wide | tail -8)"
fi
rm -f "$CFG/cloister.conf.d/60-unsealed.conf"
rc=$(run /srv/def.out /srv/def.err --wait --pipe -- /bin/sh -c 'echo "net=$CLOISTER_NETWORK role=$CLOISTER_ROLE"')
check "without --role: the built-in default, Network=none (rc=$rc)" grep -q "net=none role=default" /srv/def.out

# --- the two renderers agree on a live system -------------------------------------------------
"$CTL" run --role sealed -- /bin/sleep 60 </dev/null >/dev/null 2>/srv/live.err
unit=$(sed -n 's/^Running as unit: //p' /srv/live.err)
inst=${unit#agent-run@}; inst=${inst%.service}
PROPS="Type NotifyAccess KillMode Restart DynamicUser PrivateUsers NoNewPrivileges CapabilityBoundingSet
AmbientCapabilities SecureBits ProtectSystem ProtectHome PrivateTmp PrivateDevices DevicePolicy PrivateNetwork
PrivateIPC PrivateMounts ProtectKernelTunables ProtectKernelModules ProtectKernelLogs ProtectClock
ProtectHostname ProtectControlGroups ProtectProc ProcSubset RestrictNamespaces RestrictSUIDSGID
RestrictRealtime LockPersonality MemoryDenyWriteExecute KeyringMode RemoveIPC UMask LimitCORE LimitCORESoft
SystemCallArchitectures SystemCallFilter SystemCallErrorNumber RestrictAddressFamilies IPAddressDeny
IPAddressAllow TemporaryFileSystem InaccessiblePaths BindPaths BindReadOnlyPaths MemoryMax MemorySwapMax
TasksMax CPUQuotaPerSecUSec RuntimeMaxUSec TimeoutStopUSec StandardOutput StandardError RequiresMountsFor"
if [ -n "$unit" ] && [ "$(systemctl show -P ActiveState "$unit")" = active ]; then
        ok "a run without --wait is active as $unit"
        for p in $PROPS; do
                a=$(systemctl show -P "$p" agent@sealed.service)
                b=$(systemctl show -P "$p" "$unit" | sed "s/$inst/sealed/g; s/sealed\.slot-[0-9]*/sealed/g")
                # sets: systemd prints them in hash order (IPAddressDeny= too: "::/0 0.0.0.0/0")
                if [ "$p" = RequiresMountsFor ] || [ "$p" = IPAddressDeny ] || [ "$p" = IPAddressAllow ]; then
                        a=$(tr ' ' '\n' <<<"$a" | sort | xargs) b=$(tr ' ' '\n' <<<"$b" | sort | xargs)
                fi
                if [ "$a" = "$b" ]; then ok "live: $p agrees"; else notok "live: $p agrees"; diag "agent@sealed: $a"; diag "$unit: $b"; fi
        done
        slot=$(grep -l "^$unit " /run/cloister/tmp-slots/* 2>/dev/null | head -1)
        check "live: the run's /tmp is a slot it claimed (${slot:-no claim}), a tmpfs of its own" \
                all '[ -n "$slot" ]' "findmnt -n -t tmpfs /run/cloister/tmp/${slot##*/} >/dev/null"
        # 254+: both renderers add MemoryPressureWatch=no (lib/profile/systemd-version.c)
        sdv=$(systemctl --version | sed -n '1s/^systemd \([0-9]*\).*/\1/p') # no awk: the volatile root has no /etc/alternatives
        if [ "${sdv:-0}" -ge 254 ]; then
                check "live: MemoryPressureWatch=no in the generated unit and in the run" \
                        all '[ "$(systemctl show -P MemoryPressureWatch agent@sealed.service)" = no ]' \
                        "[ \"\$(systemctl show -P MemoryPressureWatch $unit)\" = no ]"
        else
                skip "live: MemoryPressureWatch=no in the generated unit and in the run" "systemd $sdv has no MemoryPressureWatch= (254+)"
        fi
        systemctl stop "$unit"
else
        notok "a run without --wait is active ($(cat /srv/live.err))"
fi

# --- daemon-only: the broker attributes a run to its role ---------------------------------------
rc=$(run /srv/b.out /srv/b.err --wait --pipe --role daemon -- /usr/bin/curl -s -o /dev/null -w '%{http_code}' \
        -H 'Content-Type: application/json' -d '{"model":"x","messages":[{"role":"user","content":"hi"}]}' \
        http://127.0.0.1:7800/v1/chat/completions)
check "daemon-only run reaches the broker (HTTP $(cat /srv/b.out), rc=$rc)" [ "$(cat /srv/b.out)" = 200 ]
sleep 0.5
check "the broker's audit record names role daemon and the agent-run@ unit" bash -c \
        'journalctl -b MESSAGE_ID=8d2e4f1a6b7c4e0f9a3b5c7d1e2f4a6b CLOISTER_ROLE=daemon -o verbose | grep -q "CLOISTER_UNIT=agent-run@daemon\.[0-9a-f]*\.service"'
check "the upstream saw the role's model and the injected key" bash -c \
        'grep -q run-model /srv/upstream.jsonl && grep -q "Bearer sk-run-secret" /srv/upstream.jsonl'

# --- /tmp slots: pre-mounted, one run at a time each, emptied between runs (cloisterctl(1)) ---
SLOTS=/run/cloister/tmp-slots
mkdir -p /srv/tmp-canary && echo keep > /srv/tmp-canary/keep
slot_mounted_at() { systemctl show -P InactiveExitTimestampMonotonic "run-cloister-tmp-sealed.slot\\x2d$1.mount"; }
LEAVE='ls -A /tmp /var/tmp | tr "\n" " "; echo x > /tmp/left; echo x > /var/tmp/left; mkdir /tmp/d; ln -s /srv/tmp-canary /tmp/d/l'
for i in 1 2 3; do
        rc=$(run /srv/slot$i.out /srv/slot$i.err --wait --pipe --role sealed -- /bin/sh -c "$LEAVE")
        [ "$i" = 1 ] && at1=$(slot_mounted_at 0)
done
check "slots: back-to-back runs each find /tmp and /var/tmp empty ($(cat /srv/slot1.out) | $(cat /srv/slot2.out) | $(cat /srv/slot3.out))" \
        all '[ "$(cat /srv/slot2.out)" = "/tmp:  /var/tmp: " ]' '[ "$(cat /srv/slot3.out)" = "/tmp:  /var/tmp: " ]' \
            '[ "$(cat /srv/slot1.out)" = "/tmp:  /var/tmp: " ]'
check "slots: they used slot 0, mounted once for the three (at $at1, now $(slot_mounted_at 0))" \
        all '[ -n "$at1" ] && [ "$at1" != 0 ]' '[ "$(slot_mounted_at 0)" = "$at1" ]' \
            '[ "$(systemctl show -P ActiveState "run-cloister-var\\x2dtmp-sealed.slot\\x2d0.mount")" = active ]'
check "slots: each run's end released the claim and emptied the slot" \
        all '[ ! -e $SLOTS/sealed.slot-0 ]' '[ -z "$(ls -A /run/cloister/tmp/sealed.slot-0)" ]' \
            '[ -z "$(ls -A /run/cloister/var-tmp/sealed.slot-0)" ]'
check "slots: the symlinks runs left were not followed" [ "$(cat /srv/tmp-canary/keep)" = keep ]

# overlapping runs get different slots, each its own /tmp
"$CTL" run --role sealed -- /bin/sh -c 'echo one > /tmp/mine; sleep 30' </dev/null >/dev/null 2>/srv/c1.err
"$CTL" run --role sealed -- /bin/sh -c 'echo two > /tmp/mine; sleep 30' </dev/null >/dev/null 2>/srv/c2.err
u1=$(sed -n 's/^Running as unit: //p' /srv/c1.err) u2=$(sed -n 's/^Running as unit: //p' /srv/c2.err)
sleep 1
check "slots: two overlapping runs hold slots 0 and 1 ($(head -qc 80 $SLOTS/* 2>/dev/null | tr '\n' ' '))" \
        all "grep -q '^$u1 ' $SLOTS/sealed.slot-0" "grep -q '^$u2 ' $SLOTS/sealed.slot-1"
check "slots: each wrote its own /tmp ($(cat /run/cloister/tmp/sealed.slot-0/mine 2>&1), $(cat /run/cloister/tmp/sealed.slot-1/mine 2>&1))" \
        all '[ "$(cat /run/cloister/tmp/sealed.slot-0/mine)" = one ]' '[ "$(cat /run/cloister/tmp/sealed.slot-1/mine)" = two ]'
STAGE=/usr/libexec/cloister/cloister-stage
if [ -x "$STAGE" ]; then
        "$STAGE" start sealed.00000000feedface --tmp=/run/cloister/tmp/sealed.slot-0:32M \
                --claim=$SLOTS/sealed.slot-0 2>/srv/steal.err
        rc=$?
        check "slots: cloister-stage refuses a run whose claim names another unit (status $rc), and empties nothing" \
                all "[ $rc = 125 ]" '[ "$(cat /run/cloister/tmp/sealed.slot-0/mine)" = one ]' \
                    "grep -q 'is claimed by $u1' /srv/steal.err"
        "$STAGE" stop sealed.00000000feedface --tmp=/run/cloister/tmp/sealed.slot-0:32M \
                --claim=$SLOTS/sealed.slot-0 2>/srv/steal-stop.err
        rc=$?
        check "slots: ...nor lets it empty or release the slot at its stop (status $rc)" \
                all "[ $rc != 0 ]" '[ "$(cat /run/cloister/tmp/sealed.slot-0/mine)" = one ]' \
                    "grep -q '^$u1 ' $SLOTS/sealed.slot-0"
else
        notok "slots: cloister-stage is installed at $STAGE"
fi
systemctl stop "$u1" "$u2"
check "slots: stopped, both are released and empty" \
        all "[ ! -e $SLOTS/sealed.slot-0 ] && [ ! -e $SLOTS/sealed.slot-1 ]" \
            '[ -z "$(ls -A /run/cloister/tmp/sealed.slot-0 /run/cloister/tmp/sealed.slot-1 | grep -v :)" ]'

# a transient unit file may stand for a run's or a slot's mount, never for the role's own
mkdir -p /run/systemd/transient
printf '[Mount]\nWhat=/var/lib\nWhere=/run/cloister/tmp/sealed\nType=none\nOptions=bind\n' \
        > '/run/systemd/transient/run-cloister-tmp-sealed.mount'
rc=$(run /srv/shadow.out /srv/shadow.err --wait --pipe --role sealed -- /bin/true)
rm -f '/run/systemd/transient/run-cloister-tmp-sealed.mount'
check "closed surface: a transient unit file for the role's own /tmp mount refuses its runs (rc=$rc)" \
        all "[ $rc != 0 ]" "grep -q 'run-cloister-tmp-sealed.mount: a unit file replaces the unit cloister generates' /srv/shadow.err"

# a claim whose run and cloisterctl are gone (a crash) is taken over
printf 'agent-run@sealed.00000000deadbeef.service 2147483646\n' > $SLOTS/sealed.slot-0
echo stale > /run/cloister/tmp/sealed.slot-0/stale
rc=$(run /srv/stale.out /srv/stale.err --wait --pipe --role sealed -- /bin/sh -c 'ls -A /tmp | tr "\n" " "')
check "slots: a stale claim is taken over, and what it left is gone ($(cat /srv/stale.out); rc=$rc)" \
        all "[ $rc = 0 ]" '[ -z "$(cat /srv/stale.out)" ]' "[ ! -e $SLOTS/sealed.slot-0 ]"

tap_done

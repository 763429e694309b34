#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Runs inside a throwaway systemd (nspawn-run.sh) as root. Starts real agent@<role> units
# whose agent is sandbox-probe, and checks from inside (the probe's report) and outside
# (unit state, journal) that the locked profile holds in each mode. Every probe runs once
# more in a deliberately weakened unit and must flip; where the container itself closes a
# surface (so the probe cannot flip here), that point is a SKIP with the reason.
set -u
. "$PAYLOAD/tap.sh"

CFG=$CLOISTER_CFG
PROBE=$PAYLOAD/sandbox-probe
PORT=7999
mkdir -p "$CFG/roles" "$CFG/projects" /etc/systemd/system

# --- fixtures ---------------------------------------------------------------------------
# Directories are world-writable so that a refused write can only be the mount's doing.
mkdir -p /srv/in /srv/ws/.git /srv/out
chmod 0777 /srv/in /srv/ws /srv/ws/.git
touch /tmp/cloister-host-marker /dev/shm/cloister-host-marker
# The container has only lo (nspawn --private-network): give it "host" interfaces that a
# sandbox sharing its network would see.
ip link add cl-host0 type veth peer name cl-host1 && ip link set cl-host0 up && ip link set cl-host1 up
mkdir -p /run/cloister
# Host-side listeners the sandbox must not reach (and a stand-in broker socket that the
# daemon-only mode must reach): accept and close, for the suite's lifetime.
python3 - <<'PY' &
import os, socket, threading
def serve(s):
    while True:
        c, _ = s.accept(); c.close()
tcp = socket.socket(); tcp.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
tcp.bind(("127.0.0.1", 7999)); tcp.listen(16)
ab = socket.socket(socket.AF_UNIX); ab.bind("\0cloister-probe"); ab.listen(16)
br = socket.socket(socket.AF_UNIX)
try: os.unlink("/run/cloister/broker.sock")
except FileNotFoundError: pass
br.bind("/run/cloister/broker.sock"); os.chmod("/run/cloister/broker.sock", 0o666); br.listen(16)
for s in (tcp, ab, br): threading.Thread(target=serve, args=(s,), daemon=True).start()
open("/run/listeners-ready", "w").close()
threading.Event().wait()
PY
LISTENERS=$!
for _ in $(seq 50); do [ -e /run/listeners-ready ] && break; sleep 0.1; done

cat > "$CFG/projects/ws.project" <<EOF2
[Project]
Workspace=/srv/ws
EOF2

probe_role() { # NAME MODE
        mkdir -p "/srv/out/$1" && chmod 0777 "/srv/out/$1"
        cat > "$CFG/roles/$1.role" <<EOF2
[Role]
Description=sandbox probe ($2)
Exec=$PROBE -p $PORT -m 100 -o /output/probe.txt
Project=ws

[Sandbox]
Network=$2
Memory=512M
TmpSize=32M
ShmSize=16M
Timeout=2min
Input=/srv/in
Output=/srv/out/$1
EOF2
}

get() { sed -n "s/^$2=//p" "/srv/out/$1/probe.txt"; }

run_probe() { # ROLE → 0 if the probe completed
        rm -f "/srv/out/$1/probe.txt"
        systemctl start --wait "agent@$1.service" 2>/dev/null
        [ "$(get "$1" done)" = yes ]
}

# --- roles ------------------------------------------------------------------------------
probe_role sealed-none none
probe_role sealed-daemon daemon-only
probe_role weak none
# The weakened unit: an admin drop-in that re-opens everything and runs the probe without
# the shim (which would refuse). cloister-generator refuses the role; this drop-in, sorting
# after the refusal, replaces its ExecStart — the point is to show the probes can fail.
mkdir -p /etc/systemd/system/agent@weak.service.d
cat > /etc/systemd/system/agent@weak.service.d/99-weaken.conf <<EOF2
[Service]
ExecStart=
ExecStart=$PROBE -p $PORT -m 100 -o /output/probe.txt
DynamicUser=no
User=root
PrivateUsers=no
NoNewPrivileges=no
CapabilityBoundingSet=CAP_SYS_PTRACE CAP_SYS_ADMIN CAP_DAC_OVERRIDE CAP_SETUID CAP_SETGID CAP_NET_ADMIN
SecureBits=
ProtectSystem=no
ProtectHome=no
PrivateTmp=no
BindPaths=
BindReadOnlyPaths=
BindPaths=/srv/out/weak:/output /srv/in:/input /srv/ws:/workspace
TemporaryFileSystem=
InaccessiblePaths=
PrivateDevices=no
DevicePolicy=auto
PrivateNetwork=no
PrivateIPC=no
ProtectKernelTunables=no
ProtectKernelModules=no
ProtectKernelLogs=no
ProtectClock=no
ProtectHostname=no
ProtectControlGroups=no
ProtectProc=default
ProcSubset=all
RestrictNamespaces=no
RestrictSUIDSGID=no
RestrictRealtime=no
LockPersonality=no
MemoryDenyWriteExecute=no
SystemCallArchitectures=
SystemCallFilter=
RestrictAddressFamilies=
IPAddressDeny=
EOF2

systemctl daemon-reload

# --- fail closed without a role ---------------------------------------------------------
systemctl start --wait agent@nosuch.service 2>/dev/null
check "agent@nosuch (no role file) fails to start" [ "$(systemctl show -P ExecMainStatus agent@nosuch.service)" = 125 ]
check "agent@nosuch: the journal says why" bash -c 'journalctl -b -u agent@nosuch.service | grep -q "no role \"nosuch\" is configured"'

# --- the probes -------------------------------------------------------------------------
check "none: probe ran to completion" run_probe sealed-none
check "daemon-only: probe ran to completion" run_probe sealed-daemon
check "weakened: the generator refused the role (closed surface)" bash -c 'systemctl cat agent@weak.service | grep -q -- "--refuse="'
check "weakened: probe ran to completion" run_probe weak

baseline_filters=$(sed -n 's/^Seccomp_filters:\s*//p' /proc/self/status)

# expect ROLE KEY DESCRIPTION PREDICATE…: PREDICATE is run with the probe's value appended
expect() {
        local role=$1 key=$2 desc=$3; shift 3
        local v; v=$(get "$role" "$key")
        if "$@" "$v"; then ok "$role: $key: $desc ($v)"; else notok "$role: $key: $desc (got '$v')"; fi
}
is()      { [ "$2" = "$1" ]; }
isnt()    { [ "$2" != "$1" ]; }
nonzero() { [ -n "$1" ] && [ "$1" != 0 ]; }
# refused ERRNO… VALUE: VALUE is one of the errnos that the directive named in the point's
# description gives (any other error could be another directive's doing, or the probe's)
refused() { local v=${*: -1} e; for e in "${@:1:$#-1}"; do [ "$v" = "$e" ] && return 0; done; return 1; }
capped()  { # MAX VALUE: "ENOSPC@N" with N ≤ MAX
        [[ $2 == ENOSPC@* ]] && [ "${2#ENOSPC@}" -le "$1" ]; }
runs_only() { # ALLOWED VALUE: every entry under /run is in the comma list ALLOWED
        local e; IFS=, read -ra es <<<"$2"
        for e in "${es[@]}"; do [[ ",$1," == *",$e,"* ]] || return 1; done; }

# systemd itself creates /run/systemd/incoming in every mount namespace it sets up (the
# propagation point for "systemctl bind"): an empty directory, no socket.
SYSTEMD_OWN_RUN=/run/systemd,/run/systemd/incoming

# One table: key, what the sealed result must satisfy (per mode), directive it depends on.
sealed_checks() { # ROLE MODE
        local r=$1 m=$2
        expect "$r" uid "non-root user (DynamicUser=)" nonzero
        expect "$r" capabilities "no capabilities (CapabilityBoundingSet=)" is none
        expect "$r" no_new_privs "no_new_privs (NoNewPrivileges=)" is 1
        expect "$r" seccomp "seccomp filter mode (SystemCallFilter=)" is 2
        expect "$r" netdevs "only lo (PrivateNetwork=)" is lo
        if [ "$m" = none ]; then
                expect "$r" af_inet "AF_INET refused (RestrictAddressFamilies=)" is EAFNOSUPPORT
                expect "$r" connect_broker "no broker socket (TemporaryFileSystem=/run:ro, no grant)" refused ENOENT
                expect "$r" connect_host_loopback "no AF_INET socket for the host's loopback (RestrictAddressFamilies=)" is EAFNOSUPPORT
                expect "$r" run_entries "nothing under /run but systemd's empty propagation dir (TemporaryFileSystem=/run:ro)" runs_only "$SYSTEMD_OWN_RUN"
        else
                expect "$r" af_inet "AF_INET allowed for the loopback relay" is ok
                expect "$r" connect_broker "broker socket reachable (BindReadOnlyPaths=)" is ok
                expect "$r" connect_host_loopback "host loopback listener unreachable (PrivateNetwork=)" refused ECONNREFUSED
                expect "$r" run_entries "only the broker socket under /run (TemporaryFileSystem=/run:ro)" runs_only "$SYSTEMD_OWN_RUN,/run/cloister,/run/cloister/broker.sock"
        fi
        expect "$r" connect_abstract "host abstract socket unreachable (PrivateNetwork=)" refused ECONNREFUSED
        expect "$r" write_root "/ read-only (ProtectSystem=strict)" is EROFS
        expect "$r" write_usr "/usr read-only (ProtectSystem=strict)" is EROFS
        expect "$r" write_etc "/etc read-only (ProtectSystem=strict)" is EROFS
        expect "$r" write_input "/input read-only (BindReadOnlyPaths=)" is EROFS
        expect "$r" write_output "/output writable (BindPaths=)" is ok
        expect "$r" write_workspace "/workspace writable (BindPaths=)" is ok
        expect "$r" write_workspace_git "/workspace/.git read-only (BindReadOnlyPaths=)" is EROFS
        expect "$r" host_tmp_marker "private /tmp (BindPaths= of a per-role tmpfs)" is absent
        expect "$r" host_shm_marker "private /dev/shm (TemporaryFileSystem=)" is absent
        expect "$r" sys_class_net_lo "/sys/class/net hidden (InaccessiblePaths=)" is absent
        expect "$r" dev_mqueue "/dev/mqueue hidden (InaccessiblePaths=)" is absent
        expect "$r" fill_tmp "/tmp capped at TmpSize=32M" capped 32
        expect "$r" fill_var_tmp "/var/tmp capped at TmpSize=32M" capped 32
        expect "$r" fill_dev_shm "/dev/shm capped at ShmSize=16M" capped 16
        local s
        for s in io_uring_setup keyctl add_key userfaultfd personality setuid process_vm_readv kcmp; do
                expect "$r" $s "refused (SystemCallFilter=~)" is EPERM
        done
        expect "$r" ptrace_sibling "ptrace of a sibling refused (@system-service has no ptrace)" refused EPERM
        expect "$r" unshare_user "unshare refused (RestrictNamespaces=)" refused EPERM
}
sealed_checks sealed-none none
sealed_checks sealed-daemon daemon-only

# --- every probe flips in the weakened unit ---------------------------------------------
flips() { # KEY: weak result differs from the sealed one, or the container itself closes it
        local key=$1 s w
        s=$(get sealed-none "$key"); w=$(get weak "$key")
        if [ "$s" != "$w" ]; then
                ok "weakened: $key flips (${s:0:60} → ${w:0:60})"
        elif [ -n "$w" ]; then
                skip "weakened: $key flips" "the nspawn container itself closes it ($w even when the unit re-opens it)"
        else
                notok "weakened: $key missing"
        fi
}
for k in uid capabilities no_new_privs netdevs af_inet connect_host_loopback connect_abstract \
         connect_broker run_entries write_root write_usr write_etc write_input write_workspace_git \
         host_tmp_marker host_shm_marker sys_class_net_lo dev_mqueue fill_tmp fill_var_tmp fill_dev_shm \
         io_uring_setup keyctl add_key userfaultfd personality setuid process_vm_readv kcmp \
         ptrace_sibling unshare_user; do
        flips "$k"
done
# seccomp: nspawn puts every process of the container under its own filter, so mode 2 cannot
# flip; the number of stacked filters does.
s_filters=$(get sealed-none seccomp_filters); w_filters=$(get weak seccomp_filters)
if [ "${s_filters:-0}" -gt "${w_filters:-0}" ] && [ "${w_filters:-0}" -le "${baseline_filters:-0}" ]; then
        ok "weakened: seccomp flips ($s_filters filters sealed → $w_filters weakened; container baseline $baseline_filters)"
else
        notok "weakened: seccomp flips ($s_filters sealed, $w_filters weakened, baseline $baseline_filters)"
fi

# --- an admin drop-in that re-opens one surface makes the role refuse ---------------------
probe_role reopen none
mkdir -p /etc/systemd/system/agent@reopen.service.d
printf '[Service]\nPrivateNetwork=no\n' > /etc/systemd/system/agent@reopen.service.d/override.conf
systemctl daemon-reload
systemctl start --wait agent@reopen.service 2>/dev/null
check "closed surface: a PrivateNetwork=no drop-in makes the role refuse (status 125)" \
        [ "$(systemctl show -P ExecMainStatus agent@reopen.service)" = 125 ]
check "closed surface: the journal names the drop-in and the key" bash -c \
        'journalctl -b -u agent@reopen.service | grep -q "override.conf:2: PrivateNetwork= re-opens a closed surface (network)"'
check "closed surface: the agent never ran" [ ! -e /srv/out/reopen/probe.txt ]
# and the flip: without the drop-in the same role runs
rm -r /etc/systemd/system/agent@reopen.service.d
systemctl daemon-reload
check "closed surface: without the drop-in the same role runs" run_probe reopen

# --- mount sources never resolved through a path an agent can write --------------------
# An agent whose workspace has no .git plants "ln -s /run /workspace/.git"; another role's
# Input= lies under a directory an agent writes (its Output=) and is swapped for a link to
# /etc. cloister-stage opens every source with RESOLVE_NO_SYMLINKS: the start refuses,
# naming the path, and nothing of the host's /run or /etc reaches a sandbox.
mkdir -p /srv/ws-planted /srv/out/writer
ln -s /run /srv/ws-planted/.git
ln -s /etc /srv/out/writer/data
cat > "$CFG/projects/planted.project" <<EOF2
[Project]
Workspace=/srv/ws-planted
EOF2
probe_role planted none
sed -i 's/^Project=ws$/Project=planted/' "$CFG/roles/planted.role"
probe_role reader none
sed -i 's|^Input=/srv/in$|Input=/srv/out/writer/data|' "$CFG/roles/reader.role"
systemctl daemon-reload
for r in planted reader; do
        systemctl start --wait "agent@$r.service" 2>/dev/null
done
check "symlinked source: a planted workspace .git -> /run fails the start" \
        [ "$(systemctl show -P Result agent@planted.service)" = exit-code ]
check "symlinked source: the journal names the path" bash -c \
        'journalctl -b -u agent@planted.service | grep -q "Workspace= source /srv/ws-planted/.git: a path component is a symbolic link"'
check "symlinked source: the agent never ran (so never saw the host's /run)" [ ! -e /srv/out/planted/probe.txt ]
check "symlinked source: nothing is left staged" \
        all 'findmnt -rn -o TARGET > /srv/mounts.planted' 'lacks /srv/mounts.planted "^/run/cloister/stage/planted"'
check "symlinked source: an Input= under another agent's Output= swapped for a link to /etc fails the start" \
        [ "$(systemctl show -P Result agent@reader.service)" = exit-code ]
check "symlinked source: the journal names that path" bash -c \
        'journalctl -b -u agent@reader.service | grep -q "Input= source /srv/out/writer/data: a path component is a symbolic link"'
check "symlinked source: the reader never ran" [ ! -e /srv/out/reader/probe.txt ]
rm /srv/ws-planted/.git /srv/out/writer/data
mkdir -p /srv/ws-planted/.git /srv/out/writer/data
check "symlinked source: with real directories the same roles run" bash -c 'for r in planted reader; do
        rm -f /srv/out/$r/probe.txt; systemctl start --wait agent@$r.service 2>/dev/null
        grep -qx done=yes /srv/out/$r/probe.txt || exit 1; done'
check "staging: the staged mounts are gone once the agent stops" \
        all 'findmnt -rn -o TARGET > /srv/mounts.after' 'lacks /srv/mounts.after "^/run/cloister/stage/"'

# --- side doors: an alias, the role's own tmp mount, the kill/restart keys ---------------
# Each is something systemd really merges into what the agent depends on (shown first for
# the alias and the kill keys; a refused role gets no tmp mount unit to merge into), and
# each makes the role refuse: status 125, the journal naming file:line, the agent never ran.
probe_role aliased none
probe_role tmpbind none
probe_role nokill none
ln -sfn agent@aliased.service /etc/systemd/system/web@aliased.service
mkdir -p /etc/systemd/system/web@.service.d /etc/systemd/system/run-cloister-tmp-tmpbind.mount.d \
        /etc/systemd/system/agent@nokill.service.d
printf '[Service]\nPrivateNetwork=no\n' > /etc/systemd/system/web@.service.d/net.conf
printf '[Mount]\nWhat=/var/lib\nType=none\nOptions=bind\n' > /etc/systemd/system/run-cloister-tmp-tmpbind.mount.d/bind.conf
printf '[Service]\nKillMode=none\nSendSIGKILL=no\nTimeoutStopSec=infinity\nRestart=always\n' \
        > /etc/systemd/system/agent@nokill.service.d/ceiling.conf
systemctl daemon-reload
check "side door: systemd merges the alias's template drop-in into agent@aliased (PrivateNetwork=no)" \
        [ "$(systemctl show -P PrivateNetwork agent@aliased.service)" = no ]
check "side door: systemd merges the alias's drop-in (DropInPaths)" bash -c \
        'systemctl show -P DropInPaths agent@aliased.service | grep -q web@.service.d/net.conf'
check "side door: systemd merges KillMode=none into the agent" [ "$(systemctl show -P KillMode agent@nokill.service)" = none ]
for r in aliased tmpbind nokill; do
        systemctl start --wait "agent@$r.service" 2>/dev/null
done
check "closed surface: an alias's drop-in (web@.service.d, PrivateNetwork=no) makes the role refuse (status 125)" \
        [ "$(systemctl show -P ExecMainStatus agent@aliased.service)" = 125 ]
check "closed surface: the journal names the alias's drop-in" bash -c \
        'journalctl -b -u agent@aliased.service | grep -q "web@.service.d/net.conf:2: PrivateNetwork= re-opens a closed surface (network)"'
check "closed surface: a drop-in of the role's /tmp mount (What=/var/lib) makes the role refuse (status 125)" \
        [ "$(systemctl show -P ExecMainStatus agent@tmpbind.service)" = 125 ]
check "closed surface: the journal names the mount's drop-in" bash -c \
        'journalctl -b -u agent@tmpbind.service | grep -q "run-cloister-tmp-tmpbind.mount.d/bind.conf:2: What= re-opens a closed surface (mounts)"'
check "closed surface: the host's /var/lib was never mounted as the agent's /tmp" \
        all 'status_is 1 findmnt -n /run/cloister/tmp/tmpbind >/dev/null'
check "closed surface: KillMode=none in a drop-in makes the role refuse (status 125)" \
        [ "$(systemctl show -P ExecMainStatus agent@nokill.service)" = 125 ]
check "closed surface: the journal names KillMode=" bash -c \
        'journalctl -b -u agent@nokill.service | grep -q "ceiling.conf:2: KillMode= re-opens a closed surface (wall-clock-ceiling)"'
for r in aliased tmpbind nokill; do
        check "closed surface: $r: the agent never ran" [ ! -e "/srv/out/$r/probe.txt" ]
done
rm -r /etc/systemd/system/web@.service.d /etc/systemd/system/web@aliased.service \
        /etc/systemd/system/run-cloister-tmp-tmpbind.mount.d /etc/systemd/system/agent@nokill.service.d
systemctl daemon-reload
check "closed surface: without the side doors the same roles run" bash -c 'for r in aliased tmpbind nokill; do
        rm -f /srv/out/$r/probe.txt; systemctl start --wait agent@$r.service 2>/dev/null
        grep -qx done=yes /srv/out/$r/probe.txt || exit 1; done'

# --- the shim checks its own sandbox ----------------------------------------------------
shim=$(sed -n 's/^ExecStart=\([^ ]*\) .*/\1/p' "$(systemctl show -P FragmentPath agent@nosuch.service)")
shim_props=(-p DynamicUser=yes -p NoNewPrivileges=yes -p CapabilityBoundingSet= -p ProtectSystem=strict
            -p SystemCallFilter=@system-service -p RestrictAddressFamilies=AF_UNIX)
systemd-run --wait -q --unit=shim-closed "${shim_props[@]}" -p PrivateNetwork=yes \
        "$shim" --role=check --network=none -- /bin/true
rc_closed=$?
systemd-run --wait -q --unit=shim-open "${shim_props[@]}" -p PrivateNetwork=no \
        "$shim" --role=check --network=none -- /bin/true
rc_open=$?
check "shim: runs the agent when the network is closed (exit $rc_closed)" [ "$rc_closed" = 0 ]
check "shim: refuses when started with the network left open (exit $rc_open)" [ "$rc_open" = 125 ]
check "shim: says which device it found" bash -c 'journalctl -b -u shim-open.service | grep -q "Network device .* is present"'
systemd-run --wait -q --unit=shim-root -p PrivateNetwork=yes -p RestrictAddressFamilies=AF_UNIX \
        "$shim" --role=check --network=none -- /bin/true
rc_root=$?
check "shim: refuses as root with capabilities, no seccomp, writable / (exit $rc_root)" [ "$rc_root" = 125 ]

# --- host mode needs the opt-in ---------------------------------------------------------
probe_role hostnet host
systemctl daemon-reload
systemctl start --wait agent@hostnet.service 2>/dev/null
check "host: refused without AllowHostNetwork=yes (no drop-in, status 125)" \
        [ "$(systemctl show -P ExecMainStatus agent@hostnet.service)" = 125 ]
check "host: the generator says why" bash -c \
        "/usr/lib/systemd/system-generators/cloister-generator --dry-run 2>&1 >/dev/null | grep -q 'hostnet.role:.*AllowHostNetwork=yes'"
rm "$CFG/roles/hostnet.role"

# --- a missing ReadOnlyMount= source fails the start, naming it --------------------------
probe_role romissing none
echo "ReadOnlyMount=/srv/no-such-dir:/data" >> "$CFG/roles/romissing.role"
systemctl daemon-reload
systemctl start --wait agent@romissing.service 2>/dev/null
rc=$?
check "ReadOnlyMount=: a missing host path fails the unit (status 125)" \
        all '[ "$rc" != 0 ]' '[ "$(systemctl show -P ExecMainStatus agent@romissing.service)" = 125 ]'
check "ReadOnlyMount=: the journal names the path" bash -c \
        'journalctl -b -u agent@romissing.service | grep -q "ReadOnlyMount= source /srv/no-such-dir is missing"'
check "ReadOnlyMount=: the agent never ran" [ ! -e /srv/out/romissing/probe.txt ]

# --- egress: fail closed where IPAddressDeny= cannot be enforced -----------------------------
# The host's cgroups are v1 here, so systemd silently runs egress units without the BPF filter
# that takes the host's loopback away: the shim must notice and refuse.
probe_role outbound egress
systemctl daemon-reload
systemctl start --wait agent@outbound.service 2>/dev/null
if [ "$(stat -fc %T /sys/fs/cgroup)" != cgroup2fs ]; then
        check "egress: the shim refuses when the host's loopback answers (status 125)" \
                [ "$(systemctl show -P ExecMainStatus agent@outbound.service)" = 125 ]
        check "egress: the journal says IPAddressDeny= is not in effect" bash -c \
                'journalctl -b -u agent@outbound.service | grep -q "IPAddressDeny= is not in effect"'
        check "egress: the agent never ran" [ ! -e /srv/out/outbound/probe.txt ]
        skip "egress: probes in a filtered egress sandbox" "needs cgroup v2 BPF (VM tier)"
else
        check "egress: probe ran to completion" [ "$(get outbound done)" = yes ]
        expect outbound netdevs "the host's interfaces (PrivateNetwork=no)" isnt lo
        expect outbound connect_host_loopback "the host's loopback is filtered (IPAddressDeny=: the SYN dropped, a 2 s connect times out)" refused EINPROGRESS EPERM EACCES
fi

# --- what this container cannot enforce ---------------------------------------------------
if [ "$(stat -fc %T /sys/fs/cgroup)" = cgroup2fs ]; then
        diag "cgroup v2 here: resource limits and IPAddressDeny= are proven by vm-limits (tests/vm)"
else
        for what in "MemoryMax=/MemorySwapMax=0" "TasksMax=" "CPUQuota=" "IPAddressDeny= (egress loses the host's loopback)"; do
                skip "$what enforced" "the host's cgroups are v1 hybrid: systemd in nspawn here cannot enforce it (VM tier)"
        done
fi

kill "$LISTENERS" 2>/dev/null
tap_done

#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The escape battery (tests/battery/) as the agent of real agent@ units, in the nspawn tier
# (nspawn-run.sh) and the VM tier (tests/vm/vm-run.sh); runs as root inside the throwaway
# system. Every probe must be blocked in the sealed none and daemon-only roles. Then, for
# each negative control named in the battery's table, the battery runs in a transient unit
# (systemd-run) carrying the role's generated unit, property for property, minus the one
# directive (or set, where several close the same surface) that the control removes: the
# probes of that control must turn open. A probe that stays closed even in the reference
# unit (no hardening at all, every grant a control uses) is closed by the environment
# itself (nspawn's own seccomp filter and capability set, a read-only /sys): SKIP, reason.
#
# No product backdoor: cloister refuses agent@ units whose drop-ins re-open a closed surface,
# so the controls are not agent@ units; they are derived from `systemctl cat`.
set -u
. "$PAYLOAD/tap.sh"

CFG=$CLOISTER_CFG
BATTERY=$PAYLOAD/battery
[ -x "$BATTERY" ] || BATTERY=$PAYLOAD/extra/battery
PORT=7999
TMP_SIZE=32M
SHM_SIZE=16M
USER_NAME=cloister-battery
HOME_MARKER=/home/cloister-battery/marker
OUT=/srv/out
HOST_FILTERS=$(sed -n 's/^Seccomp_filters:\s*//p' /proc/self/status)
HOST_FILTERS=${HOST_FILTERS:-0}

# --- fixtures ---------------------------------------------------------------------------
fixtures() {
        # World-writable, so that a refused write can only be the mount's doing.
        mkdir -p /srv/in /srv/ws/.git "$OUT/battery-none" "$OUT/battery-daemon"
        chmod 0777 /srv/in /srv/ws /srv/ws/.git "$OUT/battery-none" "$OUT/battery-daemon"
        mkdir -p "$(dirname "$HOME_MARKER")" && echo secret > "$HOME_MARKER"
        chmod 0755 "$(dirname "$HOME_MARKER")" && chmod 0644 "$HOME_MARKER"
        getent passwd "$USER_NAME" >/dev/null ||
                useradd --system --no-create-home --home-dir / --shell /usr/sbin/nologin "$USER_NAME" 2>/dev/null ||
                { echo "$USER_NAME:x:61990:61990::/:/usr/sbin/nologin" >> /etc/passwd
                  echo "$USER_NAME:x:61990:" >> /etc/group; }
        # "Host" interfaces a sandbox sharing the network would see, and cloud metadata's address.
        ip link add cl-host0 type veth peer name cl-host1 2>/dev/null
        ip link set cl-host0 up; ip link set cl-host1 up
        ip addr add 169.254.169.254/32 dev cl-host0 2>/dev/null
        # A resolver on the host's loopback that answers every name.
        rm -f /etc/resolv.conf
        printf 'nameserver 127.0.0.1\noptions timeout:1 attempts:1\n' > /etc/resolv.conf
        if [ -e /etc/nsswitch.conf ]; then
                sed -i 's/^hosts:.*/hosts: files dns/' /etc/nsswitch.conf
        else
                printf 'hosts: files dns\n' > /etc/nsswitch.conf
        fi
        # System V IPC objects in the host's namespace.
        ipcmk -Q >/dev/null && ipcmk -M 4096 >/dev/null && ipcmk -S 1 >/dev/null
        mkdir -p /run/cloister /run/systemd/resolve /run/nscd
}

# Host-side listeners the sandbox must not reach: accept and close, for the suite's lifetime.
# Where no real resolved or nscd listens, a stand-in takes their socket path.
listeners() {
        python3 - "$PORT" <<'PY' &
import os, socket, sys, threading
def serve(s):
    while True:
        c, _ = s.accept(); c.close()
def unix(path):
    s = socket.socket(socket.AF_UNIX)
    try: os.unlink(path)
    except FileNotFoundError: pass
    s.bind(path); os.chmod(path, 0o666); s.listen(16); return s
def dns(s):
    while True:
        q, a = s.recvfrom(512)
        end = 12
        while q[end]: end += q[end] + 1
        end += 5
        s.sendto(q[:2] + b"\x81\x80\x00\x01\x00\x01\x00\x00\x00\x00" + q[12:end] +
                 b"\xc0\x0c\x00\x01\x00\x01\x00\x00\x00\x3c\x00\x04\x7f\x00\x00\x02", a)
tcp = socket.socket(); tcp.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
tcp.bind(("127.0.0.1", int(sys.argv[1]))); tcp.listen(16)
md = socket.socket(); md.bind(("169.254.169.254", 80)); md.listen(16)
ab = socket.socket(socket.AF_UNIX); ab.bind("\0cloister-battery"); ab.listen(16)
socks = [tcp, md, ab, unix("/run/cloister/broker.sock")]
for path in ("/run/systemd/resolve/io.systemd.Resolve", "/run/nscd/socket"):
    if not os.path.exists(path):
        socks.append(unix(path)); print("stand-in listener at", path, file=sys.stderr)
ud = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); ud.bind(("127.0.0.1", 53))
threading.Thread(target=dns, args=(ud,), daemon=True).start()
for s in socks: threading.Thread(target=serve, args=(s,), daemon=True).start()
open("/run/battery-listeners-ready", "w").close()
threading.Event().wait()
PY
        LISTENERS=$!
        for _ in $(seq 100); do [ -e /run/battery-listeners-ready ] && return 0; sleep 0.1; done
        return 1
}

battery_args() { # MODE…: the battery's arguments; MODE only where no shim sets $CLOISTER_NETWORK
        echo "--tmp-max=$TMP_SIZE --shm-max=$SHM_SIZE --host-filters=$HOST_FILTERS --port=$PORT" \
             "--home-marker=$HOME_MARKER ${1:+--mode=$1}"
}

battery_role() { # NAME MODE
        cat > "$CFG/roles/$1.role" <<EOF
[Role]
Description=escape battery ($2)
Exec=$BATTERY $(battery_args) --output=/output/sealed.tap
Project=battery

[Sandbox]
Network=$2
Memory=512M
Tasks=256
TmpSize=$TMP_SIZE
ShmSize=$SHM_SIZE
Timeout=5min
Input=/srv/in
Output=$OUT/$1
EOF
}

# load RUN FILE: the battery's machine-readable lines into VERDICT[RUN/PROBE] ("VERDICT
# DETAIL…"), CONTROL[PROBE], DIRECTIVE[PROBE] and, in order, PROBES[RUN] (pure bash: in the
# VM tier every process costs)
declare -A VERDICT CONTROL DIRECTIVE PROBES
load() {
        local run=$1 line rest name
        PROBES[$run]=
        while IFS= read -r line; do
                case $line in
                "# verdict "*)
                        rest=${line#"# verdict "}; name=${rest%% *}; rest=${rest#* }
                        VERDICT[$run/$name]="${rest%% *} ${rest#* control=* }"
                        rest=${rest#* control=}; CONTROL[$name]=${rest%% *}
                        PROBES[$run]+="$name " ;;
                "# directive "*)
                        rest=${line#"# directive "}; DIRECTIVE[${rest%% *}]=${rest#* } ;;
                esac
        done < "$2"
}

# --- sealed runs --------------------------------------------------------------------------
sealed() { # ROLE MODE
        local role=$1 mode=$2 tap=$OUT/$1/sealed.tap p v total
        rm -f "$tap"
        systemctl start --wait "agent@$role.service" 2>/dev/null
        if ! grep -q '^# battery: .* probes not blocked' "$tap" 2>/dev/null; then # lint-tests: allow negated-grep (missing: a failure)
                notok "$mode: the battery ran to completion as agent@$role"
                journalctl -b -u "agent@$role.service" --no-pager | tail -20 | sed 's/^/# /'
                return 1
        fi
        load "$role" "$tap"
        total=$(wc -w <<<"${PROBES[$role]}")
        check "$mode: the battery ran $total probes as agent@$role (at least 35)" [ "$total" -ge 35 ]
        check "$mode: the battery saw CLOISTER_NETWORK=$mode (from the shim)" grep -q "^# battery: mode=$mode " "$tap"
        sed -n 's/^# elapsed \([^ ]*\) \([0-9]\{4,\}\) ms$/# slow probe in \1: \2 ms/p' "$tap"
        for p in ${PROBES[$role]}; do
                v=${VERDICT[$role/$p]:-}
                case $v in
                blocked*)   ok "$mode: $p blocked (${DIRECTIVE[$p]}) — ${v#blocked }" ;;
                by-design*) skip "$mode: $p" "opened by design in $mode" ;;
                n/a*)       not_applicable "$mode: $p blocked (${DIRECTIVE[$p]})" "$p" "$v" ;;
                *)          notok "$mode: $p blocked (${DIRECTIVE[$p]}) — got: $v" ;;
                esac
        done
}

# not_applicable DESCRIPTION PROBE VERDICT: the probe says this kernel has no such surface at
# all. That is a SKIP only if the unhardened reference run says exactly the same; a reference
# that errored, or found the surface open, makes it a failure (fail closed).
not_applicable() {
        local rv=${VERDICT[reference/$2]:-missing}
        if [[ $rv == n/a* ]]; then
                skip "$1" "not applicable on this kernel, in the reference unit too: ${3#n/a }"
        else
                notok "$1 — got: $3; reference: $rv"
        fi
}

# --- controls: the generated unit as systemd-run properties ---------------------------------
unit_properties() { # ROLE: one assignment a line; no ExecStart (the battery runs without the shim)
        local line section=
        # (no awk: /etc/alternatives is missing in the nspawn tier's volatile /etc)
        while IFS= read -r line; do
                case $line in
                \[*) section=$line ;;
                ''|\#*|\;*|ExecStart=*|DynamicUser=*) ;;
                RequiresMountsFor=*) [ "$section" = "[Unit]" ] && echo "$line" ;;
                *) [ "$section" = "[Service]" ] && echo "$line" ;;
                esac
        done < <(systemctl cat "agent@$1.service")
        return 0
}

# The controls, as data: NAME|BASE ROLE|EDITS. "-KEY=PREFIX" drops the lines starting so,
# "+KEY=VALUE" adds one. Every control runs as a static non-root user (DynamicUser= would
# imply ProtectSystem=, RestrictSUIDSGID=, NoNewPrivileges= … again).
SECCOMP_DIRECTIVES="-SystemCallFilter= -SystemCallArchitectures= -SystemCallErrorNumber= -RestrictAddressFamilies= \
 -RestrictNamespaces= -RestrictRealtime= -RestrictSUIDSGID= -LockPersonality= -MemoryDenyWriteExecute= \
 -ProtectClock= -ProtectKernelModules= -ProtectKernelLogs= -ProtectKernelTunables= -ProtectHostname= -PrivateDevices= \
 -NoNewPrivileges= +NoNewPrivileges=no"
CONTROLS=(
        "baseline|battery-none|"
        "private-network|battery-daemon|-PrivateNetwork= +PrivateNetwork=no"
        "private-network-ip|battery-daemon|-PrivateNetwork= +PrivateNetwork=no -IPAddressDeny= -IPAddressAllow="
        "address-families|battery-none|-RestrictAddressFamilies="
        "run-tmpfs|battery-none|-TemporaryFileSystem=/run:"
        "private-ipc|battery-none|-PrivateIPC= +PrivateIPC=no"
        "fd-leak|battery-none|"
        "environment|battery-none|+Environment=AWS_SECRET_ACCESS_KEY=battery-canary"
        "credentials|battery-none|+SetCredential=battery-canary:not-a-secret"
        "protect-proc|battery-none|-ProtectProc= +ProtectProc=default"
        "proc-subset|battery-none|-ProcSubset= +ProcSubset=all"
        "inaccessible-paths|battery-none|-InaccessiblePaths="
        "kernel-tunables|battery-none|-ProtectKernelTunables= +ProtectKernelTunables=no"
        "control-groups|battery-none|-ProtectControlGroups= +ProtectControlGroups=no"
        "private-devices|battery-none|-PrivateDevices= +PrivateDevices=no"
        "protect-home|battery-none|-ProtectHome= +ProtectHome=no"
        "protect-system|battery-none|-ProtectSystem= +ProtectSystem=no"
        "input-rw|battery-none|-BindReadOnlyPaths=-/run/cloister/stage/battery-none/input: +BindPaths=-/run/cloister/stage/battery-none/input:/input"
        "git-rw|battery-none|-BindReadOnlyPaths=-/run/cloister/stage/battery-none/workspace-git:"
        "tmp-binds|battery-none|-BindPaths=/run/cloister/tmp/ -BindPaths=/run/cloister/var-tmp/"
        "shm|battery-none|-TemporaryFileSystem=/dev/shm:"
        "suid-sgid|battery-none|-RestrictSUIDSGID= +RestrictSUIDSGID=no"
        "umask|battery-none|-UMask= +UMask=0022"
        "bounding-set|battery-none|-CapabilityBoundingSet="
        "ambient|battery-none|-CapabilityBoundingSet= +CapabilityBoundingSet=CAP_NET_BIND_SERVICE +AmbientCapabilities=CAP_NET_BIND_SERVICE"
        "securebits|battery-none|-SecureBits="
        "no-seccomp|battery-none|$SECCOMP_DIRECTIVES"
        "mknod|battery-none|-CapabilityBoundingSet= +CapabilityBoundingSet=CAP_MKNOD +AmbientCapabilities=CAP_MKNOD -PrivateDevices= +PrivateDevices=no -PrivateUsers= +PrivateUsers=no"
        "private-users|battery-none|-PrivateUsers= +PrivateUsers=no"
        "namespaces|battery-none|-RestrictNamespaces= +RestrictNamespaces=no"
        "syscall-filter|battery-none|-SystemCallFilter="
        "kexec|battery-none|-SystemCallFilter= -CapabilityBoundingSet= +CapabilityBoundingSet=CAP_SYS_BOOT +AmbientCapabilities=CAP_SYS_BOOT -PrivateUsers= +PrivateUsers=no"
        "modules|battery-none|-SystemCallFilter= -ProtectKernelModules= +ProtectKernelModules=no -CapabilityBoundingSet= +CapabilityBoundingSet=CAP_SYS_MODULE +AmbientCapabilities=CAP_SYS_MODULE -PrivateUsers= +PrivateUsers=no"
        "clock|battery-none|-SystemCallFilter= -ProtectClock= +ProtectClock=no"
        "personality|battery-none|-SystemCallFilter= -LockPersonality= +LockPersonality=no"
        "write-execute|battery-none|-MemoryDenyWriteExecute= +MemoryDenyWriteExecute=no"
        "realtime|battery-none|-RestrictRealtime= +RestrictRealtime=no"
        "architectures|battery-none|-SystemCallArchitectures="
)

# The reference: a unit with no hardening at all and every grant a control uses.
REFERENCE=(User=$USER_NAME "BindPaths=$OUT/battery-none:/output" "BindPaths=/srv/in:/input" "BindPaths=/srv/ws:/workspace"
           "AmbientCapabilities=CAP_SYS_BOOT CAP_SYS_MODULE CAP_MKNOD CAP_NET_BIND_SERVICE"
           Environment=AWS_SECRET_ACCESS_KEY=battery-canary SetCredential=battery-canary:not-a-secret UMask=0022)

apply_edits() { # EDITS < properties > properties
        local -a props kept
        local e p
        mapfile -t props
        for e in $1; do
                case $e in
                -*) kept=()
                    for p in "${props[@]}"; do [[ $p == "${e#-}"* ]] || kept+=("$p"); done
                    props=("${kept[@]}") ;;
                +*) props+=("${e#+}") ;;
                esac
        done
        printf '%s\n' "${props[@]}"
}

# run_unit NAME ROLE MODE WRAP ONLY -- PROPERTY…: the battery (only the probes of control
# ONLY, if set) in a transient unit; its TAP lands in $OUT/ROLE/NAME.tap (the role's
# Output=, the unit's /output).
run_unit() {
        local name=$1 role=$2 mode=$3 wrap=$4 only=$5; shift 6
        local -a args=() cmd
        local p
        for p in "$@"; do args+=(-p "$p"); done
        # shellcheck disable=SC2207
        cmd=("$BATTERY" $(battery_args "$mode") "--output=/output/$name.tap" ${only:+"--only=$only"})
        # fd-leak: a wrapper hands the battery one more descriptor, as a sloppy launcher would.
        [ -n "$wrap" ] && cmd=(/bin/sh -c 'exec 9</usr/lib/os-release; exec "$0" "$@"' "${cmd[@]}")
        rm -f "$OUT/$role/$name.tap"
        systemd-run --wait --quiet --collect --unit="battery-$name" "${args[@]}" -- "${cmd[@]}" >/dev/null 2>"$OUT/$role/$name.err"
        if ! grep -q '^# battery: .* probes not blocked' "$OUT/$role/$name.tap" 2>/dev/null; then # lint-tests: allow negated-grep (missing: a failure)
                { cat "$OUT/$role/$name.err"; journalctl -b -u "battery-$name.service" --no-pager | tail -15; } | sed 's/^/# /'
                return 1
        fi
}

run_control() { # NAME BASE EDITS
        local name=$1 base=$2 edits=$3 mode=none wrap= only=$1
        local -a props
        [ "$base" = battery-daemon ] && mode=daemon-only
        [ "$name" = fd-leak ] && wrap=yes
        [ "$name" = baseline ] && only=
        mapfile -t props < <(unit_properties "$base" | apply_edits "$edits -DynamicUser= +DynamicUser=no +User=$USER_NAME")
        run_unit "ctl-$name" "$base" "$mode" "$wrap" "$only" -- "${props[@]}"
}

# flips CONTROL: each probe tied to CONTROL is open in it
flips() { # CONTROL ROLE
        local ctl=$1 p v rv
        load "ctl-$ctl" "$OUT/$2/ctl-$ctl.tap"
        for p in ${PROBES[battery-none]}; do
                [ "${CONTROL[$p]}" = "$ctl" ] || continue
                v=${VERDICT[ctl-$ctl/$p]:-}
                rv=${VERDICT[reference/$p]:-}
                # A SKIP only where the reference run (no hardening at all) says why: the
                # kernel lacks the surface (n/a), or the tier itself closes it (blocked). A
                # reference that errored or is missing proves nothing: a failure.
                if [[ $v == open* ]]; then
                        ok "control $ctl (${DIRECTIVE[$p]} removed): $p opens — ${v#open }"
                elif [[ $rv == n/a* && $v == n/a* ]]; then
                        skip "control $ctl: $p opens" "not applicable on this kernel (reference: $rv)"
                elif [[ $rv == blocked* && $v == blocked* ]]; then
                        skip "control $ctl: $p opens" "the ${CLOISTER_TIER:-nspawn} tier closes it even in an unhardened unit (reference: $rv)"
                else
                        notok "control $ctl (${DIRECTIVE[$p]} removed): $p opens — got: $v; reference: ${rv:-missing}"
                fi
        done
        return 0
}

# --- main -------------------------------------------------------------------------------
fixtures
if ! listeners; then
        notok "host-side listeners started"
        tap_done
        exit 0
fi
mkdir -p "$CFG/roles" "$CFG/projects"
printf '[Project]\nWorkspace=/srv/ws\n' > "$CFG/projects/battery.project"
battery_role battery-none none
battery_role battery-daemon daemon-only
systemctl daemon-reload
diag "tier ${CLOISTER_TIER:-nspawn}; seccomp filters of the suite itself: $HOST_FILTERS"

# As root: exit status 2 and its own refusal (a missing binary's 127 must not pass).
root_out=$("$BATTERY" $(battery_args none) 2>&1); root_rc=$?
check "the battery refuses to run as root (status $root_rc: $root_out)" \
        test "$root_rc" = 2 -a -n "$(grep -F 'refusing to run as root' <<<"$root_out")"

# The reference first: the sealed runs and the controls read it to tell a kernel that lacks a
# surface (n/a in the reference too) from a refusal.
if run_unit reference battery-none none yes "" -- "${REFERENCE[@]}"; then
        ok "reference unit (no hardening) ran the battery"
        load reference "$OUT/battery-none/reference.tap"
else
        notok "reference unit (no hardening) ran the battery"
fi

sealed battery-none none
sealed battery-daemon daemon-only

# A role without Output=: /output is the directory systemd manages (StateDirectory=), which
# systemd mounts under its own name too. The file system probes must find nothing else
# writable, and / as read-only as ever.
printf '[Role]\nExec=%s %s --only=protect-system --output=/output/sealed.tap\n[Sandbox]\nNetwork=none\nTmpSize=%s\nShmSize=%s\n' \
        "$BATTERY" "$(battery_args)" "$TMP_SIZE" "$SHM_SIZE" > "$CFG/roles/battery-managed.role"
systemctl daemon-reload
systemctl start --wait agent@battery-managed.service 2>/dev/null
load managed /var/lib/private/cloister-output/battery-managed/sealed.tap
for p in fs.root-ro fs.writable-mounts; do
        v=${VERDICT[managed/$p]:-missing}
        check "managed /output (no Output=): $p blocked (${DIRECTIVE[$p]:-}) — $v" [ "${v%% *}" = blocked ]
done

# The per-role tmpfs mounts stop when unneeded: one control's end would queue a stop that
# the next control's start conflicts with. A holder keeps them needed while the controls run.
systemd-run --quiet --unit=battery-mounts \
        -p "RequiresMountsFor=/run/cloister/tmp/battery-none /run/cloister/var-tmp/battery-none" \
        -p "RequiresMountsFor=/run/cloister/tmp/battery-daemon /run/cloister/var-tmp/battery-daemon" \
        -- sleep 900

for entry in "${CONTROLS[@]}"; do
        IFS='|' read -r name base edits <<<"$entry"
        if ! run_control "$name" "$base" "$edits"; then
                notok "control $name: the battery ran in battery-ctl-$name"
                continue
        fi
        if [ "$name" = baseline ]; then
                # The derivation itself: with nothing removed, nothing opens (but the
                # environment, which the shim cleans and a control unit has no shim for).
                load ctl-baseline "$OUT/battery-none/ctl-baseline.tap"
                opened=
                for p in ${PROBES[ctl-baseline]}; do
                        v=${VERDICT[ctl-baseline/$p]:-}
                        rv=${VERDICT[reference/$p]:-}
                        case $v in
                        blocked*|by-design*) ;;
                        n/a*) [[ $rv == n/a* ]] || opened+="$p " ;;
                        *) [ "$p" != leak.environment ] && opened+="$p " ;;
                        esac
                done
                check "control baseline (the generated unit as transient properties, nothing removed): all closed${opened:+ — open: $opened}" \
                        [ -z "$opened" ]
                continue
        fi
        flips "$name" "$base"
done

# Every control the battery names is defined here.
for c in $(printf '%s\n' "${CONTROL[@]}" | sort -u); do
        printf '%s\n' "${CONTROLS[@]}" | grep -q "^$c|" || notok "control $c is defined in suite-battery.sh"
done

systemctl stop battery-mounts.service
kill "$LISTENERS" 2>/dev/null
ipcrm --all 2>/dev/null
tap_done

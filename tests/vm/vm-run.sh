#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# VM tier: boots a throwaway Debian 12 guest under qemu — systemd 252 as PID 1 on a pure
# cgroup v2 hierarchy (memory, pids, cpu controllers; cgroup BPF) — with the host's / shared
# read-only over 9p under a RAM overlay and this build installed on top, runs SUITE in it as
# a test unit and prints the TAP it wrote. The guest powers itself off; qemu is bounded by a
# timeout and killed by its PID on any exit of this script. Nothing on the host is changed
# outside the cache ($CLOISTER_VM_CACHE) and a per-run dir under /var/tmp that is removed.
#
#   vm-run.sh BUILD_ROOT SOURCE_ROOT [SUITE] [FILE...]      (SUITE defaults to $VM_SUITE)
#
# SUITE runs as root in a oneshot unit ordered after dbus.socket and basic.target, with
# PAYLOAD (read-only: tap.sh, agents/, SUITE, each FILE, and $CLOISTER_VM_PAYLOAD as extra/),
# CLOISTER_CFG (the build's <sysconfdir>/cloister, writable and empty) and CLOISTER_TIER=vm.
#
# Environment: CLOISTER_VM_TIMEOUT (qemu's hard limit, s; 900), CLOISTER_VM_ACCEL
# (auto|kvm|tcg), CLOISTER_VM_MEM (MiB; 1024), CLOISTER_VM_SMP (2), CLOISTER_VM_CACHE,
# CLOISTER_VM_KEEP=DIR (copy the serial log and results there), CLOISTER_VM_BOOTS (3: boots
# allowed when the guest kernel panics before the suite starts), CLOISTER_TEST_VERBOSE=1.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
build=${1:?usage: vm-run.sh BUILD_ROOT SOURCE_ROOT [SUITE] [FILE...]}
src=${2:?usage: vm-run.sh BUILD_ROOT SOURCE_ROOT [SUITE] [FILE...]}
shift 2
suite=${1:-${VM_SUITE:-}}
[ $# -gt 0 ] && shift
[ -n "$suite" ] && [ -f "$suite" ] || { echo "Bail out! no suite (argument or VM_SUITE=): '$suite'"; exit 1; }

CACHE=${CLOISTER_VM_CACHE:-/var/tmp/cloister-vm-cache}
export CLOISTER_VM_CACHE=$CACHE
TIMEOUT=${CLOISTER_VM_TIMEOUT:-900}
MEM=${CLOISTER_VM_MEM:-1024}
SMP=${CLOISTER_VM_SMP:-2}
ACCEL=${CLOISTER_VM_ACCEL:-auto}

skip() { echo "1..0 # SKIP $*"; exit 0; }
[ "$(id -u)" = 0 ] || skip "needs root (the guest's root is the host's / over 9p, read as root)"
command -v qemu-system-x86_64 >/dev/null || skip "qemu-system-x86_64 not installed (Debian: qemu-system-x86)"
[ "$(uname -m)" = x86_64 ] || skip "the VM tier boots Debian's amd64 kernel; this is $(uname -m)"
# a qemu binary that cannot start at all (missing libraries, a seccomp'd container, ...)
if ! probe=$(timeout 20 qemu-system-x86_64 -version 2>&1); then
        skip "qemu-system-x86_64 cannot run here: $(head -n 1 <<<"$probe")"
fi

now_ms() { local t=${EPOCHREALTIME/./}; echo $((t / 1000)); }

work="" qemu_pidfile=""
cleanup() {
        local pid
        if [ -n "$qemu_pidfile" ] && [ -s "$qemu_pidfile" ]; then
                pid=$(cat "$qemu_pidfile" 2>/dev/null || true)
                if [ -n "$pid" ] && grep -q qemu-system "/proc/$pid/cmdline" 2>/dev/null; then
                        kill "$pid" 2>/dev/null || true
                        sleep 1
                        kill -9 "$pid" 2>/dev/null || true
                fi
        fi
        [ -n "$work" ] && rm -rf "$work"
        return 0
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# --- what the guest boots (cached) -------------------------------------------------------
t_prep=$(now_ms)
if ! prep_log=$(bash "$here/vm-image.sh" check 2>&1); then
        echo "not ok 1 - the VM tier's kernel and initramfs are prepared (an explicit step: tests/vm/vm-image.sh prepare)"
        sed 's/^/# /' <<<"$prep_log"
        echo "1..1"
        exit 1
fi
t_prep=$(( $(now_ms) - t_prep ))
kver=$(cat "$CACHE/kver")
kernel=$CACHE/vmlinux
[ -f "$kernel" ] || kernel=$CACHE/kernel/boot/vmlinuz-$kver

# --- the payload: the build installed as a package would be, the suite and its files ------
work=$(mktemp -d /var/tmp/cloister-vm.XXXXXX)
mkdir -p "$work/in/payload" "$work/in/units" "$work/out"
# CLOISTER_VM_ROOT: the guest's root instead of the host's / (tests/trixie: the Debian 13
# root), with CLOISTER_VM_DEST, the build already installed by that root's meson.
vm_root=${CLOISTER_VM_ROOT:-/}
if [ -n "${CLOISTER_VM_DEST:-}" ]; then
        cp -a "$CLOISTER_VM_DEST" "$work/in/dest"
else
        DESTDIR=$work/in/dest meson install -C "$build" --no-rebuild --quiet >/dev/null
fi
if [ -d "$work/in/dest/lib" ]; then # Debian's /lib/systemd paths: /lib is usr/lib in the guest
        mkdir -p "$work/in/dest/usr/lib"
        cp -a "$work/in/dest/lib/." "$work/in/dest/usr/lib/"
        rm -rf "$work/in/dest/lib"
fi
sysconfdir=$(sed -n 's/^#define SYSCONFDIR "\(.*\)"$/\1/p' "$build/config.h")
[ -n "$sysconfdir" ] || { echo "Bail out! cannot read SYSCONFDIR from $build/config.h"; exit 1; }
cp "$src/tests/integration/tap.sh" "$suite" "$work/in/payload/"
cp -r "$src/tests/integration/agents" "$work/in/payload/"
for f in "$@"; do cp -r "$f" "$work/in/payload/"; done
[ -n "${CLOISTER_VM_PAYLOAD:-}" ] && cp -r "$CLOISTER_VM_PAYLOAD" "$work/in/payload/extra"
chmod -R a+rX "$work/in"
suite_name=$(basename "$suite")

. "$src/tests/suite-unit.sh"
suite_unit "$work/in/units/cloister-vm-test.service" "cloister VM tier: $suite_name" \
        "CLOISTER_CFG=$sysconfdir/cloister PAYLOAD=/vmtier/in/payload CLOISTER_TIER=vm" \
        "/bin/bash -c 'echo \"CLOISTER-VM-SUITE-START\"; /bin/bash /vmtier/in/payload/$suite_name >/vmtier/out/tap 2>/vmtier/out/stderr; echo \"CLOISTER-VM-SUITE-END rc=\$?\"'" \
        "AllowIsolate=yes
Wants=dbus.socket" \
        "ExecStartPre=/bin/mkdir -p $sysconfdir/cloister
ExecStopPost=/bin/sh -c 'echo \"result=\$SERVICE_RESULT code=\$EXIT_CODE status=\$EXIT_STATUS\" > /vmtier/out/exit-status'
StandardOutput=tty
StandardError=inherit
TTYPath=/dev/ttyS0
TTYReset=no
TTYVHangup=no
TimeoutStartSec=infinity"

# --- boot ---------------------------------------------------------------------------------
if [ "$ACCEL" = auto ]; then
        # /dev/kvm from a nested hypervisor such as kvm_pvm cannot boot a stock kernel: KVM
        # only where a regular kvm_intel/kvm_amd module drives it.
        if [ -w /dev/kvm ] && [ ! -d /sys/module/kvm_pvm ] &&
                { [ -d /sys/module/kvm_intel ] || [ -d /sys/module/kvm_amd ]; }; then
                ACCEL=kvm
        else
                ACCEL=tcg
        fi
fi
case $ACCEL in
kvm) accel=(-accel kvm -cpu host) ;;
tcg) accel=(-accel tcg,thread=multi -cpu max) ;;
*) echo "Bail out! CLOISTER_VM_ACCEL must be auto, kvm or tcg"; exit 1 ;;
esac
append="console=ttyS0 panic=-1 loglevel=4 SYSTEMD_COLORS=0 systemd.unit=cloister-vm-test.service"
append="$append systemd.firstboot=off systemd.unified_cgroup_hierarchy=1 systemd.show_status=1"
qemu_pidfile=$work/qemu.pid
# boot_guest: one boot of the guest, its serial log host-timestamped in $work/serial.log and
# qemu's exit status in $work/qemu.rc.
boot_guest() {
        rm -f "$work/qemu.rc" "$qemu_pidfile"
        t0=$(now_ms)
        {
                set +e
                # --foreground: qemu stays in this process group, which meson kills on its own timeout
                timeout --foreground -k 10 "$TIMEOUT" qemu-system-x86_64 "${accel[@]}" -m "$MEM" -smp "$SMP" \
                        -nodefaults -no-user-config -display none -no-reboot -pidfile "$qemu_pidfile" \
                        -serial stdio -kernel "$kernel" -initrd "$CACHE/initrd.img" -append "$append" \
                        -virtfs "local,path=$vm_root,mount_tag=vmroot,security_model=passthrough,readonly=on,multidevs=remap" \
                        -virtfs "local,path=$work/in,mount_tag=vmin,security_model=passthrough,readonly=on" \
                        -virtfs "local,path=$work/out,mount_tag=vmout,security_model=mapped-xattr" \
                        -virtfs "local,path=$CACHE/kernel/lib/modules/$kver,mount_tag=vmmods,security_model=passthrough,readonly=on" \
                        </dev/null 2>&1 | while IFS= read -r line; do
                                d=$(( $(now_ms) - t0 ))
                                printf '%4d.%03d %s\n' $((d / 1000)) $((d % 1000)) "${line//$'\r'/}"
                        done > "$work/serial.log"
                echo "${PIPESTATUS[0]}" > "$work/qemu.rc"
        } &
        # (polled, not "wait": bash 5.2 can die of a TERM that arrives during "wait" without
        # running the trap, which would leave qemu behind)
        while [ ! -e "$work/qemu.rc" ] && kill -0 $! 2>/dev/null; do sleep 0.2; done
        total=$(( $(now_ms) - t0 ))
        rc=$(cat "$work/qemu.rc" 2>/dev/null || echo '?')
}

# A guest kernel that panics before the suite starts is the emulator's failure, not a test
# result (seen: Debian 13's 6.12 under multi-threaded TCG, "Fatal exception in interrupt" in
# sched_clock_cpu while the kernel patches its own text, 1 boot in many). Such a boot is
# booted again, at most CLOISTER_VM_BOOTS times in all, and each one is reported. A suite
# that started is never run again: whatever it printed is the result.
BOOTS=${CLOISTER_VM_BOOTS:-3}
boot=1 boot_notes=""
while :; do
        boot_guest
        grep -q CLOISTER-VM-SUITE-START "$work/serial.log" && break
        grep -q 'Kernel panic' "$work/serial.log" || break
        [ "$boot" -lt "$BOOTS" ] || break
        panic=$(grep -m1 -o 'Kernel panic.*' "$work/serial.log")
        boot_notes+="# vm: boot $boot: the guest kernel died before the suite started ($panic); booting again"$'\n'
        if [ -n "${CLOISTER_VM_KEEP:-}" ]; then
                mkdir -p "$CLOISTER_VM_KEEP"
                cp "$work/serial.log" "$CLOISTER_VM_KEEP/serial-boot$boot.log"
        fi
        boot=$((boot + 1))
        rm -rf "$work/out" && mkdir "$work/out"
done

start=$(awk '/CLOISTER-VM-SUITE-START/ { print $1; exit }' "$work/serial.log")
end=$(awk '/CLOISTER-VM-SUITE-END/ { print $1; exit }' "$work/serial.log")
if [ -n "${CLOISTER_VM_KEEP:-}" ]; then
        mkdir -p "$CLOISTER_VM_KEEP"
        cp -a "$work/out/." "$work/serial.log" "$CLOISTER_VM_KEEP/"
fi

[ -s "$work/out/tap" ] && cat "$work/out/tap"
printf '%s' "$boot_notes"
echo "# vm: boots=$boot accel=$ACCEL kernel=$kver qemu_exit=$rc prepare=${t_prep}ms boot_to_suite=${start:-?}s suite_end=${end:-?}s total=${total}ms"
if ! grep -qE '^1\.\.[0-9]+' "$work/out/tap" 2>/dev/null; then # lint-tests: allow negated-grep (a missing file is a failure here)
        case $rc in
        124 | 137) echo "not ok - the VM was stopped after CLOISTER_VM_TIMEOUT=${TIMEOUT}s" ;;
        *) echo "not ok - the VM produced no complete TAP (qemu exit $rc)" ;;
        esac
        echo "1..1"
        sed 's/^/# serial: /' "$work/serial.log" | tail -n 60
        sed 's/^/# stderr: /' "$work/out/stderr" 2>/dev/null | tail -n 40
        exit 1
fi
if [ -s "$work/out/stderr" ] && [ -n "${CLOISTER_TEST_VERBOSE:-}" ]; then
        sed 's/^/# stderr: /' "$work/out/stderr" >&2
fi
exit 0

#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Prepares (once, cached) what the VM tier boots: Debian 12's current kernel with its modules,
# and a busybox initramfs whose /init is vm-init.sh. Nothing is installed on the host: the
# packages (linux-image-amd64's image, kmod, busybox-static) are fetched with
# `apt-get download` and unpacked with dpkg -x into the cache.
#
#   vm-image.sh prepare|check|clean     cache: $CLOISTER_VM_CACHE (/var/tmp/cloister-vm-cache)
#
# prepare fetches (network: Debian's archive) and is an explicit step (tests/run-all.sh, CI);
# check, which vm-run.sh calls, only says whether the cache is complete and current: nothing
# inside `meson test` ever reaches the network.
#
# The cache is rebuilt when a part is missing, and the initramfs when vm-init.sh changes.
# Concurrent runs serialise on a lock in the cache dir.
set -euo pipefail
umask 022

here=$(cd "$(dirname "$0")" && pwd)
CACHE=${CLOISTER_VM_CACHE:-/var/tmp/cloister-vm-cache}

log() { printf '# vm-image: %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 2; }

# CLOISTER_VM_APT_ROOT=DIR: packages come from that root's archive (tests/trixie: Debian 13's
# kernel for the trixie guest), through its own apt in a throwaway overlay of it; the host's
# apt configuration is not used.
apt_root() { # CMD...: in the root, with $CACHE/dl at /dl
        unshare -m --propagation private bash -c 'mount -t tmpfs tmpfs /run &&
                exec timeout 600 systemd-nspawn -q -D "$1" --volatile=overlay --register=no --keep-unit --pipe \
                        --bind="$2:/dl" /bin/sh -c "$3"' _ "$CLOISTER_VM_APT_ROOT" "$CACHE/dl" \
                "apt-get update -qq -o APT::Sandbox::User=root >/dev/null && cd /dl && $*" </dev/null
}

fetch_deb() { # PKG DESTDIR
        local pkg=$1 dest=$2 dl=$CACHE/dl
        mkdir -p "$dl"
        if [ -n "${CLOISTER_VM_APT_ROOT:-}" ]; then
                apt_root apt-get download -q -o APT::Sandbox::User=root "$pkg" >/dev/null ||
                        die "apt-get download $pkg in $CLOISTER_VM_APT_ROOT failed"
        elif ! (cd "$dl" && timeout 600 apt-get download -q -o APT::Sandbox::User=root "$pkg" >/dev/null 2>&1); then
                timeout 600 apt-get update -qq >/dev/null 2>&1 || true
                (cd "$dl" && timeout 600 apt-get download -q -o APT::Sandbox::User=root "$pkg" >/dev/null) ||
                        die "apt-get download $pkg failed (is a Debian 12 mirror reachable?)"
        fi
        rm -rf "$dest"
        dpkg -x "$dl/${pkg}_"*.deb "$dest"
}

prepare_kernel() {
        local kpkg kver vmlinuz off
        if [ -n "${CLOISTER_VM_APT_ROOT:-}" ]; then
                mkdir -p "$CACHE/dl"
                kpkg=$(apt_root apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/ { print $2; exit }')
        else
                kpkg=$(apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/ { print $2; exit }')
        fi
        if [ -z "$kpkg" ]; then
                timeout 600 apt-get update -qq >/dev/null 2>&1 || true
                kpkg=$(apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/ { print $2; exit }')
        fi
        [ -n "$kpkg" ] || die "cannot resolve linux-image-amd64 with apt-cache"
        log "kernel package $kpkg"
        fetch_deb "$kpkg" "$CACHE/kernel"
        if [ ! -d "$CACHE/kernel/lib/modules" ] && [ -d "$CACHE/kernel/usr/lib/modules" ]; then
                mkdir -p "$CACHE/kernel/lib" # Debian 13 ships modules under /usr/lib
                mv "$CACHE/kernel/usr/lib/modules" "$CACHE/kernel/lib/modules"
        fi
        kver=$(ls "$CACHE/kernel/lib/modules")
        # depmod from Debian's kmod, run out of the unpacked tree: the guest's modprobe needs it.
        # The host's release (it runs here; busybox-static too): a newer kmod needs a newer libc.
        CLOISTER_VM_APT_ROOT= fetch_deb kmod "$CACHE/kmod"
        ln -sf kmod "$CACHE/kmod/bin/depmod"
        "$CACHE/kmod/bin/depmod" -b "$CACHE/kernel" "$kver"
        # The uncompressed ELF vmlinux boots directly (PVH): saves the in-guest xz
        # decompression, ~4 s under TCG. Without it the bzImage is booted.
        vmlinuz=$CACHE/kernel/boot/vmlinuz-$kver
        rm -f "$CACHE/vmlinux"
        off=$(LC_ALL=C grep -obUaP '\xfd7zXZ\x00' "$vmlinuz" | head -n 1 | cut -d: -f1 || true)
        if [ -n "$off" ]; then # tail gets SIGPIPE once xz has the stream: judge by the output
                tail -c +$((off + 1)) "$vmlinuz" | xz -dc --single-stream > "$CACHE/vmlinux" 2>/dev/null || true
        fi
        if [ "$(head -c 4 "$CACHE/vmlinux" 2>/dev/null | od -An -tx1 | tr -d ' ')" != 7f454c46 ]; then
                rm -f "$CACHE/vmlinux"
                log "no ELF vmlinux in $vmlinuz: the bzImage will be booted"
        fi
        echo "$kver" > "$CACHE/kver"
}

prepare_initrd() {
        local kver kd bb d m l f need=""
        kver=$(cat "$CACHE/kver")
        kd=$CACHE/kernel/lib/modules/$kver
        CLOISTER_VM_APT_ROOT= fetch_deb busybox-static "$CACHE/busybox"
        bb=$CACHE/busybox/bin/busybox
        d=$CACHE/initrd.d
        rm -rf "$d"
        mkdir -p "$d/bin" "$d/proc" "$d/sys" "$d/dev" "$d/lib/modules/$kver"
        cp "$bb" "$d/bin/busybox"
        install -m 0755 "$here/vm-init.sh" "$d/init"
        cp "$CACHE/kmod/bin/kmod" "$d/kmod"
        for m in virtio_pci 9pnet_virtio 9p overlay; do
                # built in (Debian 13: virtio_pci): nothing to load
                grep -qE "(^|/)$m\.ko$" "$kd/modules.builtin" && continue
                l=$(grep -E "(^|/)$m\.ko(\.[a-z]+)?:" "$kd/modules.dep") || die "module $m not in $kver"
                need="$need ${l%%:*} ${l#*:}"
        done
        for f in $need; do
                mkdir -p "$d/lib/modules/$kver/${f%/*}"
                cp "$kd/$f" "$d/lib/modules/$kver/$f"
        done
        cp "$kd/modules.builtin" "$kd/modules.order" "$d/lib/modules/$kver/"
        "$bb" depmod -b "$d" "$kver"
        (cd "$d" && find . | "$bb" cpio -o -H newc 2>/dev/null | gzip -1 > "$CACHE/initrd.img.new")
        mv "$CACHE/initrd.img.new" "$CACHE/initrd.img"
        rm -rf "$d"
}

stamp() { sha256sum "$here/vm-init.sh" "$here/vm-image.sh" | sha256sum | cut -c1-16; }
kernel_ok() {
        [ -f "$CACHE/.kernel.ok" ] && [ -s "$CACHE/kver" ] &&
                [ -f "$CACHE/kernel/lib/modules/$(cat "$CACHE/kver")/modules.dep" ] &&
                [ -f "$CACHE/kernel/boot/vmlinuz-$(cat "$CACHE/kver")" ]
}
initrd_ok() { [ "$(cat "$CACHE/.initrd.ok" 2>/dev/null)" = "$(stamp)" ] && [ -s "$CACHE/initrd.img" ]; }

check() {
        kernel_ok || die "no kernel in $CACHE: run 'bash tests/vm/vm-image.sh prepare' first"
        initrd_ok || die "the initramfs in $CACHE is missing or older than vm-init.sh: run 'bash tests/vm/vm-image.sh prepare' first"
}

prepare() {
        mkdir -p "$CACHE"
        exec 9> "$CACHE/.lock"
        flock -w 900 9 || die "cannot lock $CACHE"
        if ! kernel_ok; then
                rm -f "$CACHE/.initrd.ok"
                prepare_kernel
                touch "$CACHE/.kernel.ok"
        fi
        if ! initrd_ok; then
                prepare_initrd
                stamp > "$CACHE/.initrd.ok"
        fi
        rm -rf "$CACHE/dl"
}

[ "$(id -u)" = 0 ] || die "must run as root"
case ${1:-prepare} in
prepare) prepare ;;
check) check ;;
clean) rm -rf "$CACHE"; log "removed $CACHE" ;;
*) die "usage: $0 prepare|check|clean" ;;
esac

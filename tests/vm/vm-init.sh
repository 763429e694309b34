#!/bin/busybox sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# /init of the VM tier's initramfs (busybox, built by vm-image.sh). Mounts the host's / (9p
# tag "vmroot", read-only) under a RAM overlay, the payload ("vmin", read-only) at
# /vmtier/in and the results dir ("vmout") at /vmtier/out, installs the build
# (/vmtier/in/dest) and the payload's units into the overlay, then hands over to systemd.
# All writes stay in the guest's RAM.
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
log() { read -r u _ < /proc/uptime; echo "cloister-vm-init[$u]: $*"; }
die() { log "FATAL: $*"; sleep 1; poweroff -f; }

for m in virtio_pci 9pnet_virtio 9p overlay; do
        modprobe "$m" || log "modprobe $m failed"
done
has_tag() { cat /sys/bus/virtio/drivers/9pnet_virtio/*/mount_tag 2>/dev/null | tr '\0' '\n' | grep -qx "$1"; }
O9P=trans=virtio,version=9p2000.L,msize=262144

mkdir -p /lower /rw /newroot
mount -t 9p -o ro,$O9P,cache=loose vmroot /lower || die "cannot mount the 9p root"
mount -t tmpfs -o mode=0755 cloister-vm-rw /rw && mkdir -p /rw/upper /rw/work
mount -t overlay -o lowerdir=/lower,upperdir=/rw/upper,workdir=/rw/work overlay /newroot || die "overlay mount failed"
N=/newroot

# A container marker would make systemd believe it runs in docker and ignore systemd.unit=.
rm -f $N/.dockerenv $N/.containerenv
mkdir -p $N/vmtier/in $N/vmtier/out $N/etc/systemd/system $N/etc/systemd/system-generators
has_tag vmin || die "no payload share"
mount -t 9p -o ro,$O9P,cache=loose vmin $N/vmtier/in || die "cannot mount the payload"
has_tag vmout || die "no results share"
mount -t 9p -o $O9P vmout $N/vmtier/out || die "cannot mount the results dir"
K=$(uname -r)
if has_tag vmmods; then
        mkdir -p $N/lib/modules/$K && mount -t 9p -o ro,$O9P,cache=loose vmmods $N/lib/modules/$K
fi

# A fresh /tmp: systemd-tmpfiles' "D /tmp" would otherwise walk the host's whole /tmp over 9p.
mount -t tmpfs -o mode=1777,nosuid,nodev cloister-vm-tmp $N/tmp

# Units and generators that only add time or noise in a throwaway guest. Generators: only
# systemd's debug/run/fstab ones and the build's own run.
for u in systemd-timesyncd.service apt-daily.timer apt-daily-upgrade.timer dpkg-db-backup.timer \
        e2scrub_all.timer e2scrub_reap.service fstrim.timer man-db.timer logrotate.timer \
        systemd-tmpfiles-clean.timer kmod-static-nodes.service systemd-binfmt.service \
        proc-sys-fs-binfmt_misc.automount proc-sys-fs-binfmt_misc.mount; do
        ln -sf /dev/null $N/etc/systemd/system/$u
done
for g in $N/lib/systemd/system-generators/* $N/usr/lib/systemd/system-generators/*; do
        [ -e "$g" ] || continue
        g=${g##*/}
        case $g in systemd-debug-generator|systemd-run-generator|systemd-fstab-generator) continue ;; esac
        [ -e $N/vmtier/in/dest/usr/lib/systemd/system-generators/$g ] && continue
        ln -sf /dev/null $N/etc/systemd/system-generators/$g
done

# A root without kmod (this host kind) gets the initramfs' kmod, so that the guest's kernel
# can load modules (veth, ...) from the vmmods share.
if [ ! -e $N/sbin/modprobe ] && [ ! -e $N/usr/sbin/modprobe ]; then
        cp /kmod $N/usr/sbin/kmod
        for l in modprobe depmod lsmod insmod rmmod modinfo; do ln -sf kmod $N/usr/sbin/$l; done
fi

# The build, as `meson install` laid it out (lib/ already merged into usr/lib), and nothing of
# the host's own cloister configuration.
rm -rf $N/etc/cloister
cp -a $N/vmtier/in/dest/. $N/ || die "cannot install the build"
cp -a $N/vmtier/in/units/. $N/etc/systemd/system/ || die "cannot install the test units"
log "switch_root"
umount /proc /sys
mount --move /dev $N/dev
exec switch_root $N /lib/systemd/systemd

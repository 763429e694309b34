#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# fill.sh MIB: for each private tmpfs, its size as df sees it and how much of a MIB MiB write
# got in (KiB), in /output/fill.txt; leaves a marker in /tmp and /var/tmp and idles until
# stopped (so that the host side of those mounts can be inspected).
for d in /tmp /var/tmp /dev/shm; do
        size=$(df -k "$d" | awk 'NR == 2 { print $2 }')
        dd if=/dev/zero of="$d/fill" bs=1M count="$1" 2>/dev/null
        echo "$d size_kib=$size wrote_kib=$(($(stat -c %s "$d/fill") / 1024))"
        rm -f "$d/fill"
done > /output/fill.txt.new
mv /output/fill.txt.new /output/fill.txt
echo marker > /tmp/cloister-vm-marker
echo marker > /var/tmp/cloister-vm-marker
exec sleep 300

#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# busy.sh SECONDS: spins one CPU for SECONDS of wall-clock time and records, right before and
# right after, the clock and its own cgroup's cpu.stat (usage_usec, nr_periods) in
# /output/busy.start and /output/busy.txt; then idles until stopped.
cg=/sys/fs/cgroup$(sed -n 's/^0:://p' /proc/self/cgroup)
snap() {
        echo "cgroup=$cg"
        echo "ns=$(date +%s%N)"
        awk '$1 == "usage_usec" || $1 == "nr_periods" { print $1 "=" $2 }' "$cg/cpu.stat"
}
snap > /output/busy.start
timeout "$1" sh -c 'while :; do :; done'
snap > /output/busy.txt.new
mv /output/busy.txt.new /output/busy.txt
exec sleep 300

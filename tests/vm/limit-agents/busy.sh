#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# busy.sh SECONDS: spins one CPU for SECONDS of wall-clock time, between /output/busy.start
# and /output/busy.txt, then idles until stopped (so that its cgroup can still be read).
echo start > /output/busy.start
timeout "$1" sh -c 'while :; do :; done'
echo done > /output/busy.txt
exec sleep 300

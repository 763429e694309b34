#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# psi.sh OUT: whether this process can register a memory pressure trigger on its own cgroup
# (write to its memory.pressure), as systemd 254+'s default MemoryPressureWatch=auto allows
# a service: "psi=written" or "psi=refused ERROR", and the file's owner, in OUT ("-": stdout,
# for a systemd-run --pipe control, whose pipe a dynamic user cannot reopen). The window is
# 2 s: an unprivileged trigger needs a multiple of 2 s (EIO otherwise, past every permission).
cg=/sys/fs/cgroup$(sed -n 's/^0:://p' /proc/self/cgroup)
f=$cg/memory.pressure
owner=$(stat -c %u:%g "$f" 2>&1)
if err=$(exec 2>&1; printf 'some 150000 2000000' > "$f"); then
        result="psi=written owner=$owner uid=$(id -u)"
else
        result="psi=refused owner=$owner uid=$(id -u) $err"
fi
if [ "$1" = - ]; then echo "$result"; else echo "$result" > "$1"; fi

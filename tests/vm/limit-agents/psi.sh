#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# psi.sh OUT: whether this process can register a memory pressure trigger on its own cgroup
# (write to its memory.pressure), as systemd 254+'s default MemoryPressureWatch=auto allows
# a service: "psi=written" or "psi=refused ERROR", and the file's owner, in OUT.
cg=/sys/fs/cgroup$(sed -n 's/^0:://p' /proc/self/cgroup)
f=$cg/memory.pressure
owner=$(stat -c %u:%g "$f" 2>&1)
if err=$(exec 2>&1; printf 'some 150000 1000000' > "$f"); then
        echo "psi=written owner=$owner uid=$(id -u)" > "$1"
else
        echo "psi=refused owner=$owner uid=$(id -u) $err" > "$1"
fi

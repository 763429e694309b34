#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Leaves a process behind that keeps writing into /tmp, and waits to be stopped: under KillMode=mixed
# a stop signals the main process only, and systemd kills what is left only after ExecStopPost=,
# where cloister-stage empties /tmp.
i=0
( while :; do : > "/tmp/late-$i" 2>/dev/null; i=$((i + 1)); done ) &
echo $! > /output/bgpid
sleep 60
exit 0

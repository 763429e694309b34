#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# First run: die of SIGSEGV. Later runs (a durable role's restart): stay up.
marker=${STATE_DIRECTORY:-/output}/crashed-once
echo "run" >> /output/runs
if [ -e "$marker" ]; then
        exec sleep 300
fi
touch "$marker"
kill -SEGV $$

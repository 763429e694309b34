#!/bin/sh
set -e
# SPDX-License-Identifier: LGPL-2.1-or-later
# Records what /tmp and /var/tmp hold when it starts (/output/seen-N, one per start), then
# leaves things behind for the next start: files, a deep tree, a fifo, and symlinks to a
# host directory and file (the host-side emptying must not follow them).
n=$(ls /output | grep -c '^seen-' || true)
ls -A /tmp /var/tmp > "/output/seen-$n" 2>&1
echo left > /tmp/left-file
mkdir -p /tmp/deep/a/b/c/d && echo x > /tmp/deep/a/b/c/d/f
ln -s /srv/tmp-canary /tmp/to-host-dir
ln -s /srv/tmp-canary/keep /tmp/to-host-file
mkfifo /var/tmp/fifo
echo v > /var/tmp/left-var
echo "$(ls -A /tmp | wc -l) $(ls -A /var/tmp | wc -l)" > "/output/left-$n"

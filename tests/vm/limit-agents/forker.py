#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# forker.py N: forks up to N children that sleep, and reports in /output/fork.txt how many
# forks succeeded and the errno of the first that failed ("none" if none did).
import errno
import os
import sys
import time

n = 0
out = open("/output/fork.txt", "w", buffering=1)
try:
    for _ in range(int(sys.argv[1])):
        if os.fork() == 0:
            time.sleep(3)
            os._exit(0)
        n += 1
    out.write("forked=%d errno=none\n" % n)
except OSError as e:
    out.write("forked=%d errno=%s\n" % (n, errno.errorcode.get(e.errno, str(e.errno))))

#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# alloc.py MIB: allocates and writes MIB MiB, one MiB at a time, reporting in
# /output/alloc.txt. A durable role's restart ($STATE_DIRECTORY/allocated-once exists)
# reports "restarted" and stays up instead.
import os
import sys
import time

mib = int(sys.argv[1])
state = os.environ.get("STATE_DIRECTORY")
out = open("/output/alloc.txt", "a", buffering=1)
if state and os.path.exists(state + "/allocated-once"):
    out.write("restarted\n")
    time.sleep(300)
    sys.exit(0)
if state:
    open(state + "/allocated-once", "w").close()
out.write("allocating %d MiB\n" % mib)
blocks = [bytearray(b"\x01") * (1 << 20) for _ in range(mib)]
out.write("allocated %d MiB\n" % len(blocks))

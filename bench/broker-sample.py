#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""CPU and memory sampler for bench/broker.sh (runs in the container, outside the sandbox).

    broker-sample.py PIDS_FILE OUT_FILE [INTERVAL_S]

PIDS_FILE has lines "NAME PID" (several lines may share a NAME: nginx's master and worker);
it is re-read every second, so processes can be added while sampling. Every INTERVAL_S
(default 0.05) one line per NAME is appended to OUT_FILE:

    T_NS NAME CPU_NS UTIME_TICKS STIME_TICKS RSS_KB

T_NS is CLOCK_MONOTONIC (the clock broker-load stamps its windows with); CPU_NS is the run
time from /proc/PID/schedstat (nanosecond precision) for a single-threaded process, else
utime + stime of /proc/PID/stat (ticks); UTIME/STIME are those ticks, RSS_KB is from
/proc/PID/statm; each summed over the NAME's processes. Runs
until OUT_FILE's directory holds a file "stop-sampler".
"""
import os
import sys
import time

PAGE_KB = os.sysconf("SC_PAGE_SIZE") // 1024
CLK_TCK = os.sysconf("SC_CLK_TCK")


def read_pids(path):
    pids = {}
    try:
        with open(path) as f:
            for line in f:
                parts = line.split()
                if len(parts) == 2 and parts[1].isdigit():
                    pids.setdefault(parts[0], []).append(int(parts[1]))
    except OSError:
        pass
    return pids


def sample(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            st = f.read().rsplit(")", 1)[1].split()
        with open("/proc/%d/statm" % pid) as f:
            rss = int(f.read().split()[1]) * PAGE_KB
        # fields after ")": state is [0], utime (field 14) [11], stime [12], num_threads [17]
        utime, stime = int(st[11]), int(st[12])
        if int(st[17]) == 1:
            with open("/proc/%d/schedstat" % pid) as f:
                cpu = int(f.read().split()[0])
        else:
            # threads come and go (fake-openai.py): only the process totals keep the time of
            # those that ended, in ticks
            cpu = (utime + stime) * 1000000000 // CLK_TCK
    except (OSError, ValueError, IndexError):
        return None
    return cpu, utime, stime, rss


def main():
    pids_file, out_file = sys.argv[1], sys.argv[2]
    interval = float(sys.argv[3]) if len(sys.argv) > 3 else 0.05
    stop = os.path.join(os.path.dirname(out_file), "stop-sampler")
    pids, reread = {}, 0.0
    with open(out_file, "a", buffering=1 << 16) as out:
        while not os.path.exists(stop):
            now = time.monotonic()
            if now >= reread:
                pids = read_pids(pids_file)
                reread = now + 1.0
            t = time.monotonic_ns()
            for name, ps in pids.items():
                tot = [0, 0, 0, 0]
                seen = False
                for p in ps:
                    s = sample(p)
                    if s:
                        seen = True
                        tot = [a + b for a, b in zip(tot, s)]
                if seen:
                    out.write("%d %s %d %d %d %d\n" % (t, name, *tot))
            time.sleep(max(0.0, interval - (time.monotonic() - now)))


if __name__ == "__main__":
    main()

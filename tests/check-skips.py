#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Every SKIP of a test run, listed with its reason and held against tests/skips.list.

    check-skips.py SKIPS_LIST BUILD_DIR[=EXTRA_LIST]...

Reads every meson-logs/testlog*.json under each BUILD_DIR (the plain run, the valgrind
setups, the sanitizer and fuzz builds) and collects two kinds of SKIP: a whole test that
skipped (meson's result SKIP, "1..0 # SKIP why"), and a TAP test point that did
("ok N - what # SKIP why"). Prints them all, grouped by test, with their reasons.

A SKIP is allowed only if skips.list names it: "TEST | DESCRIPTION | WHY", one a line, the
description exactly as the test point prints it ("*" for a whole test). So the number of
SKIPs per test and test log (per tier: nspawn-battery and vm-battery are separate tests) is
bounded by the list, and a new SKIP fails the run until someone adds it there with its why. An entry that
nothing matched is fine (machines differ: one kernel lacks what another has). EXTRA_LIST
allows more SKIPs in that build dir's logs only (the package build, which has no network).
A Debian 13 test (trixie-nspawn-NAME, trixie-vm-NAME: tests/trixie/testlog.py) may skip what
the Debian 12 test nspawn-NAME or vm-NAME may, except what is listed as "TEST (252) | …": a
SKIP because systemd 252 lacks something, which 257 must run.

Exit status: 0, or 1 if any SKIP is not listed (or a listed test point skipped more often
than it is listed), or 2 on a usage error or an unreadable log.
"""
import collections
import glob
import json
import os
import re
import sys

TAP_SKIP = re.compile(r"^ok\s+\d+\s*(?:-\s*)?(.*?)\s*#\s*SKIP\b\s*(.*)$", re.IGNORECASE)
PLAN_SKIP = re.compile(r"^1\.\.0\s*#\s*SKIP\b\s*(.*)$", re.IGNORECASE)
# "TEST (252) | …": a SKIP only the Debian 12 test may have, not its trixie- twin
ONLY_252 = " (252)"


def read_list(path):
    allowed = collections.Counter()
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            parts = [p.strip() for p in line.split(" | ")]
            if len(parts) != 3 or not all(parts):
                sys.exit(f"{path}:{lineno}: want \"TEST | DESCRIPTION | WHY\", got: {line}")
            test = parts[0]
            if test.endswith(ONLY_252):
                test = test[:-len(ONLY_252)]
                allowed[(test, parts[1], False)] += 1
            else:
                allowed[(test, parts[1], True)] += 1
    return allowed


def allowed_count(allow, key):
    """How often the test point may skip in one log. The Debian 13 tiers (tests/trixie/) run
    the same suites on the same kind of host as the Debian 12 test of the same name without
    "trixie-" (trixie-nspawn-battery, nspawn-battery): they may skip what it may, and what
    is listed under their own name."""
    test, what = key
    n = allow.get((test, what, True), 0) + allow.get((test, what, False), 0)
    if test.startswith("trixie-"):
        n = max(n, allow.get((test[len("trixie-"):], what, True), 0))
    return n


def skips_of(testlog):
    with open(testlog, encoding="utf-8") as f:
        for line in f:
            if not line.strip():
                continue
            t = json.loads(line)
            name = t["name"].split(" / ")[-1]   # "project:suite / name"
            out = t.get("stdout") or ""
            if t.get("result") == "SKIP":
                m = next((PLAN_SKIP.match(l) for l in out.splitlines() if PLAN_SKIP.match(l)), None)
                yield name, "*", m.group(1) if m else "(no reason given)"
                continue
            for l in out.splitlines():
                m = TAP_SKIP.match(l)
                if m:
                    yield name, m.group(1) or m.group(2), m.group(2)


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    allowed = read_list(argv[1])
    by_test = collections.defaultdict(list)
    unlisted = []
    nlogs = 0
    for arg in argv[2:]:
        build, _, extra = arg.partition("=")
        allow = allowed + read_list(extra) if extra else allowed
        logs = sorted(glob.glob(os.path.join(build, "meson-logs", "testlog*.json")))
        if not logs:
            print(f"check-skips: no meson-logs/testlog*.json under {build}", file=sys.stderr)
            return 2
        nlogs += len(logs)
        for log in logs:
            # Per log: the valgrind and sanitizer runs repeat the plain run's tests.
            in_log = collections.Counter()
            for test, what, why in skips_of(log):
                in_log[(test, what)] += 1
                by_test[test].append((what, why))
            for key, n in sorted(in_log.items()):
                k = allowed_count(allow, key)
                if n > k:
                    unlisted.append((key, n, k, log))

    total = sum(len(v) for v in by_test.values())
    print(f"# SKIP summary: {total} SKIPs in {len(by_test)} tests ({nlogs} test logs)")
    for test in sorted(by_test):
        print(f"#   {test}: {len(by_test[test])}")
        for what, why in by_test[test]:
            print(f"#     {what} — {why}")
    for (test, what), n, k, log in unlisted:
        print(f"check-skips: {test}: SKIP not listed ({n} seen in {log}, {k} listed): {what}\n"
              f"check-skips:   add \"{test} | {what} | <why>\" there if it is right, or make it run")
    return 1 if unlisted else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

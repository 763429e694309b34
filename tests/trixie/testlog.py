#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Appends one suite's TAP to a meson-style test log, so that the proof checks of run-all
(tests/check-skips.py, docs/check-security.py) read the Debian 13 tiers as they read meson's.

    testlog.py LOG NAME < TAP

The result is OK for a complete TAP stream without "not ok", SKIP for "1..0 # SKIP …", and
FAIL otherwise (no plan, fewer test points than planned, a "not ok", a "Bail out!").
"""
import json
import re
import sys


def result(tap):
    lines = tap.splitlines()
    if any(re.match(r"^1\.\.0\s*#\s*SKIP", l, re.I) for l in lines):
        return "SKIP"
    plan = next((int(m.group(1)) for m in (re.match(r"^1\.\.(\d+)", l) for l in lines) if m), None)
    points = [l for l in lines if re.match(r"^(not )?ok\b", l)]
    if plan is None or len(points) != plan or any(l.startswith(("not ok", "Bail out!")) for l in lines):
        return "FAIL"
    return "OK"


def main(argv):
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    tap = sys.stdin.read()
    r = result(tap)
    with open(argv[1], "a", encoding="utf-8") as f:
        f.write(json.dumps({"name": f"cloister:trixie / {argv[2]}", "result": r, "stdout": tap}) + "\n")
    print(r)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

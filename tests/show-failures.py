#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""After a failed run: what each failed test printed, from meson's testlog*.json.

CI keeps only the end of run-all's output, and `meson test --print-errorlogs` does not repeat
a TAP test's diagnostics, so the lines that say *why* a test failed are lost. This prints,
for every test whose result is neither OK, SKIP nor EXPECTEDFAIL, its failing TAP lines with
the diagnostics that follow them, then the last lines of its output.

    show-failures.py BUILD_DIR…
"""
import glob
import json
import os
import sys

PASSING = {"OK", "SKIP", "EXPECTEDFAIL"}
TAIL = 40


def failing_lines(out):
    """Every 'not ok' line with the '#' lines just before it (a check's diagnostics may come
    first) and just after it."""
    picked, before, keep = [], [], False
    for line in out.splitlines():
        if line.startswith("not ok"):
            picked += before[-30:] + [line]
            before, keep = [], True
        elif line.startswith("#"):
            if keep:
                picked.append(line)
            else:
                before.append(line)
        else:
            before, keep = [], False
    return picked


def main(dirs):
    failed = 0
    for d in dirs:
        for log in sorted(glob.glob(os.path.join(d, "meson-logs", "testlog*.json"))):
            with open(log, encoding="utf-8", errors="replace") as f:
                for raw in f:
                    try:
                        t = json.loads(raw)
                    except ValueError:
                        continue
                    if t.get("result") in PASSING:
                        continue
                    failed += 1
                    out = t.get("stdout") or ""
                    print(f"=== {t.get('name')}: {t.get('result')} ({log})")
                    for line in failing_lines(out):
                        print(f"    {line}")
                    print(f"--- its last {TAIL} lines:")
                    for line in out.splitlines()[-TAIL:]:
                        print(f"    {line}")
    if not failed:
        print("show-failures: no failed test in", " ".join(dirs))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

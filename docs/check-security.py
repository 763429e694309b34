#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""docs/security.md maps every claim to a test; this keeps the map true. Every `quoted`
test name that follows a tier label ("nspawn-sandbox:", "battery:", "VM:", "generator:" …)
must occur in that tier's sources: the TAP descriptions of the suite, the battery's probe
and control names, the generator case names, the fuzz targets. "…" and "<placeholder>"
stand for the variable parts of a description; "*" ends a name prefix. A label is a whole
word outside `backquotes` (a quoted description may itself contain "generator:"). Output
is TAP.

  check-security.py SOURCE_ROOT [--testlog FILE…]

With --testlog (the meson-logs/testlog*.json of one run: tests/run-all.sh passes them after
every tier ran), a name that exists is not enough: in that same run, one of its tier's tests
must print an "ok" line (not a SKIP) that carries it, and none a "not ok" line that does, and
a fuzz target's replay must have passed. A claim is proven only by a test that ran.
"""

import glob
import json
import os
import re
import sys

root = sys.argv[1]
testlogs = sys.argv[sys.argv.index("--testlog") + 1:] if "--testlog" in sys.argv else None
doc = os.path.join(root, "docs", "security.md")


def read(*patterns):
    text = ""
    for p in patterns:
        for f in sorted(glob.glob(os.path.join(root, p))):
            with open(f, encoding="utf-8", errors="replace") as fh:
                text += fh.read() + "\n"
    return text


cases = "\n".join(os.path.basename(p)[:-5] if p.endswith(".role") else os.path.basename(p)
                  for p in glob.glob(os.path.join(root, "tests/generator/cases/*")))
SOURCES = {
    "nspawn-sandbox": read("tests/integration/suite-sandbox.sh"),
    "nspawn-lifecycle": read("tests/integration/suite-lifecycle.sh"),
    "nspawn-broker": read("tests/integration/suite-broker.sh"),
    "nspawn-sidecar": read("tests/integration/suite-sidecar.sh"),
    "nspawn-gpu": read("tests/integration/suite-gpu.sh"),
    "nspawn-run": read("tests/integration/suite-run.sh"),
    "nspawn-deps": read("tests/integration/suite-deps.sh"),
    "nspawn-mcp-sdk": read("tests/integration/suite-mcp-sdk.sh"),
    "nspawn-quickstart": read("tests/integration/suite-quickstart.sh"),
    "nspawn-ctl": read("tests/integration/suite-ctl.sh"),
    # the Debian 13 tiers (tests/trixie/): the same suites under systemd 257
    "trixie-nspawn-ctl": read("tests/integration/suite-ctl.sh"),
    "trixie-nspawn-run": read("tests/integration/suite-run.sh"),
    "trixie-vm-limits": read("tests/vm/suite-limits.sh"),
    "ctl": read("tests/ctl/*.sh"),
    "cloister-deps": read("tests/deps/test-cloister-deps.sh"),
    "unit": read("tests/unit/test-*.c", "tests/deps/test-deps.c", "policy/check-keys.py"),
    "fuzz": "\n".join(os.path.basename(p)[:-2] for p in glob.glob(os.path.join(root, "tests/fuzz/fuzz-*.c"))),
    "battery": read("tests/battery/*.c", "tests/integration/suite-battery.sh"),
    "VM": read("tests/vm/*.sh"),
    "generator": cases,
    "generator cases": cases,
}
LABEL = re.compile(r"(?<![\w@.-])(" + "|".join(sorted(map(re.escape, SOURCES), key=len, reverse=True)) + r"):")


def units(text):
    """Table rows one by one; other paragraphs joined into one line each."""
    para = []
    for line in text.splitlines():
        if line.startswith("|"):
            yield line
        elif line.strip():
            para.append(line.strip())
            continue
        if para:
            yield " ".join(para)
            para = []
    if para:
        yield " ".join(para)


def found(tier, name):
    src = SOURCES[tier]
    if tier.startswith("generator") or tier == "fuzz":
        names = src.split("\n")
        if name.endswith("*"):
            return any(n.startswith(name[:-1]) for n in names)
        return name in names
    if name.endswith("*"):
        name = name[:-1]
    parts = [p.strip() for p in re.split(r"…|<[^>]*>", name)]
    return all(p in src for p in parts if len(p) >= 4)


# The meson tests that prove each tier's names.
TIER_TESTS = {
    "battery": ["nspawn-battery", "vm-battery"],
    "VM": ["vm-limits", "vm-sandbox", "vm-battery"],
    "ctl": ["ctl-cli", "ctl-run-cli", "bash-completion"],
    "generator": ["generator-cases", "generator-analyze"],
    "generator cases": ["generator-cases", "generator-analyze"],
}


def read_testlogs(files):
    """test name -> [(result, stdout lines, suites)], one entry per run of it in any log (the
    plain, valgrind and sanitizer runs)."""
    runs = {}
    for f in files:
        with open(f, encoding="utf-8") as fh:
            for line in fh:
                if line.strip():
                    t = json.loads(line)
                    project_suites, _, name = t["name"].rpartition(" / ")
                    suites = set(project_suites.partition(":")[2].split("+"))
                    runs.setdefault(name, []).append((t["result"], (t.get("stdout") or "").splitlines(), suites))
    return runs


def ran_ok(runs, tier, name):
    """None if a test of the tier passed with the name in the same run, else why not."""
    if tier == "fuzz":
        r = runs.get(name + "-replay", [])
        return None if r and all(x[0] == "OK" for x in r) else \
            f"{name}-replay did not pass in this run ({', '.join(x[0] for x in r) or 'not run'})"
    tests = TIER_TESTS.get(tier) or \
        ([t for t, rs in runs.items() if any("unit" in x[2] for x in rs)] if tier == "unit" else [tier])
    key = name[:-1] if name.endswith("*") else name
    parts = [p.strip() for p in re.split(r"…|<[^>]*>", key) if len(p.strip()) >= 4] or [key]
    good = bad = False
    for t in tests:
        for line in (l for run in runs.get(t, []) for l in run[1]):
            if all(p in line for p in parts):
                if re.match(r"^not ok\b", line):
                    bad = True
                elif re.match(r"^ok\b", line) and not re.search(r"#\s*SKIP", line, re.I):
                    good = True
    if bad:
        return "a test point carrying it failed in this run"
    if not good:
        ran = [t for t in tests if t in runs]
        return f"no passing test point carries it in this run (tests run: {', '.join(ran) or 'none of ' + ', '.join(tests)})"
    return None


runs = read_testlogs(testlogs) if testlogs is not None else None
n = failed = 0
for u in units(open(doc, encoding="utf-8").read()):
    bare = re.sub(r"`[^`]*`", lambda m: " " * len(m.group(0)), u)
    labels = [(m.start(), m.group(1)) for m in LABEL.finditer(bare)]
    if not labels:
        continue
    for m in re.finditer(r"`([^`]+)`", u):
        before = [t for pos, t in labels if pos < m.start()]
        if not before:
            continue
        tier, name = before[-1], m.group(1)
        n += 1
        if not found(tier, name):
            failed += 1
            print(f"not ok {n} - {tier}: {name} (not in the {tier} sources)")
        elif runs is not None and (why := ran_ok(runs, tier, name)):
            failed += 1
            print(f"not ok {n} - {tier}: {name} ({why})")
        else:
            print(f"ok {n} - {tier}: {name}")
if n == 0:
    print("not ok 1 - no test names found in docs/security.md")
    n = failed = 1
print(f"1..{n}")
sys.exit(1 if failed else 0)

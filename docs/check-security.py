#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""docs/security.md maps every claim to a test; this keeps the map true. Every `quoted`
test name that follows a tier label ("nspawn-sandbox:", "battery:", "VM:", "generator:" …)
must occur in that tier's sources: the TAP descriptions of the suite, the battery's probe
and control names, the generator case names, the fuzz targets. "…" and "<placeholder>"
stand for the variable parts of a description; "*" ends a name prefix. A label is a whole
word outside `backquotes` (a quoted description may itself contain "generator:"). Output
is TAP.

  check-security.py SOURCE_ROOT
"""

import glob
import os
import re
import sys

root = sys.argv[1]
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
        if found(tier, name):
            print(f"ok {n} - {tier}: {name}")
        else:
            failed += 1
            print(f"not ok {n} - {tier}: {name} (not in the {tier} sources)")
if n == 0:
    print("not ok 1 - no test names found in docs/security.md")
    n = failed = 1
print(f"1..{n}")
sys.exit(1 if failed else 0)

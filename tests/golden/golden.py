#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Golden test: the exact text the generator writes for every generator test case
(tests/generator/cases/*), all files, recorded in generator.txt. A refactoring of the
profile must leave it byte for byte identical; likewise the D-Bus properties cloisterctl
run sends for each role shape of test-profile-bus (its --print mode), in bus.txt; a deliberate change is re-recorded with
update.sh in a commit that says so.

Usage (update.sh BUILD_DIR records, by setting CLOISTER_GOLDEN_RECORD=1):
  golden.py --generator BIN --template RENDERED --template-path INSTALLED
            --cases DIR --conf CLOISTER.CONF --golden FILE
            --bus-printer TEST-PROFILE-BUS --bus-golden FILE [--record]
Without --record: TAP, one point per file, failing with a unified diff.
"""

import argparse
import difflib
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
RECORDED_UNIT_DIR = "/lib/systemd/system"
spec = importlib.util.spec_from_file_location(
    "run_cases", os.path.join(HERE, "..", "generator", "run-cases.py"))
rc = importlib.util.module_from_spec(spec)
spec.loader.exec_module(rc)


def render(opts):
    runner = rc.Runner(opts, rc.Tap())
    entries = sorted(e for e in os.listdir(opts.cases)
                     if e.endswith(".role") or os.path.isdir(os.path.join(opts.cases, e)))
    out = []
    tmp = tempfile.mkdtemp(prefix="cloister-golden-")
    try:
        for e in entries:
            case = rc.Case(opts.cases, e)
            root = os.path.join(tmp, case.name)
            os.makedirs(root)
            runner.build_tree(case, root)
            run = runner.generate(root)
            out.append(f"=== {case.name} ===\n")
            if run is None:
                out.append("timed out\n")
                continue
            out.append(f"exit {run.status}\n")
            files = {}
            for d in (rc.GEN_NORMAL, rc.GEN_EARLY, rc.GEN_LATE):
                for name, text in rc.generated_files(os.path.join(root, d)).items():
                    files[os.path.join(os.path.basename(d), name)] = text
            for name in sorted(files):
                text = files[name].replace(root, "@ROOT@")
                # Recorded on Debian 12, whose systemd.pc puts units in /lib/systemd/system; a
                # merged-/usr systemd (Debian 13) says /usr/lib/systemd/system. Same rendering.
                unitdir = os.path.dirname(opts.template_path)
                if text.startswith("-> ") and unitdir != RECORDED_UNIT_DIR:
                    text = text.replace("-> " + unitdir + "/", "-> " + RECORDED_UNIT_DIR + "/", 1)
                if not text.endswith("\n"):
                    text += "\\ no newline at end\n"
                out.append(f"--- {name} ---\n{text}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return "".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    for a in ("generator", "template", "template-path", "cases", "conf", "golden", "bus-printer", "bus-golden"):
        ap.add_argument("--" + a, required=True)
    ap.add_argument("--record", action="store_true")
    opts = ap.parse_args()
    opts.keep = False
    for a in ("generator", "template", "cases", "conf", "golden", "bus_printer", "bus_golden"):
        setattr(opts, a, os.path.abspath(getattr(opts, a)))
    if os.environ.get("CLOISTER_GOLDEN_RECORD") == "1":
        opts.record = True
    bus = subprocess.run([opts.bus_printer, "--print"], stdout=subprocess.PIPE, check=False)
    bus_text = bus.stdout.decode("utf-8", errors="surrogateescape") + f"exit {bus.returncode}\n"
    outputs = [("generator output", opts.golden, render(opts)), ("D-Bus properties", opts.bus_golden, bus_text)]
    print(f"1..{len(outputs)}")
    failed = 0
    for n, (what, path, text) in enumerate(outputs, 1):
        if opts.record:
            with open(path, "w", encoding="utf-8", errors="surrogateescape") as f:
                f.write(text)
            print(f"ok {n} - {what} recorded in {path}")
            continue
        with open(path, encoding="utf-8", errors="surrogateescape") as f:
            want = f.read()
        if text == want:
            print(f"ok {n} - {what} identical to {os.path.basename(path)}")
            continue
        failed += 1
        print(f"not ok {n} - {what} differ from {os.path.basename(path)} "
              "(re-record with tests/golden/update.sh BUILD_DIR only for a deliberate change)")
        for line in difflib.unified_diff(want.splitlines(keepends=True), text.splitlines(keepends=True),
                                         "recorded", "now"):
            print("# " + line.rstrip("\n"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Mutation runs: proof that the suites can fail.

    run-mutants.py SOURCE_ROOT [MUTANTS_LIST] [--only NAME…] [--keep DIR]

For each mutant in tests/mutation/mutants.list, a copy of the tree gets one security-relevant
piece disabled (one literal edit), is rebuilt incrementally, and the tests named for it run:
at least one of them must fail ("killed"). A mutant that survives means a piece of the
sandbox could be gone without any test noticing: the run fails and names the tests that
should have seen it. A mutant whose edit no longer applies (the code moved) or that does not
build is an error too: the list must follow the code.

The list: one mutant a line, "NAME | FILE | FROM | TO | TEST[,TEST…]". FROM is a literal that
must occur exactly once in FILE; TO replaces it ("\\n" in either is a newline). A line
"@rows FILE ARRAY | TEST[,TEST…] | SKIP-KEY[,…]" stands for one mutant per row of the static
table ARRAY in FILE (a row `{ "Section", "Key", … },` deleted), but the keys listed after it.

Before any mutant, every test named runs once on the unmutated copy: a test that fails
already proves nothing. Prints a TAP line per mutant and the kill table. Bounded: one build
and the named tests per mutant; no network.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

ROW = re.compile(r'^\s*\{\s*"(?P<section>\w+)",\s*"(?P<key>\w+)",.*\},\s*(?:/\*.*)?$')


def parse_list(root, path):
    mutants = []
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            where = f"{path}:{lineno}"
            if line.startswith("@rows "):
                parts = [p.strip() for p in line[len("@rows "):].split(" | ")]
                if len(parts) not in (2, 3):
                    sys.exit(f"{where}: want \"@rows FILE ARRAY | TESTS [| SKIP-KEYS]\"")
                file, array = parts[0].split()
                tests = parts[1].split(",")
                skip = set(parts[2].split(",")) if len(parts) == 3 else set()
                mutants += rows_of(root, file, array, tests, skip, where)
                continue
            parts = [p.strip() for p in line.split(" | ")]
            if len(parts) != 5:
                sys.exit(f"{where}: want \"NAME | FILE | FROM | TO | TESTS\", got {len(parts)} fields")
            name, file, frm, to, tests = parts
            unesc = lambda s: s.replace("\\n", "\n")
            mutants.append(dict(name=name, file=file, frm=unesc(frm), to=unesc(to),
                                tests=tests.split(","), where=where))
    return mutants


def rows_of(root, file, array, tests, skip, where):
    with open(os.path.join(root, file), encoding="utf-8") as f:
        text = f.read()
    m = re.search(r"\b" + re.escape(array) + r"(?:\[[^\]]*\])+\s*=\s*\{\n(.*?)\n\};", text, re.S)
    if not m:
        sys.exit(f"{where}: no table {array}[] in {file}")
    out, seen, lines = [], {}, {}
    before = text[:m.start(1)]
    for line in m.group(1).split("\n"):
        # the same row text may stand in several blocks (modes): cut the k-th occurrence
        lines[line] = lines.get(line, before.count(line + "\n")) + 1
        r = ROW.match(line)
        if not r or r["key"] in skip:
            continue
        n = seen[r["key"]] = seen.get(r["key"], 0) + 1
        out.append(dict(name=f"{array} {r['key']}" + (f" #{n}" if n > 1 else ""), file=file,
                        frm=line + "\n", to="", nth=lines[line], tests=tests, where=where))
    return out


def run(cmd, **kw):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kw)


def copy_tree(src, dst):
    if os.path.isdir(os.path.join(src, ".git")):
        files = run(["git", "-C", src, "ls-files", "-z", "--cached", "--others", "--exclude-standard"]).stdout.split("\0")
        for f in filter(None, files):
            s, d = os.path.join(src, f), os.path.join(dst, f)
            if not os.path.lexists(s):
                continue
            os.makedirs(os.path.dirname(d), exist_ok=True)
            shutil.copy2(s, d, follow_symlinks=False)
    else:   # a release tarball: everything but build directories
        shutil.copytree(src, dst, dirs_exist_ok=True, symlinks=True,
                        ignore=shutil.ignore_patterns("build*", ".git"))


def meson_test(build, tests, timeout):
    r = run(["meson", "test", "-C", build, "--no-rebuild", "--print-errorlogs", *tests], timeout=timeout)
    return r.returncode, r.stdout


class Targets:
    """What each test needs built (its executable and depends), as ninja outputs: a mutant
    rebuilds only those, not every fuzz target and tool of the tree."""

    def __init__(self, build):
        tests = json.loads(run(["meson", "introspect", build, "--tests"]).stdout)
        targets = json.loads(run(["meson", "introspect", build, "--targets"]).stdout)
        by_id = {t["id"]: t for t in targets}
        by_file = {f: t for t in targets for f in t["filename"]}
        self.build = build
        self.need = {}
        for t in tests:
            outs = set()
            for d in t.get("depends", []):
                outs.update(by_id[d]["filename"] if d in by_id else [])
            for c in t["cmd"]:
                if c in by_file:
                    outs.update(by_file[c]["filename"])
            self.need[t["name"]] = outs

    def ninja(self, tests):
        outs = sorted({os.path.relpath(f, self.build) for t in tests for f in self.need.get(t, ())})
        return run(["ninja", "-C", self.build, *outs])


def applies(text, m):
    """None when the mutant's edit applies to text, else why not."""
    n = text.count(m["frm"])
    nth = m.get("nth")
    if (n != 1 and not nth) or (nth and n < nth):
        return f"the edit does not apply ({n} matches of FROM in {m['file']}; {m['where']})"
    return None


def check_edits(root, mutants):
    """The cheap half of a mutation run, for the everyday suite: each edit still finds its
    code (one match of FROM), so a move of the code fails here and not an hour into CI."""
    print("TAP version 13")
    bad = 0
    for i, m in enumerate(mutants, 1):
        try:
            with open(os.path.join(root, m["file"]), encoding="utf-8") as f:
                why = applies(f.read(), m)
        except OSError as e:
            why = f"{m['file']}: {e.strerror} ({m['where']})"
        bad += why is not None
        print(f"{'not ok' if why else 'ok'} {i} - mutant {m['name']}" + (f": {why}" if why else ""))
    print(f"1..{len(mutants)}")
    return 1 if bad else 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("root")
    ap.add_argument("list", nargs="?")
    ap.add_argument("--only", nargs="*", default=[])
    ap.add_argument("--keep")
    ap.add_argument("--check", action="store_true",
                    help="only check that every edit applies to the tree (TAP), build nothing")
    a = ap.parse_args()
    root = os.path.abspath(a.root)
    mutants = parse_list(root, a.list or os.path.join(root, "tests", "mutation", "mutants.list"))
    if a.check:
        return check_edits(root, mutants)
    if a.only:
        mutants = [m for m in mutants if m["name"] in a.only]
    work = a.keep or tempfile.mkdtemp(prefix="cloister-mutants.")
    src, build = os.path.join(work, "src"), os.path.join(work, "build")
    t0 = time.monotonic()
    try:
        if not os.path.isdir(src):
            copy_tree(root, src)
        if not os.path.isdir(build):
            r = run(["meson", "setup", build, src, "--prefix=/usr"])
            if r.returncode:
                print(r.stdout[-3000:])
                print("Bail out! meson setup of the copy failed")
                return 1
        r = run(["ninja", "-C", build])
        if r.returncode:
            print(r.stdout[-3000:])
            print("Bail out! the unmutated copy does not build")
            return 1

        targets = Targets(build)
        print("TAP version 13")
        tests = sorted({t for m in mutants for t in m["tests"]})
        rc, out = meson_test(build, tests, 3600)
        if rc:
            print("\n".join("# " + l for l in out.splitlines()[-40:]))
            print(f"Bail out! the tests the mutants are held against fail without any mutant: {' '.join(tests)}")
            return 1
        print(f"# baseline: {len(tests)} tests pass unmutated ({time.monotonic() - t0:.0f} s)")

        table, bad = [], 0
        for i, m in enumerate(mutants, 1):
            t1 = time.monotonic()
            path = os.path.join(src, m["file"])
            with open(path, encoding="utf-8") as f:
                orig = f.read()
            why = applies(orig, m)
            nth = m.get("nth")
            if why:
                verdict, detail = "error", why
            else:
                at = -1
                for _ in range(nth or 1):
                    at = orig.index(m["frm"], at + 1)
                with open(path, "w", encoding="utf-8") as f:
                    f.write(orig[:at] + m["to"] + orig[at + len(m["frm"]):])
                try:
                    b = targets.ninja(m["tests"])
                    if b.returncode:
                        verdict, detail = "error", "the mutant does not build: " + b.stdout.strip().splitlines()[-1][:200]
                    else:
                        # one test at a time, in the order listed (cheapest first): the first
                        # that fails kills the mutant
                        verdict, detail = "survived", "no test failed of: " + ", ".join(m["tests"])
                        for t in m["tests"]:
                            rc, out = meson_test(build, [t], 1800)
                            if rc:
                                verdict, detail = "killed", "by " + t
                                break
                finally:
                    with open(path, "w", encoding="utf-8") as f:
                        f.write(orig)
            dt = time.monotonic() - t1
            ok = verdict == "killed"
            bad += not ok
            print(f"{'ok' if ok else 'not ok'} {i} - mutant {m['name']}: {verdict} {detail} ({dt:.0f} s)")
            table.append((m["name"], verdict, detail))
        run(["ninja", "-C", build])   # leave the copy unmutated (--keep)

        w = max(len(n) for n, _, _ in table) if table else 4
        print(f"# kill table ({len(table)} mutants, {time.monotonic() - t0:.0f} s):")
        for n, v, d in table:
            print(f"#   {n:<{w}}  {v:<8}  {d}")
        print(f"1..{len(mutants)}")
        return 1 if bad else 0
    finally:
        if not a.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""catalog/cloister.catalog explains every journal record cloister writes (journalctl -x):
every MESSAGE_ID in the C sources has exactly one entry, every entry is one the sources use,
each entry has the headers of systemd's catalogs, and journalctl itself compiles the file
and lists every id (journalctl --root=TMP --update-catalog, then --list-catalog).

Usage: catalog.py SOURCE_ROOT
First proves on made-up sources and catalogs that the checks fail (TAP, one point each)."""
import os
import re
import shutil
import subprocess
import sys
import tempfile

SOURCE_DIRS = ("helpers", "lib", "generators")
ID = re.compile(r"\b[0-9a-f]{32}\b")
ENTRY = re.compile(r"^-- (\S+)(?: (\S+))?$")


def source_ids(root):
    """The 128-bit ids on every line of a C source that names MESSAGE_ID: the
    sd_journal_send() field itself or the #define it uses."""
    ids = {}
    for d in SOURCE_DIRS:
        for top, dirs, files in os.walk(os.path.join(root, d)):
            dirs.sort()
            for f in sorted(files):
                if not f.endswith((".c", ".h")):
                    continue
                path = os.path.join(top, f)
                with open(path, encoding="utf-8", errors="replace") as fh:
                    for n, line in enumerate(fh, 1):
                        if "MESSAGE_ID" in line:
                            for i in ID.findall(line):
                                ids.setdefault(i, f"{os.path.relpath(path, root)}:{n}")
    return ids


def catalog_entries(text):
    """Returns ({id: [header lines]}, problems); an entry is '-- ID' then headers up to a
    blank line, then its text."""
    entries = {}
    problems = []
    current = None
    in_headers = False
    for n, line in enumerate(text.splitlines(), 1):
        m = ENTRY.match(line)
        if m:
            mid = m.group(1)
            if not re.fullmatch(r"[0-9a-f]{32}", mid):
                problems.append(f"line {n}: \"{mid}\" is not a 128-bit id in lower-case hex")
            if m.group(2):
                problems.append(f"line {n}: {mid} has a language ({m.group(2)}); only the default is shipped")
            if mid in entries:
                problems.append(f"line {n}: a second entry for {mid}")
            current = entries.setdefault(mid, [])
            in_headers = True
        elif current is not None and in_headers:
            if line == "":
                in_headers = False
            else:
                current.append(line)
    for mid, headers in entries.items():
        names = [h.split(":", 1)[0] for h in headers]
        for need in ("Subject", "Defined-By", "Documentation"):
            if need not in names:
                problems.append(f"{mid}: no {need}: header")
        if "Defined-By: cloister" not in headers:
            problems.append(f"{mid}: not Defined-By: cloister")
        for h in headers:
            if h.startswith("Documentation:") and not re.fullmatch(r"Documentation: (man:\S+\(\d\)|https?://\S+|file:/\S+)", h):
                problems.append(f"{mid}: \"{h}\" is not a man: or URL reference")
    return entries, problems


def check(root, catalog_text):
    """Returns (problems of the catalog's form, problems of coverage)."""
    used = source_ids(root)
    entries, form = catalog_entries(catalog_text)
    coverage = [f"{mid} ({where}) has no catalog entry" for mid, where in sorted(used.items())
                if mid not in entries]
    coverage += [f"{mid}: catalog entry for an id no source logs" for mid in sorted(entries)
                 if mid not in used]
    return form, coverage


class Tap:
    def __init__(self):
        self.n = 0
        self.failed = 0

    def point(self, ok, description, diag=(), skip=None):
        self.n += 1
        for d in diag:
            print(f"# {d}")
        if skip:
            print(f"ok {self.n} - {description} # SKIP {skip}")
            return
        print(f"{'ok' if ok else 'not ok'} {self.n} - {description}")
        self.failed += not ok


A = "0123456789abcdef0123456789abcdef"
B = "fedcba9876543210fedcba9876543210"


def entry(mid, headers=("Subject: s", "Defined-By: cloister", "Documentation: man:x(8)")):
    return f"-- {mid}\n" + "\n".join(headers) + "\n\nText.\n\n"


def self_test(tap):
    source = f'sd_journal_send("MESSAGE_ID={A}", NULL);\n'
    header = f'#define OTHER_MESSAGE_ID "{B}"\n'
    variants = [
        ("sources and catalog that agree pass", {"helpers/a.c": source}, entry(A), (0, 0)),
        ("an id defined in a header and no entry fails",
         {"helpers/a.c": source, "lib/b.h": header}, entry(A), (0, 1)),
        ("an entry no source uses fails", {"helpers/a.c": source}, entry(A) + entry(B), (0, 1)),
        ("two entries for one id fail", {"helpers/a.c": source}, entry(A) + entry(A), (1, 0)),
        ("an entry without Subject: fails", {"helpers/a.c": source},
         entry(A, ("Defined-By: cloister", "Documentation: man:x(8)")), (1, 0)),
        ("an id that is not lower-case hex fails", {"helpers/a.c": source.replace("abc", "ABC")},
         entry(A.replace("abc", "ABC")), (1, 1)),
    ]
    for description, sources, catalog, expected in variants:
        with tempfile.TemporaryDirectory() as root:
            for name, text in sources.items():
                os.makedirs(os.path.join(root, os.path.dirname(name)), exist_ok=True)
                with open(os.path.join(root, name), "w") as f:
                    f.write(text)
            problems = check(root, catalog)
            counts = tuple(len(p) for p in problems)
            tap.point(counts == expected, f"self-test: {description}",
                      [f"expected {expected} problems, got {counts}: {problems}"]
                      if counts != expected else [])


def journalctl_lists(catalog_path, ids, tap):
    journalctl = shutil.which("journalctl")
    description = "journalctl --update-catalog compiles the catalog and --list-catalog lists every id"
    if not journalctl:
        tap.point(True, description, skip="journalctl is not installed")
        return
    help_text = subprocess.run([journalctl, "--help"], stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True).stdout
    if "--update-catalog" not in help_text or "--root" not in help_text:
        tap.point(True, description, skip="this journalctl has no --update-catalog or --root")
        return
    with tempfile.TemporaryDirectory() as root:
        catalog_dir = os.path.join(root, "usr/lib/systemd/catalog")
        os.makedirs(catalog_dir)
        shutil.copy(catalog_path, catalog_dir)
        update = subprocess.run([journalctl, f"--root={root}", "--update-catalog"],
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        listed = subprocess.run([journalctl, f"--root={root}", "--list-catalog"],
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        got = {line.split()[0] for line in listed.stdout.splitlines() if line.strip()}
        missing = sorted(set(ids) - got)
        ok = update.returncode == 0 and not update.stdout.strip() and listed.returncode == 0 and not missing
        diag = []
        if not ok:
            diag = [f"--update-catalog: exit {update.returncode}: {update.stdout.strip()}",
                    f"--list-catalog: exit {listed.returncode}: {listed.stdout.strip()}",
                    f"not listed: {missing}"]
        tap.point(ok, description, diag)


def main():
    root = sys.argv[1]
    catalog_path = os.path.join(root, "catalog", "cloister.catalog")
    tap = Tap()
    self_test(tap)
    with open(catalog_path, encoding="utf-8") as f:
        text = f.read()
    form, coverage = check(root, text)
    ids = source_ids(root)
    tap.point(bool(ids), "the sources log at least one MESSAGE_ID (the scan finds them)")
    tap.point(not form, "every catalog entry is one id, with Subject:, Defined-By: cloister, Documentation:", form)
    tap.point(not coverage, "every MESSAGE_ID in the sources has exactly one entry, every entry is used", coverage)
    journalctl_lists(catalog_path, ids, tap)
    print(f"1..{tap.n}")
    return 1 if tap.failed else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Every file of the source tree says under which licence it is (REUSE, https://reuse.software):
an SPDX-License-Identifier line among its first lines, or a REUSE.toml annotation when it
cannot carry one; every licence named has its text in LICENSES/, and every text there is
used. The files are git's tracked files when the tree is a git checkout, else (a release
tarball) every file below it except build directories and Python caches.

Usage: license-headers.py SOURCE_ROOT
The checker first proves on throwaway trees that it fails for a missing header, an unknown
licence, an unused licence text and a stale annotation (TAP, one point each)."""
import os
import re
import subprocess
import sys
import tempfile
import tomllib

HEAD_LINES = 5
SPDX = re.compile(r"SPDX-License-Identifier:\s*(.*)")
# REUSE exempts these from needing a licence of their own (spec 3.3, "Excluded files").
EXEMPT = re.compile(r"^(LICENSES/.*|COPYING(\..*)?|LICENSE(\..*)?|REUSE\.toml)$|\.license$")


def tracked_files(root):
    if os.path.exists(os.path.join(root, ".git")):
        out = subprocess.run(["git", "-C", root, "ls-files", "-z"], check=True,
                             stdout=subprocess.PIPE).stdout.decode()
        names = [n for n in out.split("\0") if n]
    else:
        names = []
        for top, dirs, files in os.walk(root):
            dirs[:] = sorted(d for d in dirs
                             if d not in (".git", "__pycache__")
                             and not os.path.exists(os.path.join(top, d, "meson-private")))
            for f in files:
                if not f.endswith(".pyc"):
                    names.append(os.path.relpath(os.path.join(top, f), root))
    # Symlinks point at a file that is checked itself (REUSE ignores them too); a file git
    # tracks but the tree lacks (deleted, not yet committed) has nothing to check.
    return sorted(n for n in names
                  if not os.path.islink(os.path.join(root, n))
                  and os.path.isfile(os.path.join(root, n)))


def licence_ids(expression):
    expression = re.sub(r"(\*/|-->).*", "", expression)
    return {t for t in re.split(r"[\s()]+", expression)
            if t and t not in ("AND", "OR", "WITH")}


def glob_regex(pattern):
    """REUSE.toml globbing: * matches within one path component, ** across them."""
    out = ""
    i = 0
    while i < len(pattern):
        if pattern.startswith("**", i):
            out += ".*"
            i += 2
        elif pattern[i] == "*":
            out += "[^/]*"
            i += 1
        elif pattern[i] == "\\" and i + 1 < len(pattern):
            out += re.escape(pattern[i + 1])
            i += 2
        else:
            out += re.escape(pattern[i])
            i += 1
    return re.compile(out + r"\Z")


def check(root):
    """Returns (problems of files, problems of licences, problems of REUSE.toml)."""
    files = tracked_files(root)
    annotations = []
    toml_path = os.path.join(root, "REUSE.toml")
    toml_problems = []
    if os.path.exists(toml_path):
        with open(toml_path, "rb") as f:
            data = tomllib.load(f)
        if data.get("version") != 1:
            toml_problems.append("REUSE.toml: version is not 1")
        for a in data.get("annotations", []):
            paths = a.get("path", [])
            paths = [paths] if isinstance(paths, str) else paths
            ids = licence_ids(a.get("SPDX-License-Identifier", ""))
            if not ids:
                toml_problems.append(f"REUSE.toml: annotation {paths} names no licence")
            for p in paths:
                annotations.append((p, glob_regex(p), ids))

    used = {}
    file_problems = []
    matched = set()
    for name in files:
        ids = set()
        for p, rx, a_ids in annotations:
            if rx.match(name):
                matched.add(p)
                ids |= a_ids
        if EXEMPT.search(name):
            continue
        with open(os.path.join(root, name), "rb") as f:
            head = f.read(4096).decode("utf-8", "replace").splitlines()[:HEAD_LINES]
        for line in head:
            m = SPDX.search(line)
            if m:
                ids |= licence_ids(m.group(1))
        if not ids:
            file_problems.append(f"{name}: no SPDX-License-Identifier in its first "
                                 f"{HEAD_LINES} lines and no REUSE.toml annotation")
        for i in ids:
            used.setdefault(i, name)

    licence_problems = []
    texts_dir = os.path.join(root, "LICENSES")
    texts = {os.path.splitext(t)[0] for t in os.listdir(texts_dir)} if os.path.isdir(texts_dir) else set()
    for i, name in sorted(used.items()):
        if i not in texts:
            licence_problems.append(f"{i} (used by {name}): no LICENSES/{i}.txt")
    for t in sorted(texts - set(used)):
        licence_problems.append(f"LICENSES/{t}.txt: no file is under {t}")
    for p, _, _ in annotations:
        if p not in matched:
            toml_problems.append(f"REUSE.toml: path \"{p}\" matches no file")
    return file_problems, licence_problems, toml_problems


class Tap:
    def __init__(self):
        self.n = 0
        self.failed = 0

    def point(self, ok, description, diag=()):
        self.n += 1
        for d in diag:
            print(f"# {d}")
        print(f"{'ok' if ok else 'not ok'} {self.n} - {description}")
        self.failed += not ok


def write(root, name, text):
    path = os.path.join(root, name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def self_test(tap):
    good = {
        "LICENSES/LGPL-2.1-or-later.txt": "the text\n",
        "a.c": "/* SPDX-License-Identifier: LGPL-2.1-or-later */\nint x;\n",
        "doc.md": "<!-- SPDX-License-Identifier: LGPL-2.1-or-later -->\n# Title\n",
        "cases/one/expected": "byte-exact output\n",
        "REUSE.toml": 'version = 1\n[[annotations]]\npath = "cases/**"\n'
                      'SPDX-License-Identifier = "LGPL-2.1-or-later"\n',
        "build/meson-private/x": "",
        "build/generated.c": "no header, but a build directory\n",
        "__pycache__/m.cpython-311.pyc": "",
    }
    variants = [
        ("a clean tree passes (build directories and caches skipped)", {}, (0, 0, 0)),
        ("a file without header or annotation fails", {"new.sh": "#!/bin/sh\necho hi\n"}, (1, 0, 0)),
        ("a header below the first lines does not count",
         {"late.c": "\n" * HEAD_LINES + "/* SPDX-License-Identifier: LGPL-2.1-or-later */\n"}, (1, 0, 0)),
        ("a licence without its text in LICENSES/ fails",
         {"mit.c": "/* SPDX-License-Identifier: MIT */\n"}, (0, 1, 0)),
        ("a text in LICENSES/ that no file uses fails", {"LICENSES/MIT.txt": "x\n"}, (0, 1, 0)),
        ("a REUSE.toml path that matches nothing fails",
         {"REUSE.toml": good["REUSE.toml"] + '[[annotations]]\npath = "gone/*"\n'
                        'SPDX-License-Identifier = "LGPL-2.1-or-later"\n'}, (0, 0, 1)),
        ("a single * does not cross directories",
         {"REUSE.toml": 'version = 1\n[[annotations]]\npath = "cases/*"\n'
                        'SPDX-License-Identifier = "LGPL-2.1-or-later"\n'}, (1, 0, 1)),
    ]
    for description, change, expected in variants:
        with tempfile.TemporaryDirectory() as root:
            for name, text in {**good, **change}.items():
                write(root, name, text)
            problems = check(root)
            counts = tuple(len(p) for p in problems)
            tap.point(counts == expected, f"self-test: {description}",
                      [f"expected {expected} problems, got {counts}: {problems}"]
                      if counts != expected else [])


def main():
    root = sys.argv[1]
    tap = Tap()
    self_test(tap)
    files, licences, toml = check(root)
    tap.point(not files, "every file names its licence (SPDX line or REUSE.toml)", files)
    tap.point(not licences, "every licence named has its text in LICENSES/, every text is used", licences)
    tap.point(not toml, "REUSE.toml is version 1 and every annotation matches a file", toml)
    print(f"1..{tap.n}")
    return 1 if tap.failed else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Rejects the shell shapes that make a test point unable to fail.

    lint-tests.py SOURCE_ROOT

Scans every shell script under tests/, docs/ and bench/ and prints file:line: rule: text for
each of:

  check-outside   `check "…" A && B` (or ||, |, ;): only A is the check's command, B runs
                  after it and its status is lost. Use: check "…" all "A" "B".
  check-redirect  `check "…" CMD > FILE`: the redirection takes the check's own TAP line
                  with it, a "not ok" included.
  negated-string  `bash -c '! …'`, `eval '! …'`: a command that cannot run (127) or a file
                  that is missing (grep's 2) turns into success. Use lacks / status_is.
  negated-grep    `! grep … FILE`: a missing FILE passes. Use: lacks FILE PATTERN, or feed
                  grep a here-string (<<<).
  none-as-value   a Python one-liner printing d.get(…) for the shell to test: a missing key
                  prints "None", which `[ -n … ]` accepts. Index it (d['k']) so it fails.

Output is TAP: one test point per file. Lines may opt out with a trailing comment
`# lint-tests: allow RULE (why)`.
"""
import glob
import os
import re
import sys

ALLOW = re.compile(r"#\s*lint-tests:\s*allow\s+([\w-]+)")


def logical_lines(text):
    """(first line number, joined text) with backslash continuations joined."""
    buf, start = "", None
    for n, line in enumerate(text.splitlines(), 1):
        if start is None:
            start = n
        if line.endswith("\\"):
            buf += line[:-1] + " "
            continue
        yield start, buf + line
        buf, start = "", None
    if buf:
        yield start, buf


def strip_quoted(s):
    """The line with quoted strings, $(…), ${…} and comments blanked: what bash parses as
    operators at the top level."""
    out, i, depth = [], 0, 0
    while i < len(s):
        c = s[i]
        if c == "\\":
            i += 2
            continue
        if c == "'":
            j = s.find("'", i + 1)
            i = len(s) if j < 0 else j + 1
            out.append("''")
            continue
        if c == '"':
            j, d = i + 1, 0
            while j < len(s):
                if s[j] == "\\":
                    j += 2
                    continue
                if s[j:j + 2] == "$(":
                    d += 1
                elif s[j] == ")" and d:
                    d -= 1
                elif s[j] == '"' and not d:
                    break
                j += 1
            i = j + 1
            out.append('""')
            continue
        if s.startswith("$(", i) or s.startswith("${", i):
            close = ")" if s[i + 1] == "(" else "}"
            j, d = i + 2, 1
            while j < len(s) and d:
                if s[j] == s[i + 1]:
                    d += 1
                elif s[j] == close:
                    d -= 1
                j += 1
            i = j
            out.append("$x")
            continue
        if c == "#" and (i == 0 or s[i - 1] in " \t"):
            break
        out.append(c)
        i += 1
    return "".join(out)


CHECK = re.compile(r"^\s*check\s")
OPERATORS = re.compile(r"&&|\|\||(?<![<>])\|(?!\|)|;")
STDOUT_REDIRECT = re.compile(r"(?<![0-9&<>])>|&>")
NEGATED_STRING = re.compile(r"""(?:-c|eval)\s+(?:'|")\s*!""")
NEGATED_GREP = re.compile(r"(?:^|[\s;(&|])!\s+grep\b")
NONE_VALUE = re.compile(r"print\([^)]*\.get\(")


def lint(path, text):
    problems = []
    for n, line in logical_lines(text):
        allowed = set(ALLOW.findall(line))
        top = strip_quoted(line)

        def bad(rule):
            if rule not in allowed:
                problems.append(f"{path}:{n}: {rule}: {line.strip()[:160]}")

        if CHECK.match(line) and OPERATORS.search(top):
            bad("check-outside")
        if CHECK.match(line) and STDOUT_REDIRECT.search(top):
            bad("check-redirect")
        if NEGATED_STRING.search(line):
            bad("negated-string")
        for m in NEGATED_GREP.finditer(line):
            rest = line[m.end():]
            # the end of this grep's command: the next operator at the top level
            cmd = re.split(r"&&|\|\||;|\bthen\b", rest, maxsplit=1)[0]
            if "<<<" not in cmd:
                bad("negated-grep")
        if NONE_VALUE.search(line):
            bad("none-as-value")
    return problems


# The lint's own proof: each rule finds its example, and the helpers' forms pass.
SELF_TEST = [
    ("check-outside", 'check "x" [ "$a" = 1 ] && [ "$b" = 2 ]'),
    ("check-outside", 'check "x" grep -q a f | head -1'),
    ("check-redirect", 'check "x" [ a = b ] > /dev/null'),
    ("negated-string", "check \"x\" bash -c '! grep -q a /f'"),
    ("negated-string", "check \"x\" eval '! has \"$out\" a'"),
    ("negated-grep", 'if ! grep -q a "$f"; then ok x; fi'),
    ("none-as-value", """jq() { python3 -c "import json; d=json.load(open('r')); print(d.get('$1'))"; }"""),
    (None, 'check "x" all \'[ "$a" = 1 ]\' \'lacks /f a\''),
    (None, 'check "x" grep -q a /f 2>/dev/null'),
    (None, 'check "x" status_is 1 grep -q a <<<"$v"'),
    (None, 'v=$(grep -c a f || true)'),
]


def self_test():
    bad = []
    for rule, line in SELF_TEST:
        found = {p.split(": ")[1] for p in lint("self-test", line + "\n")}
        if (rule and rule not in found) or (not rule and found):
            bad.append(f"{rule or 'no finding'} expected, got {sorted(found) or 'none'}: {line}")
    return bad


def main(root):
    files = sorted(set(glob.glob(os.path.join(root, "tests", "**", "*.sh"), recursive=True) +
                       glob.glob(os.path.join(root, "docs", "**", "*.sh"), recursive=True) +
                       glob.glob(os.path.join(root, "bench", "*.sh"))))
    print("TAP version 13")
    failed = 0
    problems = self_test()
    print(f"{'not ok' if problems else 'ok'} 1 - the lint finds each rule's example, and passes the helpers' forms")
    for p in problems:
        print(f"# {p}")
    failed += bool(problems)
    for i, f in enumerate(files, 2):
        with open(f, encoding="utf-8") as fh:
            problems = lint(os.path.relpath(f, root), fh.read())
        if problems:
            failed += 1
            print(f"not ok {i} - {os.path.relpath(f, root)}")
            for p in problems:
                print(f"# {p}")
        else:
            print(f"ok {i} - {os.path.relpath(f, root)}")
    print(f"1..{len(files) + 1}")
    return 1 if failed else 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1]))

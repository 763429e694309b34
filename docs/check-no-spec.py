#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""No file of the tree points at a contract users never get: no file name SPEC dot md,
no "SPEC" followed by a section sign, no bare section sign and number (RFC sections are written "RFC 9110, section 5.5"). And every docs/ path or
installed doc path (@DOCDIR@/NAME) a man page or an installed doc names exists in the tree.
Usage: check-no-spec.py SOURCE_ROOT. Speaks TAP."""
import os, re, sys

root = sys.argv[1]
skip_dirs = {'.git', '__pycache__', 'subprojects'}
SECT = '\u00a7'
bad = re.compile('SPEC' + r'\.md|SPEC ' + SECT + '|' + SECT + r'\s*\d')
tests = []

def walk():
    for d, dirs, files in os.walk(root):
        dirs[:] = [x for x in dirs if x not in skip_dirs and not x.startswith('build')
                   and not os.path.exists(os.path.join(d, x, 'meson-private'))]
        for f in files:
            if f.endswith('.pyc'):
                continue
            yield os.path.join(d, f)

hits = []
for p in walk():
    try:
        text = open(p, encoding='utf-8').read()
    except (UnicodeDecodeError, OSError):
        continue
    for n, line in enumerate(text.splitlines(), 1):
        if bad.search(line):
            hits.append(f'{os.path.relpath(p, root)}:{n}: {line.strip()[:120]}')
tests.append(('no file mentions the SPEC file, SPEC + section sign, or a section sign with a number', hits))

# paths the shipped documentation names: docs/NAME in man pages and installed docs,
# and @DOCDIR@/NAME or /usr/share/doc/cloister/NAME, which must be installed from docs/
docdir = os.path.join(root, 'docs')
installed = ['overview.md', 'profile.md', 'security.md', 'guide-runs.md',
             'guide-sidecars.md', 'guide-upstreams.md']
meson = open(os.path.join(docdir, 'meson.build'), encoding='utf-8').read()
missing = []
for name in installed:
    if f"'{name}'" not in meson:
        missing.append(f'docs/meson.build does not install {name}')
shipped = [os.path.join(docdir, 'man', f) for f in sorted(os.listdir(os.path.join(docdir, 'man')))
           if f.endswith('.scd')] + [os.path.join(docdir, n) for n in installed]
for p in shipped:
    if not os.path.exists(p):
        missing.append(f'{os.path.relpath(p, root)} does not exist')
        continue
    text = open(p, encoding='utf-8').read()
    for m in re.finditer(r'(?<![\w/.])docs/([A-Za-z0-9_./-]*[A-Za-z0-9])', text):
        if not os.path.exists(os.path.join(docdir, m.group(1))):
            missing.append(f'{os.path.relpath(p, root)}: docs/{m.group(1)} does not exist')
    for m in re.finditer(r'(?:@DOCDIR@|/usr/share/doc/cloister)/([A-Za-z0-9.-]*[A-Za-z0-9])', text):
        if m.group(1) not in installed or not os.path.exists(os.path.join(docdir, m.group(1))):
            missing.append(f'{os.path.relpath(p, root)}: {m.group(0)} is not installed from docs/')
tests.append(('every docs/ and installed doc path the shipped docs name exists and is installed', missing))

print(f'1..{len(tests)}')
for i, (name, problems) in enumerate(tests, 1):
    for pr in problems:
        print(f'# {pr}')
    print(f'{"not " if problems else ""}ok {i} - {name}')
sys.exit(1 if any(p for _, p in tests) else 0)

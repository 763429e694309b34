#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The release tarball is the tree that was tested, and it builds and tests on its own.
#
# `meson dist` makes the tarball from the checkout's commit (git clone of HEAD), never from
# the work tree; so a checkout with uncommitted changes is refused here (no --allow-dirty):
# its tests would have run on other bytes than the tarball's. Then:
#  - the tarball's files are exactly git's tracked files (meson dist is `git archive HEAD`:
#    nothing missing, nothing extra, no stray empty directory);
#  - each file has the same bytes (sha256), the same executable bit, each symlink the same
#    target as in the work tree: what run-all.sh tested on the clean clone is what ships;
#  - it carries the licence (COPYING, LICENSES/), NEWS, AUTHORS and README.md;
#  - unpacked elsewhere, with no git around it, it configures with -Dwerror=true, builds,
#    and passes the fast suites (every test that needs neither root nor minutes of nspawn).
#
#   dist-check.sh BUILD_DIR      (a build directory configured from the checkout)
set -euo pipefail
build=$(realpath "${1:?usage: dist-check.sh BUILD_DIR}")
[ -f "$build/meson-info/meson-info.json" ] || { echo "dist-check.sh: $build is not a meson build directory" >&2; exit 2; }
src=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["directories"]["source"])' "$build/meson-info/meson-info.json")
suites=(unit generator lint man docs ctl shim fuzz-replay)

work=$(mktemp -d /var/tmp/cloister-dist.XXXXXX)
trap 'rm -rf "$work"' EXIT
n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
not_ok() { n=$((n + 1)); echo "not ok $n - $*"; failed=1; }
diag() { sed 's/^/# /'; }
echo "TAP version 13"
echo "1..8"

# A manifest line per file of the list on stdin: path, then x (executable) or - and the
# sha256, or -> the symlink's target.
manifest() {
        python3 -c '
import hashlib, os, sys
root = sys.argv[1]
for name in sys.stdin.read().splitlines():
    p = os.path.join(root, name)
    if os.path.islink(p):
        print(name, "->", os.readlink(p))
    elif os.path.isfile(p):
        with open(p, "rb") as f:
            digest = hashlib.sha256(f.read()).hexdigest()
        print(name, "x" if os.access(p, os.X_OK) else "-", digest)
    else:
        print(name, "(missing)")
' "$1"
}

if (cd "$src" && git update-index -q --refresh >/dev/null; git diff-index --quiet HEAD --); then
        ok "the checkout has no uncommitted changes (the tarball is made from its commit)"
else
        not_ok "the checkout has uncommitted changes: the tarball would not hold the tested bytes"
        (cd "$src" && git status --short) | diag
fi

version=$(meson introspect "$build" --projectinfo | python3 -c 'import json,sys; print(json.load(sys.stdin)["version"])')
tarball=$build/meson-dist/cloister-$version.tar.xz
rm -f "$tarball" "$tarball.sha256sum"
if meson dist -C "$build" --no-tests --formats xztar >"$work/dist.log" 2>&1 && [ -f "$tarball" ]; then
        ok "meson dist made $(basename "$tarball") ($(du -k "$tarball" | cut -f1) KiB)"
else
        not_ok "meson dist made $(basename "$tarball")"
        tail -20 "$work/dist.log" | diag
        exit 1
fi
if (cd "$(dirname "$tarball")" && sha256sum --quiet -c "$(basename "$tarball").sha256sum") >"$work/sum.log" 2>&1; then
        ok "its .sha256sum matches"
else
        not_ok "its .sha256sum matches"
        diag <"$work/sum.log"
fi

mkdir "$work/unpacked"
tar -C "$work/unpacked" -xJf "$tarball"
top=$work/unpacked/cloister-$version
[ -d "$top" ] || { not_ok "the tarball unpacks to cloister-$version/"; exit 1; }

# -z: names as they are (git quotes a name with a backslash, such as a unit name's \x2d)
(cd "$src" && git ls-files -z) | tr '\0' '\n' | LC_ALL=C sort >"$work/git.list"
(cd "$top" && find . \( -type f -o -type l -o -type d -empty \) -printf '%P\n') | LC_ALL=C sort >"$work/tar.list"
if [ -s "$work/git.list" ] && diff -u "$work/git.list" "$work/tar.list" >"$work/list.diff"; then
        ok "the tarball holds exactly git's $(wc -l <"$work/git.list") tracked files"
else
        not_ok "the tarball's file list is git's tracked files (- missing from the tarball, + extra)"
        tail -n +3 "$work/list.diff" | grep '^[-+]' | head -40 | diag
fi

manifest "$src" <"$work/git.list" >"$work/git.manifest"
manifest "$top" <"$work/git.list" >"$work/tar.manifest"
if diff -u "$work/git.manifest" "$work/tar.manifest" >"$work/manifest.diff"; then
        ok "every file has the work tree's sha256 and executable bit, every symlink its target"
else
        not_ok "the tarball's files differ from the work tree's (- work tree, + tarball)"
        tail -n +3 "$work/manifest.diff" | grep '^[-+]' | head -40 | diag
fi

missing=()
for f in COPYING NEWS AUTHORS README.md REUSE.toml LICENSES/LGPL-2.1-or-later.txt; do
        [ -s "$top/$f" ] || missing+=("$f")
done
if [ ${#missing[@]} = 0 ]; then
        ok "it carries COPYING, LICENSES/, NEWS, AUTHORS, README.md and REUSE.toml"
else
        not_ok "it lacks ${missing[*]}"
fi

# Built and tested from the unpacked tarball, outside any git checkout.
b=$work/build
if meson setup "$b" "$top" --prefix=/usr -Dwerror=true >"$work/setup.log" 2>&1 &&
        meson compile -C "$b" >>"$work/setup.log" 2>&1; then
        ok "the unpacked tarball configures (--prefix=/usr -Dwerror=true) and builds"
else
        not_ok "the unpacked tarball configures (--prefix=/usr -Dwerror=true) and builds"
        tail -30 "$work/setup.log" | diag
        exit 1
fi
suite_args=()
for s in "${suites[@]}"; do suite_args+=(--suite "$s"); done
rc=0
meson test -C "$b" --print-errorlogs "${suite_args[@]}" >"$work/test.log" 2>&1 || rc=$?
# Every suite named ran at least one test, and none failed (meson's own summary says which).
ran=$(python3 - "$b/meson-logs/testlog.json" "${suites[@]}" <<'PY'
import json, sys
seen, total, bad = set(), 0, 0
for line in open(sys.argv[1]):
    t = json.loads(line)
    total += 1
    bad += t["result"] not in ("OK", "EXPECTEDFAIL")
    # "cloister:unit+deps / test-deps": the project, then the test's suites joined by +
    seen.update(t["name"].split(" / ")[0].split(":", 1)[1].split("+"))
missing = [s for s in sys.argv[2:] if s not in seen]
print(f"{total} tests, {bad} not OK, suites that ran none: {' '.join(missing) or 'none'}")
sys.exit(1 if missing or bad or not total else 0)
PY
) 2>"$work/count.err" || rc=1
if [ "$rc" = 0 ]; then
        ok "meson test of the unpacked tarball, suites ${suites[*]}: $ran"
else
        not_ok "meson test of the unpacked tarball, suites ${suites[*]}: ${ran:-no test log}"
        cat "$work/count.err" | diag
        grep -E '^ *[0-9]+/[0-9]+ .*(FAIL|TIMEOUT|ERROR|SKIP)' "$work/test.log" | diag
        tail -40 "$work/test.log" | diag
fi
exit $failed

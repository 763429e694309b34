#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# cloister-deps as a plain installer (cloister.project(5)), on the host, into a temporary cache
# (--cache-dir=): no sandbox and no systemd here (that is tests/integration/suite-deps.sh).
# pip installs from a wheel built by the test (--no-index --find-links through pip's own
# environment configuration: this machine reaches no Python index); npm installs is-number
# through the npm registry this machine reaches, or SKIPs if it reaches none.
#
#   test-cloister-deps.sh CLOISTER_DEPS SOURCE_ROOT
set -u
bin=$1 src=$2
. "$src/tests/integration/tap.sh"

work=$(mktemp -d /tmp/cloister-deps-test.XXXXXX)
started=()
cleanup() {
        for p in "${started[@]}"; do kill -KILL -- "-$p" 2>/dev/null; done
        rm -rf "$work"
}
trap cleanup EXIT

PY=/usr/bin/python3
[ -x "$PY" ] || PY=$(command -v python3)
cache=$work/cache cfg=$work/cfg ws=$work/ws
mkdir -p "$cfg/projects" "$ws" "$work/wheels" "$work/bin"
export CLOISTER_CONFIG_PATH=$cfg
# pip's own configuration, as an administrator would set it in a drop-in (Environment=).
export PIP_NO_INDEX=1 PIP_FIND_LINKS=$work/wheels

project() { # NAME [Pip=…|Npm=…]…
        local n=$1; shift
        { printf '[Project]\nWorkspace=%s\n[Dependencies]\n' "$ws"; printf '%s\n' "$@"; } > "$cfg/projects/$n.project"
}
deps() { "$bin" --cache-dir="$cache" --python="$PY" "$@" >"$work/out" 2>"$work/err"; }
# all 'CMD' 'CMD'…: one test point for several conditions
all() { local c; for c in "$@"; do eval "$c" || return 1; done; }
sets() { find "$cache/" -maxdepth 1 -name "$1-*" -type d | wc -l; }
tmps() { find "$cache/" -maxdepth 1 -name ".tmp-*" | wc -l; }

hash=$("$PY" "$src/tests/deps/make-wheel.py" cloisterdemo 1.0 "$work/wheels")
printf '# pinned\ncloisterdemo==1.0 \\\n    --hash=sha256:%s\n    # via nothing\n' "$hash" > "$ws/requirements.lock"
lock_sha=$(sha256sum "$ws/requirements.lock" | cut -d' ' -f1)
final=$cache/pip-$lock_sha

# --- pip from a local wheel directory ------------------------------------------------------
project demo Pip=requirements.lock
if "$PY" -m pip --version >/dev/null 2>&1; then
        deps demo; rc=$?
        check "pip: cloister-deps materialises the set (rc $rc)" [ $rc = 0 ]
        [ $rc = 0 ] || diag "$(cat "$work/err")"
        check "pip: into <cache>/pip-<sha256 of the lockfile>" [ -d "$final" ]
        check "pip: the set carries the complete marker" [ -f "$final/.cloister-complete" ]
        check "pip: the set holds the package" [ -f "$final/cloisterdemo.py" ]
        check "pip: the lockfile copy is not left in the set" [ ! -e "$final/.cloister-lockfile" ]
        check "pip: the set is readable by other users (mode $(stat -c %a "$final"))" [ "$(stat -c %a "$final")" = 755 ]
        check "pip: by-project/demo/pip points at the set" \
                [ "$(readlink "$cache/by-project/demo/pip")" = "../../pip-$lock_sha" ]
        check "pip: the package imports with PYTHONPATH at the set" \
                bash -c "PYTHONPATH='$cache/by-project/demo/pip' '$PY' -c 'import cloisterdemo; print(cloisterdemo.VALUE)' | grep -q 'hello from cloisterdemo 1.0'"
        check "pip: stdout names the set" grep -q "^pip $final materialised$" "$work/out"
        check "pip: no temporary directory is left" [ "$(tmps)" = 0 ]

        # --- the same lockfile is never installed twice --------------------------------------
        printf '#!/bin/sh\necho "$@" >> %s/fake-ran\nexit 0\n' "$work" > "$work/bin/fake-python"
        chmod +x "$work/bin/fake-python"
        before=$(stat -c %Y.%i "$final")
        "$bin" --cache-dir="$cache" --python="$work/bin/fake-python" demo >"$work/out" 2>"$work/err"; rc=$?
        check "twice: a second run succeeds (rc $rc)" [ $rc = 0 ]
        check "twice: ...without running the installer" [ ! -e "$work/fake-ran" ]
        check "twice: ...and leaves the set as it was" [ "$(stat -c %Y.%i "$final")" = "$before" ]
        project other Pip=sub/r.lock
        mkdir -p "$ws/sub" && cp "$ws/requirements.lock" "$ws/sub/r.lock"
        "$bin" --cache-dir="$cache" --python="$work/bin/fake-python" other >"$work/out" 2>"$work/err"; rc=$?
        check "twice: another project with the same lockfile content shares the set (rc $rc)" \
                all '[ $rc = 0 ]' '[ ! -e "$work/fake-ran" ]' '[ "$(sets pip)" = 1 ]'
        check "twice: ...through its own by-project link" [ "$(readlink "$cache/by-project/other/pip")" = "../../pip-$lock_sha" ]

        # --- --check reports without installing ----------------------------------------------
        deps --check demo
        check "--check: a materialised set is reported" grep -q "^pip $final materialised$" "$work/out"

        # --- a changed lockfile gets a new directory ----------------------------------------
        hash2=$("$PY" "$src/tests/deps/make-wheel.py" cloisterdemo 2.0 "$work/wheels")
        printf 'cloisterdemo==2.0 --hash=sha256:%s\n' "$hash2" > "$ws/requirements.lock"
        sha2=$(sha256sum "$ws/requirements.lock" | cut -d' ' -f1)
        deps --check demo
        check "--check: an unmaterialised set is reported missing" grep -q "^pip $cache/pip-$sha2 missing$" "$work/out"
        check "--check: ...and nothing is installed" [ ! -e "$cache/pip-$sha2" ]
        deps demo; rc=$?
        check "changed: a changed lockfile is materialised (rc $rc)" all '[ $rc = 0 ]' '[ -f "$cache/pip-$sha2/.cloister-complete" ]'
        check "changed: ...into a new directory, the old one untouched" all '[ -f "$final/cloisterdemo.py" ]' '[ "$(sets pip)" = 2 ]'
        check "changed: ...and the project's link follows" [ "$(readlink "$cache/by-project/demo/pip")" = "../../pip-$sha2" ]
        check "changed: the new set has the new version" \
                bash -c "PYTHONPATH='$cache/by-project/demo/pip' '$PY' -c 'import cloisterdemo; print(cloisterdemo.VALUE)' | grep -q 'cloisterdemo 2.0'"
else
        skip "pip: materialise from a local wheel directory" "$PY has no pip module (Debian: python3-pip)"
fi

# --- a lockfile that is not hash-pinned is refused, before any installer runs -------------
rm -f "$work/fake-ran"
printf 'cloisterdemo==1.0 \\\n    --hash=sha256:%s\nsix==1.16.0\n' "$hash" > "$ws/nohash.lock"
project nohash Pip=nohash.lock
n_before=$(sets pip)
"$bin" --cache-dir="$cache" --python="$work/bin/fake-python" nohash >"$work/out" 2>"$work/err"; rc=$?
check "no hashes: refused (rc $rc)" [ $rc = 1 ]
check "no hashes: the error names file:line" grep -q "nohash.lock:3: the requirement has no --hash" "$work/err"
check "no hashes: the installer never ran" [ ! -e "$work/fake-ran" ]
check "no hashes: no set and no temporary directory" all '[ "$(sets pip)" = "$n_before" ]' '[ "$(tmps)" = 0 ]'

# --- a lockfile outside the workspace (through a symlink) is refused ----------------------
echo "cloisterdemo==1.0 --hash=sha256:$hash" > "$work/outside.lock"
ln -sf "$work/outside.lock" "$ws/escape.lock"
project escape Pip=escape.lock
"$bin" --cache-dir="$cache" --python="$work/bin/fake-python" escape >"$work/out" 2>"$work/err"; rc=$?
check "escape: a lockfile resolving outside the workspace is refused (rc $rc)" all '[ $rc = 1 ]' 'grep -q "outside the workspace" "$work/err"'

# --- a failing installer leaves nothing behind --------------------------------------------
printf '#!/bin/sh\necho "pip: no such package" >&2\nexit 1\n' > "$work/bin/failing-python"
chmod +x "$work/bin/failing-python"
printf 'cloisterdemo==3.0 --hash=sha256:%s\n' "$hash" > "$ws/fail.lock"
project failing Pip=fail.lock
sha_fail=$(sha256sum "$ws/fail.lock" | cut -d' ' -f1)
"$bin" --cache-dir="$cache" --python="$work/bin/failing-python" failing >"$work/out" 2>"$work/err"; rc=$?
check "failure: an installer failure fails the run (rc $rc)" [ $rc = 1 ]
check "failure: no final directory" [ ! -e "$cache/pip-$sha_fail" ]
check "failure: no temporary directory" [ "$(tmps)" = 0 ]
check "failure: no by-project link" [ ! -e "$cache/by-project/failing/pip" ]

# --- an interrupted install never leaves a half directory under the final name -------------
cat > "$work/bin/slow-python" <<EOF
#!/bin/bash
# "python3 -m pip install … --target DIR …": writes half a set, then hangs
while [ \$# -gt 0 ]; do [ "\$1" = --target ] && target=\$2; shift; done
echo half > "\$target/half.py"
touch "$work/slow-started"
sleep 60
EOF
chmod +x "$work/bin/slow-python"
printf 'cloisterdemo==1.0 --hash=sha256:%s\n# interrupted\n' "$hash" > "$ws/int.lock"
project interrupted Pip=int.lock
sha_int=$(sha256sum "$ws/int.lock" | cut -d' ' -f1)
setsid "$bin" --cache-dir="$cache" --python="$work/bin/slow-python" interrupted >"$work/out" 2>"$work/err" &
pid=$!
started+=("$pid")
for _ in $(seq 100); do [ -e "$work/slow-started" ] && break; sleep 0.1; done
check "interrupted: the installer was running" [ -e "$work/slow-started" ]
kill -KILL -- "-$pid" 2>/dev/null
{ wait "$pid"; } 2>/dev/null
check "interrupted: no directory under the final name" [ ! -e "$cache/pip-$sha_int" ]
check "interrupted: the half install is in a .tmp-pip-<sha>- directory" \
        bash -c "ls -d '$cache'/.tmp-pip-$sha_int-* >/dev/null 2>&1"
if "$PY" -m pip --version >/dev/null 2>&1; then
        deps interrupted; rc=$?
        check "interrupted: the next run materialises the set (rc $rc)" all '[ $rc = 0 ]' '[ -f "$cache/pip-$sha_int/.cloister-complete" ]'
        check "interrupted: ...without the half install" [ ! -e "$cache/pip-$sha_int/half.py" ]
        check "interrupted: ...and removes the stale temporary directory" [ "$(tmps)" = 0 ]
else
        skip "interrupted: the next run materialises the set" "$PY has no pip module"
fi

# --- npm through the registry this machine reaches -----------------------------------------
cp "$src/tests/deps/npm/package.json" "$src/tests/deps/npm/package-lock.json" "$ws/"
mkdir -p "$ws/web" && cp "$src/tests/deps/npm/package.json" "$src/tests/deps/npm/package-lock.json" "$ws/web/"
project web Npm=web/package-lock.json
npm_sha=$(sha256sum "$ws/web/package-lock.json" | cut -d' ' -f1)
if ! command -v npm >/dev/null || ! command -v node >/dev/null; then
        skip "npm: materialise is-number@7.0.0" "npm/node not installed"
elif ! timeout 20 npm view is-number@7.0.0 version >/dev/null 2>&1; then
        skip "npm: materialise is-number@7.0.0" "no npm registry reachable from this machine"
else
        timeout 300 "$bin" --cache-dir="$cache" web >"$work/out" 2>"$work/err"; rc=$?
        check "npm: npm ci materialises the set (rc $rc)" [ $rc = 0 ]
        [ $rc = 0 ] || diag "$(tail -20 "$work/err")"
        check "npm: into <cache>/npm-<sha256 of the lockfile>" [ -f "$cache/npm-$npm_sha/.cloister-complete" ]
        check "npm: node_modules/is-number is there" [ -f "$cache/npm-$npm_sha/node_modules/is-number/package.json" ]
        check "npm: npm's download cache is not left in the set" [ ! -e "$cache/npm-$npm_sha/.npm-cache" ]
        check "npm: require() works with NODE_PATH at the set" \
                bash -c "NODE_PATH='$cache/by-project/web/npm/node_modules' node -e 'process.exit(require(\"is-number\")(42) ? 0 : 1)'"
        "$bin" --cache-dir="$cache" --npm=/bin/false web >"$work/out" 2>"$work/err"; rc=$?
        check "npm: a second run does not run npm again (rc $rc)" [ $rc = 0 ]
fi

# --- an npm lockfile with a package lacking integrity is refused ---------------------------
mkdir -p "$ws/bad"
cp "$src/tests/deps/npm/package.json" "$ws/bad/"
"$PY" - "$src/tests/deps/npm/package-lock.json" "$ws/bad/package-lock.json" <<'EOF'
import json, sys
lock = json.load(open(sys.argv[1]))
del lock["packages"]["node_modules/is-number"]["integrity"]
json.dump(lock, open(sys.argv[2], "w"), indent=2)
EOF
project bad Npm=bad/package-lock.json
"$bin" --cache-dir="$cache" --npm=/bin/false bad >"$work/out" 2>"$work/err"; rc=$?
check "npm: a package without integrity is refused (rc $rc)" all '[ $rc = 1 ]' 'grep -q "node_modules/is-number.*integrity" "$work/err"'

# --- usage ----------------------------------------------------------------------------------
"$bin" >/dev/null 2>&1; rc=$?
check "usage: no project is exit status 2 (rc $rc)" [ $rc = 2 ]
"$bin" --cache-dir="$cache" nosuch >/dev/null 2>"$work/err"; rc=$?
check "usage: a missing project is exit status 1 naming it (rc $rc)" all '[ $rc = 1 ]' 'grep -q nosuch "$work/err"'

tap_done

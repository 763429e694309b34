# SPDX-License-Identifier: LGPL-2.1-or-later
# Minimal TAP for the integration suites (bash). tests/lint-tests.py keeps the shapes out
# that make a check unable to fail (a second condition outside check, a negation that a
# missing file or command also satisfies).
TAP_N=0
TAP_FAILED=0
ok()    { TAP_N=$((TAP_N + 1)); echo "ok $TAP_N - $*"; }
notok() { TAP_N=$((TAP_N + 1)); TAP_FAILED=$((TAP_FAILED + 1)); echo "not ok $TAP_N - $*"; }
# skip DESCRIPTION WHY: every SKIP must be listed in tests/skips.list (tests/check-skips.py).
skip()  { TAP_N=$((TAP_N + 1)); echo "ok $TAP_N - $1 # SKIP $2"; }
diag()  { sed 's/^/# /' <<<"$*"; }
# check DESCRIPTION COMMAND…: one test point from a command's status
check() { local d=$1; shift; if "$@"; then ok "$d"; else notok "$d"; fi; }
# all COMMAND-STRING…: true if every command (each a string, evaluated in a subshell, so
# these helpers work in it) succeeds; a check of several conditions:
#   check "…" all "[ … ]" "lacks FILE PATTERN"
all()   { local c; for c in "$@"; do ( eval "$c" ) || return 1; done; }
# lacks FILE GREP-ARGS…: FILE exists and grep finds nothing in it (exit 1 exactly: a missing
# or unreadable file, exit 2, is not "lacks")
lacks() { local f=$1; shift; [ -f "$f" ] && [ -r "$f" ] || return 1; grep -q "$@" "$f"; [ $? -eq 1 ]; }
# status_is N COMMAND…: COMMAND exits with status N exactly (a refusal that must not be
# confused with a missing binary's 127)
status_is() { local want=$1; shift; "$@"; [ $? -eq "$want" ]; }
tap_done() { echo "1..$TAP_N"; }

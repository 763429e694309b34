# SPDX-License-Identifier: LGPL-2.1-or-later
# Minimal TAP for the integration suites (bash).
TAP_N=0
TAP_FAILED=0
ok()    { TAP_N=$((TAP_N + 1)); echo "ok $TAP_N - $*"; }
notok() { TAP_N=$((TAP_N + 1)); TAP_FAILED=$((TAP_FAILED + 1)); echo "not ok $TAP_N - $*"; }
skip()  { TAP_N=$((TAP_N + 1)); echo "ok $TAP_N - $1 # SKIP $2"; }
diag()  { sed 's/^/# /' <<<"$*"; }
# check DESCRIPTION COMMAND…: one test point from a command's status
check() { local d=$1; shift; if "$@"; then ok "$d"; else notok "$d"; fi; }
tap_done() { echo "1..$TAP_N"; }

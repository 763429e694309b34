#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# cloister-shim's self-check, outside any sandbox: every surface this process has open must
# be named on stderr, and the agent must not start (exit 125). The shim only reads its own
# state here (/proc/self, statvfs, a socket() call); the agent it would run only touches a
# marker in a temporary directory. Which surfaces are open depends on who runs the test (root
# in CI, a normal user in a package build): each expectation says when it applies.
#
#   test-shim-selfcheck.sh CLOISTER_SHIM
set -u
shim=${1:?usage: test-shim-selfcheck.sh CLOISTER_SHIM}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../integration/tap.sh"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
field() { sed -n "s/^$1:\s*//p" /proc/self/status; }

run_shim() { # MODE [ARGS…]: sets $rc and $err
        local mode=$1; shift
        rm -f "$work/ran"
        "$shim" --role=selfcheck --network="$mode" "$@" -- /bin/sh -c ": > '$work/ran'" 2>"$work/err"
        rc=$?
        err=$(cat "$work/err")
}
has() { grep -qF -- "$1" <<<"$err"; }

run_shim none
check "none: refused with status 125 ($rc)" [ "$rc" = 125 ]
check "none: the agent never started" [ ! -e "$work/ran" ]
check "none: the refusal names the role and the mode" has "agent@selfcheck: the sandbox is not closed as Network=none requires"
check "CapabilityBoundingSet=: a non-empty bounding set is named" has "Capability set CapBnd is $(field CapBnd), not empty"
if [ "$(field CapEff)" != 0000000000000000 ]; then
        check "CapabilityBoundingSet=: non-empty effective capabilities are named" has "Capability set CapEff is $(field CapEff), not empty"
fi
check "NoNewPrivileges=: no_new_privs unset is named" has "no_new_privs is not set (NoNewPrivileges= not in effect)"
check "SystemCallFilter=: no seccomp filter is named" has "Seccomp mode is $(field Seccomp), not 2"
if [ "$(id -u)" = 0 ]; then
        check "root: running as UID 0 is named" has "Running as UID 0 GID 0: an agent never runs as root."
fi
for p in / /usr /etc; do
        # the shim asks statvfs() whether the mount is read-only, not whether it may write
        if [ "$(findmnt -no OPTIONS --target "$p" | cut -d, -f1)" = rw ]; then
                check "ProtectSystem=strict: $p writable is named" has "$p is writable (ProtectSystem=strict not in effect)"
        fi
done
dev=$(sed -n 's/^ *\([^ :]*\):.*/\1/p' /proc/self/net/dev | grep -vx lo | head -n 1)
if [ -n "$dev" ]; then
        check "PrivateNetwork=: the host's device $dev is named" has "Network device $dev is present"
fi
check "RestrictAddressFamilies=: AF_INET in mode none is named" has "AF_INET sockets can be created (RestrictAddressFamilies= not in effect)"

run_shim daemon-only
check "daemon-only: refused with status 125 ($rc)" [ "$rc" = 125 ]
check "daemon-only: AF_INET is not a problem there (the relay needs it)" status_is 1 grep -qF "AF_INET sockets can be created" "$work/err"

run_shim none --expect-mount=Input=/nonexistent/cloister-selfcheck:/input
check "a missing mount source is named with its key" has "agent@selfcheck: Input= source /nonexistent/cloister-selfcheck is missing (nothing is mounted at /input)"
# The generator's two refusals, before any check: a unit with no role, a role it refused.
"$shim" --unconfigured=ghost 2>"$work/err"; rc=$?
check "--unconfigured: status 125 and the reason (no roles/ghost.role)" \
        all "[ $rc = 125 ]" "grep -qF 'agent@ghost: no role \"ghost\" is configured' '$work/err'"
rm -f "$work/ran"
"$shim" --role=selfcheck --network=none "--refuse=a drop-in re-opens PrivateNetwork=" -- /bin/sh -c ": > '$work/ran'" 2>"$work/err"; rc=$?
check "--refuse=: status 125, the reason, and the agent never started" \
        all "[ $rc = 125 ]" "grep -qF 'agent@selfcheck: refusing to start: a drop-in re-opens PrivateNetwork=.' '$work/err'" "[ ! -e '$work/ran' ]"
tap_done

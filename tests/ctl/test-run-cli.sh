#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# CLI tests of cloisterctl run that need no systemd: usage errors (exit 2) and the refusals
# that come before anything is started (exit 1, with the reason on stderr). Each refusal is
# told apart from "no system bus" by its message. Starting runs is tests/integration/suite-run.sh.
#
#   test-run-cli.sh CLOISTERCTL
set -uo pipefail

ctl=$1
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../integration/tap.sh"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cfg=$work/cfg units=$work/units
mkdir -p "$cfg/roles" "$units" "$work/in/sub" "$work/out/job" "$work/outx" "$work/elsewhere"
printf '[Sandbox]\nMemory=1G\n' > "$cfg/cloister.conf"
printf '[Role]\nExec=/bin/true\n[Sandbox]\nNetwork=none\nTimeout=1min\n' > "$cfg/roles/sealed.role"
printf '[Role]\nExec=/bin/true\n[Sandbox]\nNetwork=daemon-only\nInput=%s\nOutput=%s\n' "$work/in" "$work/out" > "$cfg/roles/daemon.role"
printf '[Role]\nExec=/bin/true\n[Sandbox]\nNetwork=egress\n' > "$cfg/roles/wide.role"
export CLOISTER_CONFIG_PATH=$cfg SYSTEMD_UNIT_PATH=$units

# R ARGS…: cloisterctl run; sets $rc and $err
R() { "$ctl" run "$@" </dev/null >/dev/null 2>"$work/err"; rc=$?; err=$(cat "$work/err"); }
refused() { # DESCRIPTION EXIT MESSAGE ARGS…
        local d=$1 x=$2 msg=$3; shift 3
        R "$@"
        if [ "$rc" = "$x" ] && grep -qF -- "$msg" <<<"$err"; then ok "$d"; else notok "$d (exit $rc: $err)"; fi
}

"$ctl" run --help >/dev/null 2>&1
check "run --help exits 0" test $? = 0
refused "no command: usage error" 2 "Expected a command" --role sealed
refused "an invalid role name: usage error" 2 "not a role name" --role ../x -- /bin/true
refused "--network=egress is not a narrowing: usage error" 2 "narrows to none or daemon-only" --network=egress -- /bin/true
refused "--timeout that is not a time span: usage error" 2 "not a time span" --timeout=soon -- /bin/true
refused "an unknown option: usage error" 2 "" --frobnicate -- /bin/true
refused "a role that does not exist" 1 'No role "nosuch"' --role nosuch -- /bin/true
refused "an egress role while RequireSealedRuns= holds" 1 "RequireSealedRuns=yes" --role wide -- /bin/true
refused "--network=daemon-only for a none role widens it" 1 "would widen role sealed" --role sealed --network=daemon-only -- /bin/true
refused "--timeout longer than the role's Timeout=" 1 "would widen role sealed (Timeout=60s)" --role sealed --timeout=2min -- /bin/true
refused "--timeout=0 (no ceiling) for a role with one" 1 "would widen" --role sealed --timeout=0 -- /bin/true
refused "--input that does not exist" 1 "--input=$work/nope" --role daemon --network=none --input="$work/nope" -- /bin/true
refused "--input that is not normalised" 1 "--input=$work/in/" --role daemon --network=none --input="$work/in/" -- /bin/true
refused "--output on the OS itself" 1 "--output=/usr" --role sealed --output=/usr -- /bin/true
# runs only narrow the role's mounts: never an arbitrary host path
refused "--output for a role without Output=" 1 "is not below role sealed's Output=" --role sealed --output="$work/out" -- /bin/true
refused "--output outside the role's Output= (an arbitrary host path)" 1 "--output=$work/elsewhere is not below role daemon's Output=$work/out" --role daemon --network=none --output="$work/elsewhere" -- /bin/true
refused "--output beside the role's Output= sharing its prefix" 1 "is not below role daemon's Output=" --role daemon --network=none --output="$work/outx" -- /bin/true
refused "--input outside the role's Input= and ReadOnlyMount= sources" 1 "--input=$work/elsewhere is not below role daemon's Input=" --role daemon --network=none --input="$work/elsewhere" -- /bin/true
refused "--input for a role without Input= or ReadOnlyMount=" 1 "is not below role sealed's Input=" --role sealed --input="$work/in" -- /bin/true
refused "a command not in \$PATH" 1 "command not found" --role sealed -- no-such-command-here
refused "a relative command path" 1 "absolute path" --role sealed -- ./x
mkdir -p "$units/agent@sealed.service.d"
printf '[Service]\nPrivateNetwork=no\n' > "$units/agent@sealed.service.d/90-open.conf"
refused "a role whose admin drop-in re-opens a closed surface" 1 "so does a run of it" --role sealed -- /bin/true
rm -r "$units/agent@sealed.service.d"
mkdir -p "$units/agent-run@.service.d"
refused "an admin drop-in directory for agent-run@" 1 "admin units and drop-ins for agent-run@" --role sealed -- /bin/true
rmdir "$units/agent-run@.service.d"
# the unit files of earlier runs in /run/systemd/transient are not admin units
mkdir -p "$work/transient"
touch "$work/transient/agent-run@sealed.0123456789abcdef.service"
SYSTEMD_UNIT_PATH=$units:$work/systemd/transient
mkdir -p "$work/systemd" && mv "$work/transient" "$work/systemd/transient"
R --role sealed -- /bin/true
check "an earlier run's transient unit file is not taken for an admin unit" status_is 1 grep -q "admin units" <<<"$err"
mkdir -p "$work/systemd/transient/agent-run@sealed.0123456789abcdef.service.d"
refused "a drop-in for a transient run is" 1 "admin units and drop-ins for agent-run@" --role sealed -- /bin/true
export SYSTEMD_UNIT_PATH=$units
printf '' > "$cfg/cloister.conf"
refused "the built-in default role needs Memory= in cloister.conf" 1 "needs Memory=" -- /bin/true
printf '[Sandbox]\nMemory=1G\n' > "$cfg/cloister.conf"
if command -v script >/dev/null; then
        script -qec "'$ctl' run --pipe --role sealed -- /bin/true" /dev/null >"$work/tty" 2>&1
        check "--pipe with a terminal is refused (TIOCSTI)" grep -q TIOCSTI "$work/tty"
else
        skip "--pipe with a terminal is refused" "script(1) not installed"
fi
# Past every refusal, only the bus is missing: proves that the checks above were the reason.
R --role daemon --network=none --timeout=5s --input="$work/in/sub" --output="$work/out/job" -- true
if [ -S /run/dbus/system_bus_socket ]; then
        skip "a run that passes every check gets as far as the system bus" "a system bus is present; tests/integration/suite-run.sh starts runs"
else
        check "a run that passes every check gets as far as the system bus ($err)" grep -q "system bus" <<<"$err"
fi
tap_done

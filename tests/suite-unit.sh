# SPDX-License-Identifier: LGPL-2.1-or-later
# The unit that runs a test suite inside a booted systemd (PID 1) and powers the machine off
# when the suite ends, whatever its result. tests/integration/nspawn-run.sh, tests/vm/vm-run.sh
# and tests/package-deb.sh source this file and write their unit with
#
#   suite_unit FILE DESCRIPTION ENVIRONMENT EXECSTART UNIT_LINES SERVICE_LINES
#
# UNIT_LINES and SERVICE_LINES: more settings of [Unit] (how it reaches D-Bus) and [Service],
# one per line, "" for none.
suite_unit() {
        local file=$1 description=$2 environment=$3 exec_start=$4 unit_lines=$5 service_lines=$6

        {
                printf '[Unit]\nDescription=%s\n' "$description"
                [ -z "$unit_lines" ] || printf '%s\n' "$unit_lines"
                printf 'After=dbus.socket basic.target\nSuccessAction=poweroff-force\nFailureAction=poweroff-force\n\n'
                printf '[Service]\nType=oneshot\nEnvironment=%s\nExecStart=%s\n' "$environment" "$exec_start"
                [ -z "$service_lines" ] || printf '%s\n' "$service_lines"
        } >"$file"
}

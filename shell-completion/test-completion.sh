#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The bash completion of cloisterctl completes verbs, options and role/sidecar/project names (TAP).
#   test-completion.sh COMPLETION_FILE CLOISTERCTL FIXTURE_ROOT
set -uo pipefail
completion=$1 ctl=$2 root=$3
. "$(dirname "$0")/../tests/integration/tap.sh"

PATH=$(cd "$(dirname "$ctl")" && pwd):$PATH
unset CLOISTER_CONFIG_PATH SYSTEMD_UNIT_PATH
compopt() { :; }        # only valid inside a real completion
. "$completion"

# complete WORD...: the last word is the one being completed
complete_words() {
        COMP_WORDS=(cloisterctl "$@"); COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 )); COMPREPLY=()
        _cloisterctl
        printf '%s\n' "${COMPREPLY[@]}" | sort | tr '\n' ' '
}

got=$(complete_words "")
check "verbs" test "$got" = "cat doctor list run verify "
got=$(complete_words --j)
check "global options" test "$got" = "--json "
got=$(complete_words --root="$root" cat "")
check "cat completes role names (from cloisterctl list under --root=)" \
        test "$got" = "--help broken coder daemon good nomount nosock reader reopen writer "
got=$(complete_words --root="$root" verify w)
check "verify completes project names too" test "$got" = "webapp writer "
got=$(complete_words --root="$root" verify inf)
check "verify completes sidecar names" test "$got" = "inference "
got=$(complete_words --root="$root" verify b)
check "verify: a name shared by a role and a sidecar is offered once" test "$got" = "broken "
got=$(complete_words --root="$root" cat s)
check "cat completes roles only (no sidecar)" test "$got" = " "
got=$(complete_words --root="$root" run --role=go)
check "run --role= completes role names" test "$got" = "--role=good "
got=$(complete_words doctor --)
check "doctor options" test "$got" = "--help --json "
tap_done

#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Checks one rendered man page: not empty, has a NAME section, and (where man(1) is
# installed) renders without groff warnings. Each further argument is a policy/ list
# whose entries (the first word of every line that is not a comment) must all appear in
# the page, so that the page cannot silently fall behind the compiled-in policy.
set -eu

page=$1
shift

if [ ! -s "$page" ]; then
        echo "$page: empty" >&2
        exit 1
fi
if ! grep -q '^\.SH "\{0,1\}NAME' "$page"; then # lint-tests: allow negated-grep (missing: a failure)
        echo "$page: no NAME section" >&2
        exit 1
fi

if command -v man >/dev/null 2>&1; then
        warnings=$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -E UTF-8 -l "$page" 2>&1 >/dev/null) || true
        if [ -n "$warnings" ]; then
                printf '%s: groff warnings:\n%s\n' "$page" "$warnings" >&2
                exit 1
        fi
fi

status=0
while [ $# -ge 2 ]; do
        case $1 in
        --keys) suffix='=' ;;
        --words) suffix='' ;;
        *) echo "unknown option $1" >&2; exit 2 ;;
        esac
        list=$2
        shift 2
        for word in $(sed -e 's/#.*//' "$list" | awk 'NF { print $1 }'); do
                if ! grep -q -F -- "$word$suffix" "$page"; then # lint-tests: allow negated-grep (missing: a failure)
                        echo "$page: does not mention \"$word$suffix\" from $list" >&2
                        status=1
                fi
        done
done
exit $status

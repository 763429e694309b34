#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The zsh completion parses (zsh -n), when zsh is installed.
echo "1..1"
if ! command -v zsh >/dev/null; then
        echo "ok 1 - zsh -n _cloisterctl # SKIP zsh is not installed"
        exit 0
fi
if err=$(zsh -n "$1" 2>&1); then
        echo "ok 1 - zsh -n _cloisterctl"
else
        echo "not ok 1 - zsh -n _cloisterctl"
        printf '# %s\n' "$err"
fi

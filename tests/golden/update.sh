#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Re-record tests/golden/*.txt from BUILD_DIR (the meson test "golden" with the same
# arguments, told to write instead of compare). Only for a deliberate change of the
# generated units; say so in the commit.
set -eu
build=${1:?usage: update.sh BUILD_DIR}
CLOISTER_GOLDEN_RECORD=1 meson test -C "$build" --print-errorlogs golden

#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# cloister-broker --check-config: what `systemctl reload` runs first. A valid configuration
# exits 0; a role file or a cloister.conf that would be refused exits 1 and names file:line:key.
# Usage: check-config.sh PATH-TO-cloister-broker. Prints TAP.
set -u
BROKER=$1
. "$(dirname "$0")/../integration/tap.sh"
DIR=$(mktemp -d)
trap 'rm -rf "$DIR"' EXIT
export CLOISTER_CONFIG_PATH=$DIR
mkdir -p "$DIR/roles"
printf '[Upstream issues]\nKind=http\nURL=http://127.0.0.1:9\n' > "$DIR/cloister.conf"
printf '[Role]\nExec=/bin/true\n[Sandbox]\nNetwork=daemon-only\nMemory=512M\nTimeout=2min\n[Broker]\nAllow=issues\n' > "$DIR/roles/good.role"

out=$("$BROKER" --check-config 2>&1); rc=$?
check "a valid configuration: exit 0 ($rc)" [ "$rc" = 0 ]
check "…and says how many roles it read ($out)" grep -q "valid: cloister.conf and 1 role" <<<"$out"

printf '[Role]\nExec=/bin/true\n[Sandbox]\nMemory=512M\n[Broker]\nNoSuchKey=1\n' > "$DIR/roles/bad.role"
out=$("$BROKER" --check-config 2>&1); rc=$?
check "a role file with an unknown key: exit 1 ($rc)" [ "$rc" = 1 ]
check "…naming file:line:key ($(head -1 <<<"$out"))" grep -q "bad.role:6:.*NoSuchKey" <<<"$out"
rm "$DIR/roles/bad.role"

printf '[Role]\nExec=/bin/true\n[Sandbox]\nMemory=512M\n[Broker]\nAllow=nowhere\n' > "$DIR/roles/lost.role"
out=$("$BROKER" --check-config 2>&1); rc=$?
check "a role allowing an upstream cloister.conf lacks: exit 1 ($rc)" [ "$rc" = 1 ]
check "…naming file:line ($(head -1 <<<"$out"))" grep -q "lost.role:6:.*nowhere" <<<"$out"
rm "$DIR/roles/lost.role"

printf '[Broker]\nIdleTimeout=soon\n' > "$DIR/cloister.conf"
out=$("$BROKER" --check-config 2>&1); rc=$?
check "a refused cloister.conf: exit 1 ($rc)" [ "$rc" = 1 ]
check "…naming the file and the key ($(head -1 <<<"$out"))" grep -q "cloister.conf:2.*IdleTimeout" <<<"$out"
tap_done

#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The nspawn-mcp-sdk test: prepares the pinned npm packages of package-lock.json (the official
# MCP TypeScript SDK and reference server) on the host, then runs SUITE in nspawn-run.sh with
# them and agent.mjs as the payload (extra/). The container has no network: npm runs here,
# once per lock file, into a cache (CLOISTER_TEST_CACHE, default /var/cache/cloister-tests);
# later runs copy from the cache and never call npm. Without npm or the registry the test is
# skipped with the reason, never passed.
#
#   nspawn-mcp-sdk.sh BUILD_ROOT SOURCE_ROOT SUITE [PROBE_BINARY]
set -euo pipefail

here=$(dirname "$(readlink -f "$0")")
skip() { echo "1..0 # SKIP $*"; exit 0; }
[ "$(id -u)" = 0 ] || skip "needs root (systemd-nspawn)"
[ -x /usr/bin/node ] || skip "no /usr/bin/node on the host (the container shares the host's /usr)"
command -v npm >/dev/null || skip "npm is not installed: cannot fetch the MCP SDK and reference server"

lock_sha=$(cat "$here/package.json" "$here/package-lock.json" | sha256sum | cut -c1-16)
cache=${CLOISTER_TEST_CACHE:-/var/cache/cloister-tests}/mcp-sdk-$lock_sha
if [ ! -e "$cache/.complete" ]; then
        rm -rf "$cache"
        mkdir -p "$cache"
        cp "$here/package.json" "$here/package-lock.json" "$cache/"
        # npm ci: exactly the lock file's versions and integrity hashes; no install scripts
        if ! (cd "$cache" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error) > "$cache/npm.log" 2>&1; then
                reason=$(grep -m2 -E 'npm (error|ERR!)' "$cache/npm.log" | tr '\n' ' ')
                rm -rf "$cache"
                skip "npm could not fetch the pinned MCP packages: $reason"
        fi
        touch "$cache/.complete"
fi

payload=$(mktemp -d /var/tmp/cloister-mcp-sdk.XXXXXX)
trap 'rm -rf "$payload"' EXIT
cp -r "$cache/node_modules" "$here/agent.mjs" "$here/package.json" "$payload/"
CLOISTER_NSPAWN_PAYLOAD=$payload "$2/tests/integration/nspawn-run.sh" "$@"

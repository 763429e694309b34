#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The nspawn-mcp-sdk test: runs SUITE in nspawn-run.sh with the pinned npm packages of
# package-lock.json (the official MCP TypeScript SDK and reference server) and agent.mjs as
# the payload (extra/). The container has no network, and neither does `meson test`: the
# packages are fetched by an explicit step before it (tests/run-all.sh, CI):
#
#   nspawn-mcp-sdk.sh prepare                      npm ci into the cache, once per lock file
#   nspawn-mcp-sdk.sh BUILD_ROOT SOURCE_ROOT SUITE [PROBE_BINARY]
#
# The cache is CLOISTER_TEST_CACHE (default /var/cache/cloister-tests). Without it the test is
# skipped with the reason, never passed (and tests/check-skips.py fails an unlisted SKIP).
set -euo pipefail

here=$(dirname "$(readlink -f "$0")")
lock_sha=$(cat "$here/package.json" "$here/package-lock.json" | sha256sum | cut -c1-16)
cache=${CLOISTER_TEST_CACHE:-/var/cache/cloister-tests}/mcp-sdk-$lock_sha

if [ "${1:-}" = prepare ]; then
        [ -e "$cache/.complete" ] && exit 0
        command -v npm >/dev/null || { echo "nspawn-mcp-sdk: npm is not installed" >&2; exit 1; }
        rm -rf "$cache"
        mkdir -p "$cache"
        cp "$here/package.json" "$here/package-lock.json" "$cache/"
        # npm ci: exactly the lock file's versions and integrity hashes; no install scripts
        if ! (cd "$cache" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error) > "$cache/npm.log" 2>&1; then
                echo "nspawn-mcp-sdk: npm could not fetch the pinned MCP packages: $(grep -m2 -E 'npm (error|ERR!)' "$cache/npm.log" | tr '\n' ' ')" >&2
                rm -rf "$cache"
                exit 1
        fi
        touch "$cache/.complete"
        exit 0
fi

skip() { echo "1..0 # SKIP $*"; exit 0; }
[ "$(id -u)" = 0 ] || skip "needs root (systemd-nspawn)"
# The container's /usr is the host's, or the root nspawn-run.sh boots (tests/trixie/)
[ -x "${CLOISTER_NSPAWN_ROOT:-}/usr/bin/node" ] || skip "no /usr/bin/node in ${CLOISTER_NSPAWN_ROOT:-the host} (the container's /usr)"
[ -e "$cache/.complete" ] || skip "the pinned MCP packages are not prepared (run: tests/mcp-sdk/nspawn-mcp-sdk.sh prepare)"

payload=$(mktemp -d /var/tmp/cloister-mcp-sdk.XXXXXX)
trap 'rm -rf "$payload"' EXIT
cp -r "$cache/node_modules" "$here/agent.mjs" "$here/package.json" "$payload/"
CLOISTER_NSPAWN_PAYLOAD=$payload "$2/tests/integration/nspawn-run.sh" "$@"

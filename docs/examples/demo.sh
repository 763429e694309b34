#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# README command (1): on Debian 12, as root. Installs what is missing, builds cloister,
# boots a throwaway systemd (systemd-nspawn over this machine's /usr, volatile root, its own
# network namespace: the host's /etc, systemd and network are never touched), sets up
# cloister-broker in front of a local example upstream, installs the example role there,
# runs "systemctl start agent@reviewer" and prints what the sealed agent saw, the answer it
# got through the broker, and the broker's audit record of that call.
set -euo pipefail
cd "$(dirname "$0")/../.."
bash .ci/install-deps
[ -d build-demo ] || meson setup build-demo --prefix=/usr >/dev/null
meson compile -C build-demo >/dev/null
payload=$(mktemp -d)
trap 'rm -rf "$payload"' EXIT
cp docs/examples/* tests/broker/fake-openai.py tests/broker/llm-upstream.sh "$payload/"
CLOISTER_NSPAWN_PAYLOAD=$payload \
        bash tests/integration/nspawn-run.sh "$PWD/build-demo" "$PWD" "$PWD/docs/examples/demo-suite.sh" |
        sed -e 's/^# //' -e 's/^#$//'

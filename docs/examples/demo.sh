#!/bin/bash
# README command (1): on Debian 12, as root. Installs what is missing, builds cloister,
# boots a throwaway systemd (systemd-nspawn over this machine's /usr, volatile root: the
# host's /etc and systemd are never touched), installs the example role there, runs
# "systemctl start agent@reviewer" and prints what the sealed agent saw and wrote.
set -euo pipefail
cd "$(dirname "$0")/../.."
bash .ci/install-deps
[ -d build-demo ] || meson setup build-demo --prefix=/usr >/dev/null
meson compile -C build-demo >/dev/null
CLOISTER_NSPAWN_PAYLOAD=$PWD/docs/examples \
        bash tests/integration/nspawn-run.sh "$PWD/build-demo" "$PWD" "$PWD/docs/examples/demo-suite.sh" |
        sed -e 's/^# //' -e 's/^#$//'

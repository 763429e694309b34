#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Real-systemd tier: boots a throwaway systemd (PID 1) with systemd-nspawn over the host's
# /usr, with this build installed on top (--overlay-ro), and runs SUITE inside it as a test
# unit. SUITE prints TAP, which is copied to stdout. Nothing on the host is changed: /run is
# a private tmpfs in a private mount namespace, the container's root is volatile, and it has
# a network namespace of its own (--private-network: its test traffic never reaches the
# machine's network, and its systemd has CAP_NET_ADMIN there, which it needs to bring up
# the loopback device of each PrivateNetwork= sandbox).
#
#   nspawn-run.sh BUILD_ROOT SOURCE_ROOT SUITE [PROBE_BINARY]
#
# SUITE runs as root in a oneshot unit with $PAYLOAD (tap.sh, agents/, the probe, and
# $CLOISTER_NSPAWN_PAYLOAD as extra/) and $CLOISTER_CFG (a writable configuration
# directory at the build's sysconfdir) set.
set -euo pipefail

build=$1 src=$2 suite=$3 probe=${4:-}

skip() { echo "1..0 # SKIP $*"; exit 0; }
[ "$(id -u)" = 0 ] || skip "needs root (systemd-nspawn)"
command -v systemd-nspawn >/dev/null || skip "systemd-nspawn not installed (Debian: systemd-container)"
command -v unshare >/dev/null && command -v script >/dev/null || skip "unshare/script (util-linux) missing"

work=$(mktemp -d /var/tmp/cloister-nspawn.XXXXXX)
trap 'rm -rf "$work"' EXIT

# Another root to boot (default: the host's /, i.e. its /usr): tests/trixie/ boots the
# Debian 13 root with systemd 257 this way, with CLOISTER_NSPAWN_DEST, the build already
# installed (meson install of a build made in that root, by that root's meson).
root=${CLOISTER_NSPAWN_ROOT:-/}

# Install the build as a package would, then merge Debian's /lib/systemd paths into /usr/lib:
# only /usr is overlaid into the container.
if [ -n "${CLOISTER_NSPAWN_DEST:-}" ]; then
        cp -a "$CLOISTER_NSPAWN_DEST" "$work/dest"
else
        DESTDIR=$work/dest meson install -C "$build" --no-rebuild --quiet >/dev/null
fi
if [ -d "$work/dest/lib" ]; then
        mkdir -p "$work/dest/usr/lib"
        cp -a "$work/dest/lib/." "$work/dest/usr/lib/"
        rm -rf "$work/dest/lib"
fi
sysconfdir=$(sed -n 's/^#define SYSCONFDIR "\(.*\)"$/\1/p' "$build/config.h")
[ -n "$sysconfdir" ] || { echo "Bail out! cannot read SYSCONFDIR from $build/config.h"; exit 1; }

mkdir -p "$work/cfg" "$work/out" "$work/payload"
cp "$src/tests/integration/tap.sh" "$suite" "$work/payload/"
cp -r "$src/tests/integration/agents" "$work/payload/" 2>/dev/null || true
[ -n "$probe" ] && cp "$probe" "$work/payload/sandbox-probe"
# Extra files for the suite (the README demo's example role and agent).
[ -n "${CLOISTER_NSPAWN_PAYLOAD:-}" ] && cp -r "$CLOISTER_NSPAWN_PAYLOAD" "$work/payload/extra"
chmod -R a+rX "$work/payload"
suite_name=$(basename "$suite")

. "$src/tests/suite-unit.sh"
suite_unit "$work/cloister-test.service" "cloister integration suite $suite_name" \
        "CLOISTER_CFG=$sysconfdir/cloister PAYLOAD=/payload" \
        "/bin/bash -c 'exec /bin/bash /payload/$suite_name >/out/tap 2>/out/stderr'" \
        "Requires=dbus.socket" ""

# A config dir that the suite may write to, at the build's own sysconfdir.
bind_cfg="--bind=$work/cfg:$sysconfdir/cloister"
# The volatile container's /etc is empty but for what systemd makes: the root's TLS trust
# store, read-only, as a real system has it (Debian 13's pip reads it when it starts). A copy:
# nspawn resolves a bind's source after it mounted the volatile root over the root's own.
if [ -d "${root%/}/etc/ssl/certs" ]; then
        cp -a "${root%/}/etc/ssl" "$work/ssl"
        bind_cfg="$bind_cfg --bind-ro=$work/ssl:/etc/ssl"
fi
# A sanitizer build (run-all.sh): CLOISTER_NSPAWN_SANITIZER_ENV="ASAN_OPTIONS=… UBSAN_OPTIONS=…"
# becomes every service's environment, so cloister's own processes report to the journal,
# where the suite looks for reports.
if [ -n "${CLOISTER_NSPAWN_SANITIZER_ENV:-}" ]; then
        printf '[Manager]\nDefaultEnvironment=%s\n' "$CLOISTER_NSPAWN_SANITIZER_ENV" > "$work/sanitizers.conf"
        bind_cfg="$bind_cfg --bind-ro=$work/sanitizers.conf:/etc/systemd/system.conf.d/50-cloister-sanitizers.conf"
fi

set +e
timeout -k 10 "${CLOISTER_NSPAWN_TIMEOUT:-540}" unshare -m --propagation private bash -c '
        mount -t tmpfs tmpfs /run &&
        exec script -qec "systemd-nspawn -D $3 --volatile=yes --register=no --keep-unit --private-network \
                --overlay-ro=${3%/}/usr:$1/dest/usr:/usr \
                $2 --bind=$1/out:/out --bind-ro=$1/payload:/payload \
                --bind-ro=$1/cloister-test.service:/etc/systemd/system/cloister-test.service \
                -b systemd.unit=cloister-test.service systemd.firstboot=off" /dev/null
' _ "$work" "$bind_cfg" "$root" > "$work/console.log" 2>&1 </dev/null
rc=$?
set -e

if [ -s "$work/out/tap" ]; then
        cat "$work/out/tap"
fi
if ! grep -qE '^1\.\.[0-9]+' "$work/out/tap" 2>/dev/null; then # lint-tests: allow negated-grep (a missing file is a failure here)
        echo "not ok - the container produced no complete TAP (nspawn exit $rc)"
        echo "1..1"
        sed 's/^/# console: /' "$work/console.log" | tail -40
        sed 's/^/# stderr: /' "$work/out/stderr" 2>/dev/null | tail -40
        exit 1
fi
if [ -s "$work/out/stderr" ] && [ -n "${CLOISTER_TEST_VERBOSE:-}" ]; then
        sed 's/^/# stderr: /' "$work/out/stderr" >&2
fi
exit 0

#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# A Debian 13 (trixie, systemd 257) root, built from Debian's archive with mmdebstrap and
# cached, to build and test cloister on the systemd Debian ships now beside the host's 252.
#
#   trixie-root.sh prepare     build the root if the cache has none for this package list
#   trixie-root.sh path        print the cached root's path (exit 1 if not prepared)
#   trixie-root.sh clean       remove every cached root
#
# The archive is given to mmdebstrap directly as a sources line: the machine's own apt
# configuration is neither read nor changed. The cache directory is keyed by the package list
# (and this script's mmdebstrap options), so changing either prepares a new root. prepare is
# the only part that reaches the network; `path` and the tiers that use the root never do.
set -euo pipefail
umask 022

CACHE=${CLOISTER_TRIXIE_CACHE:-/var/cache/cloister-tests}
SOURCES="deb http://deb.debian.org/debian trixie main"

# Build dependencies, as .ci/install-deps has them for Debian 12, plus what moved on 13
# (systemd.pc is in systemd-dev) and what the tiers inside the root use: man-db for the
# generator's systemd-analyze verify, dbus and libnss-systemd for a booted systemd, nodejs and
# npm for the MCP SDK suite and npm dependency sets, python3-pip for pip ones, git for the
# licence check.
PKGS=(meson ninja-build pkg-config gcc
      libsystemd-dev systemd-dev libinih-dev libseccomp-dev libjson-c-dev libcurl4-openssl-dev
      libmicrohttpd-dev libssl-dev libmount-dev
      systemd systemd-sysv dbus libnss-systemd util-linux iproute2 procps python3 python3-httpx
      scdoc man-db curl zsh xz-utils ca-certificates nodejs npm python3-pip git)

# What a first boot would do (ConditionNeedsUpdate=): done once here, or every boot of the
# volatile root spends a minute of TCG time rebuilding the linker cache and the catalog.
FIRST_BOOT_DONE='chroot "$1" ldconfig && chroot "$1" journalctl --update-catalog && touch "$1/etc/.updated" "$1/var/.updated"'

log() { printf '# trixie-root: %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 2; }

# A mount below the root (a procfs a chroot left) would make every tier that walks the root
# walk the host: such a root is refused, not used.
refuse_mounts_below() {
        local below
        below=$(findmnt -rn -o TARGET | awk -v r="$1/" 'index($0 "/", r) == 1' | head -n 3)
        [ -z "$below" ] || die "a mount below $1 ($below): unmount it (or $0 clean) and prepare again"
}

key=$(printf '%s\n' "$SOURCES" "variant=apt" "${PKGS[@]}" | sort | sha256sum | cut -c1-16)
ROOT=$CACHE/trixie-root-$key

case ${1:-} in
path)
        [ -f "$ROOT/.complete" ] || { log "no root for this package list: run $0 prepare"; exit 1; }
        refuse_mounts_below "$ROOT"
        echo "$ROOT"
        ;;
prepare)
        [ "$(id -u)" = 0 ] || die "needs root (mmdebstrap in root mode, chroot)"
        command -v mmdebstrap >/dev/null || die "mmdebstrap not installed (.ci/install-deps)"
        mkdir -p "$CACHE"
        exec 9>"$CACHE/.trixie-root.lock"
        flock 9
        if [ -f "$ROOT/.complete" ]; then
                refuse_mounts_below "$ROOT"
                log "cached: $ROOT"
                exit 0
        fi
        rm -rf "$ROOT" "$ROOT.tmp"
        log "mmdebstrap trixie into $ROOT (${#PKGS[@]} packages and their dependencies)"
        include=$(IFS=,; echo "${PKGS[*]}")
        # --skip=check/empty: the target is ours and fresh. No recommends: what is needed is listed.
        # In a private mount namespace: the /proc, /sys and /dev that root mode mounts in the
        # target die with it, even when mmdebstrap or a hook is interrupted, so no host mount
        # is ever left below the cache (the tiers walk the root; a host /proc there is the host).
        timeout 1800 unshare -m --propagation private mmdebstrap --mode=root --variant=apt --include="$include" \
                --aptopt='APT::Install-Recommends "false"' \
                --customize-hook='echo cloister-trixie > "$1/etc/hostname"' \
                --customize-hook="$FIRST_BOOT_DONE" \
                trixie "$ROOT.tmp" "$SOURCES" >&2 || die "mmdebstrap failed"
        # systemd 257 in the root, or this is not the root the tiers mean
        compgen -G "$ROOT.tmp/usr/lib/*/systemd/libsystemd-core-257.so" >/dev/null ||
                die "the root has no systemd 257 (libsystemd-core-257.so)"
        printf '%s\n' "${PKGS[@]}" > "$ROOT.tmp/.packages"
        touch "$ROOT.tmp/.complete"
        mv "$ROOT.tmp" "$ROOT"
        # Older roots (another package list) are dropped: one root per list, the current one.
        for old in "$CACHE"/trixie-root-*; do
                [ "$old" = "$ROOT" ] || rm -rf "$old"
        done
        log "prepared: $ROOT"
        ;;
clean)
        rm -rf "$CACHE"/trixie-root-*
        ;;
*)
        echo "usage: $0 prepare|path|clean" >&2
        exit 2
        ;;
esac

#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Runs inside a throwaway systemd (nspawn-run.sh) as root: the README's quick start, the
# block between <!-- quickstart --> and <!-- /quickstart -->, run as it is written, then
# what it promises: the example agent ran sealed and wrote its result into the managed
# output directory (cloister.role(5), Output=).
#
# The tier has this build installed over /usr already (nspawn-run.sh) and / is volatile, so
# the block's "meson setup/install" runs a stand-in that records its arguments and makes
# what an install puts outside /usr (the empty /etc/cloister/roles); everything else runs
# for real, against the container's systemd, with no /run/cloister (systemd-tmpfiles has
# not run since the install on a real host).
set -u
. "$PAYLOAD/tap.sh"
README=$PAYLOAD/extra
work=$(mktemp -d)

sed -n '/^<!-- quickstart -->$/,/^<!-- \/quickstart -->$/p' "$README" | sed -e '1d' -e '$d' > "$work/block.md"
sed -n '/^```sh$/,/^```$/p' "$work/block.md" | sed -e '1d' -e '$d' > "$work/quickstart.sh"
check "README.md has a quick-start block between <!-- quickstart --> and <!-- /quickstart -->" [ -s "$work/quickstart.sh" ]
diag "$(cat "$work/quickstart.sh")"

mkdir -p "$work/bin"
cat > "$work/bin/meson" <<STUB
#!/bin/sh
echo "\$*" >> "$work/meson.calls"
case "\$1" in install) mkdir -p "$CLOISTER_CFG/roles" ;; esac
STUB
chmod +x "$work/bin/meson"

# This container booted with cloister installed, so systemd-tmpfiles already made
# /run/cloister; on a host where "meson install" just ran, nothing has. Undo that.
rm -rf /run/cloister

# as an admin pastes it: a fresh shell in a scratch directory (the source tree's place)
(cd "$work" && PATH=$work/bin:$PATH bash -e "$work/quickstart.sh") > "$work/stdout" 2> "$work/stderr"
rc=$?
check "the quick start runs to its end without an error (exit $rc)" [ "$rc" = 0 ]
diag "$(sed 's/^/stdout: /' "$work/stdout")"
diag "$(sed 's/^/stderr: /' "$work/stderr")"
check "it installs with --prefix=/usr, as this tier has the build installed" \
        grep -qx "setup build --prefix=/usr" "$work/meson.calls"
check "it installs the build (meson install -C build)" grep -qx "install -C build" "$work/meson.calls"

journalctl -b -o cat -u agent@reviewer.service > "$work/journal" 2>&1
# (the stopped unit is unloaded: its Result= is gone, the journal keeps it)
check "agent@reviewer ran to its end and succeeded" grep -qx "agent@reviewer.service: Deactivated successfully." "$work/journal"
check "the example agent ran (the installed what-do-i-see.sh)" grep -q "^I run as uid" "$work/journal"
check "it saw a read-only /" grep -qx "/ is read-only" "$work/journal"
check "it wrote /output/result.txt" grep -qx "wrote /output/result.txt" "$work/journal"

out=/var/lib/private/cloister-output/reviewer
check "the result is in the managed directory, $out (StateDirectory=)" [ -s "$out/result.txt" ]
check "/var/lib/cloister-output/reviewer is systemd's link to it" \
        [ "$(readlink -f /var/lib/cloister-output/reviewer)" = "$out" ]
uid=$(stat -c %u "$out/result.txt" 2>/dev/null || echo none)
check "the result belongs to the role's dynamic user (UID $uid, systemd's 61184–65519)" \
        all '[ "$uid" -ge 61184 ]' '[ "$uid" -le 65519 ]'
check "the quick start shows the result (its last command)" grep -qF "$(cat "$out/result.txt" 2>/dev/null || echo '<no result>')" "$work/stdout"

rm -rf "$work"
tap_done

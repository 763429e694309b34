#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Runs inside a throwaway systemd (nspawn-run.sh) as root: project dependency sets (cloister.project(5)).
# cloister-deps@<project>.service materialises a pip set from a local wheel directory (the
# container has no network: pip's own configuration, set by an admin drop-in, points it at
# the wheels), a sealed agent of the project imports the package from the read-only
# /opt/cloister/deps/pip, and a lockfile that is not hash-pinned keeps its roles from
# starting. npm through a registry is tested on the host (tests/deps/test-cloister-deps.sh).
set -u
. "$PAYLOAD/tap.sh"
CFG=$CLOISTER_CFG
X=$PAYLOAD/extra
CACHE=/var/cache/cloister/deps
mkdir -p "$CFG/roles" "$CFG/projects" /etc/systemd/system

if ! /usr/bin/python3 -m pip --version >/dev/null 2>&1; then
        echo "1..0 # SKIP /usr/bin/python3 has no pip module (Debian: python3-pip)"
        exit 0
fi

# --- fixtures: a wheel directory, a workspace with a hash-pinned lockfile ------------------
mkdir -p /srv/wheels /srv/proj/.git /srv/bad /srv/out/deps
hash=$(/usr/bin/python3 "$X/make-wheel.py" cloisterdemo 1.0 /srv/wheels)
printf '# generated\ncloisterdemo==1.0 \\\n    --hash=sha256:%s\n' "$hash" > /srv/proj/requirements.lock
printf 'cloisterdemo==1.0\n' > /srv/bad/requirements.lock
chmod -R a+rX /srv/wheels /srv/proj /srv/bad
chmod 0777 /srv/proj /srv/proj/.git /srv/out/deps
sha=$(sha256sum /srv/proj/requirements.lock | cut -d' ' -f1)

printf '[Project]\nWorkspace=/srv/proj\n[Dependencies]\nPip=requirements.lock\n' > "$CFG/projects/proj.project"
printf '[Project]\nWorkspace=/srv/bad\n[Dependencies]\nPip=requirements.lock\n' > "$CFG/projects/bad.project"
role() { # NAME PROJECT
        cat > "$CFG/roles/$1.role" <<EOF2
[Role]
Exec=/usr/bin/python3 $X/deps-agent.py
Project=$2
[Sandbox]
Network=none
Memory=256M
Timeout=2min
Output=/srv/out/deps
EOF2
}
role importer proj
role badrole bad
# The administrator points pip at the local wheels (cloister.project(5)): pip's own
# configuration through a drop-in for every cloister-deps@ instance.
mkdir -p /etc/systemd/system/cloister-deps@.service.d
printf '[Service]\nEnvironment=PIP_NO_INDEX=1 PIP_FIND_LINKS=/srv/wheels\n' \
        > /etc/systemd/system/cloister-deps@.service.d/50-local-wheels.conf
systemctl daemon-reload

# all 'CMD' 'CMD'…: one test point for several conditions
all() { local c; for c in "$@"; do eval "$c" || return 1; done; }
get() { sed -n "s/^$1=//p" /srv/out/deps/report.txt; }

# --- the generated unit ----------------------------------------------------------------
check "generator: cloister-deps@proj.service exists" bash -c 'systemctl cat cloister-deps@proj.service >/dev/null'
check "generator: ...with the admin's drop-in" bash -c 'systemctl cat cloister-deps@proj.service | grep -q PIP_FIND_LINKS'
check "generator: agent@importer requires and orders after it" bash -c \
        'systemctl show -P Requires agent@importer.service | grep -qw cloister-deps@proj.service &&
         systemctl show -P After agent@importer.service | grep -qw cloister-deps@proj.service'

# --- materialise, then run the sealed agent ----------------------------------------------
systemctl start --wait agent@importer.service 2>/dev/null
check "deps: starting the agent ran cloister-deps@proj.service ($(systemctl show -P ActiveState cloister-deps@proj.service))" \
        [ "$(systemctl show -P ActiveState cloister-deps@proj.service)" = active ]
[ "$(systemctl show -P ActiveState cloister-deps@proj.service)" = active ] ||
        diag "$(journalctl -b -u cloister-deps@proj.service --no-pager | tail -20)"
check "deps: the set is at $CACHE/pip-<sha256 of the lockfile>" [ -f "$CACHE/pip-$sha/.cloister-complete" ]
check "deps: ...holding the package" [ -f "$CACHE/pip-$sha/cloisterdemo.py" ]
check "deps: the project's link points at it" [ "$(readlink "$CACHE/by-project/proj/pip")" = "../../pip-$sha" ]
check "deps: the installer ran as a dynamic user, not root (owner $(stat -L -c %U "$CACHE/pip-$sha"))" \
        [ "$(stat -L -c %u "$CACHE/pip-$sha")" != 0 ]
check "deps: the unit ran with no capabilities" [ -z "$(systemctl show -P CapabilityBoundingSet cloister-deps@proj.service)" ]

check "agent: ran to completion ($(systemctl show -P ExecMainStatus agent@importer.service))" [ "$(get done)" = yes ]
[ "$(get done)" = yes ] || diag "$(journalctl -b -u agent@importer.service --no-pager | tail -20)"
check "agent: imports the materialised package ($(get import))" [ "$(get import)" = "hello from cloisterdemo 1.0" ]
check "agent: ...from /opt/cloister/deps/pip ($(get import_file))" [ "$(get import_file)" = /opt/cloister/deps/pip/cloisterdemo.py ]
check "agent: PYTHONPATH=/opt/cloister/deps/pip" [ "$(get pythonpath)" = /opt/cloister/deps/pip ]
check "agent: no NODE_PATH without an Npm= set" [ -z "$(get node_path)" ]
check "agent: keeps its own network mode ($(get network))" [ "$(get network)" = none ]
check "agent: the dependency set is a read-only mount" [ "$(get deps_readonly)" = yes ]
check "agent: cannot add a file to it ($(get write_deps))" [ "$(get write_deps)" = EROFS ]
check "agent: cannot change a file in it ($(get write_deps_existing))" [ "$(get write_deps_existing)" = EROFS ]
check "agent: nothing was planted in the cache" [ ! -e "$CACHE/pip-$sha/planted.py" ]
check "agent: /workspace is writable ($(get write_workspace))" [ "$(get write_workspace)" = ok ]
check "agent: /workspace/.git is read-only ($(get write_workspace_git))" [ "$(get write_workspace_git)" = EROFS ]

# --- once only ---------------------------------------------------------------------------
mtime=$(stat -c %Y.%i "$CACHE/pip-$sha")
systemctl restart cloister-deps@proj.service
check "once: a restart of cloister-deps@proj succeeds" [ "$(systemctl show -P ActiveState cloister-deps@proj.service)" = active ]
check "once: ...and does not install again" all \
        'journalctl -b -u cloister-deps@proj.service --no-pager | grep -q "already materialised"' \
        '[ "$(stat -c %Y.%i "$CACHE/pip-$sha")" = "$mtime" ]'

# --- a lockfile that is not hash-pinned keeps the project's roles from starting -------------
rm -f /srv/out/deps/report.txt
systemctl start --wait agent@badrole.service 2>/dev/null; rc=$?
check "refused: starting a role of the project fails (rc $rc)" [ $rc != 0 ]
check "refused: cloister-deps@bad.service failed" [ "$(systemctl show -P ActiveState cloister-deps@bad.service)" = failed ]
check "refused: the journal names file:line" bash -c \
        'journalctl -b -u cloister-deps@bad.service --no-pager | grep -q "/srv/bad/requirements.lock:1: the requirement has no --hash"'
check "refused: the agent never ran" [ ! -e /srv/out/deps/report.txt ]
check "refused: no set and no temporary directory for it" all \
        '[ "$(find "$CACHE/" -maxdepth 1 -name "pip-*" | wc -l)" = 1 ]' '[ -z "$(find "$CACHE/" -maxdepth 1 -name ".tmp-*")" ]'

tap_done

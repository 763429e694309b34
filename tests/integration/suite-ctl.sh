#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Runs inside a throwaway systemd (nspawn-run.sh) as root: cloisterctl against a real
# systemd — list reads states over D-Bus, cat matches systemctl cat after a daemon-reload,
# doctor reports a broken role, a missing socket and an unmaterialised project; a sidecar's
# socket and runtime states, its socket directory and exposure.
set -u
. "$PAYLOAD/tap.sh"
CFG=$CLOISTER_CFG
A=$PAYLOAD/agents
mkdir -p "$CFG/roles" "$CFG/projects" /srv/webapp /srv/done

cat > "$CFG/roles/runner.role" <<'X'
[Role]
Exec=/payload/agents/sleeper.sh
[Sandbox]
Network=none
Memory=256M
X
cat > "$CFG/roles/idle.role" <<'X'
[Role]
Exec=/usr/bin/true
[Sandbox]
Network=none
Memory=256M
X
cat > "$CFG/roles/broken.role" <<'X'
[Role]
Exec=/usr/bin/true
[Sandbox]
Memory=lots
X
cat > "$CFG/roles/nosock.role" <<'X'
[Role]
Exec=/usr/bin/true
[Sandbox]
Network=none
Memory=256M
Service=ghost
X
cat > "$CFG/roles/coder.role" <<'X'
[Role]
Exec=/usr/bin/true
Project=webapp
[Sandbox]
Network=none
Memory=256M
X
cat > "$CFG/projects/webapp.project" <<'X'
[Project]
Workspace=/srv/webapp
[Dependencies]
Pip=requirements.lock
X
cat > "$CFG/projects/done.project" <<'X'
[Project]
Workspace=/srv/done
[Dependencies]
Npm=package-lock.json
X
printf 'left-pad==1.3.0 --hash=sha256:%s\n' "$(printf 'a%.0s' $(seq 64))" > /srv/webapp/requirements.lock
cat > /srv/done/package-lock.json <<'X'
{"name": "done", "lockfileVersion": 3, "requires": true, "packages": {
  "": {"name": "done", "dependencies": {"left-pad": "1.3.0"}},
  "node_modules/left-pad": {"version": "1.3.0",
    "resolved": "https://registry.npmjs.org/left-pad/-/left-pad-1.3.0.tgz",
    "integrity": "sha512-XI5MPzVNApjAyhQzphX8BkmKsKUxD4LdyK24iZeQEEvXoF1pnXGi+EhCsqZRTQ7OUfmL4usz8D6f9s8Lq1BunQ=="}}}
X
sha=$(sha256sum /srv/done/package-lock.json | cut -d' ' -f1)
mkdir -p "/var/cache/cloister/deps/npm-$sha" && touch "/var/cache/cloister/deps/npm-$sha/.cloister-complete"
systemctl daemon-reload

run() { out=$("$@" 2>"$PAYLOAD_ERR"); rc=$?; err=$(cat "$PAYLOAD_ERR"); }
PAYLOAD_ERR=$(mktemp)
json() { python3 -c "import json,sys; d=json.load(sys.stdin); sys.exit(0 if ($1) else 1)" <<<"$out"; }
# the last column (STATE) of NAME's row; no awk: /etc/alternatives is not in the container
state_of() { sed -n "s/^$1 .* \([a-z-]*\)\$/\1/p" <<<"$out"; }

check "cloisterctl is installed" test -x "$(command -v cloisterctl)"

# --- list: states from systemd over D-Bus ---------------------------------------------------
systemctl start agent@runner.service
for i in $(seq 50); do [ "$(systemctl show -P ActiveState agent@runner.service)" = active ] && break; sleep 0.1; done
run cloisterctl list
check "list: a running role is active (read over D-Bus)" test "$(state_of runner)" = active
check "list: a role never started is inactive, not unknown" test "$(state_of idle)" = inactive
run cloisterctl --json list
check "list --json: the state field comes from systemd" \
        json 'd["version"] == 1 and [e for e in d["entries"] if e["name"] == "runner"][0]["state"] == "active"'
systemctl stop agent@runner.service
run cloisterctl list
check "list: a stopped role reads inactive again" test "$(state_of runner)" = inactive

# --- cat: the same text as systemctl cat after a daemon-reload ------------------------------
run cloisterctl cat idle
mine=$out
theirs=$(systemctl cat agent@idle.service 2>&1)
if [ "$mine" = "$theirs" ]; then
        ok "cat: identical to systemctl cat agent@idle.service"
else
        notok "cat: identical to systemctl cat agent@idle.service"
        diag "$(diff <(echo "$mine") <(echo "$theirs") | head -20)"
fi

run cloisterctl cat coder
check "cat: a role of a project with a dependency set, identical to systemctl cat" \
        test "$out" = "$(systemctl cat agent@coder.service 2>&1)"

# --- doctor ---------------------------------------------------------------------------------
run cloisterctl doctor
check "doctor: exit 1 with broken roles and projects" test "$rc" = 1
check "doctor: the broken role is refused with file:line" \
        bash -c 'grep -qE "^broken +role +broken +refused" <<<"$1" && grep -qF "broken: $2/roles/broken.role:4: Invalid Memory=" <<<"$1"' _ "$out" "$CFG"
check "doctor: the missing sidecar socket" \
        bash -c 'grep -qE "^nosock +role +broken +yes +- +0/1" <<<"$1" && grep -qF "/run/cloister/services/ghost/service.sock is missing" <<<"$1"' _ "$out"
check "doctor: the unmaterialised project, and its role" \
        bash -c 'grep -qE "^webapp +project +broken .* missing" <<<"$1" && grep -qE "^coder +role +broken " <<<"$1"' _ "$out"
check "doctor: the materialised project is ok" bash -c 'grep -qE "^done +project +ok " <<<"$1"' _ "$out"
check "doctor: a healthy role is ok" bash -c 'grep -qE "^idle +role +ok +yes " <<<"$1"' _ "$out"
run cloisterctl doctor --json
check "doctor --json: exposure of a generated unit from systemd-analyze security" \
        json '(lambda i: type(i["exposure"]) in (int, float) and __import__("re").fullmatch(r"[A-Z]+", i["exposure_level"]))([i for i in d["items"] if i["name"] == "idle"][0])'
check "doctor --json: agrees with the table (broken, nosock, webapp not ok; idle ok)" \
        json '{i["name"]: i["ok"] for i in d["items"]} == {"broken": False, "coder": False, "idle": True, "nosock": False, "runner": True, "done": True, "webapp": False}'

# the same verdicts as systemd: the refused role does not start, the healthy one does
systemctl start agent@broken.service 2>/dev/null
# (Type=exec: start returns once the shim runs; the bare template's shim then exits 125)
check "systemd agrees: the broken role fails" \
        bash -c 'for i in $(seq 50); do [ "$(systemctl show -P ActiveState agent@broken.service)" = failed ] && exit 0; sleep 0.1; done; exit 1'

# an admin drop-in that re-opens PrivateNetwork=
mkdir -p /etc/systemd/system/agent@idle.service.d
printf '[Service]\nPrivateNetwork=no\n' > /etc/systemd/system/agent@idle.service.d/10-net.conf
systemctl daemon-reload
run cloisterctl doctor
check "doctor: a drop-in re-opening PrivateNetwork= is reported with its file:line" \
        bash -c 'grep -qE "^idle +role +broken +refused" <<<"$1" && grep -qF "idle: /etc/systemd/system/agent@idle.service.d/10-net.conf:2: PrivateNetwork=" <<<"$1"' _ "$out"
run cloisterctl cat idle
mine=$out
theirs=$(systemctl cat agent@idle.service 2>&1)
check "cat: with the refusal drop-in, still identical to systemctl cat" test "$mine" = "$theirs"
rm -rf /etc/systemd/system/agent@idle.service.d

# Keys systemd added after 252 that hand the service a host file or credential (OpenFile= 253,
# ImportCredential= 254) in an admin drop-in: the role is refused before the agent runs, on
# every version (docs/security.md). The agent would copy what it got to /output.
secret="sk-test-$$-$RANDOM"
mkdir -p /etc/credstore && (umask 077 && echo "$secret" > /etc/credstore/llm-key)
printf '[Role]\nExec=/payload/agents/secret-reader.sh\n[Sandbox]\nNetwork=none\nMemory=256M\n' > "$CFG/roles/leak.role"
sdver=$(systemctl --version | sed -n '1s/^systemd \([0-9]*\).*/\1/p')
for setting in "OpenFile=/etc/credstore/llm-key:llm:read-only 253" "ImportCredential=llm-key 254"; do
        read -r value since <<<"$setting"
        key=${value%%=*}
        mkdir -p /etc/systemd/system/agent@leak.service.d
        printf '[Service]\n%s\n' "$value" > /etc/systemd/system/agent@leak.service.d/10-secret.conf
        systemctl daemon-reload
        rm -rf /var/lib/private/cloister-output/leak
        systemctl start agent@leak.service 2>/dev/null
        check "a drop-in with $key= refuses the role: agent@leak fails" \
                bash -c 'for i in $(seq 50); do [ "$(systemctl show -P ActiveState agent@leak.service)" = failed ] && exit 0; sleep 0.1; done; exit 1'
        # 125: the shim refused before it ran the agent, which writes /output/secrets (even
        # empty) whenever it runs (a refused role's drop-in has no managed output directory)
        check "... refused by the shim (status $(systemctl show -P ExecMainStatus agent@leak.service)): the agent never ran, no /output/secrets" \
                all '[ "$(systemctl show -P ExecMainStatus agent@leak.service)" = 125 ]' \
                    '[ ! -e /var/lib/private/cloister-output/leak/secrets ]'

        systemctl reset-failed agent@leak.service 2>/dev/null
        # the control: the same setting in a unit cloister does not guard hands the secret over
        # where this systemd knows the key (so the refusal above is what keeps it out)
        if [ "${sdver:-0}" -ge "$since" ]; then
                got=$(systemd-run --wait --pipe -q -p "$value" -p DynamicUser=yes -p StateDirectory=leak-control \
                        /bin/sh -c 'for fd in 3 4 5; do cat <&$fd; done 2>/dev/null; [ -n "${CREDENTIALS_DIRECTORY:-}" ] && cat "$CREDENTIALS_DIRECTORY"/* 2>/dev/null; true')
                check "control: $key= in a plain unit hands it the secret (systemd $sdver)" test "$got" = "$secret"
        else
                skip "control: $key= in a plain unit hands it the secret" "systemd $sdver has no $key= (added in $since)"
        fi
done
rm -rf /etc/systemd/system/agent@leak.service.d /etc/credstore "$CFG/roles/leak.role"
systemctl daemon-reload

# --- sidecars: generated by the real generator, states over D-Bus, the real socket directory --
mkdir -p "$CFG/sidecars"
printf '[Sidecar]\nExec=/usr/bin/sleep infinity\nPort=8080\nMemory=64M\n' > "$CFG/sidecars/warm.sidecar"
printf '[Role]\nExec=/usr/bin/true\n[Sandbox]\nNetwork=none\nMemory=256M\nService=warm\n' > "$CFG/roles/asker.role"
systemctl daemon-reload
systemctl start sidecar@warm.socket
run cloisterctl list
check "list: a sidecar's socket is active, its runtime inactive before any connection (D-Bus), reached by its role" \
        bash -c 'grep -qE "^warm +sidecar +ok +8080 +- +64M .* asker +active +inactive$" <<<"$1"' _ "$out"
run cloisterctl verify warm
check "verify: the socket directory systemd made (root's, 0555) keeps the contract" test "$rc" = 0 -a -z "$err"
systemctl start sidecar-runtime@warm.service
for i in $(seq 50); do [ "$(systemctl show -P ActiveState sidecar-runtime@warm.service)" = active ] && break; sleep 0.1; done
run cloisterctl doctor --json
check "doctor --json: the sidecar's socket present, socket and runtime active (D-Bus), reached by asker" \
        json '[(i["ok"], i["socket"]["present"], i["socket"]["unit"]["state"], i["runtime"]["unit"]["state"], i["reached_by"]) for i in d["items"] if i["name"] == "warm"] == [(True, True, "active", "active", ["asker"])]'
check "doctor --json: systemd-analyze exposure of the sidecar's runtime and proxy units" \
        json '(lambda x: all(type(x[k]) in (int, float) for k in ("runtime", "proxy")) and all(__import__("re").fullmatch(r"[A-Z]+", x[k]) for k in ("runtime_level", "proxy_level")))([i for i in d["items"] if i["name"] == "warm"][0]["exposure"])'
systemctl stop sidecar@warm.socket sidecar-runtime@warm.service
rm -f "$CFG/sidecars/warm.sidecar" "$CFG/roles/asker.role"
rm -f "$PAYLOAD_ERR"
tap_done

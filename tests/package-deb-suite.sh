#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Runs inside the throwaway systemd of tests/package-deb.sh as root, with a writable /usr and
# a copy of the machine's dpkg database: cloister as an admin gets it from its .deb. Installs
# it with dpkg (its maintainer scripts run against this systemd), runs the README's demo
# from the installed package, then checks that an upgrade and a removal leave no running
# agent@ or agent-run@ unit behind (packaging/debian/cloister.prerm, docs/packaging.md).
#
# $PAYLOAD holds tap.sh, the two .debs (0.1-1 and 0.1-2, the same files) and extra/ (the
# demo: docs/examples/ and the example upstream).
set -u
. "$PAYLOAD/tap.sh"
deb1=$(ls "$PAYLOAD"/debs/cloister_*-1_*.deb)
deb2=$(ls "$PAYLOAD"/debs/cloister_*-2_*.deb)
log=/var/tmp/package-deb
mkdir -p "$log" /var/log

# A container image's "exit 101" policy-rc.d (this machine's /usr has one) would make
# deb-systemd-invoke refuse every start and stop; a host booted with systemd has none.
[ -e /usr/sbin/policy-rc.d ] && { diag "removed the image's /usr/sbin/policy-rc.d: $(tail -1 /usr/sbin/policy-rc.d)"; rm -f /usr/sbin/policy-rc.d; }

# agents: the agent@/agent-run@ units that run or are on their way, one a line; fails if
# systemctl does (an empty list must mean "none", never "could not ask"). No awk: it is an
# alternatives link into the machine's /etc, which the container does not have.
agents() {
        local out
        out=$(systemctl list-units --plain --no-legend --state=active,activating,deactivating,reloading \
                'agent@*.service' 'agent-run@*.service') || return 1
        [ -z "$out" ] || cut -d' ' -f1 <<<"$out"
}
# dropin ROLE: systemd has the generator's drop-in for agent@ROLE (it ran at the last reload)
dropin() { systemctl show -p DropInPaths --value "agent@$1.service" | grep -q "agent@$1.service.d/50-cloister.conf"; }
start_agents() {
        systemctl start agent@sleeper.service
        cloisterctl run --role sleeper -- /bin/sleep 600 </dev/null >"$log/run.out" 2>&1
        local i
        for i in $(seq 50); do [ "$(agents | wc -l)" -ge 2 ] && break; sleep 0.2; done
        agents >"$log/agents"
        [ "$(wc -l <"$log/agents")" -ge 2 ] ||
                diag "$(cat "$log/run.out"; systemctl status --no-pager agent@sleeper.service 2>&1 | tail -15)"
}

# A role that exists before the package does: the postinst's daemon-reload runs the generator.
mkdir -p /etc/cloister/roles
printf '[Role]\nExec=/bin/sleep 600\n[Sandbox]\nNetwork=none\n' >/etc/cloister/roles/sleeper.role

dpkg -i "$deb1" >"$log/install.log" 2>&1
rc=$?
check "dpkg -i $(basename "$deb1") (exit $rc)" [ "$rc" = 0 ]
[ "$rc" = 0 ] || diag "$(tail -20 "$log/install.log")"
check "it is installed: $(dpkg-query -W -f='${Package} ${Version} ${Status}' cloister 2>&1)" \
        bash -c '[ "$(dpkg-query -W -f="\${Status}" cloister)" = "install ok installed" ]'
check "the postinst reloaded systemd: the generator made agent@sleeper's drop-in" dropin sleeper
check "the tmpfiles snippet ran: /run/cloister exists" [ -d /run/cloister ]
check "the broker is not enabled by the package (the admin enables it once it has an upstream)" \
        bash -c '[ "$(systemctl is-enabled cloister-broker.socket)" = disabled ]'
check "cloisterctl verify sleeper passes with the installed files" cloisterctl verify sleeper

# The README's demo, as docs/examples/demo.sh runs it, but on the installed package.
PAYLOAD=$PAYLOAD CLOISTER_CFG=/etc/cloister bash "$PAYLOAD/extra/demo-suite.sh" >"$log/demo.tap" 2>"$log/demo.err"
grep '^#' "$log/demo.tap"
check "the demo ran from the installed package: $(grep -c '^ok' "$log/demo.tap") points ok" \
        all "grep -q '^1\.\.[1-9]' $log/demo.tap" "lacks $log/demo.tap '^not ok'"
grep '^not ok' "$log/demo.tap" | sed 's/^/# demo: /'

# --- upgrade: 0.1-1 to 0.1-2, then 0.1-2 over itself ----------------------------------------
for deb in "$deb2" "$deb2"; do
        start_agents
        check "before the upgrade: agent@sleeper and one agent-run@sleeper.ID run ($(tr '\n' ' ' <"$log/agents"))" \
                all "grep -qx agent@sleeper.service $log/agents" "grep -q '^agent-run@sleeper\.[0-9a-f]*\.service$' $log/agents"
        from=$(dpkg-query -W -f='${Version}' cloister)
        dpkg -i "$deb" >"$log/upgrade.log" 2>&1
        rc=$?
        to=$(dpkg-query -W -f='${Version}' cloister)
        check "dpkg -i $(basename "$deb") over $from (exit $rc)" [ "$rc" = 0 ]
        [ "$rc" = 0 ] || diag "$(tail -20 "$log/upgrade.log")"
        agents >"$log/left"
        asked=$?
        check "upgrade $from → $to leaves no running agent@ or agent-run@ unit ($(tr '\n' ' ' <"$log/left"))" \
                all "[ $asked = 0 ]" "[ ! -s $log/left ]"
        check "after the upgrade the generator ran again: agent@sleeper's drop-in" dropin sleeper
done

# --- removal and purge -------------------------------------------------------------------------
start_agents
systemctl start cloister-broker.socket
check "before the removal: agents and the broker's socket run ($(tr '\n' ' ' <"$log/agents"))" \
        all "[ \$(wc -l <$log/agents) -ge 2 ]" "systemctl -q is-active cloister-broker.socket"
dpkg -r cloister >"$log/remove.log" 2>&1
rc=$?
check "dpkg -r cloister (exit $rc)" [ "$rc" = 0 ]
[ "$rc" = 0 ] || diag "$(tail -20 "$log/remove.log")"
agents >"$log/left"
asked=$?
check "removal leaves no running agent@ or agent-run@ unit ($(tr '\n' ' ' <"$log/left"))" all "[ $asked = 0 ]" "[ ! -s $log/left ]"
findmnt -rn -o TARGET >"$log/mounts"
check "removal unmounted the roles' /tmp mounts ($(grep '^/run/cloister/' "$log/mounts" | tr '\n' ' '))" \
        lacks "$log/mounts" -E '^/run/cloister/(var-)?tmp/'
for u in cloister-broker.socket cloister-broker.service; do
        check "removal stopped $u ($(systemctl is-active $u))" bash -c "[ \"\$(systemctl is-active $u)\" = inactive ]"
done
check "removal reloaded systemd: agent@sleeper is gone (LoadState=$(systemctl show -p LoadState --value agent@sleeper.service))" \
        bash -c '[ "$(systemctl show -p LoadState --value agent@sleeper.service)" = not-found ]'
check "the programs are gone (/usr/libexec/cloister, cloisterctl)" \
        all "[ ! -e /usr/libexec/cloister ]" "[ ! -e /usr/bin/cloisterctl ]"
dpkg -P cloister >"$log/purge.log" 2>&1
rc=$?
check "dpkg -P cloister (exit $rc), the admin's role stays" all "[ $rc = 0 ]" "[ -s /etc/cloister/roles/sleeper.role ]"
[ "$rc" = 0 ] || diag "$(tail -20 "$log/purge.log")"
tap_done

#!/bin/bash
# Runs inside the throwaway systemd of demo.sh: installs the example role as an admin would
# and starts it with systemctl, then shows what the agent printed.
set -u
. "$PAYLOAD/tap.sh"
mkdir -p "$CLOISTER_CFG/roles" /srv/cloister-demo/out /usr/share/cloister/examples 2>/dev/null
chmod 0777 /srv/cloister-demo/out
# The example agent lives at the path the role names (the container's /usr is read-only
# here, so it is bound there by the role's own path being rewritten to the payload copy).
sed "s|^Exec=.*|Exec=$PAYLOAD/extra/what-do-i-see.sh|" "$PAYLOAD/extra/reviewer.role" > "$CLOISTER_CFG/roles/reviewer.role"
diag "\$ cat /etc/cloister/roles/reviewer.role"
diag "$(cat "$CLOISTER_CFG/roles/reviewer.role")"
systemctl daemon-reload
diag "\$ systemctl start agent@reviewer"
systemctl start --wait agent@reviewer.service
diag "\$ journalctl -u agent@reviewer -o cat"
diag "$(journalctl -b -u agent@reviewer.service -o cat)"
diag "\$ cat /srv/cloister-demo/out/result.txt"
diag "$(cat /srv/cloister-demo/out/result.txt 2>&1)"
check "the sealed agent ran and wrote its result" grep -q "hello from the host" /srv/cloister-demo/out/result.txt
check "it saw only lo" bash -c 'journalctl -b -u agent@reviewer.service -o cat | grep -qE "^network devices: lo ?$"'
tap_done

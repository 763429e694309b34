#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# An agent of the sidecar suite (suite-sidecar.sh): records in /output what it can and
# cannot reach from its sandbox. $PROBE_PORT: a TCP port the suite listens on, on the
# container's loopback, that no agent may reach.
out=/output
S=${CLOISTER_SERVICE_INFERENCE_SOCKET:-}
D=/run/cloister/services
echo "${S:-unset}" > $out/socket_env
# through the granted socket, with curl and with Python's http.client
curl -s -m 60 --unix-socket "${S:-$D/inference/service.sock}" -o $out/id.body -w '%{http_code}\n' \
        http://inference/id > $out/id.code 2> $out/id.err
python3 - "${S:-$D/inference/service.sock}" > $out/python.txt 2>&1 <<'PY'
import http.client, socket, sys
class UnixConnection(http.client.HTTPConnection):
    def __init__(self, path):
        super().__init__("inference", timeout=60)
        self.path = path
    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(60)
        self.sock.connect(self.path)
try:
    c = UnixConnection(sys.argv[1])
    c.request("POST", "/echo", body=b"hello sidecar")
    r = c.getresponse()
    print(r.status, r.read().decode())
except OSError as e:
    print("error", e)
PY
# the directory: its mode, and whether this agent can create anything in it
stat -c '%a' $D/inference > $out/dir_mode 2>&1 || echo missing > $out/dir_mode
if touch $D/inference/planted 2>/dev/null || mkdir $D/inference/planted-dir 2>/dev/null; then
        echo created > $out/create
else
        echo refused > $out/create
fi
# what else is there: only the granted service's directory
ls -A $D > $out/services_ls 2>&1
ls -A /run/cloister > $out/cloister_ls 2>&1
# nothing else answers: TCP to the suite's listener, the broker socket
curl -s -m 3 -o /dev/null -w '%{http_code}\n' "http://127.0.0.1:${PROBE_PORT:-9}/" > $out/tcp.code 2>/dev/null
[ -S /run/cloister/broker.sock ] && echo yes > $out/broker_visible || echo no > $out/broker_visible
exit 0

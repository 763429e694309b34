#!/bin/sh
# An example agent: reports what the sandbox lets it see and do, then writes its result.
status() { sed -n "s/^$1:[[:space:]]*//p" /proc/self/status; }
echo "I run as uid $(id -u), role $CLOISTER_ROLE, network mode $CLOISTER_NETWORK"
echo "network devices: $(sed -n '3,$s/^ *\([^:]*\):.*/\1/p' /proc/self/net/dev | tr '\n' ' ')"
touch /i-was-here 2>/dev/null && echo "/ is WRITABLE" || echo "/ is read-only"
echo "effective capabilities: $(status CapEff), bounding set: $(status CapBnd)"
echo "no_new_privs: $(status NoNewPrivs), seccomp mode: $(status Seccomp)"
if (exec 3<>/dev/tcp/127.0.0.1/22) 2>/dev/null; then echo "reached the host's port 22"; else echo "no way out: the host's loopback is unreachable"; fi
echo "under /run: $(find /run -mindepth 1 2>/dev/null | tr '\n' ' ')(systemd's own, empty)"
echo "$GREETING" > /output/result.txt && echo "wrote /output/result.txt"

#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Runs inside a throwaway systemd (nspawn-run.sh) as root: GPUs= (cloister.role(5)) for roles and sidecar
# runtimes, and the start checks that name a missing device node or model directory. These machines have no GPU, so the container gets stand-in device nodes with
# the NVIDIA names (character devices 1:5, /dev/zero's numbers): what is checked is the
# mechanism — the granted nodes appear in the sandbox's private /dev and can be opened,
# the others (a second GPU, the rest of the container's /dev) stay out, and a missing
# node fails the start naming it. The device cgroup (DeviceAllow=) is not enforced on
# these hybrid-cgroup hosts and is not checked here.
set -u
. "$PAYLOAD/tap.sh"
CFG=$CLOISTER_CFG
mkdir -p "$CFG/roles" "$CFG/sidecars" /srv/out

for n in nvidiactl nvidia-uvm nvidia0 nvidia1; do
        mknod -m 0666 "/dev/$n" c 1 5 2>/dev/null
done
if [ ! -c /dev/nvidia0 ]; then
        skip "GPU stand-in nodes" "cannot mknod in this container"
        tap_done
        exit 0
fi
marker=/dev/cloister-host-only
mknod -m 0666 "$marker" c 1 3

cat > /srv/gpu-agent.sh <<'SH'
#!/bin/sh
ls -1 /dev > /output/dev
head -c 4 /dev/nvidia0 | od -An -tx1 | tr -d ' \n' > /output/read0
echo ok > /output/done
SH
cat > /srv/gpu-runtime.sh <<'SH'
#!/bin/sh
echo "DEV: $(ls -1 /dev | tr '\n' ' ')"
exec sleep 300
SH
chmod 0755 /srv/gpu-agent.sh /srv/gpu-runtime.sh

role() { # NAME GPUS
        mkdir -p "/srv/out/$1" && chmod 0777 "/srv/out/$1"
        printf '[Role]\nExec=/srv/gpu-agent.sh\n[Sandbox]\nNetwork=none\nMemory=256M\nOutput=/srv/out/%s\n%s\n' \
                "$1" "${2:+GPUs=$2}" > "$CFG/roles/$1.role"
}
role gpu0 0
role nogpu ""
role gpumissing 0,3
printf '[Sidecar]\nExec=/srv/gpu-runtime.sh\nPort=9000\nMemory=256M\nGPUs=1\n' > "$CFG/sidecars/gpu.sidecar"
printf '[Sidecar]\nExec=/srv/gpu-runtime.sh\nPort=9000\nMemory=256M\nReadOnlyMount=/srv/no-such-models:/models\n' \
        > "$CFG/sidecars/nomodel.sidecar"
mkdir -p /srv/models && echo weights > /srv/models/m.gguf
printf '[Sidecar]\nExec=/srv/gpu-runtime.sh\nPort=9000\nMemory=256M\nReadOnlyMount=/srv/models:/models\n' \
        > "$CFG/sidecars/withmodel.sidecar"
systemctl daemon-reload

# --- a role with GPUs=0 --------------------------------------------------------------------
systemctl start --wait agent@gpu0.service
check "GPUs=0: the agent ran ($(systemctl show -P Result agent@gpu0.service))" [ -s /srv/out/gpu0/done ]
dev=$(tr '\n' ' ' < /srv/out/gpu0/dev 2>/dev/null)
check "GPUs=0: /dev/nvidia0, /dev/nvidiactl, /dev/nvidia-uvm are in the sandbox ($dev)" \
        bash -c "grep -qx nvidia0 /srv/out/gpu0/dev && grep -qx nvidiactl /srv/out/gpu0/dev && grep -qx nvidia-uvm /srv/out/gpu0/dev"
check "GPUs=0: /dev/nvidia0 can be opened and read ($(cat /srv/out/gpu0/read0 2>/dev/null))" \
        [ "$(cat /srv/out/gpu0/read0 2>/dev/null)" = 00000000 ]
check "GPUs=0: the other GPU (/dev/nvidia1) is not there" lacks /srv/out/gpu0/dev -x nvidia1
check "GPUs=0: nothing else of the container's /dev ($(basename $marker) absent)" \
        lacks /srv/out/gpu0/dev -x "$(basename $marker)"
check "GPUs=0: the missing optional /dev/nvidia-uvm-tools does not stop the start" \
        lacks /srv/out/gpu0/dev -x nvidia-uvm-tools

# --- no GPUs= ------------------------------------------------------------------------------
systemctl start --wait agent@nogpu.service
check "no GPUs=: the agent ran" [ -s /srv/out/nogpu/done ]
check "no GPUs=: no /dev/nvidia* ($(grep nvidia /srv/out/nogpu/dev | tr '\n' ' '))" \
        all '[ -s /srv/out/nogpu/dev ]' 'lacks /srv/out/nogpu/dev nvidia'

# --- a missing node fails the start, naming it ---------------------------------------------
systemctl start agent@gpumissing.service 2>/dev/null
rc=$?
check "GPUs=0,3 without /dev/nvidia3: systemctl start fails (exit $rc)" [ "$rc" != 0 ]
check "GPUs=0,3 without /dev/nvidia3: the agent never ran" [ ! -e /srv/out/gpumissing/done ]
msg=$(journalctl -b -u agent@gpumissing.service -o cat | grep -F "GPUs= needs the device node /dev/nvidia3, which does not exist" | head -1)
check "GPUs=0,3 without /dev/nvidia3: the journal names it ($msg)" [ -n "$msg" ]
[ -n "$msg" ] || diag "$(journalctl -b -u agent@gpumissing.service -o cat; systemctl status agent@gpumissing.service; journalctl -b -o cat | grep -i -B2 -A2 assert | tail -20)"

# --- a sidecar runtime with GPUs=1 ---------------------------------------------------------
systemctl start sidecar-runtime@gpu.service
line=
for _ in $(seq 50); do
        line=$(journalctl -b -u sidecar-runtime@gpu.service -o cat | grep '^DEV:' | head -1)
        [ -n "$line" ] && break
        sleep 0.1
done
check "sidecar GPUs=1: the runtime started ($(systemctl show -P ActiveState sidecar-runtime@gpu.service))" [ -n "$line" ]
check "sidecar GPUs=1: /dev/nvidia1 and /dev/nvidiactl are there ($line)" \
        bash -c "grep -qw nvidia1 <<<'$line' && grep -qw nvidiactl <<<'$line'"
check "sidecar GPUs=1: /dev/nvidia0 and the container's other nodes are not" \
        all '[ -n "$line" ]' 'status_is 1 grep -qw nvidia0 <<<"$line"' 'status_is 1 grep -qw "$(basename $marker)" <<<"$line"'
systemctl stop sidecar-runtime@gpu.service

# --- a sidecar whose model directory is missing ----------------------------------------------
systemctl start sidecar-runtime@nomodel.service 2>/dev/null
rc=$?
check "missing ReadOnlyMount= source: the runtime does not start (exit $rc)" [ "$rc" != 0 ]
msg=$(journalctl -b -u sidecar-runtime@nomodel.service -o cat | grep -F "ReadOnlyMount= source /srv/no-such-models is missing, so nothing is mounted at /models" | head -1)
check "missing ReadOnlyMount= source: the journal names it ($msg)" [ -n "$msg" ]
[ -n "$msg" ] || diag "$(journalctl -b -u sidecar-runtime@nomodel.service -o cat | tail -20)"
systemctl stop sidecar-runtime@nomodel.service 2>/dev/null

systemctl start sidecar-runtime@withmodel.service
check "present ReadOnlyMount= source: the check passes and the runtime runs ($(systemctl show -P ActiveState sidecar-runtime@withmodel.service))" \
        [ "$(systemctl show -P ActiveState sidecar-runtime@withmodel.service)" = active ]
[ "$(systemctl show -P ActiveState sidecar-runtime@withmodel.service)" = active ] ||
        diag "$(journalctl -b -u sidecar-runtime@withmodel.service -o cat | tail -20)"
systemctl stop sidecar-runtime@withmodel.service

tap_done

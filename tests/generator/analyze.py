#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""systemd's own view of what the generator emits, for representative roles and sidecars.

For each role (network modes none, daemon-only, egress, host; a durable role; a role
refused by an admin drop-in; a role of a project with a dependency set, which also gets
cloister-deps@PROJECT.service), the role is generated with the built cloister-generator and
installed into a throwaway root as an administrator's units would be:
  $ROOT/etc/systemd/system/agent@.service             the rendered template
  $ROOT/etc/systemd/system/agent@ROLE.service.d/      the generated drop-in
  $ROOT/etc/systemd/system/*.mount                    the generated mount units
  $ROOT/usr/lib/systemd/system/                       a copy of this host's system units
                                                      (sysinit.target & co. for verify)
  $ROOT/<the template's ExecStart path>               the built cloister-shim
  $ROOT/<its directory>/cloister-stage                the built cloister-stage (ExecStartPre=+)
  $ROOT/<cloister-deps@'s ExecStart path>              the built cloister-deps
Then
  systemd-analyze verify --root=$ROOT UNIT…    must exit 0 and print nothing at all
                                               (it exits 0 on warnings);
  systemd-analyze security --offline=yes --root=$ROOT agent@ROLE.service
                                               "Overall exposure level" must be <= 1.0
                                               for none and daemon-only; reported for
                                               the others.
Each sidecar in SIDECARS gets the same: its sidecar@NAME.socket, sidecar@NAME.service (the
proxy, with the built cloister-sidecar at its ExecStart path) and sidecar-runtime@NAME.service
must verify with no output at all; the proxy's and the runtime's exposure must be <= the
threshold given (reported always).

The man pages named by Documentation= are looked up as they would be once installed: every
*.[1-8] page found under --mandir is offered to man(1) through MANPATH; nothing is
filtered.

Output is TAP. Usage:
  analyze.py --generator BIN --template RENDERED --shim BIN --stage BIN --sidecar BIN --deps BIN [--mandir DIR…] [--keep]
"""

import argparse
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

CONF = """\
[Sandbox]
DefaultNetwork=daemon-only
AllowHostNetwork=yes
Memory=512M
CPUs=1
Tasks=128
TmpSize=32M
ShmSize=16M
Timeout=30min
StopGrace=5s

[Broker]
Socket=/run/cloister/broker.sock
"""

# role name → (role file text, exposure threshold or None, admin drop-ins {relpath: text})
ROLES = {
    "none": ("[Role]\nExec=/usr/bin/true\n\n[Sandbox]\nNetwork=none\n", 1.0, {}),
    "daemon-only": ("[Role]\nExec=/usr/bin/python3 /opt/agents/review.py\n\n[Sandbox]\nNetwork=daemon-only\n", 1.0, {}),
    "egress": ("[Role]\nExec=/usr/bin/true\n\n[Sandbox]\nNetwork=egress\n", None, {}),
    "host": ("[Role]\nExec=/usr/bin/true\n\n[Sandbox]\nNetwork=host\n", None, {}),
    "durable": ("[Role]\nExec=/usr/bin/true\nDurability=durable\n\n[Install]\nWantedBy=multi-user.target\n", None, {}),
    "gpu": ("[Role]\nExec=/usr/bin/true\n\n[Sandbox]\nNetwork=none\nGPUs=0\nJIT=yes\n", None, {}),
    "project": ("[Role]\nExec=/usr/bin/true\nProject=webapp\n\n[Sandbox]\nNetwork=none\n", 1.0, {}),
    "refused": ("[Role]\nExec=/usr/bin/true\n", None,
                {"agent@refused.service.d/10-admin.conf": "[Service]\nPrivateNetwork=no\n"}),
}
SECURITY_MODES = ["none", "daemon-only", "egress", "host", "durable", "gpu", "project"]
# project name → project file; each gets cloister-deps@PROJECT.service (verified, exposure reported)
PROJECTS = {
    "webapp": "[Project]\nWorkspace=/srv/projects/webapp\n\n[Dependencies]\nPip=requirements.lock\n",
}

# sidecar name → (sidecar file text, exposure threshold for the proxy and the runtime). The
# runtime's program must exist in the root for verify: RUNTIME_EXEC is a copy of /bin/true.
RUNTIME_EXEC = "/opt/runtime/bin/serve"
SIDECARS = {
    "inference": ("[Sidecar]\nDescription=representative runtime\n"
                  f"Exec={RUNTIME_EXEC} --host 127.0.0.1 --port 8080\nPort=8080\nHealth=/health\n"
                  "StartTimeout=10min\nMemory=4G\nReadOnlyMount=/srv/models:/models\n"
                  "Environment=HOME=/tmp\n", 1.0),
    "gpu": (f"[Sidecar]\nExec={RUNTIME_EXEC}\nPort=9000\nGPUs=0\nShmSize=1G\nUser=llm\nJIT=yes\n", None),
}


class Tap:
    def __init__(self):
        self.n = 0
        self.failed = 0

    def point(self, ok, desc, diag=None, always=False):
        self.n += 1
        self.failed += not ok
        print(f"{'ok' if ok else 'not ok'} {self.n} - {desc}")
        if diag and (always or not ok):
            self.diag(diag)
        sys.stdout.flush()

    @staticmethod
    def diag(text):
        for line in str(text).rstrip("\n").split("\n"):
            print(f"# {line}")


def unit_escape_path(path):
    out = []
    for i, c in enumerate(path.strip("/")):
        if c == "/":
            out.append("-")
        elif c.isalnum() or c in ":_" or (c == "." and i > 0):
            out.append(c)
        else:
            out.append("\\x%02x" % ord(c))
    return "".join(out)


def template_shim(template):
    with open(template, encoding="utf-8") as f:
        for line in f:
            m = re.match(r"\s*ExecStart=(\S+)", line)
            if m:
                return m.group(1).lstrip("-@:+!")
    raise SystemExit(f"no ExecStart= in {template}")


def host_unit_dir():
    for d in ("/usr/lib/systemd/system", "/lib/systemd/system"):
        if os.path.isfile(os.path.join(d, "sysinit.target")):
            return d
    return None


def man_path(tmp, mandirs):
    """A man hierarchy holding every page found under mandirs, or None if there is none."""
    top = os.path.join(tmp, "man")
    found = False
    for d in mandirs:
        for dirpath, _, filenames in os.walk(d):
            for f in filenames:
                m = re.search(r"\.([1-8])(\.gz)?$", f)
                if m:
                    sec = os.path.join(top, "man" + m.group(1))
                    os.makedirs(sec, exist_ok=True)
                    dst = os.path.join(sec, f)
                    if not os.path.lexists(dst):
                        os.symlink(os.path.abspath(os.path.join(dirpath, f)), dst)
                        found = True
    return top if found else None


# A command the generator runs under (meson test --setup=valgrindgenerator sets it).
WRAPPER = shlex.split(os.environ.get("CLOISTER_TEST_WRAPPER", ""))


def run(cmd, env=None, timeout=120):
    p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def generate(opts, tmp, tap):
    conf = os.path.join(tmp, "config")
    units = os.path.join(tmp, "admin-units")   # the admin's unit directory, as in /etc/systemd/system
    gen = os.path.join(tmp, "generator")
    os.makedirs(os.path.join(conf, "roles"))
    os.makedirs(os.path.join(conf, "sidecars"))
    for name, (text, _) in SIDECARS.items():
        with open(os.path.join(conf, "sidecars", name + ".sidecar"), "w") as f:
            f.write(text)
    os.makedirs(os.path.join(conf, "projects"))
    os.makedirs(units)
    os.makedirs(gen)
    with open(os.path.join(conf, "cloister.conf"), "w") as f:
        f.write(CONF)
    for name, text in PROJECTS.items():
        with open(os.path.join(conf, "projects", name + ".project"), "w") as f:
            f.write(text)
    for name, (text, _, dropins) in ROLES.items():
        with open(os.path.join(conf, "roles", name + ".role"), "w") as f:
            f.write(text)
        for rel, body in dropins.items():
            os.makedirs(os.path.dirname(os.path.join(units, rel)), exist_ok=True)
            with open(os.path.join(units, rel), "w") as f:
                f.write(body)
    env = dict(os.environ, CLOISTER_CONFIG_PATH=conf, SYSTEMD_UNIT_PATH=f"{units}:{gen}",
               SYSTEMD_LOG_TARGET="console")
    rc, out, err = run(WRAPPER + [opts.generator, gen, gen + ".early", gen + ".late"], env=env)
    # Exit status 1: the "refused" role is refused on purpose; nothing else may be.
    unexpected = [l for l in err.splitlines() if "Role refused refuses to start" not in l]
    tap.point(all(os.path.isfile(os.path.join(gen, u)) for n in SIDECARS
                  for u in (f"sidecar@{n}.socket", f"sidecar@{n}.service", f"sidecar-runtime@{n}.service")),
              "cloister-generator writes the three units of each representative sidecar", f"stderr: {err}")
    tap.point(rc == 1 and not unexpected,
              "cloister-generator generates the representative roles (only \"refused\" refused)",
              f"exit {rc}\nstdout: {out}\nstderr: {err}")
    return units, gen


def install_binary(root, path, src):
    dst = os.path.join(root, path.lstrip("/"))
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    shutil.copyfile(src, dst)
    os.chmod(dst, 0o755)


def sidecar_proxy_path(gen):
    for name in SIDECARS:
        with open(os.path.join(gen, f"sidecar@{name}.service"), encoding="utf-8") as f:
            for line in f:
                m = re.match(r"ExecStart=(\S+)", line)
                if m:
                    return m.group(1)
    raise SystemExit("no ExecStart= in the generated sidecar proxy")


def build_root(opts, tmp, units, gen, shim_path, tap):
    root = os.path.join(tmp, "root")
    etc = os.path.join(root, "etc/systemd/system")
    os.makedirs(etc)
    host = host_unit_dir()
    if host:
        shutil.copytree(host, os.path.join(root, "usr/lib/systemd/system"), symlinks=True)
    shutil.copyfile(opts.template, os.path.join(etc, "agent@.service"))
    for src_top in (units, gen):
        for entry in os.listdir(src_top):
            src = os.path.join(src_top, entry)
            if os.path.isdir(src) and not os.path.islink(src):
                shutil.copytree(src, os.path.join(etc, entry), symlinks=True, dirs_exist_ok=True)
            elif os.path.islink(src):
                os.symlink(os.readlink(src), os.path.join(etc, entry))
            else:
                shutil.copyfile(src, os.path.join(etc, entry))
    install_binary(root, shim_path, opts.shim)
    install_binary(root, os.path.join(os.path.dirname(shim_path), "cloister-stage"), opts.stage)
    install_binary(root, sidecar_proxy_path(gen), opts.sidecar)
    install_binary(root, RUNTIME_EXEC, shutil.which("true") or "/bin/true")
    # the start checks of ReadOnlyMount= sources and GPU nodes (ExecStartPre=/bin/sh -c …)
    install_binary(root, "/bin/sh", os.path.realpath(shutil.which("sh") or "/bin/sh"))
    for name in PROJECTS:
        install_binary(root, template_shim(os.path.join(gen, f"cloister-deps@{name}.service")), opts.deps)
    if not host:
        tap.diag("no system unit directory with sysinit.target on this host; verify will say so")
    return root


def security(tap, analyze, root, env, unit, what, threshold):
    rc, out, err = run([analyze, "security", "--offline=yes", f"--root={root}", "--no-pager", unit], env=env)
    m = re.search(r"Overall exposure level for " + re.escape(unit) + r": (\d+\.\d+)", out)
    score = float(m.group(1)) if m else None
    exposed = "\n".join(l for l in out.splitlines() if l.startswith("✗"))
    desc = f"systemd-analyze security {unit} ({what}): exposure {m.group(1) if m else '?'}"
    if threshold is None:
        tap.point(rc == 0 and score is not None, f"{desc} (reported, no threshold)",
                  f"exit {rc}\n{exposed}\n{err}", always=True)
    else:
        ok = rc == 0 and score is not None and score <= threshold
        tap.point(ok, f"{desc} <= {threshold}",
                  f"exit {rc}\n{out}\n{err}" if not ok else f"exposed:\n{exposed}", always=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--generator", required=True)
    ap.add_argument("--template", required=True)
    ap.add_argument("--shim", required=True)
    ap.add_argument("--stage", required=True, help="the built cloister-stage")
    ap.add_argument("--sidecar", required=True, help="the built cloister-sidecar")
    ap.add_argument("--deps", required=True, help="the built cloister-deps")
    ap.add_argument("--mandir", action="append", default=[])
    ap.add_argument("--keep", action="store_true")
    opts = ap.parse_args()
    for a in ("generator", "template", "shim", "stage", "sidecar", "deps"):
        setattr(opts, a, os.path.abspath(getattr(opts, a)))

    analyze = shutil.which("systemd-analyze")
    if not analyze:
        print("1..0 # SKIP systemd-analyze not found")
        return 0

    tap = Tap()
    tmp = tempfile.mkdtemp(prefix="cloister-analyze-")
    try:
        rc, version, _ = run([analyze, "--version"])
        tap.diag(version.splitlines()[0] if version else "systemd-analyze --version failed")
        shim_path = template_shim(opts.template)
        units, gen = generate(opts, tmp, tap)
        root = build_root(opts, tmp, units, gen, shim_path, tap)

        env = dict(os.environ, SYSTEMD_PAGER="", SYSTEMD_COLORS="0", LC_ALL="C.UTF-8")
        env.pop("SYSTEMD_UNIT_PATH", None)
        mp = man_path(tmp, opts.mandir)
        if mp:
            env["MANPATH"] = mp + ":"   # a trailing ":" keeps the system's man path too

        for name in ROLES:
            unit = f"agent@{name}.service"
            rc, out, err = run([analyze, "verify", f"--root={root}", unit], env=env)
            tap.point(rc == 0 and not out and not err,
                      f"systemd-analyze verify {unit}: exit 0, no output (exit {rc})",
                      f"stdout:\n{out}\nstderr:\n{err}")
            if os.path.isfile(os.path.join(gen, unit_escape_path('/run/cloister/tmp/' + name) + ".mount")):
                mounts = [unit_escape_path(f'/run/cloister/{w}/{name}') + ".mount" for w in ("tmp", "var-tmp")]
                rc, out, err = run([analyze, "verify", f"--root={root}"] + mounts, env=env)
                tap.point(rc == 0 and not out and not err,
                          f"systemd-analyze verify {' '.join(mounts)}: exit 0, no output (exit {rc})",
                          f"stdout:\n{out}\nstderr:\n{err}")

        for name, (_, threshold) in SIDECARS.items():
            units = [f"sidecar@{name}.socket", f"sidecar@{name}.service", f"sidecar-runtime@{name}.service"]
            rc, out, err = run([analyze, "verify", f"--root={root}"] + units, env=env)
            tap.point(rc == 0 and not out and not err,
                      f"systemd-analyze verify {' '.join(units)}: exit 0, no output (exit {rc})",
                      f"stdout:\n{out}\nstderr:\n{err}")
            for unit in units[1:]:
                security(tap, analyze, root, env, unit, f"sidecar {name}", threshold)
        for name in PROJECTS:
            unit = f"cloister-deps@{name}.service"
            rc, out, err = run([analyze, "verify", f"--root={root}", unit], env=env)
            tap.point(rc == 0 and not out and not err,
                      f"systemd-analyze verify {unit}: exit 0, no output (exit {rc})",
                      f"stdout:\n{out}\nstderr:\n{err}")
            rc, out, err = run([analyze, "security", "--offline=yes", f"--root={root}", "--no-pager", unit], env=env)
            m = re.search(r"Overall exposure level for " + re.escape(unit) + r": (\d+\.\d+)", out)
            exposed = "\n".join(l for l in out.splitlines() if l.startswith("✗"))
            tap.point(rc == 0 and m is not None,
                      f"systemd-analyze security {unit} (the egress step): exposure {m.group(1) if m else '?'} (reported, no threshold)",
                      f"exit {rc}\n{exposed}\n{err}", always=True)

        for name in SECURITY_MODES:
            security(tap, analyze, root, env, f"agent@{name}.service", f"mode {name}", ROLES[name][1])
    finally:
        if opts.keep:
            tap.diag(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    print(f"1..{tap.n}")
    return 1 if tap.failed else 0


if __name__ == "__main__":
    sys.exit(main())

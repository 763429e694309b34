#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The agent of tests/integration/suite-deps.sh: runs in a sealed agent@ unit of a project
with a Pip= set and reports, one KEY=VALUE a line in /output/report.txt, what it sees:
the materialised package, its environment and which of its paths are writable."""
import errno
import os

report = {}


def attempt_write(key, path):
    try:
        with open(path, "w") as f:
            f.write("x")
        report[key] = "ok"
    except OSError as e:
        report[key] = errno.errorcode.get(e.errno, str(e.errno))


try:
    import cloisterdemo
    report["import"] = cloisterdemo.VALUE
    report["import_file"] = cloisterdemo.__file__
except Exception as e:  # noqa: BLE001 - reported, not raised
    report["import"] = f"failed: {e!r}"
report["pythonpath"] = os.environ.get("PYTHONPATH", "")
report["node_path"] = os.environ.get("NODE_PATH", "")
report["network"] = os.environ.get("CLOISTER_NETWORK", "")
report["deps_readonly"] = "yes" if os.statvfs("/opt/cloister/deps/pip").f_flag & os.ST_RDONLY else "no"
attempt_write("write_deps", "/opt/cloister/deps/pip/planted.py")
attempt_write("write_deps_existing", "/opt/cloister/deps/pip/cloisterdemo.py")
report["cache_visible"] = "yes" if os.path.exists("/var/cache/cloister/deps") else "no"
attempt_write("write_workspace", "/workspace/agent-was-here")
attempt_write("write_workspace_git", "/workspace/.git/agent-was-here")
report["done"] = "yes"
with open("/output/report.txt", "w") as f:
    for k, v in report.items():
        f.write(f"{k}={v}\n")

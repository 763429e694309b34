#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""policy-keys: every unit-file key systemd knows is classified, for drop-ins, as either
closed (closed-surfaces.list) or allowed (dropin-allowed.list).

  1. every key of systemd-keys.list (systemd 252 and the newer ones up to and past 257)
     is in exactly one of the two lists;
  2. the host's own systemd (--dump-configuration-items) knows no key of the unit types
     cloister depends on that systemd-keys.list lacks: a systemd upgrade that adds one
     fails here until it is classified.

TAP. Usage: check-keys.py POLICY-DIR [SYSTEMD-BINARY]"""

import os
import subprocess
import sys

SECTIONS = {"Unit", "Service", "Socket", "Mount", "Install"}


def words(path, n):
    out = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            w = line.split()
            if w and not w[0].startswith("#"):
                out.append(tuple(w[:n]) if n > 1 else w[0])
    return out


def main():
    policy = sys.argv[1]
    systemd = sys.argv[2] if len(sys.argv) > 2 else "/usr/lib/systemd/systemd"
    known = words(os.path.join(policy, "systemd-keys.list"), 2)
    closed = dict(words(os.path.join(policy, "closed-surfaces.list"), 2))
    allowed = set(words(os.path.join(policy, "dropin-allowed.list"), 1))
    n, failed = 0, 0

    def point(ok, desc, diag=()):
        nonlocal n, failed
        n += 1
        failed += not ok
        print(("ok" if ok else "not ok") + " %d - %s" % (n, desc))
        for d in diag:
            print("# " + d)

    for since in ("252", "newer"):
        keys = [k for k, s in known if s == since]
        missing = [k for k in keys if k not in closed and k not in allowed]
        point(keys and not missing,
              "every key systemd %s knows (%d) is closed or allowed in drop-ins" %
              ("252" if since == "252" else "added since 252, up to and past 257", len(keys)),
              ["not classified: " + k for k in missing])
    both = sorted(set(closed) & allowed)
    point(not both, "no key is both closed and allowed", both)
    for key in ("OpenFile", "ImportCredential", "KillMode", "SendSIGKILL", "TimeoutStopSec", "Restart",
                "PrivateUsers", "ProtectControlGroups", "Environment", "What", "Options", "ListenStream"):
        point(key in closed, "%s= is closed (%s)" % (key, closed.get(key, "not closed")))

    try:
        dump = subprocess.run([systemd, "--dump-configuration-items"], capture_output=True,
                              text=True, timeout=30, check=True).stdout
    except (OSError, subprocess.SubprocessError) as e:
        print("# the host's systemd cannot list its keys (%s)" % e)
        print("not ok %d - the host's systemd lists its keys" % (n + 1))
        print("1..%d" % (n + 1))
        return 1
    section, host = None, set()
    for line in dump.splitlines():
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1]
        elif "=" in line and section in SECTIONS:
            host.add(line.split("=", 1)[0])
    unknown = sorted(host - {k for k, _ in known})
    point(host and not unknown,
          "the host's systemd knows no unit key (of %d) that systemd-keys.list lacks" % len(host),
          ["add to policy/systemd-keys.list and classify: " + k for k in unknown])
    print("1..%d" % n)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

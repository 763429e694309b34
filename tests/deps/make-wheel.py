#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Writes a minimal pure-Python wheel NAME-VERSION-py3-none-any.whl into OUTDIR (module
NAME.py with VALUE = "hello from NAME VERSION") and prints its sha256: test input for
cloister-deps without any package index. Deterministic: fixed timestamps, sorted entries.

  make-wheel.py NAME VERSION OUTDIR
"""
import base64
import hashlib
import os
import sys
import zipfile

name, version, outdir = sys.argv[1], sys.argv[2], sys.argv[3]
info = f"{name}-{version}.dist-info"
files = {
    f"{name}.py": f"VALUE = 'hello from {name} {version}'\n",
    f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n",
    f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: cloister-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
}
record = []
for path, content in files.items():
    digest = base64.urlsafe_b64encode(hashlib.sha256(content.encode()).digest()).rstrip(b"=").decode()
    record.append(f"{path},sha256={digest},{len(content.encode())}")
record.append(f"{info}/RECORD,,")
files[f"{info}/RECORD"] = "\n".join(record) + "\n"
out = os.path.join(outdir, f"{name}-{version}-py3-none-any.whl")
with zipfile.ZipFile(out, "w") as z:
    for path, content in files.items():
        z.writestr(zipfile.ZipInfo(path, date_time=(2020, 1, 1, 0, 0, 0)), content)
with open(out, "rb") as f:
    print(hashlib.sha256(f.read()).hexdigest())

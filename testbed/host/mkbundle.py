#!/usr/bin/env python3
"""Pack qlab's host tool and a run's files into one executable zip (a Python
zipapp), which Ansible's `script` module sends and runs in one step:

    mkbundle.py OUT.pyz FILE...        (on the controller; stdlib only)

OUT.pyz holds qlab_tb_host.py (beside this file), each FILE under its own
name, and a __main__.py that runs the host tool; on the host,
`python3 OUT.pyz STEP ...` is `qlab_tb_host.py STEP ...`, and its steps find
the files in the zip. Members carry a fixed date, so the same files make
the same bundle."""

from __future__ import annotations

import os
import sys
import zipfile

MAIN = "import sys\nimport qlab_tb_host\n\nsys.exit(qlab_tb_host.main())\n"


def main(argv: list[str]) -> int:
    if len(argv) < 1:
        print("usage: mkbundle.py OUT.pyz FILE...", file=sys.stderr)
        return 2
    out, files = argv[0], argv[1:]
    members = {"__main__.py": MAIN.encode()}
    for f in [os.path.join(os.path.dirname(os.path.abspath(__file__)), "qlab_tb_host.py"), *files]:
        with open(f, "rb") as fh:
            members[os.path.basename(f)] = fh.read()
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    tmp = f"{out}.tmp"
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as z:
        for name in sorted(members):
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            z.writestr(info, members[name])
    os.replace(tmp, out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

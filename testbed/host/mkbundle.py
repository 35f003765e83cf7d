#!/usr/bin/env python3
"""Pack qlab's host tool and a run's files into one executable zip (a Python
zipapp), which Ansible's `script` module sends and runs in one step:

    mkbundle.py OUT.pyz [--tree NAME DIR] FILE...    (on the controller; stdlib only)

OUT.pyz holds qlab_tb_host.py (beside this file), each FILE under its own
name, each file below a --tree's DIR as NAME/<its path in DIR> (the DKMS
source tree), and a __main__.py that runs the host tool; on the host,
`python3 OUT.pyz STEP ...` is `qlab_tb_host.py STEP ...`, and its steps find
the files in the zip. Members carry a fixed date, so the same files make
the same bundle."""

from __future__ import annotations

import os
import sys
import zipfile

MAIN = "import sys\nimport qlab_tb_host\n\nsys.exit(qlab_tb_host.main())\n"


def main(argv: list[str]) -> int:
    usage = "usage: mkbundle.py OUT.pyz [--tree NAME DIR] FILE..."
    if len(argv) < 1:
        print(usage, file=sys.stderr)
        return 2
    out, rest = argv[0], argv[1:]
    files, trees = [], []
    while rest:
        if rest[0] == "--tree":
            if len(rest) < 3 or not os.path.isdir(rest[2]):
                print(f"mkbundle.py: --tree needs a NAME and a directory ({usage})", file=sys.stderr)
                return 2
            trees.append((rest[1], rest[2]))
            rest = rest[3:]
        else:
            files.append(rest.pop(0))
    members = {"__main__.py": MAIN.encode()}
    for f in [os.path.join(os.path.dirname(os.path.abspath(__file__)), "qlab_tb_host.py"), *files]:
        with open(f, "rb") as fh:
            members[os.path.basename(f)] = fh.read()
    for name, top in trees:
        for d, _, names in os.walk(top):
            for n in names:
                path = os.path.join(d, n)
                with open(path, "rb") as fh:
                    members[f"{name}/{os.path.relpath(path, top)}"] = fh.read()
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

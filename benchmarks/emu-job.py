"""One job of a scenario's quick profile on an emulating backend (mininet,
testbed, mnkernel), run by itself, and what it says of its timing: wall
time, valid and why not, the fidelity record and, where the runner times
its phases (mnkernel: `phases_s`, seconds from the helper's start to the
network built, the bottleneck installed, the flows armed, the run ended,
the flows stopped), those.

    .venv/bin/python benchmarks/emu-job.py SCENARIO INDEX BACKEND OUTDIR

e.g. `benchmarks/emu-job.py scenarios/ncq-conf/emu.yaml 7 mnkernel /tmp/j7`
(job 7: NCQ at 20 flows, seed 2). The testbed must be up for testbed and
mnkernel, nothing else running. Used for docs/benchmarks.md, "mnkernel",
2026-11-28.
"""

import json
import sys
import time
from pathlib import Path

from qlab import runjob
from qlab import scenario as sc
from qlab.backends.base import BackendError


def main() -> int:
    if len(sys.argv) != 5:
        print(__doc__, file=sys.stderr)
        return 2
    path, index, backend, out = Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3], Path(sys.argv[4])
    jobs = sc.expand(sc.load(path), "quick", [backend])
    job = jobs[index]
    out.mkdir(parents=True, exist_ok=True)
    plan = out / "plan.json"
    plan.write_text(json.dumps(job.spec), encoding="utf-8")
    t0 = time.monotonic()
    try:
        run = runjob.run_job(plan, out / "run", out / "run.log")
    except BackendError as exc:
        print(f"failed after {time.monotonic() - t0:.0f} s: {exc}")
        return 1
    print(
        f"job {index} of {len(jobs)} ({job.spec['point']}, seed {job.spec['seed']}), "
        f"{len(job.spec['flows'])} flows"
    )
    print(f"wall {time.monotonic() - t0:.0f} s; valid {run['valid']} {run['invalid_reasons']}")
    print(f"fidelity {json.dumps(run.get('fidelity', {}), sort_keys=True)}")
    if run.get("phases_s"):
        print(f"phases_s {json.dumps(run['phases_s'])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

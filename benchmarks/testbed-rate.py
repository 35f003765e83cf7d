"""The rate the testbed's router holds: one plan with its bottleneck's rate
replaced, run through the testbed backend (the testbed up, nothing else
running), and the run's own rate check printed.

    .venv/bin/python benchmarks/testbed-rate.py PLAN RATE_BPS OUTDIR

PLAN is a testbed plan (e.g. results/jobs/ncq-conf/emu/testbed/ncq_flows-20/
seed-1.json after a reproduction with the testbed up). Prints the rate,
valid, the reasons, the rate while the discipline held a queue with its
bracket (Mb/s), the time judged, the run's end and its wall time. Used for
docs/benchmarks.md, "The virtual testbed", 2026-11-28.
"""

import json
import sys
import time
from pathlib import Path

from qlab import runjob
from qlab.backends.base import BackendError


def main() -> int:
    if len(sys.argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    plan = json.loads(Path(sys.argv[1]).read_text())
    rate = int(sys.argv[2])
    for link in plan["links"]:
        if link["id"] == "bottleneck":
            link["rate_bps"] = rate
    out = Path(sys.argv[3])
    out.mkdir(parents=True, exist_ok=True)
    (out / "plan.json").write_text(json.dumps(plan))
    t0 = time.monotonic()
    try:
        run = runjob.run_job(out / "plan.json", out / "run", out / "run.log")
    except BackendError as e:
        print(f"testbed-rate: the run failed: {e}", file=sys.stderr)
        return 1
    f = run["fidelity"]
    print(
        rate,
        "valid",
        run["valid"],
        run["invalid_reasons"],
        "rate",
        *(round(f.get(k, 0) / 1e6, 2) for k in ("achieved_rate_bps", "low_bps", "high_bps")),
        "busy",
        f.get("busy_s"),
        "end",
        run["sim_end_s"],
        "wall",
        round(time.monotonic() - t0),
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

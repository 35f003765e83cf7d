"""Plans for the ns-3 runner's tests, made by qlab itself: a scenario file
expanded for the ns3 backend (qlab.scenario, qlab.plan), one series, sweep
point and seed, checked by qlab.plan.check (docs/jobs.md).

    testplan.py SCENARIO.yaml SERIES OUT.json [--profile quick] [--point N] [--seed N]
                [--flows N] [--packets] [--ns3-fifo]

--flows N sets workload.flows (the scenario's sweep over it is dropped);
--packets turns the packet trace on; --ns3-fifo replaces every droptail
queue by ns-3's own FifoQueueDisc with the same limit (the reference the
droptail adapter is compared with).
benchmarks/ns3-scaling.py and benchmarks/ns3-adapter.sh use make_plan too.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from qlab import plan as plans  # noqa: E402
from qlab import scenario as sc  # noqa: E402


def make_plan(
    scenario: str | Path,
    series: str,
    *,
    profile: str = "quick",
    point: int = 0,
    seed: int | None = None,
    flows: int | None = None,
    packets: bool = False,
    ns3_fifo: bool = False,
) -> dict[str, Any]:
    """The plan of one run of a scenario, checked by qlab.plan.check."""
    scen = sc.load(scenario)
    if flows is not None:
        scen.doc["workload"]["flows"] = flows
        scen.doc.get("sweep", {}).pop("flows", None)
        for prof in (scen.doc.get("profiles") or {}).values():
            (prof.get("override") or {}).get("sweep", {}).pop("flows", None)
    jobs = [j for j in sc.expand(scen, profile, ["ns3"]) if j.series == series]
    chosen = list(dict.fromkeys(j.point for j in jobs))[point]
    jobs = [j for j in jobs if j.point == chosen and (seed is None or j.seed == seed)]
    spec = jobs[0].spec
    if packets:
        spec["trace"]["packets"] = True
    if ns3_fifo:
        for link in spec["links"]:
            for node, q in link["queues"].items():
                if q["kind"] == "droptail":
                    limit = q["params"]["limit_pkts"]
                    link["queues"][node] = {"kind": "ns3-fifo", "params": {"limit_pkts": limit}}
    problems = plans.check(spec)
    if problems:
        raise SystemExit(f"{scenario}: the plan fails qlab's checks: " + "; ".join(problems[:5]))
    return spec


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("scenario")
    ap.add_argument("series")
    ap.add_argument("out")
    ap.add_argument("--profile", default="quick")
    ap.add_argument("--point", type=int, default=0, help="index of the sweep point")
    ap.add_argument("--seed", type=int)
    ap.add_argument("--flows", type=int)
    ap.add_argument("--packets", action="store_true")
    ap.add_argument("--ns3-fifo", action="store_true")
    args = ap.parse_args()
    spec = make_plan(
        args.scenario,
        args.series,
        profile=args.profile,
        point=args.point,
        seed=args.seed,
        flows=args.flows,
        packets=args.packets,
        ns3_fifo=args.ns3_fifo,
    )
    Path(args.out).write_text(json.dumps(spec, indent=1, sort_keys=True) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()

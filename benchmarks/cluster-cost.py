"""What a reproduction costs on a cluster, per paper: runs and SLURM jobs per
profile, and CPU-hours, measured from a results tree's run.json and
extrapolated to the profiles that were not run.

    .venv/bin/python benchmarks/cluster-cost.py --results RESULTS [--measured quick] [--group 40]

RESULTS is a complete reproduction of the --measured profile (e.g. `make
reproduce RESULTS=...`). For every scenario and backend it takes the runs'
CPU time (run.json runner_cpu_s, the simulator process) plus qlab's own
per-job cost (PER_JOB_CPU_S: `qlab run-job` and Snakemake, docs/benchmarks.md),
and scales the mean per run to every profile's number of runs. Where a
profile's plans are larger than the measured ones (more flows, a longer
duration: the columns `flows x` and `duration x`), the per-run cost grows
with them, and the estimate says so (`scale differs`). It also prints the
largest wall time and memory of a run per backend, from which
workflows/profiles/slurm sets the simulate rule's runtime and mem_mb, and the
number of SLURM jobs the simulations make at --group simulations per job.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from qlab import backends as qlab_backends  # noqa: E402
from qlab import scenario as sc  # noqa: E402

# `qlab run-job`'s Python (0.26 CPU-s) and Snakemake's bookkeeping (about 0.1)
# per simulation, docs/benchmarks.md ("Orchestration")
PER_JOB_CPU_S = 0.36


def measured(results: Path) -> dict[tuple[str, str], list[dict]]:
    out: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for run_json in results.rglob("seed-*/run.json"):
        try:
            run = json.loads(run_json.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        out[(run.get("scenario"), run.get("backend"))].append(run)
    return out


def plan_size(jobs: list[sc.Job]) -> tuple[float, float]:
    """Mean flows per plan and mean duration (s) of a scenario's plans."""
    if not jobs:
        return 0.0, 0.0
    return (
        statistics.mean(len(j.spec["flows"]) for j in jobs),
        statistics.mean(j.spec["duration_ns"] / 1e9 for j in jobs),
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--results", type=Path, required=True)
    ap.add_argument("--measured", default="quick", help="the profile RESULTS reproduced")
    ap.add_argument("--profiles", nargs="+", default=["quick", "paper"])
    ap.add_argument("--group", type=int, default=40, help="simulations per SLURM job (group-components)")
    args = ap.parse_args()

    runs = measured(args.results)
    scenarios = [s for s in sc.load_all() if not s.abstract]
    simulators = [n for n in qlab_backends.names() if not qlab_backends.get(n).realtime]
    per_paper: dict[tuple[str, str], dict[str, float]] = defaultdict(lambda: defaultdict(float))
    notes: list[str] = []
    for scen in scenarios:
        jobs = {p: sc.expand(scen, p, simulators) for p in {args.measured, *args.profiles}}
        for backend in sorted({j.backend for js in jobs.values() for j in js}):
            mine = {p: [j for j in js if j.backend == backend] for p, js in jobs.items()}
            got = runs.get((scen.id, backend), [])
            cpu = [r["runner_cpu_s"] for r in got if isinstance(r.get("runner_cpu_s"), (int, float))]
            mean_cpu = (statistics.mean(cpu) if cpu else math.nan) + PER_JOB_CPU_S
            base_flows, base_dur = plan_size(mine[args.measured])
            for p in args.profiles:
                flows, dur = plan_size(mine[p])
                row = per_paper[(scen.paper, p)]
                row["runs"] += len(mine[p])
                row["cpu_s"] += mean_cpu * len(mine[p]) if cpu else 0.0
                if mine[p] and not cpu:
                    row["unmeasured_runs"] += len(mine[p])
                fx = flows / base_flows if base_flows else math.nan
                dx = dur / base_dur if base_dur else math.nan
                if mine[p] and cpu and (abs(fx - 1) > 0.01 or abs(dx - 1) > 0.01):
                    row["scaled_runs"] += len(mine[p])
                    notes.append(f"{scen.id} {backend} {p}: flows x {fx:.2f}, duration x {dx:.2f}")
            if got:
                wall = max(r.get("wall_time_s") or 0 for r in got)
                rss = [
                    r["runner_max_rss_mb"]
                    for r in got
                    if isinstance(r.get("runner_max_rss_mb"), (int, float))
                ]
                print(
                    f"measured {scen.id} {backend}: {len(got)} runs, {sum(cpu):.1f} CPU-s, "
                    f"largest wall {wall:.2f} s, largest RSS {max(rss) if rss else 'n/a'} MB",
                    file=sys.stderr,
                )

    print(
        "| paper | profile | runs | SLURM jobs of simulations | CPU-h (estimate) | runs not measured "
        "| runs of larger plans |"
    )
    print("|---|---|---|---|---|---|---|")
    for (paper, p), row in sorted(per_paper.items()):
        print(
            f"| {paper} | {p} | {int(row['runs'])} | {math.ceil(row['runs'] / args.group)} | "
            f"{row['cpu_s'] / 3600:.2f} | {int(row['unmeasured_runs'])} | {int(row['scaled_runs'])} |"
        )
    for p in args.profiles:
        total = [r for (_, q), r in per_paper.items() if q == p]
        print(
            f"| all | {p} | {int(sum(r['runs'] for r in total))} | "
            f"{sum(math.ceil(r['runs'] / args.group) for r in total)} | "
            f"{sum(r['cpu_s'] for r in total) / 3600:.2f} | "
            f"{int(sum(r['unmeasured_runs'] for r in total))} | {int(sum(r['scaled_runs'] for r in total))} |"
        )
    if notes:
        print("\nPlans of another size than the measured profile's (the estimate scales per run):")
        for line in notes:
            print(f"- {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""What a profile costs, estimated from a results tree that was measured.

    .venv/bin/python benchmarks/profile-cost.py RESULTS [--profile paper] [--by scenario|paper]

RESULTS is a tree made by `make reproduce` (any profile): every run's
`run.json` records the CPU seconds of its runner process (`runner_cpu_s`).
The script expands the target profile's jobs and prices each one:

- measured: a run of the same scenario, backend, series and sweep point
  exists in RESULTS (its seeds' mean CPU);
- fitted: the same scenario, backend and series were measured at two or more
  values of its one numeric sweep variable: a least-squares line in that
  variable (simulation cost is linear in flows, docs/benchmarks.md), or for
  points beyond the measured range the line extrapolated (said so);
- scaled: otherwise the mean CPU of the scenario and backend's measured runs;
- unpriced: the scenario and backend were not measured at all.

A profile that changes a scenario's duration is priced in proportion to it
(simulation cost is linear in simulated time at a steady load); runs that
stop when their sources are done are priced as measured, and the output
names both kinds.
Prints a table per scenario and backend, and the total in CPU-hours.
"""

from __future__ import annotations

import argparse
import collections
import json
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from qlab import scenario as sc  # noqa: E402


def measured_runs(results: Path) -> dict[tuple, list[float]]:
    """(scenario, backend, series, point) -> the runs' runner CPU seconds."""
    out: dict[tuple, list[float]] = collections.defaultdict(list)
    for f in results.rglob("run.json"):
        if "jobs" in f.relative_to(results).parts[:1]:
            continue
        try:
            run = json.loads(f.read_text())
        except (OSError, ValueError):
            continue
        cpu = run.get("runner_cpu_s")
        if cpu is None or not run.get("valid", True):
            continue
        key = (run["scenario"], run["backend"], run["series"], run["point"])
        out[key].append(float(cpu))
    return out


def line(xs: list[float], ys: list[float]) -> tuple[float, float]:
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sxx
    return my - b * mx, b


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("results", type=Path, help="a measured results tree")
    ap.add_argument("--profile", default="paper", choices=sc.PROFILES)
    ap.add_argument(
        "--measured-profile",
        default="quick",
        choices=sc.PROFILES,
        help="the profile RESULTS was made with (to flag longer runs)",
    )
    ap.add_argument("--by", default="scenario", choices=["scenario", "paper"])
    args = ap.parse_args()
    if not args.results.is_dir():
        print(f"profile-cost: {args.results}: no such results directory", file=sys.stderr)
        return 2
    runs = measured_runs(args.results)
    by_point = {k: statistics.fmean(v) for k, v in runs.items()}
    by_scenario: dict[tuple, list[float]] = collections.defaultdict(list)
    for (scen, backend, _series, _point), cpus in runs.items():
        by_scenario[(scen, backend)] += cpus

    rows: dict[tuple, dict] = collections.defaultdict(lambda: collections.Counter())
    longer: set[str] = set()
    stretched: set[str] = set()
    for s in sc.load_all():
        if s.abstract:
            continue
        target = sc.resolve(s, args.profile)
        measured = sc.resolve(s, args.measured_profile)
        stretch = 1.0
        if float(target["duration_s"]) != float(measured["duration_s"]):
            if target.get("stop_when_done"):
                longer.add(s.id)
            else:
                stretch = float(target["duration_s"]) / float(measured["duration_s"])
                stretched.add(f"{s.id} x{stretch:g}")
        sweep_vars = list(target.get("sweep") or {})
        for job in sc.expand(s, args.profile):
            key = (s.id, job.backend)
            row = rows[(s.paper if args.by == "paper" else s.id, job.backend)]
            row["runs"] += 1
            exact = by_point.get((s.id, job.backend, job.series, job.point))
            if exact is not None:
                row["cpu"] += exact * stretch
                row["measured"] += 1
                continue
            if len(sweep_vars) == 1:
                var = sweep_vars[0]
                pts = [
                    (float(runs_key[3].rsplit(f"{var}-", 1)[1]), cpu)
                    for runs_key, cpu in by_point.items()
                    if runs_key[:3] == (s.id, job.backend, job.series) and f"_{var}-" in runs_key[3]
                ]
                xs = sorted({x for x, _ in pts})
                value = job.spec["point_values"].get(var)
                if len(xs) >= 2 and isinstance(value, (int, float)):
                    a, b = line([x for x, _ in pts], [c for _, c in pts])
                    row["cpu"] += max(a + b * float(value), min(c for _, c in pts)) * stretch
                    row["extrapolated" if not xs[0] <= value <= xs[-1] else "fitted"] += 1
                    continue
            if by_scenario.get(key):
                row["cpu"] += statistics.fmean(by_scenario[key]) * stretch
                row["scaled"] += 1
            else:
                row["unpriced"] += 1

    print(f"profile {args.profile}, priced from {args.results} ({args.measured_profile} profile)")
    header = (
        f"{'scenario' if args.by == 'scenario' else 'paper':34s} {'backend':8s} {'runs':>6s} "
        f"{'CPU-h':>8s} {'measured':>8s} {'fitted':>7s} {'extrap.':>7s} {'scaled':>7s} {'unpriced':>8s}"
    )
    print(header)
    total_runs, total_cpu, unpriced = 0, 0.0, 0
    for (name, backend), r in sorted(rows.items(), key=lambda kv: -kv[1]["cpu"]):
        print(
            f"{name:34s} {backend:8s} {r['runs']:6d} {r['cpu'] / 3600:8.2f} {r['measured']:8d} "
            f"{r['fitted']:7d} {r['extrapolated']:7d} {r['scaled']:7d} {r['unpriced']:8d}"
        )
        total_runs += r["runs"]
        total_cpu += r["cpu"]
        unpriced += r["unpriced"]
    print(f"{'total':34s} {'':8s} {total_runs:6d} {total_cpu / 3600:8.2f}   ({unpriced} runs unpriced)")
    if stretched:
        print(
            f"durations differ from {args.measured_profile}'s, CPU scaled by their ratio: "
            f"{', '.join(sorted(stretched))}"
        )
    if longer:
        print(
            f"runs that stop when their sources are done, of another length than in {args.measured_profile} "
            f"(priced at the measured length): {', '.join(sorted(longer))}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())

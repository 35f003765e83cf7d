#!/usr/bin/env python3
"""What a profile costs, estimated from a results tree that was measured.

    .venv/bin/python benchmarks/profile-cost.py RESULTS... [--profile paper] [--by scenario|paper]

RESULTS is a tree made by `make reproduce` (any profile) from these scenario
files: every run's `run.json` records the CPU seconds of its runner process
(`runner_cpu_s`).
The script expands the target profile's jobs and prices each one from the
measured runs of the same scenario, backend and series (of the scenario and
backend if that series was not measured), using the packets a run carries:
what it offers (`qlab.scenario.estimate_packets`), at most what a
dumbbell's bottleneck lets through in the run's time (simulation cost is
linear in packets and flows, docs/benchmarks.md):

- measured: that very point was measured (same offered packets and
  duration): the mean CPU of its seeds;
- fitted / extrapolated: a least-squares line of CPU in offered packets
  through the measured points, inside or beyond their range;
- scaled: one size was measured: in proportion to the packets offered, or
  for the same packets (bulk tasks) to the simulated time;
- unpriced: nothing of the scenario and backend was measured (emulation
  runs report no runner CPU).

Prints a table per scenario and backend, and the total in CPU-hours.
"""

from __future__ import annotations

import argparse
import collections
import copy
import json
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from qlab import scenario as sc  # noqa: E402

# a packet's size for what a bottleneck carries (bulk TCP segments, mostly)
CARRIED_PACKET_BYTES = 1000


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
    ap.add_argument("results", type=Path, nargs="+", help="measured results trees (a later one wins a run)")
    ap.add_argument("--profile", default="paper", choices=sc.PROFILES)
    ap.add_argument(
        "--measured-profile",
        default="quick",
        choices=sc.PROFILES,
        help="the profile RESULTS was made with (to flag longer runs)",
    )
    ap.add_argument("--by", default="scenario", choices=["scenario", "paper"])
    args = ap.parse_args()
    runs: dict[tuple, list[float]] = {}
    for results in args.results:
        if not results.is_dir():
            print(f"profile-cost: {results}: no such results directory", file=sys.stderr)
            return 2
        runs.update(measured_runs(results))
    by_point = {k: statistics.fmean(v) for k, v in runs.items()}

    rows: dict[tuple, dict] = collections.defaultdict(lambda: collections.Counter())
    for s in sc.load_all():
        if s.abstract:
            continue
        docs = {prof: sc.resolve(s, prof) for prof in {args.profile, args.measured_profile}}

        def offered(prof: str, values: dict, docs=docs) -> tuple[float, float]:
            """(packets a run carries, its duration) at one point of a profile:
            what its sources offer, but no more than its bottleneck can carry
            in the run's time (a long-lived TCP transfer offers its whole task;
            it carries what the link lets through)."""
            doc = copy.deepcopy(docs[prof])
            sc.apply_point(doc, doc.get("sweep") or {}, values)
            packets = sum(p for _, p in sc.estimate_packets(doc))
            duration = float(doc["duration_s"])
            rate = (doc.get("topology") or {}).get("bottleneck_rate_bps")
            if rate and not doc.get("stop_when_done"):
                packets = min(packets, float(rate) * duration / (8 * CARRIED_PACKET_BYTES))
            return packets, duration

        # what was measured of this scenario: (backend, series) -> [(packets, duration, cpu)]
        seen: dict[tuple, list[tuple[float, float, float]]] = collections.defaultdict(list)
        for job in sc.expand(s, args.measured_profile):
            cpu = by_point.get((s.id, job.backend, job.series, job.point))
            if cpu is not None:
                x, d = offered(args.measured_profile, job.spec["point_values"])
                seen[(job.backend, job.series)].append((x, d, cpu))
        for job in sc.expand(s, args.profile):
            row = rows[(s.paper if args.by == "paper" else s.id, job.backend)]
            row["runs"] += 1
            x, d = offered(args.profile, job.spec["point_values"])
            pts = seen.get((job.backend, job.series)) or [
                p for (b, _), ps in seen.items() if b == job.backend for p in ps
            ]
            if not pts:
                row["unpriced"] += 1
                continue
            exact = [c for xm, dm, c in pts if xm == x and dm == d]
            xs = sorted({xm for xm, _, _ in pts})
            if exact and seen.get((job.backend, job.series)):
                cpu, how = statistics.fmean(exact), "measured"
            elif len(xs) >= 2:
                a, b = line([p[0] for p in pts], [p[2] for p in pts])
                cpu = max(a + b * x, min(p[2] for p in pts))
                how = "fitted" if xs[0] <= x <= xs[-1] else "extrapolated"
            else:
                xm, dm = pts[0][0], pts[0][1]
                cpu = statistics.fmean(p[2] for p in pts)
                # one measured size: in proportion to the packets offered, or
                # (the same packets, e.g. bulk tasks) to the simulated time
                cpu *= x / xm if xm > 0 and x != xm else d / dm
                how = "scaled"
            row["cpu"] += cpu
            row[how] += 1

    where = ", ".join(str(r) for r in args.results)
    print(f"profile {args.profile}, priced from {where} ({args.measured_profile} profile)")
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
    return 0


if __name__ == "__main__":
    sys.exit(main())

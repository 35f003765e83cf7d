"""What the cluster profiles ask for, from a measured results tree: per
backend, the longest run and the largest runner (run.json wall_time_s and
runner_max_rss_mb), from which workflows/profiles/slurm sets the simulate
rule's runtime and mem_mb; and per paper and profile, the simulations and
the sweep points (one workflow job each, running the point's seeds) and
the cluster jobs they make at --group points per job.

    .venv/bin/python benchmarks/cluster-cost.py RESULTS... [--profiles quick paper] [--group 10]

The CPU-hours of a profile are benchmarks/profile-cost.py's (it prices every
job from the measured runs); this adds what a cluster adds per job.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from qlab import backends as qlab_backends  # noqa: E402
from qlab import scenario as sc  # noqa: E402


def largest(results: list[Path]) -> dict[str, dict[str, tuple[float, str]]]:
    """backend -> {"wall_time_s"/"runner_max_rss_mb": (largest value, the run)}."""
    out: dict[str, dict[str, tuple[float, str]]] = defaultdict(dict)
    for tree in results:
        for run_json in tree.rglob("seed-*/run.json"):
            try:
                run = json.loads(run_json.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue
            for key in ("wall_time_s", "runner_max_rss_mb"):
                value = run.get(key)
                if isinstance(value, (int, float)) and value > out[run.get("backend")].get(key, (-1, ""))[0]:
                    out[run.get("backend")][key] = (value, str(run_json.parent.relative_to(tree)))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("results", type=Path, nargs="+", help="measured results trees")
    ap.add_argument("--profiles", nargs="+", default=["quick", "paper"], choices=sc.PROFILES)
    ap.add_argument("--group", type=int, default=10, help="sweep points per cluster job (group-components)")
    args = ap.parse_args()

    for backend, worst in sorted(largest(args.results).items()):
        for key, (value, run) in sorted(worst.items()):
            print(f"{backend}: largest {key} {value:.1f} ({run})")

    # a cluster gets no real-time backend (qlab backends --available --no-realtime)
    simulators = [n for n in qlab_backends.names() if not qlab_backends.get(n).realtime]
    runs: dict[tuple[str, str], int] = defaultdict(int)
    points: dict[tuple[str, str], int] = defaultdict(int)
    for scen in (s for s in sc.load_all() if not s.abstract):
        for profile in args.profiles:
            jobs = sc.expand(scen, profile, simulators)
            runs[(scen.paper, profile)] += len(jobs)
            points[(scen.paper, profile)] += len({j.rel_dir.rsplit("/", 1)[0] for j in jobs})
    print(f"\n| paper | profile | simulations | sweep points | cluster jobs ({args.group} points per job) |")
    print("|---|---|---|---|---|")
    for (paper, profile), n in sorted(runs.items()):
        m = points[(paper, profile)]
        print(f"| {paper} | {profile} | {n} | {m} | {math.ceil(m / args.group)} |")
    for profile in args.profiles:
        keys = [k for k in runs if k[1] == profile]
        print(
            f"| all | {profile} | {sum(runs[k] for k in keys)} | {sum(points[k] for k in keys)} | "
            f"{sum(math.ceil(points[k] / args.group) for k in keys)} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())

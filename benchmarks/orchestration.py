"""How much of a reproduction is orchestration, and how long a no-op takes.

    .venv/bin/python benchmarks/orchestration.py [--profile quick] [--cores 2] [--backends ns3,ns2,mininet]

1. Runs the whole workflow for a profile into a fresh results directory and
   measures its wall time and the CPU time of every process it started
   (getrusage of the children). The simulators' time is the CPU time of the
   simulator processes, `runner_cpu_s` in every run.json (library loading,
   job parsing and table writing included); the table also shows the part
   the runner reports as simulation proper (`wall_time_s`). Orchestration =
   everything else: Snakemake, qlab's Python, R analysis, rendering.
2. Runs the same workflow again with nothing changed, three times, and
   reports each wall time (the "no-op make reproduce" target: seconds).

Prints a Markdown table for docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SNAKEMAKE = Path(sys.executable).parent / "snakemake"


def run(results: Path, profile: str, cores: int, backends: str) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(
        [
            str(SNAKEMAKE),
            "--workflow-profile",
            "workflows/profiles/local",
            "--cores",
            str(cores),
            "--quiet",
            "all",
            "--config",
            f"profile={profile}",
            f"results={results}",
            f"site={results / 'site'}",
            f"backends=[{backends}]",
        ],
        cwd=ROOT,
        check=True,
    )
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--profile", default="quick")
    ap.add_argument("--cores", type=int, default=2)
    ap.add_argument(
        "--backends",
        help="comma-separated (default: every backend this machine runs, as make reproduce)",
    )
    args = ap.parse_args()
    if not args.backends:
        out = subprocess.run(
            [sys.executable, "-m", "qlab", "backends", "--available"],
            cwd=ROOT,
            check=True,
            capture_output=True,
            text=True,
        )
        args.backends = out.stdout.strip().strip("[]")
    # the build is not part of a reproduction's orchestration
    subprocess.run(
        [
            str(SNAKEMAKE),
            "build/core/qcore-replay",
            "build/ns3/qlab-ns3-run",
            *(["build/ns2/ns"] if "ns2" in args.backends else []),
            "--cores",
            str(args.cores),
            "--quiet",
            "all",
        ],
        cwd=ROOT,
        check=True,
    )
    tmp = Path(tempfile.mkdtemp(prefix="qlab-bench-"))
    try:
        results = tmp / "results"
        wall, cpu = run(results, args.profile, args.cores, args.backends)
        runs = [json.loads(p.read_text()) for p in results.rglob("seed-*/run.json")]
        by_backend: dict[str, list[dict]] = {}
        for r in runs:
            by_backend.setdefault(r["backend"], []).append(r)
        # a simulator's process CPU; an emulation run's traffic time (it has the machine)
        sim = sum(r.get("runner_cpu_s") or r.get("wall_time_s") or 0 for r in runs)
        sim_proper = sum(r["wall_time_s"] for r in runs)
        noops = [run(results, args.profile, args.cores, args.backends)[0] for _ in range(3)]
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(
        "| profile | runs | wall (s) | CPU, all processes (s) | CPU in simulator processes (s) "
        "| of which simulation proper (s) | orchestration share of CPU | no-op reruns (s) |\n"
        "|---|---|---|---|---|---|---|---|\n"
        f"| {args.profile} | {len(runs)} | {wall:.1f} | {cpu:.1f} | {sim:.1f} | {sim_proper:.1f} "
        f"| {100 * (1 - sim / cpu):.1f}% | {', '.join(f'{t:.1f}' for t in noops)} |"
    )
    print("\n| backend | runs | simulator CPU or emulated traffic (s) | launch wall, emulation (s) |")
    print("|---|---|---|---|")
    for name, rs in sorted(by_backend.items()):
        launch = sum(r.get("launch_wall_s") or 0 for r in rs)
        own = sum(r.get("runner_cpu_s") or r.get("wall_time_s") or 0 for r in rs)
        print(f"| {name} | {len(rs)} | {own:.1f} | {launch:.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())

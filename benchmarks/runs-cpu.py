"""CPU seconds of runs, one after another: each plan through `qlab run-job`
(the whole job: interpreter, runner, finalising), its user + system CPU
and that of its children from wait4(), and the runner's own CPU as its
run.json records it (runner_cpu_s); a sum per scenario.

    .venv/bin/python benchmarks/runs-cpu.py RESULTS/jobs/rbaqm/1/ns3/rb/seed-1.json ...

Plans are written by `qlab expand --profile P --results RESULTS FILE...`;
each run's traces go where the workflow puts them (RESULTS/<paper>/<name>/
<backend>/<point>/seed-<n>/), so `qlab collect` and the analysis can follow.
Used for the RB-AQM paper's quick and paper profile costs (docs/benchmarks.md).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path


def jobs_index(plan: Path) -> tuple[tuple[str, ...], int]:
    """The parts of RESULTS/jobs/<paper>/<name>/<backend>/<point>/seed-<n>.json and where `jobs` is."""
    parts = plan.resolve().parts
    if "jobs" not in parts:
        raise SystemExit(f"runs-cpu: {plan}: expected a plan under RESULTS/jobs/ (qlab expand)")
    return parts, len(parts) - 1 - parts[::-1].index("jobs")


def scenario_of(plan: Path) -> str:
    """<paper>/<name> of a plan."""
    parts, i = jobs_index(plan)
    return "/".join(parts[i + 1 : i + 3])


def out_of(plan: Path) -> Path:
    """RESULTS/<paper>/<name>/<backend>/<point>/seed-<n>/, the workflow's place for its traces."""
    parts, i = jobs_index(plan)
    return Path(*parts[:i], *parts[i + 1 :]).with_suffix("")


def run(plan: Path, out: Path) -> tuple[float, float, float | None]:
    """Wall s, CPU s of the whole job, the runner's CPU s."""
    start = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, "-m", "qlab", "run-job", str(plan), "--out", str(out)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    wall = time.monotonic() - start
    if proc.returncode != 0:
        err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
        raise SystemExit(f"runs-cpu: {plan}: qlab run-job exited {proc.returncode}: {err.strip()}")
    runner = json.loads((out / "run.json").read_text()).get("runner_cpu_s")
    return wall, usage.ru_utime + usage.ru_stime, runner


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("plans", type=Path, nargs="+")
    args = ap.parse_args()
    sums: dict[str, list[float]] = defaultdict(lambda: [0, 0.0, 0.0, 0.0])
    for plan in args.plans:
        wall, cpu, runner = run(plan, out_of(plan))
        cell = sums[scenario_of(plan)]
        cell[0] += 1
        cell[1] += wall
        cell[2] += cpu
        cell[3] += runner or 0.0
        print(f"{plan}: wall {wall:.2f} s, CPU {cpu:.2f} s (runner {runner} s)", flush=True)
    print("| scenario | runs | wall s | CPU-s (whole jobs) | CPU-s (runners) |")
    print("|---|---|---|---|---|")
    total = [0, 0.0, 0.0, 0.0]
    for name in sorted(sums):
        n, wall, cpu, runner = sums[name]
        total = [a + b for a, b in zip(total, (n, wall, cpu, runner), strict=True)]
        print(f"| {name} | {n} | {wall:.1f} | {cpu:.1f} | {runner:.1f} |")
    print(f"| all | {total[0]} | {total[1]:.1f} | {total[2]:.1f} | {total[3]:.1f} |")


if __name__ == "__main__":
    main()

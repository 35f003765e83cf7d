"""What `qlab run-job` costs beyond its runner, in two checkouts side by side.

    .venv/bin/python benchmarks/runjob-overhead.py --before /path/to/old-checkout \\
        [--after .] [--pairs 3] PLAN.json...

Every plan runs through `python -m qlab run-job` once per pair in each
checkout, the two interleaved (before, after, after, before, ...) so that a
change in the machine's load hits both alike. For each run: the CPU time
(user + sys) of the whole job, the runner's own (`runner_cpu_s` in its
run.json: the simulator process, library loading included) and the
difference, which is qlab's Python: interpreter start, imports, checking
the plan, checking and finalising the traces, gzip. Prints a Markdown table
of the medians and the after / before ratio.
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path


def one_job(checkout: Path, plan: Path, out: Path) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(
        [sys.executable, "-m", "qlab", "run-job", str(plan), "--out", str(out)],
        cwd=checkout,
        check=True,
        capture_output=True,
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    total = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    runner = json.loads((out / "run.json").read_text())["runner_cpu_s"]
    return total, runner


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", required=True, type=Path, help="the checkout to compare against")
    ap.add_argument("--after", default=Path("."), type=Path)
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("plans", nargs="+", type=Path)
    a = ap.parse_args()
    sides = {"before": a.before.resolve(), "after": a.after.resolve()}
    rows: dict[str, list[tuple[float, float]]] = {k: [] for k in sides}
    tmp = Path(tempfile.mkdtemp(prefix="qlab-runjob-"))
    try:
        for i in range(a.pairs):
            for plan in a.plans:
                order = list(sides) if i % 2 == 0 else list(reversed(sides))
                for side in order:
                    out = tmp / side / f"{i}-{plan.stem}"
                    rows[side].append(one_job(sides[side], plan.resolve(), out))
                    shutil.rmtree(out, ignore_errors=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    med = {
        side: (
            statistics.median(t for t, _ in r),
            statistics.median(n for _, n in r),
            statistics.median(t - n for t, n in r),
        )
        for side, r in rows.items()
    }
    print(
        "| checkout | jobs | CPU per job, median (s) | of which the runner (s) | qlab's Python per job (s) |"
    )
    print("|---|---|---|---|---|")
    for side, (t, n, o) in med.items():
        print(f"| {side} ({sides[side]}) | {len(rows[side])} | {t:.3f} | {n:.3f} | {o:.3f} |")
    print(f"\nqlab's Python per job, after / before: {med['after'][2] / med['before'][2]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Migration check: the plan runner against results of the old dumbbell runner.

    .venv/bin/python disciplines/ns3/tests/compare_old_results.py OLD_RESULTS [FILTER]
        [--runner build/ns3/qlab-ns3-run] [--profile quick]

OLD_RESULTS is a results directory written by qlab before plans (old job
files under jobs/<paper>/<name>/ns3/<point>/seed-<n>.json, finalised traces
under <paper>/<name>/ns3/<point>/seed-<n>/flows.csv.gz).  For every old ns3
job (whose path contains FILTER), the same run is expanded from this
checkout's scenario (profile quick by default), run by the new runner, its
raw facts checked and finalised (qlab.finalise), and flows.csv compared
byte for byte with the old one.  Prints one line per run (identical, or
which columns of how many rows differ and whether the workloads' start times
agree) and a summary; exit 1 when any run differs.
"""

from __future__ import annotations

import argparse
import csv
import gzip
import io
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))

from qlab import finalise, traces  # noqa: E402
from qlab import scenario as sc  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("old_results", type=Path)
    ap.add_argument("filter", nargs="?", default="")
    ap.add_argument("--runner", default=str(ROOT / "build" / "ns3" / "qlab-ns3-run"))
    ap.add_argument("--profile", default="quick")
    args = ap.parse_args()
    plans: dict[str, dict[tuple[str, int], dict[str, Any]]] = {}
    identical = differ = 0
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        for job_file in sorted(args.old_results.glob("jobs/*/*/ns3/*/seed-*.json")):
            if args.filter not in str(job_file):
                continue
            paper, name, _, point, seed_file = job_file.parts[-5:]
            seed = int(seed_file[len("seed-") : -len(".json")])
            sid = f"{paper}/{name}"
            old_flows = args.old_results / paper / name / "ns3" / point / f"seed-{seed}" / "flows.csv.gz"
            if sid not in plans:
                jobs = sc.expand(sc.load(ROOT / "scenarios" / f"{sid}.yaml"), args.profile, ["ns3"])
                plans[sid] = {(j.point, j.seed): j.spec for j in jobs}
            plan = plans[sid].get((point, seed))
            if plan is None or not old_flows.exists():
                print(f"{sid} {point} seed {seed}: {'no new plan' if plan is None else 'no old result'}")
                continue
            plan_file = tmp / "plan.json"
            plan_file.write_text(json.dumps(plan))
            work = tmp / f"run-{identical + differ}"
            subprocess.run([args.runner, str(plan_file), str(work)], check=True, stdout=subprocess.DEVNULL)
            facts = json.loads((work / "runner.json").read_text())
            problems, tables = finalise.check_raw(work, plan, facts)
            if problems:
                sys.exit(f"{sid} {point} seed {seed}: raw facts fail the checks: {problems[:3]}")
            rows, _ = finalise.flow_rows(plan, tables["flow_facts"], facts["end_ns"])
            new = finalise._csv_bytes([c.name for c in traces.TABLES["flows"]["columns"]], rows)
            old = gzip.decompress(old_flows.read_bytes())
            if new == old:
                identical += 1
                print(f"{sid} {point} seed {seed}: identical")
                continue
            differ += 1
            new_rows = list(csv.DictReader(io.StringIO(new.decode())))
            old_rows = list(csv.DictReader(io.StringIO(old.decode())))
            pairs = list(zip(new_rows, old_rows, strict=False))
            cols = sorted({k for a, b in pairs for k in a if a[k] != b.get(k)})
            rows_differ = sum(1 for a, b in pairs if a != b)
            old_job = json.loads(job_file.read_text())
            same_starts = [round(f["start_s"] * 1e9) for f in old_job["flows"]] == [
                f["start_ns"] for f in plan["flows"]
            ]
            print(
                f"{sid} {point} seed {seed}: DIFFERS in {rows_differ} of {len(new_rows)} rows "
                f"(columns {', '.join(cols)}; same start times: {same_starts})"
            )
    print(f"{identical} identical, {differ} different")
    sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()

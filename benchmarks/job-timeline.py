"""Where a workflow's wall time went, from its Snakemake log: each job's
rule, wildcards, threads, start and finish; the core-seconds each rule
held; the core-seconds left idle (cores less the threads of the jobs
running), and the tail: what ran after the last simulation finished.

    .venv/bin/python benchmarks/job-timeline.py results/logs/reproduce.log [--cores 2] [--jobs]

Snakemake prints a job's start as a `[date]` line and its rule block
(`rule NAME:` or `localrule NAME:`, then `jobid:`, `wildcards:`,
`threads:`), its finish as a `[date]` line then `Finished jobid: N`.
Times are to the second, as Snakemake prints them. A job's threads are
what it was given (scaled down to --cores). Used for the scheduling of a
quick reproduction (docs/benchmarks.md, "Orchestration").
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import defaultdict
from datetime import datetime
from pathlib import Path

DATE = re.compile(r"^\[(\w{3} \w{3} +\d+ \d\d:\d\d:\d\d \d{4})\]$")
RULE = re.compile(r"^(?:local)?rule (\w+):$")
FIELD = re.compile(r"^    (jobid|wildcards|threads): (.*)$")
FINISHED = re.compile(r"^Finished jobid: (\d+) \(Rule: (\w+)\)")
SIMULATION_RULES = {"simulate", "simulate_batch"}


def parse(log: Path) -> dict[int, dict]:
    """jobid -> {rule, wildcards, threads, start, end} (end None if it never finished)."""
    jobs: dict[int, dict] = {}
    when: datetime | None = None
    current: dict | None = None
    try:
        lines = log.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError as exc:
        raise SystemExit(f"job-timeline: {log}: cannot read: {exc.strerror}") from None
    for line in lines:
        if m := DATE.match(line):
            when = datetime.strptime(m.group(1), "%a %b %d %H:%M:%S %Y")
            continue
        if m := RULE.match(line):
            current = {"rule": m.group(1), "wildcards": "", "threads": 1, "start": when, "end": None}
            continue
        if current is not None and (m := FIELD.match(line)):
            key, value = m.groups()
            if key == "jobid":
                jobs[int(value)] = current
            elif key == "threads":
                current["threads"] = int(value)
            else:
                current["wildcards"] = value
            continue
        if m := FINISHED.match(line):
            job = jobs.get(int(m.group(1)))
            if job is not None:
                job["end"] = when
            current = None
    return jobs


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("log", type=Path)
    ap.add_argument("--cores", type=int, default=2)
    ap.add_argument("--jobs", action="store_true", help="list the jobs of the tail")
    args = ap.parse_args()
    jobs = [j for j in parse(args.log).values() if j["start"] and j["end"] and j["rule"] != "all"]
    if not jobs:
        raise SystemExit(f"job-timeline: {args.log}: no finished job in it (a Snakemake log?)")
    t0 = min(j["start"] for j in jobs)
    t1 = max(j["end"] for j in jobs)
    span = int((t1 - t0).total_seconds())
    busy = [0] * (span + 1)
    per_rule: dict[str, list[float]] = defaultdict(lambda: [0, 0.0])
    for j in jobs:
        a, b = int((j["start"] - t0).total_seconds()), int((j["end"] - t0).total_seconds())
        threads = min(j["threads"], args.cores)
        for s in range(a, b):
            busy[s] += threads
        per_rule[j["rule"]][0] += 1
        per_rule[j["rule"]][1] += threads * (b - a)
    idle = sum(max(0, args.cores - b) for b in busy[:span])
    print(f"{args.log}: {len(jobs)} jobs, {span} s from the first start to the last finish")
    print(f"idle core-s: {idle} ({100 * idle / (args.cores * span):.1f}% of {args.cores * span})")
    print("\n| rule | jobs | core-s held |\n|---|---|---|")
    for rule, (n, held) in sorted(per_rule.items(), key=lambda kv: -kv[1][1]):
        print(f"| {rule} | {n} | {held:.0f} |")
    sims = [j for j in jobs if j["rule"] in SIMULATION_RULES]
    if sims:
        last = max(j["end"] for j in sims)
        tail = int((t1 - last).total_seconds())
        t_idle = sum(max(0, args.cores - b) for b in busy[int((last - t0).total_seconds()) : span])
        print(f"\nthe tail: {tail} s after the last simulation ended ({last:%H:%M:%S}), {t_idle} core-s idle")
        last_sim = max(sims, key=lambda j: j["end"])
        span_of = f"{last_sim['start']:%H:%M:%S}-{last_sim['end']:%H:%M:%S}"
        print(f"the last simulation: {last_sim['wildcards']} ({span_of})")
        if args.jobs:
            for j in sorted((j for j in jobs if j["end"] > last), key=lambda j: j["start"]):
                print(f"  {j['start']:%H:%M:%S}-{j['end']:%H:%M:%S} {j['rule']} {j['wildcards']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

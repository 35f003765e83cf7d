#!/usr/bin/env python3
"""The ns-3 runner's cost as the number of flows grows.

    .venv/bin/python benchmarks/ns3-scaling.py [--flows 50,100,200,400] [--repeat 3]
        [--callgrind 50,200] [--old OLD_RUNNER] [--web] [--runner RUNNER]

(a) CPU time (user + sys of the runner process, from wait4) per flow of one
    DropTail run of the ncq-conf/flows workload (scenarios/ncq-conf/flows.yaml,
    profile quick, seed 1: 10 Mb/s bottleneck, 100-packet buffer, 5% of the
    flows 10 kB with 100-byte segments, the rest 200 kB with 1000-byte
    segments, one host pair per flow), at each --flows count (the plan comes
    from the Python API with workload.flows changed).  The smallest of
    --repeat runs is reported (the machine is shared: the minimum is the
    least disturbed), with the wall time and peak RSS of that run, and the
    packets offered to the bottleneck (enqueued + dropped).
    Target: CPU per flow at the largest count within 1.5x of the smallest.
(b) With --callgrind: instructions of the whole process under valgrind's
    callgrind (exact, unlike time on a shared machine) at those counts.
(c) With --old OLD_RUNNER: the same for the old dumbbell runner (a build of
    qlab-ns3-run before plans, reading qlab-job/1), on the same workload
    converted to its job format; and whether the finalised flows.csv of the
    new runner is byte-identical to the old runner's flows.csv.
(d) With --web: one run of a 1 Gb/s dumbbell (10 Gb/s access links, 1 ms;
    bottleneck 10 ms, DropTail 1000 packets) with web traffic: TCP
    transfers arriving at 400/s for 60 s (about 24,000 flows), Pareto sizes
    (shape 1.5) of mean 30 kB in 1000-byte segments, spread over 300 host
    pairs; its wall and CPU time, peak RSS and events.  Run once, niced.

Uses --runner or $QLAB_NS3_RUNNER or build/ns3/qlab-ns3-run.  Prints Markdown.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "disciplines" / "ns3" / "tests"))

from testplan import make_plan  # noqa: E402

from qlab import core, finalise, traces  # noqa: E402

WEB_SCENARIO = """\
paper: bench
description: 1 Gb/s dumbbell, about 24,000 short web transfers (the ns-3 runner's scale benchmark).
duration_s: 300
stop_when_done: true
topology:
  kind: dumbbell
  access_rate_bps: 10000000000
  access_delay_s: 0.001
  bottleneck_rate_bps: 1000000000
  bottleneck_delay_s: 0.010
tcp: {variant: NewReno}
workload:
  flows: 0
  groups:
    web: {app: web, arrival_rate_per_s: 400, size_mean_bytes: 30000, seg_bytes: 1000,
          hosts: 300, stop_s: 60, max_flows: 30000}
series:
  droptail: {kind: droptail, params: {limit_pkts: 1000}}
seeds: 1
"""


def ncq_conf_plan(flows: int) -> dict[str, Any]:
    return make_plan(ROOT / "scenarios" / "ncq-conf" / "flows.yaml", "droptail", seed=1, flows=flows)


def web_plan(tmp: Path) -> dict[str, Any]:
    path = tmp / "bench" / "web.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(WEB_SCENARIO, encoding="utf-8")
    return make_plan(path, "droptail")


def _ppm_text(v: float) -> str:
    whole, frac = divmod(round(v * 1e6), 10**6)
    return f"{whole}" if frac == 0 else f"{whole}.{frac:06d}".rstrip("0")


def old_job(p: dict[str, Any]) -> dict[str, Any]:
    """A dumbbell plan as the old runner's job (qlab-job/1)."""
    links = {link["id"]: link for link in p["links"]}
    b = links["bottleneck"]
    access = next(link for link in p["links"] if link["id"] != "bottleneck")
    q = b["queues"]["L"]
    table = {x["name"]: x for x in core.disciplines()[q["kind"]]["params"]}

    def text(name: str, v: Any) -> str:
        kind = table[name]["kind"]
        return (
            ("1" if v else "0")
            if kind == "bool"
            else _ppm_text(v)
            if kind == "ppm"
            else ":".join(map(str, v))
            if kind == "u32_list"
            else str(v)
        )

    t = p["tcp"]
    flows = []
    for f in p["flows"]:
        o = {
            "flow_id": f["flow_id"],
            "app": f["app"],
            "group": f["group"],
            "cls": f["cls"],
            "prec": f["prec"],
            "start_s": f["start_ns"] / 1e9,
        }
        if f["app"] == "bulk":
            o.update(seg_bytes=f["seg_bytes"], bytes=f["bytes"])
        else:
            o.update(
                pkt_bytes=f["pkt_bytes"],
                rate_bps=f["rate_bps"],
                on_periods=[[a / 1e9, e / 1e9] for a, e in f["on_periods_ns"]],
            )
        flows.append(o)
    return {
        "schema": "qlab-job/1",
        "scenario": p["scenario"],
        "paper": p["paper"],
        "backend": "ns3",
        "series": p["series"],
        "point": p["point"],
        "point_values": p["point_values"],
        "seed": p["seed"],
        "duration_s": p["duration_ns"] / 1e9,
        "stop_when_done": p["stop_when_done"],
        "topology": {
            "kind": "dumbbell",
            "access_rate_bps": access["rate_bps"],
            "access_delay_s": access["delay_ns"] / 1e9,
            "bottleneck_rate_bps": b["rate_bps"],
            "bottleneck_delay_s": b["delay_ns"] / 1e9,
        },
        "tcp": {
            "variant": t["variant"],
            "sack": t["sack"],
            "timestamps": t["timestamps"],
            "window_scaling": t["window_scaling"],
            "initial_cwnd_segments": t["initial_cwnd_segments"],
            "delayed_ack_count": t["delayed_ack_count"],
            "min_rto_s": t["min_rto_ns"] / 1e9,
            "syn_timeout_s": t["syn_timeout_ns"] / 1e9,
            "rcv_buf_bytes": t["rcv_buf_bytes"],
            "snd_buf_bytes": t["snd_buf_bytes"],
        },
        "discipline": {"kind": q["kind"], "params": {k: text(k, v) for k, v in q["params"].items()}},
        "flows": flows,
        "trace": {
            "queue_sample_interval_s": p["trace"]["queue_sample_interval_ns"] / 1e9,
            "packets": p["trace"]["packets"],
        },
    }


def run(runner: str, job: Path, out: Path) -> dict[str, float]:
    """CPU (user + sys), wall, peak RSS of one runner process."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(["nice", runner, str(job), str(out)], stdout=subprocess.DEVNULL)
    _, status, ru = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    if status != 0:
        sys.exit(f"{runner} {job} failed (status {status})")
    return {"cpu": ru.ru_utime + ru.ru_stime, "wall": wall, "rss_mb": ru.ru_maxrss / 1024}


def best_of(runner: str, job: Path, out: Path, repeat: int) -> dict[str, float]:
    return min((run(runner, job, out) for _ in range(repeat)), key=lambda r: r["cpu"])


def instructions(runner: str, job: Path, out: Path, tmp: Path) -> int:
    cg = tmp / "cg.out"
    subprocess.run(
        ["nice", "valgrind", "--tool=callgrind", f"--callgrind-out-file={cg}", runner, str(job), str(out)],
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    for line in cg.read_text().splitlines():
        if line.startswith(("summary:", "totals:")):
            return int(line.split()[1])
    sys.exit("no instruction count in callgrind's output")


def offered(queue_facts: Path) -> int:
    last = queue_facts.read_text().strip().splitlines()[-1].split(",")
    return int(last[5]) + int(last[7])


def finalised_flows(plan: dict[str, Any], workdir: Path) -> bytes:
    facts = json.loads((workdir / "runner.json").read_text())
    problems, tables = finalise.check_raw(workdir, plan, facts)
    if problems:
        sys.exit("raw facts fail the checks: " + "; ".join(problems[:3]))
    rows, _ = finalise.flow_rows(plan, tables["flow_facts"], facts["end_ns"])
    return finalise._csv_bytes([c.name for c in traces.TABLES["flows"]["columns"]], rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--flows", default="50,100,200,400")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--callgrind", default="", help="flow counts to count instructions at")
    ap.add_argument("--old", default="", help="the old (qlab-job/1) runner, for comparison")
    ap.add_argument("--web", action="store_true", help="also the 24,000-flow web run")
    ap.add_argument("--no-scaling", action="store_true", help="only the web run")
    ap.add_argument(
        "--runner", default=os.environ.get("QLAB_NS3_RUNNER", str(ROOT / "build/ns3/qlab-ns3-run"))
    )
    args = ap.parse_args()
    counts = [int(x) for x in args.flows.split(",") if x]
    cg_counts = [int(x) for x in args.callgrind.split(",") if x]

    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        if not args.no_scaling:
            rows = []
            for n in sorted(set(counts) | set(cg_counts)):
                plan = ncq_conf_plan(n)
                pj = tmp / f"plan-{n}.json"
                pj.write_text(json.dumps(plan))
                row: dict[str, Any] = {"flows": n}
                if n in counts:
                    row["new"] = best_of(args.runner, pj, tmp / f"new-{n}", args.repeat)
                    row["offered"] = offered(tmp / f"new-{n}" / "queue_facts.csv")
                if n in cg_counts:
                    row["new_instr"] = instructions(args.runner, pj, tmp / f"cg-new-{n}", tmp)
                if args.old:
                    oj = tmp / f"old-{n}.json"
                    oj.write_text(json.dumps(old_job(plan)))
                    if n in counts:
                        row["old"] = best_of(args.old, oj, tmp / f"old-{n}", args.repeat)
                        row["identical"] = (
                            finalised_flows(plan, tmp / f"new-{n}")
                            == (tmp / f"old-{n}" / "flows.csv").read_bytes()
                        )
                    if n in cg_counts:
                        row["old_instr"] = instructions(args.old, oj, tmp / f"cg-old-{n}", tmp)
                rows.append(row)
            print(
                "| flows | packets offered to the bottleneck | new: CPU s (per flow ms) | wall s | RSS MB |"
                + (" old: CPU s (per flow ms) | old / new CPU | flows.csv identical |" if args.old else "")
            )
            print("|---|---|---|---|---|" + ("---|---|---|" if args.old else ""))
            for r in rows:
                if "new" not in r:
                    continue
                new = r["new"]
                per_flow = 1000 * new["cpu"] / r["flows"]
                line = (
                    f"| {r['flows']} | {r['offered']:,} | {new['cpu']:.2f} ({per_flow:.1f}) | "
                    f"{new['wall']:.2f} | {new['rss_mb']:.0f} |"
                )
                if args.old:
                    old = r["old"]
                    line += (
                        f" {old['cpu']:.2f} ({1000 * old['cpu'] / r['flows']:.1f}) | "
                        f"{old['cpu'] / new['cpu']:.2f} | {'yes' if r['identical'] else 'NO'} |"
                    )
                print(line)
            timed = [r for r in rows if "new" in r]
            if len(timed) > 1:
                first, last = timed[0], timed[-1]
                ratio = (last["new"]["cpu"] / last["flows"]) / (first["new"]["cpu"] / first["flows"])
                print(
                    f"\nCPU per flow at {last['flows']} flows / at {first['flows']}: {ratio:.2f} "
                    f"(target <= 1.5: {'met' if ratio <= 1.5 else 'NOT met'})"
                )
            if cg_counts:
                print(
                    "\n| flows | new: instructions (per flow) |"
                    + (" old: instructions (per flow) | old / new |" if args.old else "")
                )
                print("|---|---|" + ("---|---|" if args.old else ""))
                for r in rows:
                    if "new_instr" not in r:
                        continue
                    n = r["flows"]
                    line = f"| {n} | {r['new_instr']:,} ({r['new_instr'] // n:,}) |"
                    if args.old:
                        line += (
                            f" {r['old_instr']:,} ({r['old_instr'] // n:,}) | "
                            f"{r['old_instr'] / r['new_instr']:.2f} |"
                        )
                    print(line)
        if args.web:
            t0 = time.perf_counter()
            plan = web_plan(tmp)
            expand_s = time.perf_counter() - t0
            pj = tmp / "web.json"
            pj.write_text(json.dumps(plan))
            r = run(args.runner, pj, tmp / "web")
            facts = json.loads((tmp / "web" / "runner.json").read_text())
            ff = (tmp / "web" / "flow_facts.csv").read_text().splitlines()[1:]
            by_id = sorted(plan["flows"], key=lambda f: f["flow_id"])
            done = sum(1 for line, f in zip(ff, by_id, strict=True) if int(line.split(",")[4]) == f["bytes"])
            print(
                f"\nweb run: {len(plan['flows']):,} flows over {len(plan['nodes']) - 2} hosts "
                f"(plan {pj.stat().st_size / 1e6:.1f} MB, expanded in {expand_s:.1f} s); "
                f"simulated {facts['end_ns'] / 1e9:.3f} s; {done:,} flows completed; "
                f"{offered(tmp / 'web' / 'queue_facts.csv'):,} packets offered to the bottleneck; "
                f"runner: wall {r['wall']:.1f} s, CPU {r['cpu']:.1f} s, peak RSS {r['rss_mb']:.0f} MB "
                f"(load average {open('/proc/loadavg').read().split()[0]} on {os.cpu_count()} CPUs)"
            )
    print(f"\nload average at the end: {open('/proc/loadavg').read().split()[0]} on {os.cpu_count()} CPUs")


if __name__ == "__main__":
    main()

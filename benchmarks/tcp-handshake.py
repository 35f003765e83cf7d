#!/usr/bin/env python3
"""Worst completion times of ncq-conf/flows with ns-3 3.37's handshake, with
qlab's Karn fix and without a handshake, against processor sharing.

    .venv/bin/python benchmarks/tcp-handshake.py [--flows 100] [--profile quick] [--jobs 2]
        [--out DIR] [--runner RUNNER]

Runs every seed of scenarios/ncq-conf/flows.yaml (the profile's seeds, the
droptail and ncq series) at the sweep point workload.flows = --flows, as
`qlab expand` makes its plans, three ways:

  ns-3 3.37     tcp.handshake true, NS_ATTRIBUTE_DEFAULT=
                'ns3::QlabTcpSocket::HandshakeKarn=false' (ns-3 3.37's RTT
                sample from the first SYN)
  Karn, no 5.7  tcp.handshake true, NS_ATTRIBUTE_DEFAULT=
                'ns3::QlabTcpSocket::SynLossRto=0s' (Karn's rule on the
                handshake; after a lost SYN the data starts on ns-3's
                no-sample RTO, 1 s, as if RFC 6298 5.7 did not exist)
  Karn + 5.7    tcp.handshake true: qlab's TCP (Karn's rule, and a 3 s RTO
                for the data after a lost SYN until the first RTT sample)
  no handshake  tcp.handshake false: connections start established (ns-2's
                one-way TCP)

(runner.json's versions say which ran; the script checks it.)

each with trace.tcp on every flow (sampled every 0.1 s) and trace.packets
(neither changes the run), checked and finalised by qlab (qlab.finalise), in
--out (default: a temporary directory, removed).

The processor-sharing (PS) bound of a run's worst completion time: the
bottleneck (C = 10 Mb/s) as a fluid server shared equally by the flows that
have started and not finished, flow i arriving at its start_s with
w_i = 8 * (bytes_i + 42 * ceil(bytes_i / seg_i)) bits (each segment with
40 bytes of IPv4 + TCP headers and the link's 2-byte PPP header); its
completion time T_i = f_i - start_i where f_i is when PS has served w_i.
The bound is max_i T_i.  It leaves out the handshake's round trip and the
path's one-way delay (about 0.024 s and 0.012 s here, 0.2 % of the bound)
and every TCP effect (slow start, losses, timeouts).  PS is also the
outcome a perfectly fair, work-conserving link would give, the
"processor-sharing model" of issue 13.

Prints Markdown: per series and TCP, the mean over seeds of the worst
completion time, of the PS bound and the worst time's excess over it (the
issue's target: within 15 %); of the last completion (the makespan), split
into how much it exceeds PS's (the first start plus all the work at C),
the part of that the bottleneck spent carrying packets beyond the work
(data segments sent twice, and the handshakes' segments; from the packet
trace) and the part it sat idle; the number of flows that lost a SYN;
and, for each run's worst flow, its SYNs and data segments sent again, its
largest RTO and its time in the loss state (RTO recovery).  Then the worst
completion time per seed.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import csv
import gzip
import io
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from qlab import finalise  # noqa: E402
from qlab import scenario as sc  # noqa: E402

SCENARIO = ROOT / "scenarios" / "ncq-conf" / "flows.yaml"
SERIES = ("droptail", "ncq")
VARIANTS = {  # name -> (tcp.handshake, NS_ATTRIBUTE_DEFAULT, runner.json's ns3-tcp-patches)
    "ns-3 3.37": (True, "ns3::QlabTcpSocket::HandshakeKarn=false", "ns3-issue-991"),
    "Karn, no 5.7": (True, "ns3::QlabTcpSocket::SynLossRto=0s", "ns3-issue-991,handshake-karn"),
    "Karn + 5.7": (True, None, "ns3-issue-991,handshake-karn,rfc6298-5.7"),
    "no handshake": (False, None, "ns3-issue-991,handshake-karn,rfc6298-5.7"),
}
HEADER_BYTES = 42  # IPv4 + TCP headers (no options) + PPP, per segment
TCP_SAMPLE_NS = 100_000_000


def plans(flows: int, profile: str) -> list[dict[str, Any]]:
    """The ns3 plans of the scenario at workload.flows = flows, both series, every seed."""
    scen = sc.load(SCENARIO)
    jobs = [
        j
        for j in sc.expand(scen, profile, ["ns3"])
        if j.spec["point_values"].get("flows") == flows and j.series in SERIES
    ]
    if not jobs:
        raise SystemExit(f"{SCENARIO}: no sweep point with flows = {flows} in profile {profile}")
    return [j.spec for j in jobs]


def ps_worst_fct_s(plan: dict[str, Any]) -> float:
    """The largest completion time under fluid processor sharing of the
    bottleneck (the module docstring's formula)."""
    link = next(lk for lk in plan["links"] if lk["id"] == "bottleneck")
    rate = link["rate_bps"]
    flows = sorted(plan["flows"], key=lambda f: (f["start_ns"], f["flow_id"]))
    work = {
        f["flow_id"]: 8 * (f["bytes"] + HEADER_BYTES * math.ceil(f["bytes"] / f["seg_bytes"])) for f in flows
    }
    start = {f["flow_id"]: f["start_ns"] / 1e9 for f in flows}
    left: dict[int, float] = {}  # flow -> bits still to serve
    t, i, worst = 0.0, 0, 0.0
    while i < len(flows) or left:
        share = rate / len(left) if left else 0.0
        first_done = min(left.values()) / share if left else math.inf
        next_arrival = start[flows[i]["flow_id"]] if i < len(flows) else math.inf
        dt = min(max(next_arrival - t, 0.0), first_done)
        for k in left:
            left[k] -= dt * share
        t += dt
        for k in [k for k, bits in left.items() if bits <= 1e-6]:
            worst = max(worst, t - start[k])
            del left[k]
        while i < len(flows) and start[flows[i]["flow_id"]] <= t:
            left[flows[i]["flow_id"]] = work[flows[i]["flow_id"]]
            i += 1
    return worst


def run_one(runner: Path, plan: dict[str, Any], variant: str, out: Path) -> dict[str, Any]:
    """One run: plan for the variant, the runner, qlab's checks and finalisation, the numbers."""
    handshake, defaults, expected_patches = VARIANTS[variant]
    env = {k: v for k, v in os.environ.items() if k != "NS_ATTRIBUTE_DEFAULT"}
    if defaults:
        env["NS_ATTRIBUTE_DEFAULT"] = defaults
    plan = json.loads(json.dumps(plan))
    plan["tcp"]["handshake"] = handshake
    plan["trace"].update(
        tcp=[f["flow_id"] for f in plan["flows"]], tcp_sample_interval_ns=TCP_SAMPLE_NS, packets=True
    )
    out.mkdir(parents=True, exist_ok=True)
    (out / "plan.json").write_text(json.dumps(plan, sort_keys=True))
    proc = subprocess.run(
        ["nice", str(runner), str(out / "plan.json"), str(out)],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        raise SystemExit(f"{runner} failed on {out}: {proc.stderr.strip()}")
    facts = json.loads((out / "runner.json").read_text())
    problems, tables = finalise.check_raw(out, plan, facts)
    if problems:
        raise SystemExit(f"{out}: the raw facts fail qlab's checks: {problems[:3]}")
    finalise.finalise(out, plan, facts, tables)
    flows = list(csv.DictReader(io.TextIOWrapper(gzip.open(out / "flows.csv.gz"), newline="")))
    if not all(r["completed"] == "1" for r in flows):
        raise SystemExit(f"{out}: not every flow completed")
    fct = {int(r["flow_id"]): float(r["fct_s"]) for r in flows}
    worst_id = max(fct, key=lambda k: (fct[k], -k))
    tcp = [r for r in tables["tcp_facts"] if r["flow_id"] == worst_id]
    loss_ns = sum(
        b["time_ns"] - a["time_ns"] for a, b in zip(tcp, tcp[1:], strict=False) if a["ca_state"] == "loss"
    )
    last = {r["flow_id"]: r for r in tables["tcp_facts"]}
    if facts["versions"].get("ns3-tcp-patches") != expected_patches:
        raise SystemExit(
            f"{out}: runner.json says {facts['versions'].get('ns3-tcp-patches')!r}, "
            f"expected {expected_patches!r}"
        )
    # The makespan beyond PS's (from the first start, all the work at C):
    # what the bottleneck carried beyond the work (data segments sent twice:
    # without SACK, ns-3 resends everything outstanding after an RTO,
    # delivered or not; and the handshake's segments), and the time it
    # had nothing to send.
    rate = next(lk["rate_bps"] for lk in plan["links"] if lk["id"] == "bottleneck")
    work_s = (
        sum(8 * (f["bytes"] + HEADER_BYTES * math.ceil(f["bytes"] / f["seg_bytes"])) for f in plan["flows"])
        / rate
    )
    busy_s = sum(8 * (r["len_bytes"] + 2) for r in tables["packet_facts"] if r["event"] == "deq") / rate
    span_s = max(float(r["end_s"]) for r in flows) - min(f["start_ns"] for f in plan["flows"]) / 1e9
    return {
        "series": plan["series"],
        "seed": plan["seed"],
        "variant": variant,
        "excess_s": span_s - work_s,
        "resent_s": busy_s - work_s,
        "idle_s": span_s - busy_s,
        "worst_fct_s": fct[worst_id],
        "makespan_s": max(float(r["end_s"]) for r in flows),
        "ps_worst_fct_s": ps_worst_fct_s(plan),
        "flows_syn_lost": sum(r["syn_retx_packets"] > 0 for r in last.values()),
        "worst_flow": worst_id,
        "worst_syn_retx": tcp[-1]["syn_retx_packets"],
        "worst_retx": tcp[-1]["retx_packets"],
        "worst_max_rto_s": max(r["rto_ns"] for r in tcp) / 1e9,
        "worst_loss_state_s": loss_ns / 1e9,
    }


def mean(rows: list[dict[str, Any]], key: str) -> float:
    return statistics.mean(r[key] for r in rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--flows", type=int, default=100)
    ap.add_argument("--profile", default="quick")
    ap.add_argument("--jobs", type=int, default=2, help="runs at once (the machine is shared)")
    ap.add_argument("--out", type=Path, help="keep every run here (default: a temporary directory)")
    ap.add_argument(
        "--runner",
        type=Path,
        default=Path(os.environ.get("QLAB_NS3_RUNNER", ROOT / "build/ns3/qlab-ns3-run")),
    )
    args = ap.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="qlab-tcp-handshake-"))
    try:
        todo = [
            (p, v, out / "".join(c if c.isalnum() else "-" for c in v) / f"{p['series']}-seed-{p['seed']}")
            for p in plans(args.flows, args.profile)
            for v in VARIANTS
        ]
        with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
            results = list(pool.map(lambda t: run_one(args.runner, *t), todo))
    finally:
        if args.out is None:
            shutil.rmtree(out, ignore_errors=True)
    if args.out:
        (args.out / "results.json").write_text(json.dumps(results, indent=1) + "\n")

    seeds = sorted({r["seed"] for r in results})
    print(
        f"ncq-conf/flows, {args.flows} flows, profile {args.profile}, seeds {seeds[0]}-{seeds[-1]} "
        f"(means over seeds)\n"
    )
    print(
        "| series | TCP | worst FCT s | PS bound s | worst / PS | makespan s: beyond PS's, carried twice, "
        "idle | flows that lost a SYN | worst flow: SYNs resent, data resent, largest RTO s, "
        "s in loss state |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for s in SERIES:
        for v in VARIANTS:
            rows = [r for r in results if r["series"] == s and r["variant"] == v]
            ratio = statistics.mean(r["worst_fct_s"] / r["ps_worst_fct_s"] for r in rows)
            lo = min(r["worst_fct_s"] for r in rows)
            hi = max(r["worst_fct_s"] for r in rows)
            print(
                f"| {s} | {v} | {mean(rows, 'worst_fct_s'):.2f} [{lo:.2f}, {hi:.2f}] "
                f"| {mean(rows, 'ps_worst_fct_s'):.2f} | {ratio:.3f} (+{100 * (ratio - 1):.0f} %) "
                f"| {mean(rows, 'makespan_s'):.2f}: {mean(rows, 'excess_s'):.2f}, "
                f"{mean(rows, 'resent_s'):.2f}, {mean(rows, 'idle_s'):.2f} "
                f"| {mean(rows, 'flows_syn_lost'):.1f} "
                f"| {mean(rows, 'worst_syn_retx'):.1f}, {mean(rows, 'worst_retx'):.1f}, "
                f"{mean(rows, 'worst_max_rto_s'):.2f}, {mean(rows, 'worst_loss_state_s'):.2f} |"
            )
    print("\nPer seed: worst FCT s (worst flow: SYNs resent / data resent / largest RTO s) | PS bound s\n")
    print("| series | seed | PS bound | " + " | ".join(VARIANTS) + " |")
    print("|---|---|---|" + "---|" * len(VARIANTS))
    for s in SERIES:
        for seed in seeds:
            cells = []
            for v in VARIANTS:
                r = next(r for r in results if r["series"] == s and r["seed"] == seed and r["variant"] == v)
                cells.append(
                    f"{r['worst_fct_s']:.2f} ({r['worst_syn_retx']}/{r['worst_retx']}/"
                    f"{r['worst_max_rto_s']:.1f})"
                )
            ps = next(r["ps_worst_fct_s"] for r in results if r["series"] == s and r["seed"] == seed)
            print(f"| {s} | {seed} | {ps:.2f} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Where the emulation validation's deviation comes from (issue 18, item 5).

    benchmarks/emu-arrivals.py RESULTS [SCENARIO]

For each Mininet run of a validation scenario (default validation/emu-md1)
it replays FIFO's waiting times (Lindley's recursion, W_n+1 = max(0, W_n +
S - A_n+1)) twice, with the bottleneck's constant service time S (IP length
plus qlab-emu's 2 bytes of overhead, at the link's rate):

- on the arrival times qlab-emu recorded (its packet trace's `enq` events):
  equal to the emulator's own sojourns if its queue and link model are
  exact, whatever the hosts did;
- on the send times the plan's generator drew (qlab.plan.poisson_times, the
  contract's Poisson process): the wait the stream would have had if the
  hosts had sent on time.

So (emulator / scheduled - 1) is what the hosts' timing (the Python sender's
lateness, the kernel's timestamps) adds to the mean wait, and (emulator /
replayed on its arrivals - 1) the emulator's own error. It also prints how
far each packet arrived from its scheduled time (relative to the first
packet's, which absorbs the path's constant latency).

Needs the runs' packet traces (the scenario traces them) and the plans
under RESULTS/jobs. Pure Python; a few seconds per run.
"""

from __future__ import annotations

import csv
import gzip
import itertools
import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from qlab import plan as plans  # noqa: E402
from qlab.backends.mininet import helper  # noqa: E402

# the overhead qlab-emu's link model adds to each packet (the Mininet runner passes it)
OVERHEAD_BYTES = helper().LINK_OVERHEAD_BYTES


def lindley(arrivals_s: list[float], service_s: list[float]) -> list[float]:
    """FIFO waits of packets arriving at arrivals_s, each served for service_s."""
    out, w = [], 0.0
    for i, t in enumerate(arrivals_s):
        if i:
            w = max(0.0, w + service_s[i - 1] - (t - arrivals_s[i - 1]))
        out.append(w)
    return out


def one_run(run: Path, plan: dict) -> dict:
    flow = next(f for f in plan["flows"] if f["app"] == "poisson")
    rate = next(link["rate_bps"] for link in plan["links"] if link["id"] == "bottleneck")
    enq, sizes, sojourn = [], [], []
    with gzip.open(run / "packets.csv.gz", "rt") as fh:
        for r in csv.DictReader(fh):
            if r["flow_id"] != str(flow["flow_id"]):
                continue
            if r["event"] == "enq":
                enq.append(float(r["time_s"]))
                sizes.append(int(r["len_bytes"]))
            elif r["event"] == "deq":
                sojourn.append(float(r["sojourn_s"]))
    service = [8 * (b + OVERHEAD_BYTES) / rate for b in sizes]
    drawn = plans.poisson_times(flow["mean_interval_ns"], flow["poisson_seed"], flow["on_periods_ns"])
    scheduled = [t / 1e9 for t in itertools.islice(drawn, len(enq))]
    lag = sorted((a - s) - (enq[0] - scheduled[0]) for a, s in zip(enq, scheduled, strict=True))
    return {
        "packets": len(enq),
        "emulator": statistics.fmean(sojourn),
        "replayed": statistics.fmean(lindley(enq, service)),
        "scheduled": statistics.fmean(lindley(scheduled, service)),
        "lag_p50_us": 1e6 * lag[len(lag) // 2],
        "lag_p99_us": 1e6 * lag[int(0.99 * (len(lag) - 1))],
        "lag_max_us": 1e6 * lag[-1],
    }


def main(argv: list[str]) -> int:
    if len(argv) not in (2, 3):
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    results = Path(argv[1])
    scenario = argv[2] if len(argv) == 3 else "validation/emu-md1"
    runs = sorted((results / scenario / "mininet").glob("*/seed-*"))
    if not runs:
        print(f"emu-arrivals: no Mininet runs under {results / scenario / 'mininet'}", file=sys.stderr)
        return 1
    print(
        "| point | seed | packets | emulator W (ms) | replayed / emulator - 1 | emulator / scheduled - 1 "
        "| lag p50 / p99 / max (us) |"
    )
    print("|---|---|---|---|---|---|---|")
    by_point: dict[str, list[float]] = {}
    for run in runs:
        point, seed = run.parent.name, run.name
        plan = json.loads((results / "jobs" / scenario / "mininet" / point / f"{seed}.json").read_text())
        r = one_run(run, plan)
        by_point.setdefault(point, []).append(r["emulator"] / r["scheduled"] - 1)
        model_err = 100 * (r["replayed"] / r["emulator"] - 1)
        hosts = 100 * (r["emulator"] / r["scheduled"] - 1)
        print(
            f"| {point} | {seed.split('-')[1]} | {r['packets']} | {1e3 * r['emulator']:.4f} "
            f"| {model_err:+.4f}% | {hosts:+.2f}% "
            f"| {r['lag_p50_us']:.0f} / {r['lag_p99_us']:.0f} / {r['lag_max_us']:.0f} |"
        )
    print()
    for point, gaps in by_point.items():
        sd = statistics.stdev(gaps) if len(gaps) > 1 else float("nan")
        print(
            f"{point}: the hosts' timing adds {100 * statistics.fmean(gaps):+.2f}% to the mean wait "
            f"(sd {100 * sd:.2f}% over {len(gaps)} seeds)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

"""Golden-vector events for rbaqm (deterministic, stdlib only).

    python3 disciplines/core/golden/rbaqm/make_cases.py            # write events + args
    python3 disciplines/core/golden/rbaqm/make_cases.py --decide   # also (re)write decisions

Decisions are qcore-replay's output, reviewed by hand for the rows listed in
README.md; regenerate them only for an intended change of behaviour.
"""

from __future__ import annotations

import random
import sys
from functools import partial
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
import casegen  # noqa: E402
from casegen import deq, write_cases  # noqa: E402

enq = partial(casegen.enq, flow="")  # this discipline's rows leave prec and flow empty


def paced(seconds, rates_bps, link_bps, length=1000, seed=0):
    """Class c sends `length`-byte packets at rates_bps[c] (+-25% jitter,
    Python's seeded generator), the link asks for a packet every
    length*8/link_bps.  Events merged in time order (arrivals first on ties)."""
    rng = random.Random(seed)
    events = []
    for c, rate in enumerate(rates_bps):
        if not rate:
            continue
        t = rng.randrange(1000, 1000000)
        gap = length * 8 * 10**9 // rate
        while t < seconds * 10**9:
            events.append((t, 0, enq(t, length, c)))
            t += int(gap * rng.uniform(0.75, 1.25))
    gap = length * 8 * 10**9 // link_bps
    for k in range(1, seconds * 10**9 // gap + 1):
        events.append((k * gap, 1, deq(k * gap)))
    return [row for _, _, row in sorted(events)]


def fill_then_drain(per_class, classes, length=1000):
    """per_class arrivals per class (round robin), then a full drain."""
    rows, t = [], 0
    for _ in range(per_class):
        for c in range(classes):
            t += 1000
            rows.append(enq(t, length, c))
    for _ in range(per_class * classes + 2):
        t += 1000
        rows.append(deq(t))
    return rows


TWO = paced(2, [2000000, 250000], 1000000, seed=1)
THREE = paced(3, [1500000, 100000, 600000], 1000000, seed=2)

CASES = {
    # a link so fast that x << u c: P stays 0, no draws; the drain is the
    # low-jitter WFQ's order 001001200100123 for the default W
    "wfq-order-no-aqm": ("--param rate_bps=1000000000000 --param limit_pkts=1000", fill_then_drain(12, 4)),
    # per-class limit 3 on the fast link: overflow drops, no AQM
    "overflow-limit-3": ("--param rate_bps=1000000000000 --param limit_pkts=3", fill_then_drain(5, 4)),
    # class 0 offers 2 Mb/s, class 1 0.25 Mb/s to a 1 Mb/s link: P_0 climbs,
    # early drops drawn from the generator; window of 8 served packets
    "aqm-window-8-seed-3": (
        "--param classes=2 --param weights_bytes=1001:501 --param window_pkts=8 --seed 3",
        TWO,
    ),
    "aqm-window-8-seed-4": (
        "--param classes=2 --param weights_bytes=1001:501 --param window_pkts=8 --seed 4",
        TWO,
    ),
    # the same events counting only admitted packets: class 0 throttled to
    # about u c instead of P -> 1
    "admitted-rate-seed-3": (
        "--param classes=2 --param weights_bytes=1001:501 --param window_pkts=8 "
        "--param rate_estimate=admitted --seed 3",
        TWO,
    ),
    "ecn-marks-seed-3": (
        "--param classes=2 --param weights_bytes=1001:501 --param window_pkts=8 --param ecn=1 --seed 3",
        TWO,
    ),
    # admitted-rate-seed-3 with the capacity EWMA instead of the window
    "capacity-ewma-seed-3": (
        "--param classes=2 --param weights_bytes=1001:501 --param rate_estimate=admitted "
        "--param capacity_estimator=ewma --param capacity_weight=0.125 --seed 3",
        TWO,
    ),
    # three classes, one greedy (1.5 Mb/s), one light (0.1), one middling
    # (0.6) on 1 Mb/s, W 2:1:1: fair share on and off on the same events
    # (admitted rates, so that the allocated capacities set the throughput)
    "fair-share-on-seed-5": (
        "--param classes=3 --param weights_bytes=501:251:251 --param u_ppm=930000 "
        "--param rate_estimate=admitted --seed 5",
        THREE,
    ),
    "fair-share-off-seed-5": (
        "--param classes=3 --param weights_bytes=501:251:251 --param u_ppm=930000 "
        "--param rate_estimate=admitted --param fair_share=0 --seed 5",
        THREE,
    ),
    # a 1 kb/s link: the first arrival's error is 200 S, so P jumps to 1:
    # deterministic drops, no draws (same rows for any seed)
    "probability-one": (
        "--param classes=2 --param weights_bytes=1001 --param rate_bps=1000",
        fill_then_drain(4, 2),
    ),
    # per-class u (0.8 and 0.95, Scenario 3's shape), k 0.01, gain 0.5
    "u-list-k-gain-seed-6": (
        "--param classes=2 --param weights_bytes=251 --param u_ppm=800000:950000 "
        "--param k=0.01 --param gain=0.5 --param tau_ns=100000000 --seed 6",
        paced(2, [900000, 900000], 1000000, seed=3),
    ),
}


def main() -> int:
    write_cases(HERE, CASES, "--decide" in sys.argv[1:])
    return 0


if __name__ == "__main__":
    sys.exit(main())

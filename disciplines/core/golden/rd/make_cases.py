"""Golden-vector events for rd (RD: arrival-time head drop; deterministic, stdlib only).

    python3 disciplines/core/golden/rd/make_cases.py            # write events + args
    python3 disciplines/core/golden/rd/make_cases.py --decide   # also (re)write decisions

cls 0 = D (band 0), 1 = R (band 1); flow is the flow hash the estimated
counts use. The link in the base configuration is 1 Mbit/s (8000 ns per
byte). Decisions are qcore-replay's output, reviewed by hand on the rows
README.md names; regenerate them only for an intended change of behaviour.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from casegen import deq, enq, write_cases  # noqa: E402

NS_PER_BYTE = 8000  # 1 Mbit/s

# k = 1, n = 1/1 (alpha = 1): RD B_D = 1 Mbit/s * 50 ms / 2 / 8 = 3125 bytes,
# B_R = min(1000, 4000 - 3125) = 875.
BASE = (
    "--param rate_bps=1000000 --param d_ns=50000000 --param k=1 --param sd_max_bytes=100"
    " --param sr_max_bytes=500 --param buffer_bytes=4000 --param bmax_bytes=1000"
)
STATIC = BASE + " --param n_d=1 --param n_r=1"


def fill_then_drain(d_sizes, r_sizes, ndeq, step=1000):
    rows, t = [], 0
    for s in d_sizes:
        rows.append(enq(t, s, 0))
        t += step
    for s in r_sizes:
        rows.append(enq(t, s, 1))
        t += step
    for _ in range(ndeq):
        rows.append(deq(t))
        t += step
    return rows


MS = 1_000_000


def head_drops():
    return [
        enq(0, 100, 0),
        enq(10 * MS, 100, 0),
        enq(20 * MS, 100, 0),
        enq(20 * MS, 500, 1),
        deq(60 * MS),  # pkt 0 waited 60 ms > d: dropped; pkt 1 waited 50 ms = d: sent
        deq(80 * MS),  # pkt 2 waited 60 ms: dropped before choosing; R sent
        enq(100 * MS, 100, 0),
        enq(101 * MS, 100, 0),
        enq(102 * MS, 100, 0),
        deq(153 * MS),  # three head drops in one dequeue, then empty
        enq(160 * MS, 100, 0),
        enq(160 * MS, 500, 1),
        deq(210 * MS),  # pkt 7 waited exactly d: sent (not dropped)
        deq(210 * MS + 1),  # R: never head-dropped
        deq(211 * MS),
    ]


def random_link(seed, n, d_sizes, r_sizes, p_d=0.5, load=1.3):
    """Arrivals at `load` times the link rate; a dequeue whenever the link
    would be free if every dequeue sent a 300-byte packet."""
    rng = random.Random(seed)
    t_arr, t_deq = 0, 0
    mean = sum(d_sizes) / len(d_sizes) * p_d + sum(r_sizes) / len(r_sizes) * (1 - p_d)
    gap = int(mean * NS_PER_BYTE / load)
    events = []
    for _ in range(n):
        t_arr += int(rng.expovariate(1.0) * gap) + 1
        d = rng.random() < p_d
        events.append(
            (
                t_arr,
                0,
                enq(
                    t_arr,
                    rng.choice(d_sizes if d else r_sizes),
                    0 if d else 1,
                    flow=rng.randrange(4) + (0 if d else 10),
                ),
            )
        )
    while t_deq < t_arr + 200 * 300 * NS_PER_BYTE:
        t_deq += 300 * NS_PER_BYTE
        events.append((t_deq, 1, deq(t_deq)))
    events.sort(key=lambda e: (e[0], e[1]))
    return [e[2] for e in events]


CASES = {
    # sojourn > d drops at the head (drop_head rows before their dequeue),
    # sojourn = d is sent; several head drops in one dequeue; R never dropped;
    "head-drops": (STATIC, head_drops()),
    # byte-exact drop-tail at RD's B_D = 3125 and B_R = 875; empty at the end
    "sizing-overflow": (STATIC, fill_then_drain([100] * 32 + [25, 1], [500, 375, 1], 40)),
    # overload, d = 10 ms (B_D = 625), 20 ms period: head drops, overflow
    # in both queues, resets, yields
    "random-overload": (
        STATIC + " --param d_ns=10000000 --param period_ns=20000000",
        random_link(2, 600, [40, 60, 100, 200], [200, 500, 1000], p_d=0.7, load=1.6),
    ),
}


def main():
    write_cases(HERE, CASES, "--decide" in sys.argv[1:])


if __name__ == "__main__":
    main()

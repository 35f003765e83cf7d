"""Golden-vector events for srd (S-RD; deterministic, stdlib only).

    python3 disciplines/core/golden/srd/make_cases.py            # write events + args
    python3 disciplines/core/golden/srd/make_cases.py --decide   # also (re)write decisions

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

# k = 1, n = 1/1 (alpha = 1): S-RD w = 2/C (8*100 + 8*500) = 9.6 ms,
# B_D = (50 - 9.6) ms * 0.5 Mbit/s / 8 = 2525 bytes, B_R = min(1000, 4000 - 2525) = 1000.
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


def periodic(period_deq_ns, n_deq, d_len, r_len, nd=12, nr=6):
    rows = [enq(0, d_len, 0) for _ in range(nd)] + [enq(0, r_len, 1) for _ in range(nr)]
    rows += [deq(1000 + i * period_deq_ns) for i in range(n_deq)]
    return rows


def estimated():
    rows, t = [], 0
    for i in range(30):  # 3 D flows; n = 1/1 sizing admits 25
        rows.append(enq(t, 100, 0, flow=1 + i % 3))
        t += 1000
    rows.append(enq(t, 500, 1, flow=9))
    t += 1000
    rows.append(deq(t))  # first dequeue: counts 3 D flows, 1 R flow -> B_D 3887
    t += 1000
    for _ in range(15):  # one D flow only from here on
        rows.append(enq(t, 100, 0, flow=1))
        t += 1000
    t = 1_000_200_000  # past the 1 s period: recount over it -> n_D 1, B_D 2525
    rows.append(deq(t))
    t += 1000
    rows.append(enq(t, 100, 0, flow=1))
    for _ in range(45):
        t += 1000
        rows.append(deq(t))
    return rows


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
    # byte-exact drop-tail per queue at B_D = 2525 and B_R = 1000; alpha = 1
    # drain order (D first at 0 <= 0, then by bytes), empty at the end
    "sizing-overflow": (STATIC, fill_then_drain([100] * 26 + [25, 1], [500, 500, 1], 35)),
    # k = 0.25, n_D = 2, n_R = 3: alpha = 8/3; serve D iff L_D*250000*3 <= 2*10^6*L_R
    "scheduler-ratio": (
        BASE + " --param k=0.25 --param n_d=2 --param n_r=3 --param period_ns=10000000000",
        fill_then_drain([100, 60, 100, 40, 100, 80] * 4, [500, 300, 500, 200] * 2, 40),
    ),
    # period 1 ms, a dequeue every 300 us: resets at every 4th dequeue zero
    # L_D/L_R, so the pattern is D R D D | D R D D | ... instead of the
    # unreset D R D D D D D R ...
    "period-resets": (
        BASE + " --param buffer_bytes=10000 --param bmax_bytes=5000 --param n_d=1"
        " --param n_r=1 --param period_ns=1000000",
        periodic(300000, 34, 100, 500, nd=24, nr=8),
    ),
    # time-stamp vector: n_D estimated 3 at the first dequeue (B_D 2525 ->
    # 3887), then 1 after the 1 s period (back to 2525)
    "estimated-flows": (
        BASE + " --param buffer_bytes=10000 --param bmax_bytes=5000"
        " --param n_d=0 --param n_r=0 --param period_ns=1000000000",
        estimated(),
    ),
    # only R, then only D: an empty chosen queue yields to the other
    "yield-and-empty": (
        STATIC,
        [
            deq(0),
            enq(1000, 500, 1),
            enq(2000, 500, 1),
            deq(3000),
            deq(4000),
            deq(5000),
            enq(6000, 100, 0),
            enq(7000, 100, 0),
            enq(8000, 100, 0),
            deq(9000),
            deq(10000),
            deq(11000),
            deq(12000),
        ],
    ),
    # overload at 1.3x, 20 ms period, random sizes
    "random-overload": (
        STATIC + " --param period_ns=20000000",
        random_link(1, 600, [40, 60, 100], [200, 500, 1000]),
    ),
}


def main():
    write_cases(HERE, CASES, "--decide" in sys.argv[1:])


if __name__ == "__main__":
    main()

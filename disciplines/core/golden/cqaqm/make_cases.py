"""Golden-vector events for cqaqm (deterministic, stdlib only).

    python3 disciplines/core/golden/cqaqm/make_cases.py            # write events + args
    python3 disciplines/core/golden/cqaqm/make_cases.py --decide   # also (re)write decisions

cls is the QoS class q (1 -> high queue, band 0; 0 -> low queue, band 1),
prec the precedence p (1 = high). Decisions are qcore-replay's output,
reviewed by hand on the rows README.md names; regenerate them only for an
intended change of behaviour.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from casegen import deq, enq, write_cases  # noqa: E402


def seq(items):
    """items: ('e', len, q, p) or ('d',); one row per 1000 ns."""
    rows = []
    for i, it in enumerate(items):
        t = i * 1000
        rows.append(deq(t) if it[0] == "d" else enq(t, it[1], it[2], it[3]))
    return rows


def random_stream(seed, n, p_arrival, p_high_q, p_high_prec, sizes=(100,)):
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        t = i * 1000
        if rng.random() < p_arrival:
            q = 1 if rng.random() < p_high_q else 0
            p = 1 if rng.random() < p_high_prec else 0
            rows.append(enq(t, rng.choice(sizes) if len(sizes) > 1 else sizes[0], q, p, q * 2 + p))
        else:
            rows.append(deq(t))
    for j in range(60):  # drain, ending on empty dequeues
        rows.append(deq((n + j) * 1000))
    return rows


SMALL = (
    "--param b_high=3 --param b_low=5 --param t_high_local=2 --param t_low_local=3 --param t_low_nonlocal=4"
)

CASES = {
    # low queue: p=0 admitted below t_low_local, precedence_local at 3,
    # p=1 up to b_low, overflow at 5 (tried before precedence), strict drain
    "low-queue-rules": (
        SMALL,
        seq(
            [
                ("e", 100, 0, 0),
                ("e", 100, 0, 0),
                ("e", 100, 0, 0),
                ("e", 100, 0, 0),
                ("e", 100, 0, 1),
                ("e", 100, 0, 1),
                ("e", 100, 0, 1),
                ("e", 100, 0, 0),
                ("d",),
                ("e", 100, 0, 0),
                ("d",),
                ("d",),
                ("e", 100, 0, 0),
                ("d",),
                ("d",),
                ("d",),
                ("d",),
                ("d",),
            ]
        ),
    ),
    # cross rule: occ_low reaches t_low_nonlocal=4 -> high p=0 dropped
    # (precedence_cross), high p=1 admitted; high local before cross;
    # high overflow; flag kept at occ_low 3 (= t_low_local), cleared at 2
    "cross-rule-on-off": (
        SMALL,
        seq(
            [
                ("e", 100, 0, 1),
                ("e", 100, 0, 1),
                ("e", 100, 0, 1),
                ("e", 100, 1, 0),  # occ_low 3 < 4: admitted
                ("e", 100, 0, 1),  # occ_low 4: flag on
                ("e", 100, 1, 0),  # cross
                ("e", 100, 1, 1),  # p=1 admitted, occ_high 2
                ("e", 100, 1, 0),  # local before cross
                ("e", 100, 1, 1),
                ("e", 100, 1, 1),  # occ_high 3, then overflow
                ("d",),
                ("d",),
                ("d",),  # high first (strict)
                ("d",),  # low 4 -> 3: flag stays
                ("e", 100, 1, 0),  # still cross
                ("d",),  # low 3 -> 2: flag off
                ("e", 100, 1, 0),  # admitted
                ("d",),
                ("d",),
                ("d",),
                ("d",),
                ("d",),
            ]
        ),
    ),
    # hysteresis=1: the cross rule stays on down to t_low_off=2, the low
    # local rule down to t_low_local_off=2, the high one down to 1
    "hysteresis": (
        SMALL + " --param hysteresis=1 --param t_low_off=2 --param t_low_local_off=2"
        " --param t_high_local_off=1",
        seq(
            [
                ("e", 100, 0, 1),
                ("e", 100, 0, 1),
                ("e", 100, 0, 1),
                ("e", 100, 0, 1),
                ("d",),
                ("d",),  # occ_low 2
                ("e", 100, 1, 0),  # cross still on at 2 (off below 2)
                ("e", 100, 0, 0),  # low local still on at 2
                ("d",),  # low 2 -> 1: all clear
                ("e", 100, 0, 0),  # admitted
                ("e", 100, 1, 1),
                ("e", 100, 1, 1),  # occ_high 2: high local on
                ("d",),  # occ_high 1
                ("e", 100, 1, 0),  # local still on at 1
                ("d",),  # occ_high 0: off
                ("e", 100, 1, 0),  # admitted (occ_low 2 < 4)
                ("d",),
                ("d",),
                ("d",),
                ("d",),
            ]
        ),
    ),
    # the paper's identity: thresholds at the buffer sizes = two finite
    # queues under strict priority (overflow drops only, never precedence)
    "identity-two-finite-queues": (
        "--param b_high=4 --param b_low=6 --param t_high_local=4 --param t_low_local=6 --param t_low_nonlocal=6",
        random_stream(1, 400, 0.6, 0.4, 0.5),
    ),
    # the three rules crossing both ways on a random overload, strict
    "random-strict": (
        "--param b_high=6 --param b_low=12 --param t_high_local=3 --param t_low_local=6 --param t_low_nonlocal=9",
        random_stream(2, 600, 0.65, 0.4, 0.5),
    ),
    # WRR 3:1: HHHL while both are backlogged, then low alone, then empty
    "wrr-3-1": (
        "--param scheduler=wrr --param weights=3:1",
        seq([("e", 100, 1, 1)] * 8 + [("e", 100, 0, 1)] * 8 + [("d",)] * 18),
    ),
    # WRR with the AQM active, random
    "random-wrr": (
        "--param scheduler=wrr --param weights=2:3 --param b_high=6 --param b_low=12 --param t_high_local=3"
        " --param t_low_local=6 --param t_low_nonlocal=9 --param hysteresis=1 --param t_low_off=4"
        " --param t_low_local_off=5 --param t_high_local_off=2",
        random_stream(3, 600, 0.6, 0.5, 0.5),
    ),
    # DRR (Linux sch_drr): quanta 600:300, random sizes 40..1500
    "random-drr": (
        "--param scheduler=drr --param quantum_bytes=600:300 --param b_high=20 --param b_low=20"
        " --param t_high_local=10 --param t_low_local=12 --param t_low_nonlocal=16",
        random_stream(4, 600, 0.55, 0.5, 0.6, sizes=(40, 100, 576, 1000, 1500)),
    ),
}


def main():
    write_cases(HERE, CASES, "--decide" in sys.argv[1:])


if __name__ == "__main__":
    main()

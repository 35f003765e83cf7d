"""Golden-vector events for droptail, prio and ncq (deterministic, stdlib only).

    python3 disciplines/core/golden/make_cases.py            # write events + args
    python3 disciplines/core/golden/make_cases.py --decide   # also (re)write decisions

Decisions are qcore-replay's output, reviewed by hand for the key rows listed
in each discipline's README.md; once committed they are the reference every
backend must match bit-exactly. Regenerate them only for an intended change
of behaviour, and say so in the commit.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from casegen import deq, enq, write_cases  # noqa: E402


def mixed(seed, n, small_share, small_len=140, large_len=1040, deq_every=2, classes=1):
    """n arrivals (small with probability small_share), a dequeue after every
    deq_every arrivals, 1 us apart."""
    rng = random.Random(seed)
    rows, t = [], 0
    for i in range(n):
        t += 1000
        small = rng.random() < small_share
        cls = rng.randrange(classes) if classes > 1 else ""
        rows.append(enq(t, small_len if small else large_len, cls, "", 1 if small else 2))
        if (i + 1) % deq_every == 0:
            t += 1000
            rows.append(deq(t))
    for _ in range(n // deq_every + 3):  # drain, ending on empty dequeues
        t += 1000
        rows.append(deq(t))
    return rows


CASES = {
    "droptail": {
        "overflow-and-empty": (
            "--param limit_pkts=3",
            [
                enq(0, 100),
                enq(1, 200),
                enq(2, 300),
                enq(3, 400),
                deq(4),
                enq(5, 500),
                enq(6, 600),
                deq(7),
                deq(8),
                deq(9),
                deq(10),
                deq(11),
            ],
        ),
        "random-limit-10": ("--param limit_pkts=10", mixed(1, 200, 0.3, deq_every=3)),
    },
    "prio": {
        "strict-order-shared-limit": (
            "--param bands=3 --param limit_pkts=4",
            [
                enq(0, 100, 2),
                enq(1, 100, 1),
                enq(2, 100, 0),
                enq(3, 100, 2),
                enq(4, 100, 0),
                deq(5),
                deq(6),
                enq(7, 100, 1),
                deq(8),
                deq(9),
                deq(10),
                deq(11),
            ],
        ),
        "random-4-bands": (
            "--param bands=4 --param limit_pkts=8",
            mixed(2, 300, 0.5, classes=4, deq_every=3),
        ),
    },
    "ncq": {
        # thresh 0.25: favoured/received crosses the bound both ways
        "favour-up-to-thresh": (
            "--param size_bytes=141 --param thresh=0.25 --param limit_pkts=100",
            mixed(3, 120, 0.5),
        ),
        # shared limit: drops in both bands, band recorded on the dropped packet,
        # counters counted before the overflow check
        "shared-overflow": (
            "--param size_bytes=141 --param thresh=0.5 --param limit_pkts=4",
            [
                enq(0, 140),
                enq(1, 1040),
                enq(2, 1040),
                enq(3, 140),
                enq(4, 140),
                enq(5, 1040),
                deq(6),
                deq(7),
                enq(8, 140),
                deq(9),
                deq(10),
                deq(11),
                deq(12),
            ],
        ),
        "thresh-0-is-droptail": (
            "--param size_bytes=141 --param thresh=0 --param limit_pkts=10",
            mixed(4, 100, 0.5, deq_every=3),
        ),
        "thresh-1-small-first": (
            "--param size_bytes=141 --param thresh=1 --param limit_pkts=10",
            mixed(5, 100, 0.5, deq_every=3),
        ),
        # the literal size test: 140-byte packets are never small under < 100
        "literal-size-100": ("--param size_bytes=100 --param thresh=0.05", mixed(6, 60, 0.5)),
        "conf-literal-counter": (
            "--param size_bytes=141 --param thresh=0.3 --param variant=conf-literal",
            mixed(7, 80, 0.8),
        ),
        "probabilistic-seed-7": (
            "--param size_bytes=141 --param thresh=0.3 --param mode=probabilistic --param ramp=0.5 --seed 7",
            mixed(8, 200, 0.5),
        ),
        "probabilistic-seed-8": (
            "--param size_bytes=141 --param thresh=0.3 --param mode=probabilistic --param ramp=0.5 --seed 8",
            mixed(8, 200, 0.5),
        ),
    },
}


def main() -> int:
    decide = "--decide" in sys.argv[1:]
    for disc, cases in CASES.items():
        write_cases(HERE / disc, cases, decide)
    return 0


if __name__ == "__main__":
    sys.exit(main())

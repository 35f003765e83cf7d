"""Golden-vector events for wred (deterministic, stdlib only).

    python3 disciplines/core/golden/wred/make_cases.py            # write events + args
    python3 disciplines/core/golden/wred/make_cases.py --decide   # also (re)write decisions
    python3 disciplines/core/golden/wred/make_cases.py --check    # compare with the model below

Decisions are qcore-replay's output, reviewed by hand for the rows listed in
README.md and checked row by row against an independent model of wred.h
(and of rbaqm Fig. 2 run round by round) in exact Python integers; regenerate
them only for an intended change of behaviour.
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


def mixed(seed, n, classes, arrivals_per_deq, lengths=(1000,), drain=True):
    """n arrivals 1 us apart over random classes, a dequeue with probability
    1/arrivals_per_deq after each, then a drain."""
    rng = random.Random(seed)
    rows, t = [], 0
    for _ in range(n):
        t += 1000
        rows.append(enq(t, rng.choice(lengths), rng.randrange(classes)))
        if rng.random() < 1 / arrivals_per_deq:
            t += 1000
            rows.append(deq(t))
    for _ in range(n if drain else 0):
        t += 1000
        rows.append(deq(t))
    return rows


CASES = {
    # w_q 1: B_w = the class backlog, P = b / q exactly; q 4:8 per class
    "p-is-backlog-over-q-seed-5": (
        "--param classes=2 --param q_pkts=4:8 --param w_q=1 --param weights_bytes=1001:501 --seed 5",
        mixed(1, 300, 2, 2.2),
    ),
    "ecn-marks-seed-5": (
        "--param classes=2 --param q_pkts=4:8 --param w_q=1 "
        "--param weights_bytes=1001:501 --param ecn=1 --seed 5",
        mixed(1, 300, 2, 2.2),
    ),
    # 200 arrivals, then a drain: q huge and w_q tiny, no AQM; the drain is
    # the low-jitter WFQ's order 001001200100123 while all classes hold packets
    "wfq-credit-refills": ("--param q_pkts=1000 --param w_q=0.000001", mixed(2, 200, 4, 1000)),
    # the paper's Scenario 1B shape: 4 classes, q 10, default w_q 0.002, mixed sizes
    "default-4-classes-seed-9": (
        "--seed 9",
        mixed(3, 3000, 4, 1.3, lengths=(40, 576, 1000, 1500), drain=True),
    ),
    # per-class q list 5:10:20 (Scenario 3's values), one class each, w_q 0.05
    "q-list-seed-2": (
        "--param classes=3 --param q_pkts=5:10:20 --param w_q=0.05 --param weights_bytes=501 --seed 2",
        mixed(4, 1500, 3, 1.2),
    ),
}


# ---- an independent model of wred.h in exact integers, for --check -------
M64 = (1 << 64) - 1
ONE = 1 << 32


class Rng:
    """SplitMix64, as qcore_rng."""

    def __init__(self, seed):
        self.s = seed

    def u32(self):
        self.s = (self.s + 0x9E3779B97F4A7C15) & M64
        z = self.s
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
        return (z ^ (z >> 31)) >> 32


def fig2(credit, w, maxs, heads):
    """rbaqm Fig. 2 round by round; heads[i] is None for an empty class."""
    for _ in range(10**6):
        for i, h in enumerate(heads):
            if h is not None and h < credit[i]:
                return i
        refilled = False
        for i in range(len(credit)):
            if credit[i] < maxs:
                credit[i] += w[i]
                refilled = True
        if not refilled:
            break
    return next(i for i, h in enumerate(heads) if h is not None)


def model(events, classes, q, wq_ppm, w, maxs, ecn, seed):
    wq = ONE if wq_ppm >= 10**6 else (wq_ppm << 32) // 10**6
    rng = Rng(seed)
    fifo = [[] for _ in range(classes)]
    avg = [0] * classes
    credit = [0] * classes
    out, pkt = [], 0
    for r in events:
        t, op = r[0], r[1]
        if op == "deq":
            heads = [f[0][1] if f else None for f in fifo]
            if all(h is None for h in heads):
                out.append(f"{t},deq,-1,empty,,")
                continue
            i = fig2(credit, w, maxs, heads)
            p, length = fifo[i].pop(0)
            credit[i] = max(credit[i] - length, 0)
            out.append(f"{t},deq,{p},sent,{i},")
            continue
        length, c = int(r[2]), int(r[3] or 0)
        b = len(fifo[c])
        s = b << 20
        avg[c] = (
            avg[c] + ((s - avg[c]) * wq >> 32 if wq < ONE else s - avg[c])
            if s >= avg[c]
            else avg[c] - ((avg[c] - s) * wq >> 32 if wq < ONE else avg[c] - s)
        )
        qq = q[c] << 20
        prob = ONE if avg[c] >= qq else (avg[c] << 32) // qq
        hit = prob >= ONE or (prob > 0 and rng.u32() < prob)
        verdict, reason = "queued", ""
        if hit:
            verdict, reason = ("marked", "") if ecn else ("dropped", "aqm")
        if verdict != "dropped" and b >= q[c]:
            verdict, reason = "dropped", "overflow"
        if verdict != "dropped":
            fifo[c].append((pkt, length))
        out.append(f"{t},enq,{pkt},{verdict},{c},{reason}")
        pkt += 1
    return out


def check(name, args, events):
    d = casegen.parse_args(
        args,
        dict(
            classes="4",
            q_pkts="10",
            w_q="0.002",
            weights_bytes="1001:501:251:126",
            maxs_bytes="3000",
            ecn="0",
            seed="1",
        ),
    )
    n = int(d["classes"])
    lst = lambda v: [int(x) for x in v.split(":")] * (n if ":" not in v else 1)  # noqa: E731
    want = model(
        casegen.event_fields(events),
        n,
        lst(d["q_pkts"]),
        round(float(d["w_q"]) * 10**6),
        lst(d["weights_bytes"]),
        int(d["maxs_bytes"]),
        int(d["ecn"]),
        int(d["seed"]),
    )
    return casegen.compare(HERE, name, want)


def main() -> int:
    bad = write_cases(HERE, CASES, "--decide" in sys.argv[1:], check if "--check" in sys.argv[1:] else None)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

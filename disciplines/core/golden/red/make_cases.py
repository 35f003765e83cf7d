"""Golden-vector events for red (deterministic, stdlib only).

    python3 disciplines/core/golden/red/make_cases.py            # write events + args
    python3 disciplines/core/golden/red/make_cases.py --decide   # also (re)write decisions
    python3 disciplines/core/golden/red/make_cases.py --check    # compare with the model below

Decisions are qcore-replay's output, reviewed by hand for the rows listed in
README.md and checked row by row against an independent model of red.h in
exact Python integers (--check); regenerate them only for an intended change
of behaviour.
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


def load(seed, n, arrivals_per_deq, length=1000, gap_ns=1000, drain=True):
    """n arrivals 1 us apart with a dequeue after every arrivals_per_deq
    arrivals on average (random), then enough dequeues to drain."""
    rng = random.Random(seed)
    rows, t = [], 0
    for _ in range(n):
        t += gap_ns
        rows.append(enq(t, length))
        if rng.random() < 1 / arrivals_per_deq:
            t += gap_ns
            rows.append(deq(t))
    for _ in range(n if drain else 0):
        t += gap_ns
        rows.append(deq(t))
    return rows


def ramp_up_down(arrivals, length=1000):
    """w_q=1 cases: `arrivals` back-to-back arrivals (each sees q = the
    packets admitted so far), then a full drain, twice."""
    rows, t = [], 0
    for _ in range(2):
        for _ in range(arrivals):
            t += 1000
            rows.append(enq(t, length))
        for _ in range(arrivals + 1):
            t += 1000
            rows.append(deq(t))
    return rows


def hover():
    """Two arrivals per dequeue: the queue hovers at 1-2 packets."""
    rows, t = [enq(1000, 1000)], 1000
    for _ in range(20):
        rows += [enq(t + 1000, 1000), enq(t + 2000, 1000), deq(t + 3000)]
        t += 3000
    return rows


def idle_bursts():
    """Bursts of 6 arrivals separated by idle periods of 0.5, 3.5 and 20
    packet times (pkt_time_ns = 1000)."""
    rows, t = [], 0
    for idle in (0, 500, 3500, 20000):
        t += idle
        for _ in range(6):
            t += 10
            rows.append(enq(t, 1000))
        for _ in range(7):
            t += 10
            rows.append(deq(t))
    return rows


CASES = {
    # min 2, max 6, gentle: arrival k of a ramp sees q = k, so avg = q (w_q 1)
    # and p_b is max_p (q - 2)/4 below 6, 0.5 + 0.5 (q - 6)/6 up to 12.
    "linear-gentle-forced-seed-7": (
        "--param w_q=1 --param min_pkts=2 --param max_pkts=6 "
        "--param max_p=0.5 --param limit_pkts=30 --seed 7",
        ramp_up_down(60),
    ),
    "ecn-marks-seed-7": (
        "--param w_q=1 --param min_pkts=2 --param max_pkts=6 --param max_p=0.5 "
        "--param limit_pkts=30 --param ecn=1 --seed 7",
        ramp_up_down(60),
    ),
    "gentle-off-seed-7": (
        "--param w_q=1 --param min_pkts=2 --param max_pkts=6 --param max_p=0.5 "
        "--param limit_pkts=30 --param gentle=0 --seed 7",
        ramp_up_down(30),
    ),
    # max_p 1, min 0, max 2: q = 1 gives p_b 0.5, then p_a 1 at count 1;
    # q = 2 is the gentle region's p_b = 1
    "probability-one-seed-3": (
        "--param w_q=1 --param min_pkts=0 --param max_pkts=2 --param max_p=1 --param limit_pkts=30 --seed 3",
        hover(),
    ),
    # max_p 0: the linear region never drops and never draws
    "max-p-zero": (
        "--param w_q=1 --param min_pkts=1 --param max_pkts=20 --param max_p=0 --param limit_pkts=30",
        ramp_up_down(12),
    ),
    "overflow-limit-3": ("--param limit_pkts=3", load(1, 40, 2)),
    # the defaults (w_q 0.002): avg creeps up under a sustained overload
    "default-ewma-seed-1": ("--seed 1", load(2, 2500, 1.6, drain=False)),
    "idle-decay": (
        "--param w_q=0.5 --param min_pkts=1 --param max_pkts=4 --param max_p=0.5 "
        "--param pkt_time_ns=1000 --param limit_pkts=30 --seed 5",
        idle_bursts(),
    ),
    "idle-decay-off": (
        "--param w_q=0.5 --param min_pkts=1 --param max_pkts=4 --param max_p=0.5 "
        "--param limit_pkts=30 --seed 5",
        idle_bursts(),
    ),
}


# ---- an independent model of red.h in exact integers, for --check --------
M = (1 << 64) - 1
ONE = 1 << 32


class Rng:
    """SplitMix64, as qcore_rng."""

    def __init__(s, seed):
        s.s = seed

    def u32(s):
        s.s = (s.s + 0x9E3779B97F4A7C15) & M
        z = s.s
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M
        return (z ^ (z >> 31)) >> 32


def mul(x, f):
    return x if f >= ONE else (x * f) >> 32


def pw(b, m):
    r = ONE
    for _ in range(64):
        if not m or not r:
            break
        if m & 1:
            r = mul(r, b)
        b = mul(b, b)
        m >>= 1
    return r


def model(events, P):
    """Decision rows for events (lists of fields) under params tuple P."""
    mn, mx, maxp, wq, gentle, limit, ecn, ptime, seed = P
    w = ONE if wq >= 10**6 else (wq << 32) // 10**6
    rng = Rng(seed)
    q = []
    count = 0
    out = []
    pkt = 0
    avg = 0
    idle = True
    since = 0
    for r in events:
        t, op = int(r[0]), r[1]
        if op == "deq":
            if q:
                out.append(f"{t},deq,{q.pop(0)},sent,0,")
                if not q:
                    idle = True
                    since = t
            else:
                out.append(f"{t},deq,-1,empty,,")
            continue
        n = len(q)
        verdict = "queued"
        reason = ""
        if idle and n == 0 and ptime:
            m = (t - since) // ptime if t > since else 0
            avg = mul(avg, pw(ONE - w, m))
            since += m * ptime
        else:
            s = n << 20
            avg = avg + mul(s - avg, w) if s >= avg else avg - mul(avg - s, w)
        mnq, mxq = mn << 20, mx << 20
        forced = 2 * mxq if gentle else mxq
        if avg < mnq:
            count = 0
        elif avg >= forced:
            count = 0
            verdict = "dropped"
            reason = "aqm"
        else:
            if avg < mxq:
                num = maxp * (avg - mnq)
                den = 10**6 * (mxq - mnq)
            else:
                num = maxp * mxq + (10**6 - maxp) * (avg - mxq)
                den = 10**6 * mxq
            pb = (num << 32) // den
            if pb == 0:
                pa = 0
            elif (count + 1) * pb >= ONE:
                pa = ONE
            else:
                pa = (pb << 32) // (ONE - count * pb)
            early = pa >= ONE or (pa > 0 and rng.u32() < pa)
            count = 0 if early else count + 1
            if early:
                if ecn:
                    verdict = "marked"
                else:
                    verdict = "dropped"
                    reason = "aqm"
        if verdict != "dropped" and n >= limit:
            verdict = "dropped"
            reason = "overflow"
        if verdict != "dropped":
            q.append(pkt)
            idle = False
        out.append(f"{t},enq,{pkt},{verdict},0,{reason}")
        pkt += 1
    return out


DEFAULTS = dict(
    min_pkts=5, max_pkts=15, max_p="0.02", w_q="0.002", gentle=1, limit_pkts=100, ecn=0, pkt_time_ns=0, seed=1
)


def check(name, args, events):
    """Compare the committed decisions with the model; returns mismatches."""
    d = casegen.parse_args(args, DEFAULTS)
    ppm = lambda v: round(float(v) * 10**6)  # noqa: E731
    params = (
        int(d["min_pkts"]),
        int(d["max_pkts"]),
        ppm(d["max_p"]),
        ppm(d["w_q"]),
        int(d["gentle"]),
        int(d["limit_pkts"]),
        int(d["ecn"]),
        int(d["pkt_time_ns"]),
        int(d["seed"]),
    )
    return casegen.compare(HERE, name, model(casegen.event_fields(events), params))


def main() -> int:
    bad = write_cases(HERE, CASES, "--decide" in sys.argv[1:], check if "--check" in sys.argv[1:] else None)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

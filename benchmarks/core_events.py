"""Random event streams for qcore-replay (benchmarks/core-same-decisions.sh).

    python3 benchmarks/core_events.py SEED PACKETS CLASSES > events.csv

Per seed: an arrival share of 0.3-0.55 of the rows and one of three gap
patterns (a few fixed gaps that repeat, gaps from 0 ns to 3 s, uniform up to
100 ms); sizes 40 B to 64 KiB; classes, precedences and flows uniform.
"""

import random
import sys


def main() -> None:
    seed, rows, classes = (int(a) for a in sys.argv[1:4])
    r = random.Random(seed)
    t = 0
    penq = r.choice([0.3, 0.45, 0.5, 0.55])
    gapmode = r.choice(["fixed", "mixed", "wide"])
    out = ["t_ns,op,len,cls,prec,flow"]
    for _ in range(rows):
        if gapmode == "fixed":
            t += r.choice([0, 1000, 1000, 1200])
        elif gapmode == "mixed":
            t += r.choice([0, 1, 7, 120, 1000, 12000, 1200000, 40000000, 3000000000])
        else:
            t += r.randrange(0, 100000000)
        if r.random() < penq:
            size = r.choice([40, 64, 576, 1000, 1500, 9000, r.randrange(1, 65536)])
            out.append(f"{t},enq,{size},{r.randrange(classes)},{r.randrange(2)},{r.randrange(64)}")
        else:
            out.append(f"{t},deq,,,,")
    sys.stdout.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()

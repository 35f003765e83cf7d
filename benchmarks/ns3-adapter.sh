#!/usr/bin/env bash
# The cost of the ns-3 adapter: the core's droptail through its typed queue
# disc ns3::QlabDroptailQueueDisc (A) against ns-3's own FifoQueueDisc (B,
# queue kind "ns3-fifo") on the same plan, which both run to byte-identical
# raw facts (disciplines/ns3/tests/test_runner.sh checks that).
#   benchmarks/ns3-adapter.sh [CG_FLOWS [WALL_FLOWS [PAIRS]]]   (default 30 100 10)
# Uses $QLAB_NS3_RUN or build/ns3/qlab-ns3-run (built when absent; rebuild
# it first after changing the core or the adapter).
#
# (a) Instructions of the whole qlab-ns3-run process under
#     valgrind --tool=callgrind (deterministic), CG_FLOWS flows; also the
#     extra instructions per packet offered to the bottleneck.
# (b) Wall time of the whole process, PAIRS interleaved pairs (A B A B ...)
#     of a WALL_FLOWS-flow plan: mean of the per-pair ratios A/B with a 95%
#     t-interval.
# Plans: scenarios/ncq-conf/flows.yaml (profile quick, seed 1) with
# workload.flows set (5% of the flows, rounded up, with 100-byte segments
# and 10 kB tasks, the rest 1000-byte segments and 200 kB; starts uniform in
# [0, 1 s); 10 Mb/s dumbbell, 100-packet buffer, NewReno), no packet trace,
# made by disciplines/ns3/tests/testplan.py (needs .venv).  Prints a
# Markdown table; target: within 1.05x.
set -euo pipefail
cd "$(dirname "$0")/.."
cg_flows=${1:-30}
wall_flows=${2:-100}
pairs=${3:-10}

runner=${QLAB_NS3_RUN:-build/ns3/qlab-ns3-run}
if [ ! -x "$runner" ]; then
  cmake -S disciplines/ns3 -B build/ns3 -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build build/ns3 -j2 --target qlab-ns3-run >/dev/null
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

make_plan() { # FILE FLOWS [--ns3-fifo]
  .venv/bin/python disciplines/ns3/tests/testplan.py scenarios/ncq-conf/flows.yaml droptail "$1" \
    --seed 1 --flows "$2" ${3:+"$3"}
}

for n in "$cg_flows" "$wall_flows"; do
  make_plan "$tmp/a$n.json" "$n"
  make_plan "$tmp/b$n.json" "$n" --ns3-fifo
done

# (a) callgrind, whole process.
instr() { # PLAN OUT -> instructions
  valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.out" "$runner" "$1" "$2" >/dev/null 2>&1
  awk '/^(summary|totals):/ { print $2; exit }' "$tmp/cg.out"
}
ia=$(instr "$tmp/a$cg_flows.json" "$tmp/cg-a")
ib=$(instr "$tmp/b$cg_flows.json" "$tmp/cg-b")
for t in flow_facts queue_facts; do
  cmp -s "$tmp/cg-a/$t.csv" "$tmp/cg-b/$t.csv" || { echo "A and B differ in $t.csv" >&2; exit 1; }
done
# Packets offered to the bottleneck: enqueued + dropped at the last sample.
offered=$(tail -1 "$tmp/cg-a/queue_facts.csv" | awk -F, '{ print $6 + $8 }')

# (b) wall time (and CPU time, user + sys, from wait4), interleaved pairs.
python3 - "$runner" "$tmp/a$wall_flows.json" "$tmp/b$wall_flows.json" "$tmp" "$pairs" >"$tmp/pairs" <<'EOF'
import os, subprocess, sys, time
runner, job_a, job_b, tmp, pairs = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
def run(job, out):
    t0 = time.perf_counter()
    p = subprocess.Popen([runner, job, out], stdout=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    if status != 0:
        sys.exit(f"{runner} {job} failed ({status})")
    return wall, ru.ru_utime + ru.ru_stime
for _ in range(pairs):
    wa, ca = run(job_a, tmp + "/w-a")
    wb, cb = run(job_b, tmp + "/w-b")
    print(wa, wb, ca, cb)
EOF

python3 - "$ia" "$ib" "$offered" "$cg_flows" "$wall_flows" "$tmp/pairs" <<'EOF'
import math, os, statistics, sys
ia, ib, offered, cg_flows, wall_flows = (int(x) for x in sys.argv[1:6])
rows = [tuple(float(v) for v in line.split()) for line in open(sys.argv[6])]
# two-sided 95% Student t quantiles, df 1..30
T = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179,
     2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064,
     2.060, 2.056, 2.052, 2.048, 2.045, 2.042]
def interval(pairs):
    """Mean of the per-pair ratios A/B and its 95% t-interval half-width."""
    ratios = [a / b for a, b in pairs]
    n = len(ratios)
    if n < 2:
        return ratios[0], float("nan")
    t = T[n - 2] if n - 2 < len(T) else 1.96
    return statistics.mean(ratios), t * statistics.stdev(ratios) / math.sqrt(n)
n = len(rows)
cg = ia / ib
print(f"| measure | plan | QlabDroptailQueueDisc (A) | FifoQueueDisc (B) | A / B | within 1.05x |")
print(f"|---|---|---|---|---|---|")
print(f"| instructions, whole process (callgrind) | {cg_flows} flows | {ia:,} | {ib:,} | "
      f"{cg:.4f} | {'yes' if cg <= 1.05 else 'no'} |")
print(f"| extra instructions per bottleneck packet | {cg_flows} flows, {offered:,} packets | | | "
      f"{(ia - ib) / offered:+.0f} | |")
for name, ia_, ib_ in (("wall time", 0, 1), ("CPU time (user + sys)", 2, 3)):
    mean, half = interval([(r[ia_], r[ib_]) for r in rows])
    ma = statistics.mean(r[ia_] for r in rows)
    mb = statistics.mean(r[ib_] for r in rows)
    verdict = "yes" if mean + half <= 1.05 else ("no" if mean - half > 1.05 else "not resolved")
    med = statistics.median(r[ia_] / r[ib_] for r in rows)
    print(f"| {name}, {n} interleaved pairs (mean ratio, 95% t-interval; median) | {wall_flows} flows | "
          f"{ma:.3f} s | {mb:.3f} s | {mean:.4f} [{mean - half:.4f}, {mean + half:.4f}]; {med:.4f} | {verdict} |")
print(f"\nload average during the run: {open('/proc/loadavg').read().split()[0]} on {os.cpu_count()} CPUs "
      f"(wall and CPU time are only comparable on an idle machine; instructions are exact)")
EOF

#!/usr/bin/env bash
# The ns-3 adapter's per-packet cost in isolation: instructions of
# QueueDisc::Enqueue + Dequeue per packet (callgrind, exact), the core's
# disciplines through their typed queue discs ns3::Qlab<Name>QueueDisc
# against ns-3's FifoQueueDisc and PrioQueueDisc, on the same packets.
#   benchmarks/ns3-adapter-isolated.sh [PACKETS [KIND...]]
#     (default 5000 packets; fifo ns3-prio droptail prio ncq)
# KIND: fifo, ns3-prio or a core discipline (benchmarks/ns3-adapter-isolated.cc
# says how each is made and what the packets are).  Builds the target
# qlab-ns3-adapter-isolated in $QLAB_NS3_BUILD (default build/ns3; the
# adapter is compiled from this tree).  Prints a Markdown table: enqueue,
# dequeue and total instructions per packet, and the ratio to the baseline
# (droptail and the other single-band disciplines: fifo; prio: ns3-prio).
# Target: droptail <= 1.2x fifo.  Deterministic; about 30 s.
set -euo pipefail
cd "$(dirname "$0")/.."
packets=${1:-5000}
shift || true
kinds=("$@")
[ ${#kinds[@]} -gt 0 ] || kinds=(fifo ns3-prio droptail prio ncq)

build=${QLAB_NS3_BUILD:-build/ns3}
if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S disciplines/ns3 -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
fi
cmake --build "$build" -j2 --target qlab-ns3-adapter-isolated >/dev/null
bench=$build/qlab-ns3-adapter-isolated

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for k in "${kinds[@]}"; do
  valgrind --tool=callgrind --collect-atstart=no \
    --toggle-collect=qlab_bench_enqueue --toggle-collect=qlab_bench_dequeue \
    --callgrind-out-file="$tmp/$k.cg" "$bench" "$k" "$packets" >"$tmp/$k.log" 2>"$tmp/$k.err" \
    || { cat "$tmp/$k.log" "$tmp/$k.err" >&2; echo "$k failed" >&2; exit 1; }
  # inclusive instructions of the two measured functions
  callgrind_annotate --inclusive=yes "$tmp/$k.cg" 2>/dev/null |
    awk -v k="$k" '/qlab_bench_enqueue/ { gsub(",", "", $1); e = $1 }
                   /qlab_bench_dequeue/ { gsub(",", "", $1); d = $1 }
                   END { print k, e + 0, d + 0 }' >>"$tmp/rows"
done

python3 - "$packets" "$tmp/rows" <<'EOF'
import sys

packets = int(sys.argv[1])
rows = {}
for line in open(sys.argv[2]):
    kind, enq, deq = line.split()
    rows[kind] = (int(enq) / packets, int(deq) / packets)
names = {"fifo": "ns-3 FifoQueueDisc", "ns3-prio": "ns-3 PrioQueueDisc (3 FifoQueueDisc bands)"}
print(f"{packets} packets, instructions per packet (callgrind, QueueDisc::Enqueue + Dequeue)\n")
print("| queue disc | enqueue | dequeue | total | baseline | ratio |")
print("|---|---|---|---|---|---|")
for kind, (enq, deq) in rows.items():
    base = "ns3-prio" if kind == "prio" else "fifo"
    name = names.get(kind, f"qlab {kind} (ns3::QlabQueueDisc)")
    if kind in names or base not in rows:
        ratio, base_name = "", ""
    else:
        ratio = f"{(enq + deq) / sum(rows[base]):.2f}x"
        base_name = base
    print(f"| {name} | {enq:,.0f} | {deq:,.0f} | {enq + deq:,.0f} | {base_name} | {ratio} |")
EOF

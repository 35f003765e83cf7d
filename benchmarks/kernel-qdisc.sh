#!/usr/bin/env bash
# Per-packet cost (enqueue + dequeue) of each qlab qdisc beside the
# kernel's pfifo and prio, in the same VM (Debian's 6.1 kernel under QEMU
# TCG with -icount shift=0: the guest clock advances 1 ns per guest
# instruction, so the numbers are deterministic instruction counts and do
# not depend on the host's load).  qlab_bench.ko calls the root qdisc's own
# enqueue/dequeue on a dummy device: batches of 64 UDP/IPv4 skbs (64..1500
# bytes, ToS 0x00/0x08/0x28), 1000 rounds, everything dequeued each round.
# The qlab qdiscs' cost includes their classification (ToS, the core's
# flow hash of the 5-tuple) and two clock reads (arrival and service time),
# which prio and pfifo do not make, where the core needs them with the
# configuration measured (qcore_ignores(): NCQ and CQ-AQM read no clock and
# take no flow hash; S-RD with fixed flow counts only the dequeue's clock,
# the srd_estimated row reads both and hashes); the "parts" lines split
# them out (measured on ncq, the clock read and the full classification,
# flow hash included).  The generic qdisc (qlab disc NAME) runs beside the
# dedicated ones: ncq, srd, droptail, prio.  WRED is seeded (its random
# drops set its cost).
#   benchmarks/kernel-qdisc.sh [ROUNDS]      (default 1000)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-1000}
linux=disciplines/linux
"$linux/vm/fetch-deps.sh" >/dev/null
nice make -s -C "$linux" modules test-modules plugins tools >/dev/null 2>&1 ||
	{ echo "kernel-qdisc.sh: build failed (make -C $linux)" >&2; exit 1; }
log=build/linux/vm/serial-bench.log
QLAB_VM_APPEND="qlab.bench_rounds=$rounds" "$linux/vm/run-vm.sh" -i -t 600 -o "$log" bench >/dev/null || {
	echo "kernel-qdisc.sh: the benchmark VM failed, see $log" >&2
	exit 1
}
tr -d '\r' <"$log" | grep -o 'qlab-bench: part .*' | sed 's/^qlab-bench: /  /'
tr -d '\r' <"$log" | grep -o 'QLAB-BENCH .*' | awk '
	BEGIN { n = 0 }
	/^QLAB-BENCH / { name[n] = $2; ns[n] = $3; drops[n] = $4; cost[$2] = $3; n++ }
	END {
		printf "| qdisc | ns (= instructions) per packet | vs pfifo | vs prio | drops |\n"
		printf "|---|---:|---:|---:|---:|\n"
		for (i = 0; i < n; i++)
			printf "| %s | %.1f | %.2fx | %.2fx | %d |\n", name[i], ns[i],
				ns[i] / cost["pfifo"], ns[i] / cost["prio"], drops[i]
	}'

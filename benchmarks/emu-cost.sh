#!/usr/bin/env bash
# qlab-emu's instructions per forwarded packet (callgrind), by function:
#     sender (iperf3 -u) -- middle (qlab-emu under callgrind) -- receiver
# Two runs of N1 and N2 datagrams at the same rate; the per-packet cost is
# (Ir(N2) - Ir(N1)) / (N2 - N1), so start-up and the summary at exit cancel.
# Userspace instructions only (a system call counts as its few instructions
# of glibc): what the emulator's own code costs per packet. The wait before
# departures is time-driven, not packet-driven; it is listed apart.
#
#   sudo benchmarks/emu-cost.sh [EMU] [RATE_MBPS] [SIZE_BYTES] [N1] [N2]
#   e.g. benchmarks/emu-cost.sh build/emu/qlab-emu 2 1500 300 1300
set -euo pipefail
cd "$(dirname "$0")/.."
EMU=$(realpath "${1:-build/emu/qlab-emu}")
RATE=${2:-2}
SIZE=${3:-1500}
N1=${4:-300}
N2=${5:-1300}
T=qc$(printf '%04x' $((RANDOM % 65536)))
WORK=$(mktemp -d /tmp/qlab-emu-cost.XXXXXX)
cleanup() {
  for ns in a m b; do
    ip netns pids "$T$ns" 2>/dev/null | xargs -r kill -9 2>/dev/null || true
    ip netns del "$T$ns" 2>/dev/null || true
  done
  rm -rf "$WORK"
}
trap cleanup EXIT INT TERM
source benchmarks/emu-netns.sh
emu_netns_setup "$T"
ip netns exec "${T}b" iperf3 -s -D -I "$WORK/iperf3.pid" >/dev/null
sleep 0.3

run() {  # run N -> Ir per function in $WORK/cg.N.txt, forwarded packets on stdout
  local n=$1
  rm -f "$WORK/ready" "$WORK/s.json"
  ip netns exec "${T}m" valgrind --tool=callgrind --callgrind-out-file="$WORK/cg.$n" \
    "$EMU" --if-a "${T}ma" --if-b "${T}mb" --rate-bps "$((RATE * 1000000))" --delay-ns 10000000 \
    --overhead-bytes 14 --param limit_pkts=100 --summary "$WORK/s.json" --ready "$WORK/ready" \
    2>"$WORK/vg.$n.log" &
  local pid=$!
  while [ ! -e "$WORK/ready" ]; do sleep 0.05; done
  sleep 0.5
  ip netns exec "${T}a" iperf3 -c 10.9.0.2 -u -b "$((RATE * 800000))" -l $((SIZE - 28)) -k "$n" >/dev/null 2>&1
  sleep 0.5
  kill -TERM $pid; wait $pid || true
  callgrind_annotate --inclusive=yes "$WORK/cg.$n" 2>/dev/null > "$WORK/cg.$n.txt"
  python3 -c "import json; print(json.load(open('$WORK/s.json'))['forward']['sent_pkts'])"
}
p1=$(run "$N1"); p2=$(run "$N2")
python3 - "$WORK/cg.$N1.txt" "$WORK/cg.$N2.txt" "$p1" "$p2" <<'PY'
import re, sys
def table(path):
    out = {}
    for line in open(path):
        m = re.match(r"\s*([\d,]+)\s+\(\s*[\d.]+%\)\s+\S*:(\S+)", line) or re.match(r"\s*([\d,]+)\s+\S*:(\S+)", line)
        if m:
            name = m.group(2).split("'")[0]
            out.setdefault(name, int(m.group(1).replace(",", "")))
    return out
a, b = table(sys.argv[1]), table(sys.argv[2])
pa, pb = int(sys.argv[3]), int(sys.argv[4])
dp = pb - pa
print(f"forwarded packets: {pa} and {pb}; per packet = difference / {dp}")
total = lambda t: t.get("main", 0)
print(f"{'function (inclusive)':<28} {'Ir per packet':>14}")
names = ["main", "drain", "advance", "emu_arrival", "emu_transmit", "link_serve", "send_due",
         "wait_departure", "calloc", "malloc", "free", "memcpy", "__memcpy_avx_unaligned_erms",
         "recvmmsg", "sendmmsg", "poll", "clock_gettime", "epoll_wait", "epoll_pwait2", "timerfd_settime"]
for n in names:
    if n in a or n in b:
        print(f"{n:<28} {(b.get(n, 0) - a.get(n, 0)) / dp:>14.0f}")
PY

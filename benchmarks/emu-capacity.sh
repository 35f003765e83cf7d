#!/usr/bin/env bash
# Forwarding capacity of qlab-emu next to a kernel bottleneck (HTB + bfifo on
# veth), in the same run, on the same three namespaces:
#     sender (iperf3 -u) -- middle -- receiver (iperf3 -s)
# For each packet size and link rate, the sender offers 1.2 x the rate for
# DURATION seconds. qlab-emu: the run holds when the fidelity invariants of
# disciplines/emu/qlab_mn_run.py hold (achieved rate within 2%, p99 departure
# spacing error and added delay within their bounds, no kernel drops) and,
# as for the kernel, the receiver gets >= 98% of the rate.
# Kernel: a bridge in the middle, HTB at the rate with a 100-packet bfifo on
# the receiver side; it holds when the receiver gets >= 98% of the rate.
# Both shape Ethernet frames (HTB counts the 14-byte header; qlab-emu gets
# --overhead-bytes 14), so both deliver IP bytes at rate * size / (size + 14);
# recv_Mbps is the IP-level rate at the receiver.
#
# cpu is the emulator's CPU time (user + system, from /proc) over the run's
# wall time: a spin shows there.
#
#   sudo benchmarks/emu-capacity.sh [RATES_MBPS] [SIZES_BYTES] [DURATION_S]
#   e.g. benchmarks/emu-capacity.sh "10 50 100 200 400" "1500 200" 3
# EMU_BEFORE=PATH adds the rows of a second qlab-emu binary (e.g. one built
# from an earlier commit) to the same run, engine "emu-before"; EMU_ARGS
# adds options to both (e.g. EMU_ARGS="--spin-ns 0").
# Prints one table row per (engine, size, rate); needs root, iperf3, ethtool.
set -euo pipefail
cd "$(dirname "$0")/.."
RATES=${1:-"10 50 100 200 400"}
SIZES=${2:-"1500 200"}
DUR=${3:-3}
EMU=build/emu/qlab-emu
EMU_BEFORE=${EMU_BEFORE:-}
read -ra EXTRA <<< "${EMU_ARGS:-}"
make -s -C disciplines/emu >/dev/null
T=qb$(printf '%04x' $((RANDOM % 65536)))
WORK=$(mktemp -d /tmp/qlab-emu-capacity.XXXXXX)
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

cpu_ticks() {  # utime + stime of a process, in clock ticks
  awk '{print $14 + $15}' "/proc/$1/stat"
}

offer() {  # offer SIZE RATE_MBPS -> receiver Mbit/s and datagrams/s (iperf3's server-side view)
  local size=$1 rate=$2 payload=$(( $1 - 28 )) bps
  bps=$(python3 -c "print(int($rate * 1.2e6))")
  ip netns exec "${T}a" iperf3 -c 10.9.0.2 -u -b "$bps" -l "$payload" -t "$DUR" -J > "$WORK/c.json" 2>/dev/null || true
  python3 - "$WORK/c.json" "$size" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
s = d["end"].get("sum_received") or d["end"]["sum"]
sent = d["end"].get("sum_sent") or d["end"]["sum"]
size = int(sys.argv[2])
pps = s["bits_per_second"] / 8 / (size - 28)  # datagrams/s delivered
ip = size / (size - 28)
print(f"{s['bits_per_second'] / 1e6 * ip:.1f} {pps:.0f} {sent['bits_per_second'] / 1e6 * ip:.1f}")
EOF
}

printf '%-10s %6s %6s %8s %10s %10s %9s %12s %12s %5s  %s\n' engine size_B rate_Mb sent_Mbps recv_Mbps recv_pps achieved lateness_p99 spacing_p99 cpu holds
for size in $SIZES; do
  for rate in $RATES; do
    # --- qlab-emu (real-time priority, as the mininet backend runs it)
    for engine in qlab-emu ${EMU_BEFORE:+emu-before}; do
      bin=$EMU
      [ "$engine" = emu-before ] && bin=$EMU_BEFORE
      rm -f "$WORK/s.json" "$WORK/ready"
      ip netns exec "${T}m" "$bin" --if-a "${T}ma" --if-b "${T}mb" --rate-bps "$((rate * 1000000))" \
        --delay-ns 10000000 --overhead-bytes 14 --param limit_pkts=100 --summary "$WORK/s.json" \
        --ready "$WORK/ready" --rt-priority 50 "${EXTRA[@]}" &
      epid=$!
      while [ ! -e "$WORK/ready" ]; do sleep 0.02; done
      t0=$(date +%s%N); c0=$(cpu_ticks $epid)
      read -r recv pps sent < <(offer "$size" "$rate")
      c1=$(cpu_ticks $epid); t1=$(date +%s%N)
      kill -TERM $epid; wait $epid || true
      cpu=$(python3 -c "print(f'{($c1 - $c0) / $(getconf CLK_TCK) / (($t1 - $t0) / 1e9) * 100:.0f}%')")
      python3 - "$WORK/s.json" "$size" "$rate" "$recv" "$pps" "$sent" "$engine" "$cpu" <<'EOF'
import importlib.util, json, sys
spec = importlib.util.spec_from_file_location("h", "disciplines/emu/qlab_mn_run.py")
h = importlib.util.module_from_spec(spec); spec.loader.exec_module(h)
s = json.load(open(sys.argv[1])); f = s["forward"]
valid, reasons, _ = h.fidelity(s)
if f["spacing_error"]["n"] < 0.5 * f["sent_pkts"]:
    valid, reasons = False, [f"link not saturated: the sender offered only {float(sys.argv[6]):.0f} Mb/s"]
size, rate = int(sys.argv[2]), float(sys.argv[3])
if valid and float(sys.argv[4]) < 0.98 * rate * size / (size + 14):  # as the kernel's: delivered
    valid, reasons = False, ["receiver below 98% of the rate"]
print(f"{sys.argv[7]:<10} {sys.argv[2]:>6} {sys.argv[3]:>6} {float(sys.argv[6]):>8.1f} {float(sys.argv[4]):>10.1f} "
      f"{int(sys.argv[5]):>10} "
      f"{f['achieved_rate_bps'] / 1e6:>9.1f} {f['lateness'].get('abs_p99_s', 0) * 1e6:>10.0f}us "
      f"{f['spacing_error'].get('abs_p99_s', 0) * 1e6:>10.0f}us {sys.argv[8]:>5}  "
      f"{'yes' if valid else 'no: ' + '; '.join(reasons)[:80]}")
EOF
    done
    # --- kernel: bridge + HTB + bfifo (100 packets) on the receiver side
    ip -n "${T}m" link add "${T}br" type bridge
    ip -n "${T}m" link set "${T}ma" master "${T}br"; ip -n "${T}m" link set "${T}mb" master "${T}br"
    ip -n "${T}m" link set "${T}br" up
    ip netns exec "${T}m" tc qdisc add dev "${T}mb" root handle 1: htb default 1
    ip netns exec "${T}m" tc class add dev "${T}mb" parent 1: classid 1:1 htb rate "${rate}mbit" ceil "${rate}mbit"
    ip netns exec "${T}m" tc qdisc add dev "${T}mb" parent 1:1 bfifo limit $((100 * size))
    read -r recv pps sent < <(offer "$size" "$rate")
    holds=$(python3 -c "
want = 0.98 * $rate * $size / ($size + 14)
print('yes' if $recv >= want else 'no: sender-limited' if $sent < $rate * $size / ($size + 14) else 'no: receiver below 98% of the rate')")
    printf '%-10s %6s %6s %8.1f %10.1f %10s %9s %12s %12s %5s  %s\n' kernel "$size" "$rate" "$sent" "$recv" "$pps" - - - - "$holds"
    ip netns exec "${T}m" tc qdisc del dev "${T}mb" root
    ip -n "${T}m" link del "${T}br"
  done
done

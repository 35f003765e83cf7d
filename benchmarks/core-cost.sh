#!/usr/bin/env bash
# Instructions per offered packet (enqueue, and dequeue + `dequeued` for
# each packet not dropped) of each
# core discipline, counted by callgrind inside the discipline's entry points
# only (benchmarks/core_cost.c), beside DropTail's. Deterministic: the same
# binary and inputs give the same counts on any load.
#   benchmarks/core-cost.sh [PACKETS]      (default 20000)
set -euo pipefail
cd "$(dirname "$0")/.."
packets=${1:-20000}
make -s -C disciplines/core ../../build/core/libqcore.a ../../build/core/qcore-replay >/dev/null
out=build/core/core_cost
gcc -std=c11 -O2 -Wall -Wextra -Idisciplines/core -o "$out" benchmarks/core_cost.c build/core/libqcore.a
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# DISC  budget  [--param NAME=VALUE ...]   (budgets: the mission's targets)
cases=(
  "droptail 100"
  "prio 100 --param bands=3"
  "ncq 100 --param size_bytes=141"
)
# rbaqm twice: with its defaults (a 1 Mb/s link, far below this stream, so
# P saturates and nearly every packet takes the drop path) and with the link
# rate of the stream (~5 Gb/s offered), where packets are served.
# Then RB-AQM in regimes that cost more, without a budget of their own ("-"):
# 1 Gb/s (more arrivals find their class bottlenecked: the eq. 5 loop),
# the EWMA capacity estimator, 8 classes.  Last, WRED and RB-AQM on the
# kernel qdiscs' benchmark packets with its configurations
# (disciplines/linux/vm/guest/suite-bench.sh): the core's share of
# benchmarks/kernel-qdisc.sh's rbwfq rows.
for extra in cqaqm:100 rd:100 srd:100 red:400 wred:400 rbaqm:400 "rbaqm:400 --param rate_bps=10000000000" \
  "rbaqm:- --param rate_bps=1000000000" \
  "rbaqm:- --param rate_bps=10000000000 --param capacity_estimator=ewma" \
  "rbaqm:- --param rate_bps=10000000000 --param classes=8 --param weights_bytes=1001" \
  "wred:- --kernel-workload --param classes=8 --param weights_bytes=1500 --param q_pkts=1000" \
  "rbaqm:- --kernel-workload --param rate_bps=1000000000000 --param classes=8 --param weights_bytes=1500 --param limit_pkts=1000"; do
  name=${extra%%:*}
  build/core/qcore-replay --list | grep -qx "$name" && cases+=("$name ${extra#*:}")
done

cost() { # DISC ARGS... -> instructions per packet
  valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.out" --collect-atstart=no \
    --toggle-collect='qcore_bench_*' "$out" "$@" >/dev/null 2>&1
  total=$(callgrind_annotate "$tmp/cg.out" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}')
  awk -v t="$total" -v n="$packets" 'BEGIN { printf "%.1f", t / n }'
}

base=$(cost droptail "$packets")
printf '| discipline | parameters | instructions / packet | vs DropTail | budget | within |\n|---|---|---|---|---|---|\n'
for c in "${cases[@]}"; do
  read -r -a w <<< "$c"
  disc=${w[0]} budget=${w[1]} params=("${w[@]:2}")
  ipp=$(cost "$disc" "$packets" "${params[@]}")
  ratio=$(awk -v a="$ipp" -v b="$base" 'BEGIN { printf "%.2f", a / b }')
  if [ "$budget" = - ]; then
    within=-
  else
    ok=$(awk -v a="$ipp" -v b="$budget" 'BEGIN { print (a <= b) ? 1 : 0 }')
    within=$([ "$ok" = 1 ] && echo yes || echo NO)
  fi
  printf '| %s | %s | %s | %sx | %s | %s |\n' "$disc" "${params[*]:-defaults}" "$ipp" "$ratio" "$budget" "$within"
done

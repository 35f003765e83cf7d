#!/usr/bin/env bash
# Two qcore-replay binaries (a core before and after a change that must not
# change a decision) on the same inputs: every golden vector's events with
# seeds 1 and 2, and SEEDS random event streams (benchmarks/core_events.py)
# per configuration below. Prints each differing case and the totals; exit 1
# if any output differs.
#   benchmarks/core-same-decisions.sh OLD_REPLAY NEW_REPLAY [SEEDS]   (default 20)
set -euo pipefail
cd "$(dirname "$0")/.."
old=$1 new=$2 seeds=${3:-20}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0 bad=0

same() { # DISC ARGS... < events: compare the two binaries' outputs
  cat > "$tmp/ev.csv"
  "$old" "$@" < "$tmp/ev.csv" > "$tmp/old.out" 2>&1 || true
  "$new" "$@" < "$tmp/ev.csv" > "$tmp/new.out" 2>&1 || true
  n=$((n + 1))
  cmp -s "$tmp/old.out" "$tmp/new.out"
}

for ev in disciplines/core/golden/*/*.events.csv; do
  disc=$(basename "$(dirname "$ev")") case_=${ev%.events.csv}
  read -r -a args < "$case_.args" || true
  for seed in 1 2; do
    same "$disc" "${args[@]}" --seed "$seed" < "$ev" || { bad=$((bad + 1)); echo "DIFF $ev --seed $seed"; }
  done
done

# CLASSES DISC [--param NAME=VALUE ...]
configs=(
  "4 rbaqm"
  "4 rbaqm --param rate_bps=10000000000"
  "4 rbaqm --param rate_bps=1000000000"
  "4 rbaqm --param rate_bps=100000000 --param capacity_estimator=ewma"
  "8 rbaqm --param classes=8 --param rate_bps=10000000000 --param weights_bytes=1500"
  "4 rbaqm --param rate_estimate=admitted --param rate_bps=10000000"
  "4 rbaqm --param fair_share=0 --param ecn=1 --param rate_bps=50000000"
  "4 rbaqm --param tau_ns=1 --param rate_bps=1000000000000"
  "4 rbaqm --param tau_ns=1000000000000 --param rate_bps=1 --param gain=1000"
  "3 rbaqm --param classes=3 --param maxs_bytes=1 --param weights_bytes=1:16777216:7 --param window_pkts=1"
  "2 rbaqm --param classes=2 --param maxs_bytes=16777216 --param weights_bytes=16777216 --param window_pkts=256 --param u_ppm=1:1000000 --param k=0"
  "4 wred"
  "8 wred --param classes=8"
  "4 wred --param q_pkts=3:100:1000000:5 --param maxs_bytes=1"
  "4 wred --param ecn=1 --param w_q=0.2"
  "1 red"
  "1 red --param gentle=0"
  "1 red --param pkt_time_ns=1000 --param w_q=0.5"
  "1 red --param ecn=1 --param min_pkts=1 --param max_pkts=3 --param max_p=0.5"
)
for c in "${configs[@]}"; do
  read -r -a w <<< "$c"
  classes=${w[0]} disc=${w[1]} params=("${w[@]:2}")
  for seed in $(seq 1 "$seeds"); do
    f=$tmp/events-$seed-$classes.csv
    [ -f "$f" ] || python3 benchmarks/core_events.py "$seed" 4000 "$classes" > "$f"
    same "$disc" "${params[@]}" --seed "$seed" < "$f" || { bad=$((bad + 1)); echo "DIFF $c --seed $seed"; }
  done
done
echo "$n comparisons, $bad differ"
[ "$bad" -eq 0 ]

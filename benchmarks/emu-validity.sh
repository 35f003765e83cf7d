#!/usr/bin/env bash
# How many emulation runs are valid: the quick profile's Mininet scenarios
# (ncq-conf/emu: 12 runs, rbaqm/emu: 2) into an empty results tree, ROUNDS
# times, one round after another; each run's validity is qlab-emu's own
# timing check (run.json `valid`). Prints a line per round and the total.
# Issue 22's target: at least 99% valid over at least 100 runs on an idle
# machine (docs/benchmarks.md, "qlab-emu vs a kernel bottleneck").
#
#   benchmarks/emu-validity.sh OUT [ROUNDS]      (root; after make build)
set -euo pipefail
out=${1:?usage: benchmarks/emu-validity.sh OUT [ROUNDS]}
rounds=${2:-8}
cd "$(dirname "$0")/.."
mkdir -p "$out"
total=0 invalid=0
for i in $(seq 1 "$rounds"); do
  r="$out/round-$i"
  rm -rf "$r"
  start=$(date +%s)
  .venv/bin/snakemake --workflow-profile workflows/profiles/local --cores 2 --quiet \
    --config profile=quick results="$r" \
    'scenarios=["scenarios/ncq-conf/emu.yaml","scenarios/rbaqm/emu.yaml"]' \
    'backends=["mininet"]' -- "$r/ncq-conf/emu/mininet/runs.csv.gz" "$r/rbaqm/emu/mininet/runs.csv.gz" \
    > "$r.log" 2>&1 || { echo "emu-validity: round $i failed (its log: $r.log)" >&2; exit 1; }
  n=$(find "$r" -path '*/mininet/*/seed-*/run.json' | wc -l)
  bad=$(find "$r" -path '*/mininet/*/seed-*/run.json' -exec grep -l '"valid": false' {} + | wc -l || true)
  total=$((total + n)) invalid=$((invalid + bad))
  echo "round $i ($(date -u +%H:%M) UTC, $(( $(date +%s) - start )) s): $n runs, $bad invalid"
done
echo "all: $total runs, $invalid invalid ($(awk -v t="$total" -v b="$invalid" 'BEGIN { printf "%.1f", 100 * (t - b) / t }')% valid)"

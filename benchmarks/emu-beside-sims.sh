#!/bin/bash
# Does an emulation stay valid beside simulations? Runs the Mininet points of
# a finished reproduction (their plans under RESULTS/jobs, one point after
# another, the simulate rule's command) while LOAD back-to-back ns-3 runs of
# one plan go on at nice NICE, and prints each point's wall time, the
# invalid runs, and each run's mean flow completion time.
#
#   benchmarks/emu-beside-sims.sh RESULTS OUT [LOAD [NICE [PLAN]]]
#
# RESULTS: a quick reproduction's results (make reproduce RESULTS=...);
# OUT: a new directory for the runs; LOAD: background simulations (default
# 0); NICE: their nice level (default 10); PLAN: the plan they run (default
# validation/mg1's u = 0.9, seed 1, about 5 s a run). docs/benchmarks.md,
# "2026-11-27 (ninth session)". Needs root (Mininet).
set -euo pipefail
results=${1:?usage: $0 RESULTS OUT [LOAD [NICE [PLAN]]]}
out=${2:?usage: $0 RESULTS OUT [LOAD [NICE [PLAN]]]}
load=${3:-0}
nice_level=${4:-10}
plan=${5:-$results/jobs/validation/mg1/ns3/fifo_u-0.9/seed-1.json}
root=$(cd "$(dirname "$0")/.." && pwd)
[ -f "$results/hosts/mininet.json" ] || { echo "$0: no $results/hosts/mininet.json (a reproduction with the mininet backend first)" >&2; exit 2; }
[ "$load" = 0 ] || [ -f "$plan" ] || { echo "$0: no plan $plan" >&2; exit 2; }
[ ! -e "$out" ] || { echo "$0: $out exists; give a new directory" >&2; exit 2; }
mkdir -p "$out"
out=$(cd "$out" && pwd)

pids=()
cleanup() { for p in "${pids[@]}"; do kill -- "-$p" 2>/dev/null || true; done; }
trap cleanup EXIT
for i in $(seq 1 "$load"); do
  setsid bash -c "while true; do nice -n $nice_level '$root/build/ns3/qlab-ns3-run' '$plan' '$out/.load-$i' >/dev/null 2>&1; done" &
  pids+=($!)
done

cd "$root"
for point in $(cd "$results/jobs" && ls -d */*/mininet/*/); do
  args=(); outs=()
  for f in "$results/jobs/$point"seed-*.json; do
    args+=("$f"); outs+=(--out "$out/$point$(basename "$f" .json)")
  done
  mkdir -p "$out/$point"
  start=$(date +%s.%N)
  .venv/bin/python -m qlab run-job "${args[@]}" "${outs[@]}" --done "$out/${point}point.json" \
    --host "$results/hosts/mininet.json" > "$out/${point}log" 2>&1 || echo "failed: $point (its log: $out/${point}log)"
  echo "$point $(echo "$(date +%s.%N) - $start" | bc) s"
done
cleanup; pids=()
.venv/bin/python - "$out" <<'PY'
import csv, glob, gzip, json, statistics, sys
runs = sorted(glob.glob(sys.argv[1] + "/**/seed-*/run.json", recursive=True))
bad = [r for r in runs if not json.load(open(r)).get("valid")]
print(f"{len(runs)} runs, {len(bad)} invalid")
for r in runs:
    flows = list(csv.DictReader(gzip.open(r.replace("run.json", "flows.csv.gz"), "rt")))
    fct = [float(f["fct_s"]) for f in flows if f.get("fct_s") not in (None, "", "NA")]
    print(r[len(sys.argv[1]) + 1 : -len("/run.json")], round(statistics.mean(fct), 3) if fct else "-")
PY

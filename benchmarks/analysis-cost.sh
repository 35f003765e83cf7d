#!/usr/bin/env bash
# CPU seconds of each paper's analysis (and the benchmark's), run alone on a
# complete results tree, one after another: the R part of orchestration
# split by analysis (docs/benchmarks.md, "Orchestration"). Writes into a
# scratch directory, never into RESULTS.
#
#   benchmarks/analysis-cost.sh RESULTS [PAPER ...]     (default: every paper, then bench)
#
# Each line: paper, user + system CPU seconds, wall seconds (GNU time).
# QLAB_RPROF=1 also profiles each analysis with Rprof and prints its ten
# largest callers by total time (the profile costs about 10% more CPU).
set -euo pipefail
results=${1:?usage: benchmarks/analysis-cost.sh RESULTS [PAPER ...]}
shift
cd "$(dirname "$0")/.."
[ -d "$results" ] || { echo "analysis-cost: $results: no such results directory" >&2; exit 2; }
results=$(cd "$results" && pwd)
command -v Rscript > /dev/null || { echo "analysis-cost: Rscript not found (scripts/setup.sh installs R)" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "analysis-cost: /usr/bin/time not found (apt-get install time)" >&2; exit 2; }
papers=("$@")
if [ ${#papers[@]} -eq 0 ]; then
  for f in analysis/papers/*.yaml; do papers+=("$(basename "$f" .yaml)"); done
  papers+=(bench)
fi
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
# The profiled run: prof.R PROFILE SCRIPT ARGS... sources SCRIPT as Rscript
# would run it (its commandArgs() answer as for Rscript SCRIPT ARGS...).
cat > "$scratch/prof.R" << 'EOF'
a <- commandArgs(trailingOnly = TRUE)
profile <- a[[1]]
script <- a[[2]]
rest <- a[-(1:2)]
commandArgs <- function(trailingOnly = FALSE) if (trailingOnly) rest else paste0("--file=", script)
Rprof(profile, interval = 0.01)
source(script)
Rprof(NULL)
s <- summaryRprof(profile)$by.total
s <- s[!rownames(s) %in% c('"eval"', '"source"', '"main"', '"withVisible"'), c("total.time", "total.pct")]
print(utils::head(s, 10))
EOF
total=0
for p in "${papers[@]}"; do
  out="$scratch/$p"
  mkdir -p "$out"
  if [ "$p" = bench ]; then
    args=(analysis/scripts/bench.R --results "$results" --out "$out" --rules -)
  else
    args=(analysis/scripts/analyze.R --results "$results" --paper "$p" --out "$out")
  fi
  if [ "${QLAB_RPROF:-0}" = 1 ]; then
    prog=("$scratch/prof.R" "$scratch/$p.prof" "${args[@]}")
  else
    prog=("${args[@]}")
  fi
  if ! TZ=UTC /usr/bin/time -o "$scratch/$p.time" -f "%U %S %e" Rscript "${prog[@]}" > "$scratch/$p.log" 2>&1; then
    echo "analysis-cost: the $p analysis failed; its last lines:" >&2
    tail -n 5 "$scratch/$p.log" >&2
    exit 1
  fi
  read -r user sys wall < <(tail -n 1 "$scratch/$p.time")
  cpu=$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.1f", u + s }')
  total=$(awk -v t="$total" -v c="$cpu" 'BEGIN { printf "%.1f", t + c }')
  echo "$p: $cpu CPU-s, $wall s wall"
  if [ "${QLAB_RPROF:-0}" = 1 ]; then
    grep -A 11 'total.time' "$scratch/$p.log" | sed 's/^/    /'
  fi
done
echo "all: $total CPU-s"

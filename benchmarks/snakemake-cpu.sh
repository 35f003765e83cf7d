#!/usr/bin/env bash
# The CPU time of Snakemake's own process (not its jobs) while it runs a
# command: polls /proc/PID/stat of the process it starts and prints its
# user and system seconds when it exits (docs/benchmarks.md, "Snakemake's
# scheduler").
#
#   benchmarks/snakemake-cpu.sh .venv/bin/snakemake --workflow-profile workflows/profiles/local \
#       --cores 2 --quiet all --config profile=quick results=/tmp/r 'scenarios=[...]' 'backends=[ns3]'
set -euo pipefail
[ $# -gt 0 ] || { echo "usage: $0 COMMAND [ARG...]" >&2; exit 2; }
"$@" &
pid=$!
ticks=$(getconf CLK_TCK)
last=""
while kill -0 "$pid" 2> /dev/null; do
  now=$(awk '{print $14, $15}' "/proc/$pid/stat" 2> /dev/null || true)
  [ -n "$now" ] && last=$now
  sleep 0.5
done
rc=0
wait "$pid" || rc=$?
read -r utime stime <<< "${last:-0 0}"
echo "snakemake-cpu: the process itself: $(awk -v u="$utime" -v s="$stime" -v t="$ticks" \
  'BEGIN { printf "%.1f s user, %.1f s system", u / t, s / t }') (exit $rc)"
exit "$rc"

#!/usr/bin/env bash
# Emulation runs under a kernel scheduler trace: why qlab-emu was late, on a
# machine whose runs come out invalid (docs/benchmarks.md, "qlab-emu vs a
# kernel bottleneck"). Runs benchmarks/emu-validity.sh OUT ROUNDS with the
# scheduler, timer and softirq events of tracefs on, saves the trace as
# OUT/sched.trace and prints benchmarks/emu_sched_trace.py's summary: how
# long the emulator waited to run once woken and what ran meanwhile, how
# late its timers fired, its long stretches on the CPU, per run.
#
#   benchmarks/emu-sched-trace.sh OUT [ROUNDS]       (root; after make build; ROUNDS default 1)
#
# The trace costs CPU of its own (about 2 M events a round): compare the
# validity of traced rounds with traced rounds, not with emu-validity.sh's.
set -euo pipefail
out=${1:?usage: benchmarks/emu-sched-trace.sh OUT [ROUNDS]}
rounds=${2:-1}
cd "$(dirname "$0")/.."
tracing=/sys/kernel/tracing
[ "$(id -u)" = 0 ] || { echo "emu-sched-trace: needs root (tracefs and Mininet)" >&2; exit 2; }
if [ ! -e "$tracing/trace" ]; then
  mount -t tracefs nodev "$tracing" 2> /dev/null || true
fi
[ -w "$tracing/trace" ] || { echo "emu-sched-trace: $tracing: no writable tracefs (a kernel without ftrace, or locked down)" >&2; exit 2; }
# the events the analysis reads, from the analysis itself
mapfile -t events < <(python3 benchmarks/emu_sched_trace.py --events)
[ ${#events[@]} -gt 0 ] || { echo "emu-sched-trace: benchmarks/emu_sched_trace.py --events listed nothing" >&2; exit 2; }
for e in "${events[@]}"; do
  [ -e "$tracing/events/$e/enable" ] || { echo "emu-sched-trace: this kernel has no trace event $e" >&2; exit 2; }
done
mkdir -p "$out"
was_on=$(cat "$tracing/tracing_on")
was_kb=$(cat "$tracing/buffer_size_kb")
restore() {
  echo 0 > "$tracing/tracing_on"
  for e in "${events[@]}"; do echo 0 > "$tracing/events/$e/enable"; done
  echo > "$tracing/trace"
  echo "$was_kb" > "$tracing/buffer_size_kb"
  echo "$was_on" > "$tracing/tracing_on"
}
trap restore EXIT
echo 0 > "$tracing/tracing_on"
echo > "$tracing/trace"
# a round is about 2 M events, 64 MB of a CPU's ring buffer at most: room for all of it
echo $((80 * 1024 * rounds)) > "$tracing/buffer_size_kb"
for e in "${events[@]}"; do echo 1 > "$tracing/events/$e/enable"; done
echo 1 > "$tracing/tracing_on"
status=0
benchmarks/emu-validity.sh "$out/rounds" "$rounds" || status=$?
echo 0 > "$tracing/tracing_on"
cat "$tracing/trace" > "$out/sched.trace"
if grep -q 'LOST' "$out/sched.trace"; then
  echo "emu-sched-trace: the trace buffer overflowed: some events are missing" >&2
fi
python3 benchmarks/emu_sched_trace.py "$out/sched.trace"
exit "$status"

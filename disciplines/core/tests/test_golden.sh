#!/usr/bin/env bash
# Replay every golden vector (golden/<disc>/<case>.events.csv with the
# arguments in <case>.args) through qcore-replay and compare the decisions
# with <case>.decisions.csv byte for byte. Every backend's adapter tests
# replay the same files.
#   tests/test_golden.sh [QCORE_REPLAY]
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
replay=${1:-$here/../../build/core/qcore-replay}
pass=0 fail=0
for events in "$here"/golden/*/*.events.csv; do
	case_=${events%.events.csv}
	disc=$(basename "$(dirname "$events")")
	name="$disc/$(basename "$case_")"
	read -r -a args < "$case_.args" || true
	if out=$("$replay" "$disc" "${args[@]}" < "$events" 2>&1) &&
		diff -u "$case_.decisions.csv" <(printf '%s\n' "$out") > /tmp/qlab-golden.diff; then
		pass=$((pass + 1)); echo "ok   $name"
	else
		fail=$((fail + 1)); echo "FAIL $name"; head -20 /tmp/qlab-golden.diff
	fi
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]

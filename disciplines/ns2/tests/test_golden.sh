#!/usr/bin/env bash
# test_golden.sh - replay every golden vector of the discipline core
# (disciplines/core/golden/<disc>/<case>.events.csv with the arguments in
# <case>.args) through the ns-2 adapter (qlab-ns2-golden, ns-2.35 with Queue/Qlab) and compare the
# decisions with <case>.decisions.csv byte for byte, exactly as the core's
# own tests/test_golden.sh does for qcore-replay.
#
#   disciplines/ns2/tests/test_golden.sh [path/to/qlab-ns2-golden [GOLDEN_DIR]]
#
# Builds build/ns2 first when no binary is given and none exists.  Prints
# one line per case (and the start of the diff on failure), then
# "N passed, N failed"; exits 1 when anything failed or nothing ran.
set -u

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
golden=${1:-$repo/build/ns2/qlab-ns2-golden}
dir=${2:-$repo/disciplines/core/golden}

if [ $# = 0 ] && [ ! -x "$golden" ]; then
	sh "$repo/disciplines/ns2/build.sh" >/dev/null
fi
if [ ! -x "$golden" ]; then
	echo "no qlab-ns2-golden at $golden"
	echo "0 passed, 1 failed"
	exit 1
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
for events in "$dir"/*/*.events.csv; do
	[ -e "$events" ] || continue
	case_=${events%.events.csv}
	disc=$(basename "$(dirname "$events")")
	name="$disc/$(basename "$case_")"
	args=()
	if [ -s "$case_.args" ]; then
		read -r -a args <"$case_.args" || true
	fi
	if "$golden" "$disc" "${args[@]}" <"$events" >"$tmp/out.csv" 2>"$tmp/err" &&
		cmp -s "$case_.decisions.csv" "$tmp/out.csv"; then
		pass=$((pass + 1))
		echo "ok   $name"
	else
		fail=$((fail + 1))
		echo "FAIL $name"
		head -5 "$tmp/err"
		diff -u "$case_.decisions.csv" "$tmp/out.csv" | head -20
	fi
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]

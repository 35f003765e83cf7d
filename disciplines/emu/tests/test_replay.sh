#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# Replay every golden vector of the core (disciplines/core/golden/<disc>/
# <case>.events.csv, with the arguments in <case>.args) through
# `qlab-emu --replay`, i.e. through the emulator's own queue (its struct
# link, arrival and service paths), and require the decisions of
# <case>.decisions.csv byte for byte. Then the replay interface's edges:
# exit 2 naming the row for bad events, exit 2 for a bad --param.
#   tests/test_replay.sh [QLAB_EMU]
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
emu=${1:-$here/../../build/emu/qlab-emu}
golden=$here/../core/golden
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok   $1"; }
ko() { fail=$((fail + 1)); echo "FAIL $1"; }

for events in "$golden"/*/*.events.csv; do
	case_=${events%.events.csv}
	disc=$(basename "$(dirname "$events")")
	name="$disc/$(basename "$case_")"
	read -r -a args < "$case_.args" || true
	if "$emu" --replay "$disc" "${args[@]}" < "$events" > "$tmp/out" 2> "$tmp/err" &&
		cmp -s "$case_.decisions.csv" "$tmp/out"; then
		ok "$name"
	else
		ko "$name"
		diff -u "$case_.decisions.csv" "$tmp/out" | head -20
		head -5 "$tmp/err"
	fi
done

# expect_fail NAME STATUS PATTERN EVENTS -- ARGS...: exit STATUS, stderr matching PATTERN
expect_fail() {
	local name=$1 status=$2 pat=$3 events=$4
	shift 5
	printf '%b' "$events" | "$emu" --replay "$@" > "$tmp/out" 2> "$tmp/err"
	local rc=$?
	if [ "$rc" -eq "$status" ] && grep -q -- "$pat" "$tmp/err"; then
		ok "$name"
	else
		ko "$name (exit $rc)"
		cat "$tmp/err"
	fi
}
hdr='t_ns,op,len,cls,prec,flow\n'
expect_fail "bad length names the row" 2 "row 2 (line 3): column len" \
	"${hdr}0,enq,100,,,\n1,enq,0,,,\n" -- droptail
expect_fail "time going back names the row" 2 "row 2 (line 3): column t_ns" \
	"${hdr}5,enq,100,,,\n4,deq,,,,\n" -- droptail
expect_fail "a deq row with a length" 2 "column len: must be empty" \
	"${hdr}5,deq,100,,,\n" -- droptail
expect_fail "a class the discipline cannot classify" 2 "row 1 (line 2): column cls" \
	"${hdr}0,enq,100,5,,\n" -- prio --param bands=2
expect_fail "a bad header" 2 "header must be exactly" "t,op\n" -- droptail
expect_fail "an unknown parameter" 2 "unknown parameter 'nope'" "$hdr" -- droptail --param nope=1
expect_fail "a value out of range" 2 "limit_pkts: expected an integer" "$hdr" -- droptail --param limit_pkts=0
expect_fail "an unknown discipline" 2 "unknown discipline 'nope'" "$hdr" -- nope

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]

#!/usr/bin/env bash
# test_typed.sh - the typed queue discs ns3::Qlab<Name>QueueDisc, generated
# from the core's parameter tables (qlab-queue-disc.h):
#   1. qlab-ns3-test-typed (tests/test_typed.cc): TypeIds, attributes = the
#      core's parameters (names, defaults, help, units, value types), valid
#      and invalid values, refusal messages naming the parameter, statistics,
#      the ToS mapping;
#   2. NCQ, one golden case (ncq/probabilistic-seed-7: size_bytes, thresh,
#      mode, ramp, seed) replayed through the generic QlabQueueDisc (Params
#      string) and through ns3::QlabNcqQueueDisc configured via attributes
#      (qlab-ns3-golden --typed): identical decisions, equal to the golden file;
#   3. every golden vector through its typed queue disc, byte for byte.
#
#   disciplines/ns3/tests/test_typed.sh [BUILD_DIR]
#
# BUILD_DIR (default build/ns3) must hold qlab-ns3-test-typed and
# qlab-ns3-golden; they are built first when no BUILD_DIR is given and
# either is missing.  Prints one line per check, then "N passed, N failed";
# exits 1 when anything failed or nothing ran.
set -u

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
build=${1:-$repo/build/ns3}
golden_dir=$repo/disciplines/core/golden
tester=$build/qlab-ns3-test-typed
golden=$build/qlab-ns3-golden

if [ $# = 0 ] && { [ ! -x "$tester" ] || [ ! -x "$golden" ]; }; then
	cmake -S "$repo/disciplines/ns3" -B "$build" >/dev/null &&
		cmake --build "$build" --target qlab-ns3-test-typed qlab-ns3-golden >/dev/null
fi
for bin in "$tester" "$golden"; do
	if [ ! -x "$bin" ]; then
		echo "no $(basename "$bin") at $bin"
		echo "0 passed, 1 failed"
		exit 1
	fi
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0

# 1. the C++ checks (refused values print the core's message on stderr).
"$tester" >"$tmp/typed.out" 2>"$tmp/typed.err"
rc=$?
grep -E '^(ok|FAIL) ' "$tmp/typed.out"
p=$(sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\1/p' "$tmp/typed.out")
f=$(sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\2/p' "$tmp/typed.out")
if [ -z "$p" ] || [ -z "$f" ]; then
	echo "FAIL qlab-ns3-test-typed did not finish (exit $rc)"
	tail -5 "$tmp/typed.err"
	fail=$((fail + 1))
else
	pass=$((pass + p))
	fail=$((fail + f))
	[ "$rc" = 0 ] || [ "$f" -gt 0 ] || { echo "FAIL qlab-ns3-test-typed exit $rc"; fail=$((fail + 1)); }
fi

# replay DISC CASE OUT [--typed]: one golden case through qlab-ns3-golden.
replay() {
	local disc=$1 case_=$2 out=$3
	shift 3
	local args=()
	if [ -s "$case_.args" ]; then
		read -r -a args <"$case_.args" || true
	fi
	"$golden" "$disc" "${args[@]}" "$@" <"$case_.events.csv" >"$out" 2>"$out.err"
}

# 2. NCQ: generic (Params) == typed (attributes) on one golden case.
case_=$golden_dir/ncq/probabilistic-seed-7
if replay ncq "$case_" "$tmp/generic.csv" && replay ncq "$case_" "$tmp/typed.csv" --typed &&
	cmp -s "$tmp/generic.csv" "$tmp/typed.csv" && cmp -s "$case_.decisions.csv" "$tmp/typed.csv"; then
	pass=$((pass + 1))
	echo "ok   ncq/probabilistic-seed-7: ns3::QlabNcqQueueDisc (attributes) == QlabQueueDisc (Params), $(($(wc -l <"$tmp/typed.csv") - 1)) decisions"
else
	fail=$((fail + 1))
	echo "FAIL ncq/probabilistic-seed-7: typed and generic decisions differ"
	cat "$tmp/generic.csv.err" "$tmp/typed.csv.err" 2>/dev/null | head -5
	diff -u "$tmp/generic.csv" "$tmp/typed.csv" | head -20
fi

# 3. every golden vector through its typed queue disc.
for events in "$golden_dir"/*/*.events.csv; do
	[ -e "$events" ] || continue
	case_=${events%.events.csv}
	disc=$(basename "$(dirname "$events")")
	name="$disc/$(basename "$case_")"
	if replay "$disc" "$case_" "$tmp/out.csv" --typed && cmp -s "$case_.decisions.csv" "$tmp/out.csv"; then
		pass=$((pass + 1))
		echo "ok   typed $name"
	else
		fail=$((fail + 1))
		echo "FAIL typed $name"
		head -5 "$tmp/out.csv.err"
		diff -u "$case_.decisions.csv" "$tmp/out.csv" | head -20
	fi
done

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]

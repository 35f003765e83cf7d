#!/usr/bin/env bash
# test_typed.sh - the typed queue discs ns3::Qlab<Name>QueueDisc, generated
# from the core's parameter tables (qlab-queue-disc.h):
#   1. qlab-ns3-test-typed (tests/test_typed.cc): TypeIds, attributes = the
#      core's parameters (names, defaults, help, units, value types), valid
#      and invalid values, refusal messages naming the parameter, statistics,
#      the ToS mapping, what the core is given (flow hash, flags, ECT) and the
#      mark fallback;
#   2. three golden cases whose parameters cover every attribute kind (u32,
#      ppm, enum: ncq/probabilistic-seed-7; u32 list: wred/q-list-seed-2;
#      bool, and ECN marks: red/ecn-marks-seed-7)
#      through qlab-ns3-golden, which sets them as attributes: the golden
#      decisions, byte for byte.  (tests/test_golden.sh replays all of them.)
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

# 2. golden cases covering every attribute kind, through the attributes.
for name in ncq/probabilistic-seed-7 wred/q-list-seed-2 red/ecn-marks-seed-7; do
	case_=$golden_dir/$name
	args=()
	if [ -s "$case_.args" ]; then
		read -r -a args <"$case_.args" || true
	fi
	if "$golden" "${name%%/*}" "${args[@]}" <"$case_.events.csv" >"$tmp/out.csv" 2>"$tmp/err" &&
		cmp -s "$case_.decisions.csv" "$tmp/out.csv"; then
		pass=$((pass + 1))
		echo "ok   $name through its typed queue disc's attributes ($(($(wc -l <"$tmp/out.csv") - 1)) decisions)"
	else
		fail=$((fail + 1))
		echo "FAIL $name through its typed queue disc's attributes"
		head -5 "$tmp/err"
		diff -u "$case_.decisions.csv" "$tmp/out.csv" | head -20
	fi
done

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]

#!/bin/sh
# suite-conformance: the golden vectors of every discipline of the core's
# registry through the generic qdisc `qlab`, and those of the dedicated
# qdiscs' disciplines through them, in the kernel (qlab_golden_test.ko,
# tests/kunit), every decision checked; the mutated copies must be reported
# as mismatches.  Then the flow hash and classification of hand-made
# packets against qcore_flow_hash() of their 5-tuples.
. /guest/lib.sh
check "load the qlab modules" load_qlab || exit 1
if [ ! -e /lib/qlab/qlab_golden_test.ko ]; then
	fail "qlab_golden_test.ko missing (make test-modules)"
	exit 1
fi
dmesg -c >/dev/null
check "insmod qlab_golden_test" insmod /lib/qlab/qlab_golden_test.ko
dmesg | grep -o 'qlab-golden: .*' >/tmp/golden.log
grep -E 'qlab-golden: (ok|FAIL)' /tmp/golden.log | while read -r _ verdict rest; do
	case $verdict in
	ok) pass "golden $rest" ;;
	*) fail "golden $rest" ;;
	esac
done
summary=$(grep 'summary' /tmp/golden.log)
echo "$summary"
cases=$(echo "$summary" | sed -n 's/.*cases=\([0-9]*\).*/\1/p')
check "golden: every case and check ran and passed ($summary)" \
	sh -c "[ '${cases:-0}' -ge 90 ] && echo '$summary' | grep -q 'fail=0'"
check "golden: the three mutated cases were caught" \
	sh -c "[ \$(grep -c 'ok .*mutated.*as expected' /tmp/golden.log) = 3 ]"
check "golden: every discipline of the registry ran through qlab (9 or more)" \
	sh -c "[ \$(grep -c 'ok registry ' /tmp/golden.log) -ge 9 ]"
check "flow hash: every hand-made packet checked (11)" \
	sh -c "[ \$(grep -c 'ok flow-hash ' /tmp/golden.log) = 11 ]"
check "classification: qlab_classify() and its general path agree on every hand-made packet" \
	sh -c "! grep -q 'FAIL classify-paths' /tmp/golden.log"
check "rmmod qlab_golden_test" rmmod qlab_golden_test

#!/bin/sh
# suite-conformance: the golden vectors through each qdisc's enqueue and
# dequeue in the kernel (qlab_golden_test.ko, tests/kunit), every decision
# checked; the mutated copies must be reported as mismatches.
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
check "golden: every case ran and passed ($summary)" \
	sh -c "[ '${cases:-0}' -ge 40 ] && echo '$summary' | grep -q 'fail=0'"
check "golden: both mutated cases were caught" \
	sh -c "[ \$(grep -c 'ok .*mutated.*as expected' /tmp/golden.log) = 2 ]"
check "rmmod qlab_golden_test" rmmod qlab_golden_test

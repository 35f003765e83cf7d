#!/bin/sh
# run-suites.sh SUITE... - run /guest/suite-<name>.sh for each, then the
# kernel log checks; print QLAB-SUMMARY pass=N fail=M.
. /guest/lib.sh
: >/tmp/qlab.pass; : >/tmp/qlab.fail
for s in "$@"; do
	echo "QLAB-SUITE $s"
	if [ -x "/guest/suite-$s.sh" ]; then
		"/guest/suite-$s.sh" || fail "suite $s exited non-zero"
	else
		fail "no suite $s"
	fi
done
# Whatever ran, the kernel must not have warned or oopsed.
if dmesg | grep -E "WARNING:|BUG:|Oops|general protection|Call Trace|UBSAN|KASAN|non-work-conserving" >/tmp/dmesg.bad; then
	fail "kernel log has warnings or oopses"; sed 's/^/    /' /tmp/dmesg.bad | head -40
	dmesg | tail -80 | sed 's/^/    dmesg: /'
else
	pass "kernel log clean (no WARNING/BUG/Oops/Call Trace/non-work-conserving)"
fi
echo "QLAB-SUMMARY pass=$(wc -l </tmp/qlab.pass) fail=$(wc -l </tmp/qlab.fail)"

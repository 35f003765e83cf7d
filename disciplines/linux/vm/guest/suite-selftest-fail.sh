#!/bin/sh
# suite-selftest-fail: one failing check, so tests/run.sh can prove that a
# failure inside the VM fails the host side too.
. /guest/lib.sh
check "this check fails on purpose" false

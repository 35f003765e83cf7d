#!/bin/sh
# tests/run.sh - the Linux backend's whole test, from a fresh clone:
# fetch Debian's iproute2 source and kernel image (cached in build/linux),
# build the modules, the test module, the tc plugins and the VM tools into
# build/linux, boot Debian's kernel under QEMU (TCG) and run every guest
# suite: conformance (golden vectors in the kernel), config (tc options,
# dump round trips, every rejection's message), traffic (TCP+UDP on veth,
# counter identities), robust (1200 fuzzed option sets under traffic,
# changes and deletes with queued packets, refcounts, slabs, rmmod).
# Exit 0 only when every check passed; on failure the VM's log is printed.
#
#   disciplines/linux/tests/run.sh            everything
#   disciplines/linux/tests/run.sh SUITE...   only these guest suites
#
# Needs (Debian): linux-headers-amd64 qemu-system-x86 busybox-static
# dpkg-dev gcc make python3, and network access to Debian's archive once.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
linux=$(cd "$here/.." && pwd)
repo=$(cd "$linux/../.." && pwd)
build=$repo/build/linux

for cmd in qemu-system-x86_64 busybox gcc make python3 dpkg-deb apt-get; do
	command -v "$cmd" >/dev/null || {
		echo "run.sh: $cmd missing (apt-get install linux-headers-amd64 qemu-system-x86 busybox-static dpkg-dev gcc make python3)" >&2
		exit 1
	}
done

echo "== fetch (cached in $build)"
"$linux/vm/fetch-deps.sh" "$build"
echo "== build"
nice make -s -C "$linux" -j2 modules >"$build/build.log" 2>&1 &&
	nice make -s -C "$linux" -j2 test-modules plugins tools >>"$build/build.log" 2>&1 || {
	cat "$build/build.log"
	echo "run.sh: build failed"
	exit 1
}
ls "$build"/kmod/*.ko "$build"/tc/*.so "$build"/tools/*
mkdir -p "$build/vm"

if [ $# -eq 0 ]; then
	set -- conformance config traffic robust
	echo "== harness self-test: a failing guest check must fail run-vm.sh"
	if "$linux/vm/run-vm.sh" -t 120 selftest-fail >"$build/vm/selftest.out" 2>&1; then
		cat "$build/vm/selftest.out"
		echo "run.sh: FAIL: run-vm.sh passed a VM whose check failed"
		exit 1
	fi
	grep 'run-vm \[selftest-fail\]: FAIL' "$build/vm/selftest.out"
fi
echo "== VM: $*"
"$linux/vm/run-vm.sh" -t 420 "$@"

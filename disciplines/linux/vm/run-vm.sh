#!/bin/sh
# run-vm.sh - boot Debian's kernel under QEMU (TCG, never KVM) with the
# test initramfs, run the named guest suites, and judge the serial log.
#
#   disciplines/linux/vm/run-vm.sh [-t TIMEOUT_S] [-i] [-o LOG] SUITE...
#	-i	deterministic guest time: QEMU -icount (benchmarks)
# $QLAB_VM_APPEND is added to the kernel command line (guest suite options,
# e.g. qlab.bench_rounds=N).
#
# Exit 0 only when the log has "QLAB-SUMMARY pass=N fail=0" with N > 0;
# otherwise (a failed check, a crash, a hang until TIMEOUT_S, no summary)
# print the VM's whole log and exit 1.  Needs build/linux/{kmod,tc,tools}.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
build=${QLAB_LINUX_BUILD:-$repo/build/linux}
timeout_s=240
icount=
log=
while getopts t:io: opt; do
	case $opt in
	t) timeout_s=$OPTARG ;;
	i) icount="-icount shift=0,align=off,sleep=off" ;;
	o) log=$OPTARG ;;
	*) exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -gt 0 ] || { echo "run-vm.sh: name at least one suite" >&2; exit 2; }
suites=$(echo "$@" | tr ' ' ,)

kver=$("$here/kver.sh")
deb=$(ls "$build"/dl/linux-image-"$kver"-unsigned_*.deb | tail -1)
ktree=$build/vm/kernel-$kver
if [ ! -e "$ktree/boot/vmlinuz-$kver" ]; then
	rm -rf "$ktree"
	mkdir -p "$ktree"
	dpkg-deb -x "$deb" "$ktree"
fi
mkdir -p "$build/vm"
initrd=$build/vm/initrd.gz
"$here/mkinitramfs.sh" "$build" "$ktree" "$initrd"

[ -n "$log" ] || log=$build/vm/serial-$(echo "$suites" | tr , -).log
mkdir -p "$(dirname "$log")"
set +e
# shellcheck disable=SC2086 # icount is a list of options
timeout "$timeout_s" qemu-system-x86_64 -accel tcg $icount -m 512 -smp 1 \
	-kernel "$ktree/boot/vmlinuz-$kver" -initrd "$initrd" \
	-append "console=ttyS0 panic=-1 quiet qlab.suites=$suites ${QLAB_VM_APPEND:-}" \
	-nographic -no-reboot -monitor none -serial stdio </dev/null >"$log" 2>&1
rc=$?
set -e

summary=$(grep -a 'QLAB-SUMMARY' "$log" | tail -1 | tr -d '\r')
npass=$(echo "$summary" | sed -n 's/.*pass=\([0-9]*\).*/\1/p')
nfail=$(echo "$summary" | sed -n 's/.*fail=\([0-9]*\).*/\1/p')
grep -a 'QLAB-CHECK FAIL' "$log" | tr -d '\r' || true
if [ "$rc" = 124 ]; then
	why="VM timed out after ${timeout_s}s"
elif [ -z "$summary" ]; then
	why="no QLAB-SUMMARY in the serial log (qemu exit $rc)"
elif [ "${nfail:-1}" != 0 ] || [ "${npass:-0}" = 0 ]; then
	why="$summary"
else
	echo "run-vm [$suites]: $summary ($log)"
	exit 0
fi
echo "---------------- VM serial log ($log) ----------------"
tr -d '\r' <"$log"
echo "---------------- end of VM log ----------------"
echo "run-vm [$suites]: FAIL: $why"
exit 1

#!/bin/sh
# suite-bench: per-packet cost (enqueue + dequeue) of each qlab qdisc and of
# pfifo and prio, as the root of a dummy device, by qlab_bench.ko.  Meant
# for QEMU -icount (deterministic guest time: benchmarks/kernel-qdisc.sh).
# Prints "QLAB-BENCH LABEL NS_PER_PKT DROPS" per qdisc.
. /guest/lib.sh
check "load the qlab modules" load_qlab || exit 1
load_extra dummy sch_prio
ip link add d0 type dummy
echo 1 >/proc/sys/net/ipv6/conf/d0/disable_ipv6
ip link set d0 up
rounds=$(sed -n 's/.*qlab\.bench_rounds=\([0-9]*\).*/\1/p' /proc/cmdline)
rounds=${rounds:-1000}
bench() {	# bench LABEL QDISC OPTIONS...
	label=$1
	shift
	tc qdisc replace dev d0 root "$@" >/tmp/bench.err 2>&1 || { fail "bench $label: tc qdisc replace $*: $(cat /tmp/bench.err)"; return; }
	dmesg -c >/dev/null
	if insmod /lib/qlab/qlab_bench.ko dev=d0 label="$label" rounds="$rounds"; then
		line=$(dmesg | grep -o "qlab-bench: $label .*")
		rmmod qlab_bench
		ns=$(echo "$line" | sed -n 's/.*ns_per_pkt=\([0-9.]*\).*/\1/p')
		drops=$(echo "$line" | sed -n 's/.*drops=\([0-9]*\).*/\1/p')
		qd=$(echo "$line" | sed -n 's/.*qdisc=\([a-z_]*\).*/\1/p')
		echo "QLAB-BENCH $label $ns $drops"
		check "bench $label measured $1 (got qdisc=$qd, $ns ns/pkt)" test "$qd" = "$1"
	else
		fail "bench $label: insmod qlab_bench"
		dmesg | tail -5
	fi
}
grep -H . /sys/devices/system/cpu/vulnerabilities/* | sed 's/^/    /'
tc qdisc replace dev d0 root ncq
insmod /lib/qlab/qlab_bench.ko dev=d0 label=parts; dmesg | grep "qlab-bench: part"; rmmod qlab_bench
bench pfifo pfifo limit 1000
bench prio prio
bench ncq ncq
bench cqaqm cqaqm
bench srd srd rate_bps 1000000000 n_d 1 n_r 1
bench srd_estimated srd rate_bps 1000000000 n_d 0 n_r 0
bench rd srd variant rd rate_bps 1000000000 n_d 1 n_r 1
bench rbaqm rbwfq aqm rbaqm rate_bps 1000000000000 classes 8 weights 1500 limit 1000
bench wred rbwfq aqm wred classes 8 weights 1500 q_pkts 1000 seed 1
# The generic qdisc: the same adapter, configured by the core's table.
bench qlab_ncq qlab disc ncq
bench qlab_srd qlab disc srd rate_bps 1000000000 n_d 1 n_r 1
bench qlab_droptail qlab disc droptail limit 1000
bench qlab_prio qlab disc prio limit 1000
ip link del d0

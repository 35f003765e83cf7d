#!/bin/sh
# suite-robust: random and malformed netlink option sets (qfuzz, 300 per
# qdisc, 1500 in all; for the generic qlab with every discipline of the
# registry, garbage names and random nested parameters) against a qdisc
# carrying UDP traffic, with deletes and re-adds among them; valid changes
# (qlab: from one discipline to another) and deletes of an HTB leaf with a
# standing queue (the purge path); then no warning in the kernel log (run
# by run-suites.sh), module reference counts back to 0, every module
# unloads, and the kmalloc slabs hold no more objects than before.
. /guest/lib.sh
check "load the qlab modules" load_qlab || exit 1
check "two namespaces joined by veth" make_hosts || exit 1

kmalloc_objs() {	# active objects in the kmalloc-* slabs
	awk '$1 ~ /^kmalloc-/ { n += $2 } END { print n }' /proc/slabinfo
}
flood() {	# flood SECONDS: UDP at every class while it lasts
	for tos in 0x00 0x20 0x28 0x40 0x60; do
		ip netns exec a qtraffic udp-send 10.0.0.2 5001 "$((${1} * 400))" 1000 $tos >/dev/null &
	done
}

fuzz_all() {	# fuzz_all N SEED: N requests per qdisc on va (root) under traffic
	for kq in qlab:4 ncq:9 cqaqm:14 srd:13 rbwfq:25; do
		kind=${kq%:*} max=${kq#*:} discs=
		[ "$kind" = qlab ] && discs=$QLAB_DISCS
		tc -n a qdisc replace dev va root $kind || { fail "fuzz: add $kind"; continue; }
		flood 2
		# shellcheck disable=SC2086
		out=$(ip netns exec a qfuzz va "$kind" "$max" "$1" "$2" $discs)
		rc=$?
		if [ $rc = 0 ]; then pass "fuzz $kind: $out"; else fail "fuzz $kind: $out (exit $rc)"; fi
		wait
	done
	tc -n a qdisc del dev va root 2>/dev/null
}

# The disciplines the generic qdisc runs, as its tc plugin lists them.
QLAB_DISCS=$(tc qdisc add dev lo root qlab help 2>&1 | awk '/^disc:/ { on = 1; next } on && /^  [a-z]/ { print $1 }')
check "qlab lists the core's disciplines for the fuzz ($(echo "$QLAB_DISCS" | tr '\n' ' '))" test -n "$QLAB_DISCS"
fuzz_all 25 7	# warm-up: first-use allocations are not leaks
slab_before=$(kmalloc_objs)
fuzz_all 300 1

# Valid changes and deletes with packets queued behind a 1 Mbit/s shaper
# (slow enough that a queue of a few packets outlasts a `tc` start under TCG).
tc -n a qdisc add dev va root handle 1: htb default 1
tc -n a class add dev va parent 1: classid 1:1 htb rate 1mbit
for spec in "ncq limit 80|ncq limit 20 thresh 0.5" \
	"cqaqm b_high 30 b_low 80 t_high_local 10 t_low_local 40 t_low_nonlocal 60|cqaqm scheduler drr" \
	"srd rate 1000000 n_d 1 n_r 1|srd variant rd rate 1000000 d 10000000" \
	"rbwfq aqm wred classes 4 q_pkts 50|rbwfq aqm rbaqm classes 2 weights 1001:501 rate 1000000" \
	"qlab disc ncq limit 80|qlab disc srd rate 1000000 n_d 1 n_r 1" \
	"qlab disc red limit 60 min 20 max 40|qlab disc rbaqm classes 2 weights 1001:501 rate 1000000"; do
	one=${spec%|*} two=${spec#*|}
	kind=${one%% *}
	# shellcheck disable=SC2086
	tc -n a qdisc add dev va parent 1:1 handle 10: $one
	# Each round floods, waits until packets are queued (the flood is a
	# burst: an AQM may drain its short queue before a change lands), then
	# changes the qdisc back and forth; a round that purged nothing (the
	# queue drained first: timing, not the qdisc) is followed by another,
	# up to four, so "changes purged queued packets" tests the qdisc.
	# shellcheck disable=SC2034 # round only counts the rounds
	for round in 1 2 3 4; do
		flood 2
		# shellcheck disable=SC2034,SC2046 # a counter only; the counters, one word each
		for w in $(seq 100); do
			set -- $(qlab_stats a va 10:)
			[ "${5:-0}" -gt 1 ] && break
			sleep 0.01
		done
		# shellcheck disable=SC2034 # i only counts the changes
		for i in 1 2 3 4 5 6; do
			# shellcheck disable=SC2086
			tc -n a qdisc change dev va parent 1:1 handle 10: $two || fail "change $kind to '$two'"
			# shellcheck disable=SC2086
			tc -n a qdisc change dev va parent 1:1 handle 10: $one || fail "change $kind to '$one'"
			sleep 0.2
		done
		# shellcheck disable=SC2046 # the counters, one word each
		set -- $(qlab_stats a va 10:)
		[ "$4" -gt 0 ] && break
		echo "    $kind: round $round purged nothing (the queue drained before the changes), again"
		wait
	done
	check "$kind under traffic: arrivals = sent + drops + purged + backlog ($1 = $2 + $3 + $4 + $5)" \
		test "$1" -eq $(($2 + $3 + $4 + $5))
	check "$kind under traffic: changes purged queued packets ($4 > 0)" test "$4" -gt 0
	wait
	# at 1 Mbit/s a full queue takes up to a second to drain
	# shellcheck disable=SC2034 # a counter only
	for w in $(seq 50); do
		/sbin/tc -n a -s qdisc show dev va | grep -c '^ backlog 0b 0p' | grep -qx 2 && break
		sleep 0.1
	done
	check "$kind: after the changes the parents' count agrees (HTB root and leaf empty)" sh -c \
		"/sbin/tc -n a -s qdisc show dev va | grep -c '^ backlog 0b 0p' | grep -qx 2"
	flood 1
	sleep 0.3
	check "$kind: delete with a standing queue" tc -n a qdisc del dev va parent 1:1 handle 10:
	wait
done
tc -n a qdisc del dev va root

for m in sch_qlab sch_ncq sch_cqaqm sch_srd sch_rbwfq; do
	check "$m: reference count 0 after deleting every qdisc" \
		awk -v m=$m '$1 == m { exit ($3 != 0) }' /proc/modules
done
sleep 1		# RCU frees the qdiscs
slab_after=$(kmalloc_objs)
echo "    kmalloc objects: $slab_before before, $slab_after after"
check "no kmalloc growth over 1500 fuzzed requests ($slab_before -> $slab_after, < 600)" \
	test $((slab_after - slab_before)) -lt 600
for m in sch_qlab sch_ncq sch_cqaqm sch_srd sch_rbwfq qlab_core; do
	check "rmmod $m" rmmod $m
done

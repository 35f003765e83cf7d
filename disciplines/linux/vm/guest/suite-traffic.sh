#!/bin/sh
# suite-traffic: TCP and UDP through each qdisc (the generic qlab with
# droptail, prio, S-RD and RED too), a leaf under HTB (two under TBF, so
# peek is used) on a veth pair between two namespaces.  Per qdisc:
#   arrivals = sent + drops + purged + backlog (the adapter's counters),
#   the kernel's drop count and queue length agree with them,
#   the veth transmitted exactly the packets the qdisc sent,
#   traffic flowed (sent > 0), the TCP transfer completed.
. /guest/lib.sh
TCP_BYTES=300000
check "load the qlab modules" load_qlab || exit 1
check "two namespaces joined by veth" make_hosts || exit 1

run() {	# run NAME PARENT_SETUP "QDISC OPTIONS" [tcp=TOS] TOS...
	name=$1 parent=$2 qd=$3
	shift 3
	# TCP's ToS: its own (not flooded) after tcp=, else the first flooded one.
	tcp_tos=$1
	case $1 in tcp=*) tcp_tos=${1#tcp=}; shift ;; esac
	tc -n a qdisc del dev va root 2>/dev/null
	before=$(tx_done a va)
	# $qd is the qdisc and its options, split into words on purpose
	# shellcheck disable=SC2086
	case $parent in
	htb)	tc -n a qdisc add dev va root handle 1: htb default 1 &&
		tc -n a class add dev va parent 1: classid 1:1 htb rate 20mbit ceil 20mbit &&
		tc -n a qdisc add dev va parent 1:1 handle 10: $qd ;;
	tbf)	tc -n a qdisc add dev va root handle 1: tbf rate 20mbit burst 20k latency 100ms &&
		tc -n a qdisc add dev va parent 1:1 handle 10: $qd ;;
	esac || { fail "$name: set up $parent + $qd"; return; }
	ip netns exec b qtraffic udp-sink 5001 6 >/tmp/udp-sink.out &
	sink=$!
	ip netns exec b qtraffic tcp-sink 5002 >/tmp/tcp-sink.out &
	tsink=$!
	sleep 0.3
	t0=$(cut -d' ' -f1 /proc/uptime)
	ip netns exec a qtraffic tcp-send 10.0.0.2 5002 $TCP_BYTES "$tcp_tos" >/tmp/tcp-send.out 2>&1 &
	tsend=$!
	for tos in "$@"; do
		ip netns exec a qtraffic udp-send 10.0.0.2 5001 400 1000 "$tos" >/dev/null &
		ip netns exec a qtraffic udp-send 10.0.0.2 5001 100 100 "$tos" >/dev/null &
	done
	# TCP must finish within 30 s (TCG is slow, but not that slow).
	( sleep 30; kill $tsend $tsink 2>/dev/null ) &
	watchdog=$!
	wait $tsend
	wait $tsink
	kill $watchdog 2>/dev/null
	sleep 0.5	# let the shaper drain the queue
	# shellcheck disable=SC2046 # the counters, one word each
	set -- $(qlab_stats a va 10:)
	ar=$1 se=$2 dr=$3 pu=$4 bl=$5 kd=$6 kq=$7
	echo "    $name ($(awk -v t0=$t0 '{ printf "%.1f", $1 - t0 }' /proc/uptime) s): arrivals $ar sent $se drops $dr purged $pu backlog $bl (kernel dropped $kd qlen $kq); $(cat /tmp/tcp-sink.out)"
	tc -n a -s qdisc show dev va | sed 's/^/    | /'
	check "$name: arrivals = sent + drops + purged + backlog ($ar = $se + $dr + $pu + $bl)" \
		test "$ar" -eq $((se + dr + pu + bl))
	# The kernel's count of what the qdisc sent is in segments; the
	# adapter's (and veth's) in skbs, and a TCP transfer that grows its
	# window early sends GSO skbs of several segments each.
	segs=$(tc -n a -s qdisc show dev va | awk '/^qdisc / { inq = ($3 == "10:") }
		inq && /^ Sent / { print $4; exit }')
	check "$name: traffic went through (sent $segs segments > 100)" test "${segs:-0}" -gt 100
	check "$name: UDP overload was dropped (drops $dr > 0)" test "$dr" -gt 0
	check "$name: kernel drop count = adapter drops + purged ($kd)" test "$kd" -eq $((dr + pu))
	check "$name: kernel queue length = backlog ($kq)" test "$kq" -eq "$bl"
	check "$name: drained, and the parent's count agrees (root and leaf 0p)" sh -c \
		"/sbin/tc -n a -s qdisc show dev va | grep -c '^ backlog 0b 0p' | grep -qx 2"
	after=$(tx_done a va)
	check "$name: veth transmitted what the qdisc sent ($((after - before)) = $se)" \
		test $((after - before)) -eq "$se"
	check "$name: TCP transfer of $TCP_BYTES bytes completed" grep -q "received $TCP_BYTES" /tmp/tcp-sink.out
	wait $sink 2>/dev/null
}

# ToS bytes: cls = tos >> 5, prec = (tos >> 3) & 3.
run ncq htb "ncq limit 50 thresh 0.2 size 200" 0x00 0x20
run "ncq under tbf" tbf "ncq limit 50 thresh 0.2 size 200" 0x00
run cqaqm htb "cqaqm b_high 20 b_low 60 t_high_local 5 t_low_local 30 t_low_nonlocal 45" 0x28 0x20 0x08 0x00
run srd htb "srd variant srd rate 20000000 d 20000000 n_d 1 n_r 2" 0x00 0x20
# RD under TBF: RD drops its D band's late head packets at dequeue, and when
# a slow guest's dequeue comes late enough to find every queued packet
# late it drops them all and has nothing to send (as CoDel may); HTB calls
# that "non-work-conserving?" in the kernel log (a fresh-clone CI run under
# load, 2026-11-28), which run-suites.sh's log check rightly fails for
# any other qdisc. TBF peeks, so the same run leaves the log clean. S-RD (no
# head drops) stays under HTB, checked.
run rd tbf "srd variant rd rate 20000000 d 20000000" 0x00 0x20
run rbaqm htb "rbwfq aqm rbaqm classes 4 rate 20000000 limit 50" 0x00 0x20 0x40 0x60
# WRED's average does not decay while a class is idle: TCP in a class the
# UDP burst has filled sees its drop probability long after the burst, and
# took 20 to 30 s (of 30) to finish.  TCP gets a class of its own here.
run wred htb "rbwfq aqm wred classes 4 q_pkts 20" tcp=0x60 0x00 0x20 0x40
# The generic qdisc, with disciplines no dedicated qdisc runs.
run "qlab droptail" htb "qlab disc droptail limit 30" 0x00
run "qlab prio" htb "qlab disc prio bands 3 limit 40" 0x00 0x20 0x40 0x60
run "qlab srd" tbf "qlab disc srd rate 20000000 d 20000000" 0x00 0x20
# RED with ECN: ECT(0) UDP (ToS 0x02) is marked where RED decides early,
# the rest (not ECT) is dropped instead (the core's mark fallback).
# (pkt_time: the average decays while the queue is idle, or TCP behind the
# UDP burst would see it high for seconds, as with WRED above.)
# Whether RED's average sits between min and max while ECT packets arrive
# depends on the guest's timing under TCG: once in three CI runs of the
# fifth session no ECT packet arrived there (every early decision fell on
# the unmarkable ones, the rest were forced drops above max). Up to three
# attempts; the check is on the last.
for attempt in 1 2 3; do
	run "qlab red ecn" htb "qlab disc red limit 60 min 5 max 15 max_p 0.1 ecn 1 pkt_time 400000" 0x02 0x00
	marked=$(tc -n a -s qdisc show dev va | awk '/^qdisc / { inq = ($3 == "10:") }
		inq && / band / { for (i = 1; i <= NF; i++) if ($i == "marked") m += $(i + 1) } END { print m + 0 }')
	[ "$marked" -gt 0 ] && break
	echo "    qlab red ecn: attempt $attempt marked no ECT packet"
done
check "qlab red ecn: ECT packets were marked ($marked > 0)" test "$marked" -gt 0

# Classification from real sockets: IP_TOS 0x28 (cls 1, prec 1) must all
# land in CQ-AQM's high queue (band 0), 0x08 (cls 0, prec 1) in the low one.
band_arrivals() {	# band_arrivals BAND: arrivals of that band of qdisc 10:
	tc -n a -s qdisc show dev va | awk -v b="band $1:" '
		/^qdisc / { inq = ($3 == "10:") }
		inq && index($0, b) { for (i = 1; i <= NF; i++) if ($i == "arrivals") print $(i + 1) }'
}
for tos_band in 0x28:0:1 0x08:1:0; do
	tos=${tos_band%%:*} want=${tos_band#*:}; want=${want%:*} other=${tos_band##*:}
	tc -n a qdisc del dev va root 2>/dev/null
	tc -n a qdisc add dev va root handle 10: cqaqm
	ip netns exec a qtraffic udp-send 10.0.0.2 5001 200 500 $tos >/dev/null
	check "ToS $tos from a socket: 200 arrivals in cqaqm band $want, none in band $other" \
		test "$(band_arrivals $want)" = 200 -a "$(band_arrivals $other)" = 0
done
tc -n a qdisc del dev va root

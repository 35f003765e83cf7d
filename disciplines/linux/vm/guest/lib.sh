# shellcheck shell=dash  # busybox ash in the guest: local is there
# lib.sh - sourced by the guest suites: assertions that print one
# QLAB-CHECK line each and count failures into /tmp/qlab.fail.

# Debian's busybox runs its own applets before PATH (tc and ip applets
# exist): call iproute2's by path.
tc() { /sbin/tc "$@"; }
ip() { /bin/ip "$@"; }
pass() { echo "QLAB-CHECK PASS $*"; echo x >>/tmp/qlab.pass; }
fail() { echo "QLAB-CHECK FAIL $*"; echo x >>/tmp/qlab.fail; }
check() {	# check NAME COMMAND...: COMMAND must succeed
	local cname=$1
	shift
	if "$@" >/tmp/check.out 2>&1; then pass "$cname"; else fail "$cname"; sed 's/^/    /' /tmp/check.out | head -20; fi
}
check_fails_with() {	# check_fails_with NAME MESSAGE COMMAND...: must fail, output containing MESSAGE
	local cname=$1 cmsg=$2
	shift 2
	if "$@" >/tmp/check.out 2>&1; then
		fail "$cname (succeeded, expected failure with '$cmsg')"
	elif grep -qF -- "$cmsg" /tmp/check.out; then
		pass "$cname"
	else
		fail "$cname (expected message '$cmsg')"; sed 's/^/    /' /tmp/check.out | head -10
	fi
}
load_qlab() {
	for m in qlab_core sch_qlab sch_ncq sch_cqaqm sch_srd sch_rbwfq; do
		grep -q "^$m " /proc/modules || insmod /lib/qlab/$m.ko || return 1
	done
}
load_extra() {
	for m in "$@"; do grep -q "^$m " /proc/modules || insmod /lib/extra/$m.ko || return 1; done
}

# qlab_stats NS DEV HANDLE: "arrivals sent drops purged backlog_pkts
# kernel_dropped kernel_qlen" of the qlab qdisc HANDLE (e.g. 10:), summed
# over its bands, from `tc -s qdisc show`.
qlab_stats() {
	tc -n "$1" -s qdisc show dev "$2" | awk -v h="$3" '
		/^qdisc / { inq = ($3 == h) }
		!inq { next }
		/dropped/ { for (i = 1; i <= NF; i++) if ($i == "(dropped") { kd = $(i + 1); sub(",", "", kd) } }
		/^ *backlog [0-9]+b [0-9]+p/ { kq = $3; sub("p", "", kq) }
		/ band [0-9]+:/ {
			for (i = 1; i <= NF; i++) {
				if ($i == "backlog") { b = $(i + 1); sub("p", "", b); bl += b }
				if ($i == "arrivals") ar += $(i + 1)
				if ($i == "sent") se += $(i + 1)
				if ($i == "purged") pu += $(i + 1)
				if ($i ~ /^drop_/) dr += $(i + 1)
			}
		}
		END { printf "%d %d %d %d %d %d %d\n", ar, se, dr, pu, bl, kd, kq }'
}

# The VM's two hosts: namespaces a (10.0.0.1, va) and b (10.0.0.2, vb), no IPv6.
make_hosts() {
	[ -e /run/netns/a ] && return 0
	load_extra veth sch_htb sch_tbf sch_netem || return 1
	ip netns add a && ip netns add b || return 1
	ip link add va netns a type veth peer name vb netns b || return 1
	for ns in a b; do
		ip netns exec $ns sh -c 'echo 1 >/proc/sys/net/ipv6/conf/all/disable_ipv6; echo 1 >/proc/sys/net/ipv6/conf/default/disable_ipv6'
		ip -n $ns link set lo up
	done
	ip -n a addr add 10.0.0.1/24 dev va && ip -n a link set va up &&
		ip -n b addr add 10.0.0.2/24 dev vb && ip -n b link set vb up &&
		tc -n b qdisc add dev vb root netem delay 2ms || return 1	# ACKs take a while
	# Static neighbours: no ARP, so every packet on va is test traffic.
	ip -n a neigh replace 10.0.0.2 lladdr "$(cat /sys/class/net/vb/address 2>/dev/null || ip netns exec b cat /sys/class/net/vb/address)" dev va nud permanent &&
		ip -n b neigh replace 10.0.0.1 lladdr "$(ip netns exec a cat /sys/class/net/va/address)" dev vb nud permanent
}

# tx_done NS DEV: packets the device transmitted plus those it dropped.
tx_done() {
	ip -n "$1" -s link show dev "$2" | awk '/TX:/ { getline; print $2 + $4; exit }'
}

#!/bin/sh
# suite-config: every qdisc through tc (the dedicated ones, and the generic
# qlab with every discipline of the core's registry): every option set to
# a non-default value must come back from `tc qdisc show` exactly (dump
# mirrors change; shown in iproute2's units: rate 20Mbit d 50ms size 130b
# limit 100p), the shown options fed back to `tc qdisc change` must be the
# identity, every unit form must equal its integer alias in `tc -j`, and
# every invalid option (an unknown unit too) must be rejected with its
# message naming the parameter, leaving the qdisc as it was.
. /guest/lib.sh
check "load the qlab modules" load_qlab || exit 1
load_extra dummy
ip link add d0 type dummy && ip link set d0 up

shown() {	# the options part of `tc qdisc show dev d0` for the root qdisc
	tc qdisc show dev d0 | sed -n "s/^qdisc [a-z]* [0-9a-f]*: root refcnt [0-9]* //p" | sed 's/ *$//'
}

# roundtrip NAME "ADD OPTIONS" "EXPECTED SHOW"
roundtrip() {
	name=$1 add=$2 want=$3
	tc qdisc del dev d0 root 2>/dev/null
	# shellcheck disable=SC2086
	if ! tc qdisc add dev d0 root $add >/tmp/rt.out 2>&1; then
		fail "$name: tc qdisc add $add"; sed 's/^/    /' /tmp/rt.out; return
	fi
	got=$(shown)
	if [ "$got" = "$want" ]; then pass "$name: dump shows every option as set"
	else fail "$name: dump"; echo "    want: $want"; echo "    got:  $got"; fi
	kind=${add%% *}
	# shellcheck disable=SC2086
	if tc qdisc change dev d0 root $kind $got >/tmp/rt.out 2>&1 && [ "$(shown)" = "$got" ]; then
		pass "$name: shown options fed to change are the identity"
	else
		fail "$name: change with the shown options"; sed 's/^/    /' /tmp/rt.out; echo "    now: $(shown)"
	fi
}

roundtrip "ncq" \
	"ncq size 100 thresh 0.25 limit 50 variant conf-literal mode probabilistic favor_acks 1 ramp 0.125 seed 42" \
	"size 100b thresh 0.25 limit 50p variant conf-literal mode probabilistic favor_acks 1 ramp 0.125 seed 42"
roundtrip "ncq defaults" "ncq seed 5" \
	"size 130b thresh 0.05 limit 100p variant journal mode deterministic favor_acks 0 ramp 0.5 seed 5"
roundtrip "cqaqm" \
	"cqaqm b_high 60 b_low 600 t_high_local 8 t_low_local 400 t_low_nonlocal 550 scheduler drr weights 3:2 quantum 3000:1500 hysteresis 1 t_low_off 300 t_high_local_off 4 t_low_local_off 350 seed 7" \
	"b_high 60p b_low 600p t_high_local 8p t_low_local 400p t_low_nonlocal 550p scheduler drr weights 3:2 quantum_bytes 3000:1500 hysteresis 1 t_low_off 300p t_high_local_off 4p t_low_local_off 350p seed 7"
roundtrip "srd (rd)" \
	"srd variant rd rate 10000000 d 20000000 k 0.5 buffer 500000 bmax 400000 sd_max 200 sr_max 1400 n_d 3 n_r 5 period 200000000 seed 9" \
	"variant rd rate 10Mbit d 20ms k 0.5 buffer 500000b bmax 400000b sd_max 200b sr_max 1400b n_d 3 n_r 5 period 200ms seed 9"
roundtrip "srd (srd)" "srd variant srd rate 100000000 seed 3" \
	"variant srd rate 100Mbit d 50ms k 2 buffer 0b bmax 0b sd_max 1500b sr_max 1500b n_d 0 n_r 0 period 100ms seed 3"
roundtrip "rbwfq (rbaqm)" \
	"rbwfq aqm rbaqm classes 3 rate 2000000 weights 600:300:100 maxs 4000 u 900000:800000:700000 k 0.001 gain 0.5 tau 20000000 rate_estimate admitted capacity_estimator ewma window 50 capacity_weight 0.02 fair_share 0 ecn 1 limit 80 seed 11" \
	"aqm rbaqm classes 3 rate 2Mbit weights_bytes 600:300:100 maxs 4000b u_ppm 900000:800000:700000 k 0.001 gain 0.5 tau 20ms rate_estimate admitted capacity_estimator ewma window 50p capacity_weight 0.02 fair_share 0 ecn 1 limit 80p seed 11"
roundtrip "rbwfq (wred)" \
	"rbwfq aqm wred classes 3 q_pkts 5:10:20 w_q 0.01 weights 501:251:251 maxs 2000 ecn 1 seed 12" \
	"aqm wred classes 3 q_pkts 5:10:20 w_q 0.01 weights_bytes 501:251:251 maxs 2000b ecn 1 seed 12"

# A change keeps the options it does not name; a variant switch starts from
# that variant's defaults.
tc qdisc replace dev d0 root ncq size 100 thresh 0.25 seed 1
tc qdisc change dev d0 root ncq limit 30
check "ncq: change keeps unnamed options" sh -c \
	"/sbin/tc qdisc show dev d0 | grep -q 'size 100b thresh 0.25 limit 30p '"

# invalid KIND "ADD OPTIONS" MESSAGE: rejected with MESSAGE, state unchanged.
invalid() {
	kind=$1 opts=$2 msg=$3
	before=$(shown)
	# shellcheck disable=SC2086
	check_fails_with "$kind: reject '$opts'" "$msg" tc qdisc change dev d0 root $kind $opts
	[ "$(shown)" = "$before" ] || fail "$kind: a rejected change altered the qdisc"
}
tc qdisc replace dev d0 root ncq seed 1
invalid ncq "thresh 1.5" "thresh: expected a decimal with at most 6 places between 0 and 1"
invalid ncq "thresh 0.0000001" "thresh: expected a decimal with at most 6 places"
invalid ncq "limit 0" "limit_pkts: expected an integer between 1 and 1000000"
invalid ncq "size 70000" "size_bytes: expected an integer between 1 and 65535"
invalid ncq "mode fast" "mode: expected one of deterministic|probabilistic"
invalid ncq "variant conf" "variant: expected one of journal|conf-literal"
invalid ncq "favor_acks 2" "favor_acks"
invalid ncq "frob 1" "unknown option 'frob'"
invalid ncq "size" "option 'size' needs a value"
invalid ncq "seed -1" "seed: expected an integer"
check_fails_with "ncq: usage text" "Usage: ... ncq" tc qdisc add dev d0 root ncq help

tc qdisc replace dev d0 root cqaqm seed 1
invalid cqaqm "b_high 5 t_high_local 9" "t_high_local: must be <= b_high (5), got 9"
invalid cqaqm "t_low_local 700 t_low_nonlocal 650" "t_low_local: must be <= t_low_nonlocal (650), got 700"
invalid cqaqm "t_low_nonlocal 800" "t_low_nonlocal: must be <= b_low (700), got 800"
invalid cqaqm "weights 1:2:3" "weights: expected one value or two (high:low)"
invalid cqaqm "hysteresis 1 t_low_off 700" "t_low_off: must be <= t_low_nonlocal (650) with hysteresis=1"
invalid cqaqm "scheduler fifo" "scheduler: expected one of strict|wrr|drr"
invalid cqaqm "quantum 0" "quantum_bytes"
check_fails_with "cqaqm: usage text" "Usage: ... cqaqm" tc qdisc add dev d0 root cqaqm help

tc qdisc replace dev d0 root srd rate 10000000 seed 1
invalid srd "buffer 1000" "B_R = min(B_max, B - B_D) must be > 0"
invalid srd "k 0" "k: expected a decimal with at most 6 places between 0.000001 and 1000"
invalid srd "rate 10" "rate_bps: expected an integer between 1000 and"
invalid srd "variant xrd" "variant must be one of srd|rd"
check_fails_with "srd: usage text" "Usage: ... srd" tc qdisc add dev d0 root srd help

tc qdisc replace dev d0 root rbwfq aqm wred seed 1
invalid rbwfq "aqm wred classes 3 q_pkts 5:10" "q_pkts: expected 1 or 3 values (classes), got 2"
invalid rbwfq "aqm rbaqm classes 2 weights 1:2:3" "weights_bytes: expected 1 or 2 values (classes), got 3"
invalid rbwfq "aqm rbaqm window 300" "window_pkts: expected an integer between 1 and 256"
invalid rbwfq "q_pkts 5 rate 100" "give aqm rbaqm|wred"
invalid rbwfq "aqm red" "aqm must be one of rbaqm|wred"
check_fails_with "rbwfq: usage text" "Usage: ... rbwfq" tc qdisc add dev d0 root rbwfq help

# The kernel's own checks on raw netlink (what tc never sends): policy
# ranges, attribute sizes, a list of the wrong size, another variant's attribute.
raw() {	# raw NAME KIND ATTR TYPE VALUE MESSAGE
	name=$1 kind=$2 msg=$6
	out=$(qfuzz d0 "$kind" set "$3" "$4" "$5")
	case $out in
	"error 0:"*) fail "$name: accepted ($out)" ;;
	*"$msg"*) pass "$name: $out" ;;
	*) fail "$name: want '$msg', got '$out'" ;;
	esac
}
tc qdisc replace dev d0 root ncq seed 1
raw "netlink: ncq thresh above 10^6 ppm" ncq 4 u32 1000001 "out of range"
raw "netlink: ncq size_bytes 0" ncq 3 u32 0 "out of range"
raw "netlink: ncq mode 2" ncq 7 u8 2 "out of range"
raw "netlink: ncq size_bytes as u8" ncq 3 u8 1 "policy validation"
tc qdisc replace dev d0 root cqaqm seed 1
raw "netlink: cqaqm quantum list of 6 bytes" cqaqm 10 len:6 1 "cqaqm: quantum_bytes: expected 1 to 8 u32 values (bytes), got 6 bytes"
raw "netlink: cqaqm quantum list of 36 bytes" cqaqm 10 len:36 1 "error -34"
tc qdisc replace dev d0 root srd seed 1
raw "netlink: srd variant 2" srd 3 u8 2 "out of range"
raw "netlink: srd d_ns 0" srd 5 u64 0 "out of range"
tc qdisc replace dev d0 root rbwfq aqm rbaqm seed 1
raw "netlink: wred attribute while rbaqm runs" rbwfq 20 u32 3 "belongs to another aqm than the rbaqm in use"

# JSON output carries the options and the statistics by name.
tc qdisc replace dev d0 root ncq size 100 seed 3
check "ncq: tc -j -s shows options and statistics as JSON" sh -c \
	"/sbin/tc -j -s qdisc show dev d0 | grep -q '\"size_bytes\":100,.*\"seed\":3.*\"favoured\":0,.*\"bands\":\[{\"band\":0,'"
tc qdisc replace dev d0 root rbwfq aqm wred classes 2 weights 1500 seed 3
check "rbwfq: tc -j -s shows per-class P" sh -c \
	"/sbin/tc -j -s qdisc show dev d0 | grep -q '\"aqm\":\"wred\".*\"p\":\"0.000000\",\"p_q32\":0'"

# ---- the generic qdisc: qlab disc NAME ------------------------------------

# Every discipline of the core's registry, as `qlab help` lists them: added
# with its defaults, the dump shows the discipline, every parameter of its
# table in order (as `qlab disc NAME help` lists them) and the seed, and the
# shown options fed back to change are the identity.
discs=$(tc qdisc add dev d0 root qlab help 2>&1 | awk '/^disc:/ { on = 1; next } on && /^  [a-z]/ { print $1 }')
check "qlab help lists the core's disciplines ($(echo "$discs" | tr '\n' ' '))" test "$(echo "$discs" | wc -w)" -ge 9
for d in $discs; do
	# (a parameter with an iproute2 unit, listed under "units", is shown
	# by its name without the unit suffix: rate_bps as "rate 20Mbit")
	names=$(tc qdisc add dev d0 root qlab disc "$d" help 2>&1 | awk '
		/^parameters/ { on = 1; next }
		/^units/ { on = 0; un = 1; next }
		on && /^  [a-z0-9_]+ +unit / { full[++n] = $1 }
		un && /^  [a-z]/ {
			l = $0; sub(/:.*/, "", l); gsub(/ /, "", l)
			k = split(l, a, ","); for (i = 1; i <= k; i++) u[a[i]] = 1
		}
		END {
			for (i = 1; i <= n; i++) {
				s = full[i]; sub(/_(bytes|pkts|ns|bps|ppm)$/, "", s)
				printf "%s ", (s in u) ? s : full[i]
			}
		}')
	tc qdisc del dev d0 root 2>/dev/null
	if ! tc qdisc add dev d0 root qlab disc "$d" seed 5 >/tmp/rt.out 2>&1; then
		fail "qlab disc $d: add with its defaults"; sed 's/^/    /' /tmp/rt.out; continue
	fi
	got=$(shown)
	dumped=$(echo "$got" | awk '$1 == "disc" && $NF != "" { for (i = 3; i < NF - 1; i += 2) printf "%s ", $i }')
	check "qlab disc $d: dump shows disc $d, the parameters ${names}in order, seed 5 ($got)" \
		sh -c "[ '$dumped' = '$names' ] && [ '$(echo "$got" | cut -d' ' -f1-2)' = 'disc $d' ] && [ '${got##* seed }' = 5 ]"
	# shellcheck disable=SC2086
	if tc qdisc change dev d0 root qlab $got >/tmp/rt.out 2>&1 && [ "$(shown)" = "$got" ]; then
		pass "qlab disc $d: shown options fed to change are the identity"
	else
		fail "qlab disc $d: change with the shown options"; sed 's/^/    /' /tmp/rt.out
	fi
	# (d0 may have sent an IPv6 router solicitation through it meanwhile)
	check "qlab disc $d: tc -s shows per-band counters" sh -c \
		"/sbin/tc -s qdisc show dev d0 | grep -Eq ' band 0: backlog [0-9]+p [0-9]+b arrivals [0-9]+ sent [0-9]+ marked 0 purged 0 drop_overflow [0-9]+ drop_aqm'"
done

# Every option of every discipline set to a non-default value, through qlab.
roundtrip "qlab droptail" "qlab disc droptail limit 7 seed 2" "disc droptail limit 7p seed 2"
roundtrip "qlab prio" "qlab disc prio bands 4 limit 50 seed 2" "disc prio bands 4 limit 50p seed 2"
roundtrip "qlab ncq" \
	"qlab disc ncq size 100 thresh 0.25 limit 50 variant conf-literal mode probabilistic favor_acks 1 ramp 0.125 seed 42" \
	"disc ncq size 100b thresh 0.25 limit 50p variant conf-literal mode probabilistic favor_acks 1 ramp 0.125 seed 42"
roundtrip "qlab cqaqm" \
	"qlab disc cqaqm b_high 60 b_low 600 t_high_local 8 t_low_local 400 t_low_nonlocal 550 scheduler drr weights 3:2 quantum 3000:1500 hysteresis 1 t_low_off 300 t_high_local_off 4 t_low_local_off 350 seed 7" \
	"disc cqaqm b_high 60p b_low 600p t_high_local 8p t_low_local 400p t_low_nonlocal 550p scheduler drr weights 3:2 quantum_bytes 3000:1500 hysteresis 1 t_low_off 300p t_high_local_off 4p t_low_local_off 350p seed 7"
roundtrip "qlab rd" \
	"qlab disc rd rate 10000000 d 20000000 k 0.5 buffer 500000 bmax 400000 sd_max 200 sr_max 1400 n_d 3 n_r 5 period 200000000 seed 9" \
	"disc rd rate 10Mbit d 20ms k 0.5 buffer 500000b bmax 400000b sd_max 200b sr_max 1400b n_d 3 n_r 5 period 200ms seed 9"
roundtrip "qlab srd" \
	"qlab disc srd rate 20000000 d 10000000 k 3 buffer 900000 bmax 800000 sd_max 300 sr_max 1200 n_d 2 n_r 4 period 50000000 seed 3" \
	"disc srd rate 20Mbit d 10ms k 3 buffer 900000b bmax 800000b sd_max 300b sr_max 1200b n_d 2 n_r 4 period 50ms seed 3"
roundtrip "qlab red" \
	"qlab disc red min 3 max 12 max_p 0.1 w_q 0.004 limit 60 pkt_time 1200 gentle 0 ecn 1 seed 4" \
	"disc red min 3p max 12p max_p 0.1 w_q 0.004 limit 60p pkt_time 1.2us gentle 0 ecn 1 seed 4"
roundtrip "qlab rbaqm" \
	"qlab disc rbaqm classes 3 rate 2000000 weights 600:300:100 maxs 4000 u 900000:800000:700000 k 0.001 gain 0.5 tau 20000000 rate_estimate admitted capacity_estimator ewma window 50 capacity_weight 0.02 fair_share 0 ecn 1 limit 80 seed 11" \
	"disc rbaqm classes 3 rate 2Mbit weights_bytes 600:300:100 maxs 4000b u_ppm 900000:800000:700000 k 0.001 gain 0.5 tau 20ms rate_estimate admitted capacity_estimator ewma window 50p capacity_weight 0.02 fair_share 0 ecn 1 limit 80p seed 11"
roundtrip "qlab wred" \
	"qlab disc wred classes 3 q_pkts 5:10:20 w_q 0.01 weights 501:251:251 maxs 2000 ecn 1 seed 12" \
	"disc wred classes 3 q_pkts 5:10:20 w_q 0.01 weights_bytes 501:251:251 maxs 2000b ecn 1 seed 12"

# A change keeps what it does not name: the parameters with the same
# discipline, the discipline without one; another discipline starts from
# its defaults.  No discipline on add: droptail.
tc qdisc replace dev d0 root qlab disc ncq size 100 thresh 0.25 seed 1
tc qdisc change dev d0 root qlab disc ncq limit 30
check "qlab: change keeps unnamed parameters" sh -c \
	"/sbin/tc qdisc show dev d0 | grep -q 'disc ncq size 100b thresh 0.25 limit 30p '"
tc qdisc change dev d0 root qlab seed 8
check "qlab: change without disc keeps the discipline and its parameters" sh -c \
	"/sbin/tc qdisc show dev d0 | grep -q 'disc ncq size 100b thresh 0.25 limit 30p .* seed 8'"
tc qdisc change dev d0 root qlab disc red
check "qlab: another discipline starts from its defaults" sh -c \
	"/sbin/tc qdisc show dev d0 | grep -q 'disc red min 5p max 15p max_p 0.02 w_q 0.002 limit 100p pkt_time 0ns gentle 1 ecn 0 seed 8'"
tc qdisc del dev d0 root
tc qdisc add dev d0 root qlab seed 3
check "qlab: added without disc runs droptail" sh -c \
	"/sbin/tc qdisc show dev d0 | grep -q 'qlab [0-9a-f]*: root refcnt [0-9]* disc droptail limit 100p seed 3'"

# Bad options: tc's parser (the core's) names the parameter; the kernel
# (check_params) too; the qdisc stays as it was.
tc qdisc replace dev d0 root qlab disc ncq seed 1
invalid qlab "disc ncq frob 1" "qlab: unknown parameter 'frob' for ncq (valid: size_bytes, thresh, limit_pkts, variant, mode, favor_acks, ramp)"
invalid qlab "disc ncq thresh 1.5" "qlab: ncq: thresh: expected a decimal with at most 6 places between 0 and 1 (fraction), got '1.5'"
invalid qlab "disc ncq limit 0" "limit_pkts: expected an integer between 1 and 1000000"
invalid qlab "disc ncq mode fast" "mode: expected one of deterministic|probabilistic"
# (the registry as tc lists it; the kernel's list must be the same)
disc_list=$(echo "$discs" | tr '\n' '|')
disc_list=${disc_list%|}
invalid qlab "disc nosuch" "qlab: disc: unknown discipline 'nosuch' (one of $disc_list;"
invalid qlab "limit 5" "qlab: 'limit': name the discipline (disc NAME) to set its parameters"
invalid qlab "disc ncq size" "option 'size' needs a value"
invalid qlab "disc ncq seed x" "qlab: seed: expected an integer"
invalid qlab "disc cqaqm b_high 5 t_high_local 9" "Error: cqaqm: t_high_local: must be <= b_high (5), got 9"
invalid qlab "disc red min 20 max 10" "Error: red: min_pkts: must be below max_pkts (10), got 20"
invalid qlab "disc wred classes 3 q_pkts 5:10" "Error: wred: q_pkts: expected 1 or 3 values (classes), got 2"
check_fails_with "qlab: usage lists the disciplines" "droptail" tc qdisc add dev d0 root qlab help
check_fails_with "qlab: usage of a discipline from its table" "thresh       unit fraction, default 0.05" \
	tc qdisc add dev d0 root qlab disc ncq help

# The kernel's own checks on raw netlink (what tc never sends), with the
# parameter named: TCA_QLAB_PARAMS attribute i + 1 is parameter i.
rawq() {	# rawq NAME MESSAGE DISC|- [ATTR TYPE VALUE]
	name=$1 msg=$2
	shift 2
	out=$(qfuzz d0 qlab pset "$@" 2>&1 | head -1)
	case $out in
	"error 0:"*) fail "$name: accepted ($out)" ;;
	*"$msg"*) pass "$name: $out" ;;
	*) fail "$name: want '$msg', got '$out'" ;;
	esac
}
tc qdisc replace dev d0 root qlab disc ncq seed 1
rawq "netlink: qlab unknown discipline" "qlab: unknown discipline 'nosuch' (one of $disc_list)" nosuch
rawq "netlink: qlab ncq thresh above 1" "ncq: thresh: must be between 0 and 1, got 1.000001" ncq 2 u32 1000001
rawq "netlink: qlab ncq limit_pkts 0" "ncq: limit_pkts: must be between 1 and 1000000, got 0" ncq 3 u32 0
rawq "netlink: qlab ncq mode 2" "ncq: mode: must be one of deterministic|probabilistic, got index 2" ncq 5 u8 2
rawq "netlink: qlab ncq size_bytes as u8" "ncq: size_bytes: expected a 4-byte attribute (bytes), got 1 bytes" ncq 1 u8 1
rawq "netlink: qlab ncq parameter 8 of 7" "ncq: no parameter 8 (it has 7" ncq 8 u32 1
rawq "netlink: qlab cqaqm weights of 6 bytes" "cqaqm: weights: expected 1 to 8 u32 values" cqaqm 7 len:6 1
rawq "netlink: qlab cqaqm t_high_local above b_high" "cqaqm: t_high_local: must be <= b_high (50), got 51" cqaqm 3 u32 51
rawq "netlink: qlab srd rate_bps below its range (u64)" "srd: rate_bps: must be between 1000 and 100000000000, got 999" srd 1 u64 999
rawq "netlink: qlab parameter without discipline checked against the running one" "ncq: thresh: must be between 0 and 1, got 2" - 2 u32 2000000
check "qlab: the rejected requests left the qdisc as it was" sh -c \
	"/sbin/tc qdisc show dev d0 | grep -q 'disc ncq size 130b thresh 0.05 limit 100p '"

# JSON: the discipline by name, integers as numbers, fractions as exact text.
tc qdisc replace dev d0 root qlab disc ncq size 100 seed 3
check "qlab: tc -j -s shows the discipline, options and per-band statistics as JSON" sh -c \
	"/sbin/tc -j -s qdisc show dev d0 | grep -q '\"kind\":\"qlab\",.*\"disc\":\"ncq\",\"size_bytes\":100,\"thresh\":\"0.05\",.*\"seed\":3.*\"bands\":\[{\"band\":0,'"

# ---- iproute2's units ------------------------------------------------------

# same_json NAME DEV "UNIT OPTIONS" "INTEGER OPTIONS": both accepted, and
# `tc -j qdisc show` identical (the unit forms are exact aliases).
same_json() {
	name=$1 dev=$2 a=$3 b=$4
	tc qdisc del dev "$dev" root 2>/dev/null
	# shellcheck disable=SC2086
	if ! tc qdisc add dev "$dev" root handle 1: $a >/tmp/u.out 2>&1; then
		fail "$name: tc qdisc add $a"; sed 's/^/    /' /tmp/u.out; return
	fi
	ja=$(tc -j qdisc show dev "$dev")
	tc qdisc del dev "$dev" root
	# shellcheck disable=SC2086
	if ! tc qdisc add dev "$dev" root handle 1: $b >/tmp/u.out 2>&1; then
		fail "$name: tc qdisc add $b"; sed 's/^/    /' /tmp/u.out; return
	fi
	jb=$(tc -j qdisc show dev "$dev")
	if [ "$ja" = "$jb" ]; then pass "$name: '$a' = '$b' ($ja)"
	else fail "$name: tc -j differs"; echo "    units:   $ja"; echo "    integer: $jb"; fi
}
same_json "units: srd rate/time/size" d0 \
	"srd variant srd rate 20mbit d 50ms buffer 1mb bmax 512kb sd_max 1500b sr_max 1.5k period 1s seed 1" \
	"srd variant srd rate_bps 20000000 d_ns 50000000 buffer_bytes 1048576 bmax_bytes 524288 sd_max_bytes 1500 sr_max_bytes 1536 period_ns 1000000000 seed 1"
same_json "units: srd MBps, us" d0 "srd rate 2.5MBps d 200us seed 1" "srd rate_bps 20000000 d_ns 200000 seed 1"
same_json "units: srd gbit, fractional s, mb" d0 "srd rate 1gbit d 1.5s buffer 400mb seed 1" \
	"srd rate_bps 1000000000 d_ns 1500000000 buffer_bytes 419430400 seed 1"
same_json "units: srd Kibit, ns" d0 "srd rate 800Kibit d 700ns seed 1" "srd rate_bps 819200 d_ns 700 seed 1"
same_json "units: srd kbit, msec" d0 "srd variant rd rate 1500kbit d 20msec seed 1" "srd variant rd rate 1500000 d 20000000 seed 1"
same_json "units: ncq size, fraction %, packets" d0 \
	"ncq size 0.125kb thresh 5% limit 100p ramp 12.5% seed 1" \
	"ncq size_bytes 128 thresh 0.05 limit_pkts 100 ramp 0.125 seed 1"
same_json "units: cqaqm packets" d0 \
	"cqaqm b_high 60p b_low 600p t_high_local 8p t_low_local 400P t_low_nonlocal 550p seed 1" \
	"cqaqm b_high 60 b_low 600 t_high_local 8 t_low_local 400 t_low_nonlocal 550 seed 1"
same_json "units: rbwfq rbaqm" d0 \
	"rbwfq aqm rbaqm rate 2mbit maxs 4kb tau 20ms window 50p capacity_weight 2% k 0.1% limit 80p seed 2" \
	"rbwfq aqm rbaqm rate_bps 2000000 maxs_bytes 4096 tau_ns 20000000 window_pkts 50 capacity_weight 0.02 k 0.001 limit_pkts 80 seed 2"
same_json "units: rbwfq wred" d0 "rbwfq aqm wred w_q 1% maxs 2kb seed 2" "rbwfq aqm wred w_q 0.01 maxs_bytes 2048 seed 2"
same_json "units: qlab disc srd" d0 \
	"qlab disc srd rate 20mbit d 10ms buffer 900000b bmax 800000 period 50ms seed 3" \
	"qlab disc srd rate_bps 20000000 d_ns 10000000 buffer_bytes 900000 bmax_bytes 800000 period_ns 50000000 seed 3"
same_json "units: qlab disc red" d0 \
	"qlab disc red min 3p max 12p max_p 10% w_q 0.4% limit 60p pkt_time 1.2us seed 4" \
	"qlab disc red min_pkts 3 max_pkts 12 max_p 0.1 w_q 0.004 limit_pkts 60 pkt_time_ns 1200 seed 4"
same_json "units: qlab disc ncq" d0 "qlab disc ncq size 1k thresh 0.5% limit 100 seed 4" \
	"qlab disc ncq size_bytes 1024 thresh 0.005 limit_pkts 100 seed 4"
# a rate in % of the device's speed (tc's get_percent_rate64): a veth is 10000Mbit
load_extra veth && ip link add v0 type veth peer name v1 && ip link set v0 up
check "units: the veth's speed is 10000 Mbit/s" grep -qx 10000 /sys/class/net/v0/speed
same_json "units: srd rate 1% of the device" v0 "srd rate 1% seed 1" "srd rate_bps 100000000 seed 1"
same_json "units: qlab disc rd rate 0.5% of the device" v0 "qlab disc rd rate 0.5% seed 1" "qlab disc rd rate_bps 50000000 seed 1"
ip link del v0

# tc qdisc show prints the units (print_rate, sprint_time64, sprint_size
# style), exactly: a value those round would not give back is printed
# exactly (the round trips above feed the shown text to tc qdisc change).
roundtrip "units: srd shown in units" "srd rate 20mbit d 50ms sd_max 1kb seed 1" \
	"variant srd rate 20Mbit d 50ms k 2 buffer 0b bmax 0b sd_max 1Kb sr_max 1500b n_d 0 n_r 0 period 100ms seed 1"
roundtrip "units: srd values iproute2's text would round, shown exactly" \
	"srd rate 20000001 d 123456789 sd_max 1030 period 1s seed 1" \
	"variant srd rate 20000001 d 123456789ns k 2 buffer 0b bmax 0b sd_max 1030b sr_max 1500b n_d 0 n_r 0 period 1s seed 1"
roundtrip "units: srd gbit and us" "srd rate 1gbit d 250us seed 1" \
	"variant srd rate 1Gbit d 250us k 2 buffer 0b bmax 0b sd_max 1500b sr_max 1500b n_d 0 n_r 0 period 100ms seed 1"
roundtrip "units: qlab srd shown in units" "qlab disc srd rate 20mbit d 50ms seed 1" \
	"disc srd rate 20Mbit d 50ms k 2 buffer 0b bmax 0b sd_max 1500b sr_max 1500b n_d 0 n_r 0 period 100ms seed 1"
tc qdisc replace dev d0 root srd rate 20mbit d 50ms seed 1
check "units: tc -s qdisc show prints the units too" sh -c \
	"/sbin/tc -s qdisc show dev d0 | grep -q '^qdisc srd [0-9a-f]*: root refcnt [0-9]* variant srd rate 20Mbit d 50ms k 2 '"
check "units: tc -j keeps the full names and integers in the core's units" sh -c \
	"/sbin/tc -j qdisc show dev d0 | grep -q '\"variant\":\"srd\",\"rate_bps\":20000000,\"d_ns\":50000000,\"k\":\"2\",\"buffer_bytes\":0,'"
check "units: tc -s -j likewise" sh -c \
	"/sbin/tc -s -j qdisc show dev d0 | grep -q '\"rate_bps\":20000000,\"d_ns\":50000000,.*\"sd_max_bytes\":1500,.*\"period_ns\":100000000,'"

# A unit iproute2 does not know: tc's usual message, a non-zero exit, the
# qdisc unchanged; a value out of range: the core's message, with the text given.
tc qdisc replace dev d0 root srd rate 10000000 seed 1
invalid srd "rate 20parsecs" 'srd: illegal value for "rate": "20parsecs"'
invalid srd "d 50parsecs" 'srd: illegal value for "d": "50parsecs"'
invalid srd "buffer 1parsec" 'srd: illegal value for "buffer": "1parsec"'
invalid srd "rate_bps 20mbitt" 'srd: illegal value for "rate_bps": "20mbitt"'
invalid srd "rate -20mbit" 'srd: illegal value for "rate": "-20mbit"'
invalid srd "rate 10bit" "srd: rate_bps: expected an integer between 1000 and 100000000000 (bit/s), got '8' (from '10bit')"
invalid srd "rate 10%" "speed"	# a dummy device has no speed: tc's own message
tc qdisc replace dev d0 root ncq seed 1
invalid ncq "size 10parsecs" 'ncq: illegal value for "size": "10parsecs"'
invalid ncq "limit 100kb" 'ncq: illegal value for "limit": "100kb" (a packet count: 100 or 100p)'
invalid ncq "size 70kb" "ncq: size_bytes: expected an integer between 1 and 65535 (bytes), got '71680' (from '70kb')"
invalid ncq "thresh 150%" "ncq: thresh: expected a percentage between 0% and 100%, got '150%'"
invalid ncq "thresh 0.00005%" "thresh: a percentage has at most 4 decimal places"
invalid ncq "thresh 5%%" 'ncq: illegal value for "thresh": "5%%"'
tc qdisc replace dev d0 root qlab disc srd seed 1
invalid qlab "disc srd rate 20parsecs" 'qlab: srd: illegal value for "rate": "20parsecs"'
invalid qlab "disc srd d 5 parsecs" "qlab: option 'parsecs' needs a value"
invalid qlab "disc ncq limit 100kb" 'qlab: ncq: illegal value for "limit": "100kb"'
check_fails_with "ncq: usage lists the units" "thresh, ramp: a fraction: 0.05 or 5%" tc qdisc add dev d0 root ncq help
check_fails_with "srd: usage lists the units" "d, period: a time: 50ms" tc qdisc add dev d0 root srd help
check_fails_with "qlab: usage lists a discipline's units" "rate: a rate: 20mbit" \
	tc qdisc add dev d0 root qlab disc rbaqm help

# `limit 100` (packets) on ncq, as any built-in qdisc's limit.
tc qdisc del dev d0 root 2>/dev/null
check "ncq: tc qdisc add ... root ncq size 130 thresh 0.05 limit 100" \
	tc qdisc add dev d0 root ncq size 130 thresh 0.05 limit 100
check "ncq: limit 100 is limit_pkts 100" sh -c \
	"/sbin/tc -j qdisc show dev d0 | grep -q '\"limit_pkts\":100,' && /sbin/tc qdisc show dev d0 | grep -q ' limit 100p '"
check "ncq: tc qdisc change ... limit 37" tc qdisc change dev d0 root ncq limit 37
check "ncq: limit 37 shown, the others kept" sh -c \
	"/sbin/tc -j qdisc show dev d0 | grep -q '\"size_bytes\":130,\"thresh\":\"0.05\",\"limit_pkts\":37,'"
tc qdisc del dev d0 root
check "ncq: tc qdisc add ... root ncq limit 100 alone" tc qdisc add dev d0 root ncq limit 100

tc qdisc del dev d0 root
ip link del d0

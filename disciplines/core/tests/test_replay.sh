#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# test_replay.sh - qcore-replay against the replay contract in
# DISCIPLINES.md ("One conformance interface"): exact decision rows, exit 2
# with a row-naming message for bad input, --help and --list.
# usage: sh tests/test_replay.sh [qcore-replay [qcore-replay-testdisc]]
# The last line is "N passed, N failed"; the exit status is non-zero on failure.

R=${1:-../../build/core/qcore-replay}
RT=${2:-../../build/core/qcore-replay-testdisc}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
pass=0
fail=0

ok() { pass=$((pass + 1)); echo "ok   $1"; }
ko() { fail=$((fail + 1)); echo "FAIL $1"; }

# expect_out NAME EXPECTED_FILE -- ARGS...   (events on stdin; exit 0, exact stdout)
expect_out() {
	name=$1 want=$2
	shift 3
	if "$R" "$@" >"$T/out" 2>"$T/err" && cmp -s "$want" "$T/out"; then
		ok "$name"
	else
		ko "$name"
		diff "$want" "$T/out" | sed 's/^/    /'
		sed 's/^/    stderr: /' "$T/err"
	fi
}

# expect_err NAME PATTERN -- ARGS...   (exit 2, one stderr line matching PATTERN)
expect_err() {
	name=$1 pat=$2
	shift 3
	"$R" "$@" >"$T/out" 2>"$T/err"
	rc=$?
	if [ $rc -eq 2 ] && [ "$(wc -l <"$T/err")" -eq 1 ] && grep -q -- "$pat" "$T/err"; then
		ok "$name"
	else
		ko "$name (exit $rc)"
		sed 's/^/    stderr: /' "$T/err"
	fi
}

H='t_ns,op,len,cls,prec,flow'
D='t_ns,op,pkt,verdict,band,reason'

# -- exact decisions -------------------------------------------------------

printf '%s\n0,enq,1000,,,\n1,enq,1000,3,1,9\n2,enq,40,,,\n3,deq,,,,\n4,enq,40,,,\n5,deq,,,,\n6,deq,,,,\n7,deq,,,,\n' "$H" >"$T/ev"
printf '%s\n0,enq,0,queued,0,\n1,enq,1,queued,0,\n2,enq,2,dropped,0,overflow\n3,deq,0,sent,0,\n4,enq,3,queued,0,\n5,deq,1,sent,0,\n6,deq,3,sent,0,\n7,deq,-1,empty,,\n' "$D" >"$T/want"
expect_out "droptail: header, pkt numbering incl. dropped, empty deq" "$T/want" -- droptail --param limit_pkts=2 <"$T/ev"

# thresh 0.5: pkt 0 favoured (0 < 0.5*1), pkt 1 large, pkt 2 favoured (1 < 0.5*3)
# but dropped at the shared limit, keeping its classified band 0.
printf '%s\n0,enq,100,,,\n1,enq,1500,0,0,7\n2,enq,100,,,\n3,deq,,,,\n4,deq,,,,\n5,deq,,,,\n' "$H" >"$T/ev"
printf '%s\n0,enq,0,queued,0,\n1,enq,1,queued,1,\n2,enq,2,dropped,0,overflow\n3,deq,0,sent,0,\n4,deq,1,sent,1,\n5,deq,-1,empty,,\n' "$D" >"$T/want"
expect_out "ncq: bands, shared limit, band of a dropped packet" "$T/want" -- ncq --param thresh=0.5 --param limit_pkts=2 <"$T/ev"

# default thresh 0.05 and size 130: only the first small packet is favoured;
# 130 bytes is not "strictly below".
printf '%s\n0,enq,129,,,\n1,enq,129,,,\n2,enq,130,,,\n3,deq,,,,\n4,deq,,,,\n5,deq,,,,\n' "$H" >"$T/ev"
printf '%s\n0,enq,0,queued,0,\n1,enq,1,queued,1,\n2,enq,2,queued,1,\n3,deq,0,sent,0,\n4,deq,1,sent,1,\n5,deq,2,sent,1,\n' "$D" >"$T/want"
expect_out "ncq defaults: thresh 0.05, size strictly below 130" "$T/want" -- ncq <"$T/ev"

printf '%s\n0,enq,100,2,,\n1,enq,100,,,\n2,enq,100,1,,\n3,enq,100,0,,\n4,deq,,,,\n5,deq,,,,\n6,deq,,,,\n7,deq,,,,\n' "$H" >"$T/ev"
printf '%s\n0,enq,0,queued,2,\n1,enq,1,queued,0,\n2,enq,2,queued,1,\n3,enq,3,dropped,0,overflow\n4,deq,1,sent,0,\n5,deq,2,sent,1,\n6,deq,0,sent,2,\n7,deq,-1,empty,,\n' "$D" >"$T/want"
expect_out "prio: band = cls, empty cls = 0, shared limit, strict order" "$T/want" -- prio --param bands=3 --param limit_pkts=3 <"$T/ev"

printf '%s\n' "$H" >"$T/ev"
printf '%s\n' "$D" >"$T/want"
expect_out "header only gives header only" "$T/want" -- droptail <"$T/ev"

printf '%s\r\n0,enq,100,,,\r\n1,deq,,,,\r\n' "$H" >"$T/ev"
printf '%s\n0,enq,0,queued,0,\n1,deq,0,sent,0,\n' "$D" >"$T/want"
expect_out "CRLF events give LF decisions" "$T/want" -- droptail <"$T/ev"

printf '%s\n0,enq,100,255,255,4294967295\n0,deq,,,,\n' "$H" >"$T/ev"
printf '%s\n0,enq,0,queued,1,\n0,deq,0,sent,1,\n' "$D" >"$T/want"
expect_out "ncq ignores cls/prec up to 255; equal times allowed" "$T/want" -- ncq --param thresh=0 <"$T/ev"

# -- probabilistic mode: deterministic per seed ----------------------------

awk -v h="$H" 'BEGIN { print h; for (i = 0; i < 3000; i++) { print i ",enq," (i % 3 ? 60 : 1500) ",,,"; if (i % 2) print i ",deq,,,," } }' >"$T/ev"
"$R" ncq --param mode=probabilistic --param thresh=0.3 --seed 7 <"$T/ev" >"$T/a" 2>&1
"$R" ncq --param mode=probabilistic --param thresh=0.3 --seed 7 <"$T/ev" >"$T/b" 2>&1
"$R" ncq --param mode=probabilistic --param thresh=0.3 --seed 8 <"$T/ev" >"$T/c" 2>&1
if cmp -s "$T/a" "$T/b" && ! cmp -s "$T/a" "$T/c" &&
   [ "$(wc -l <"$T/a")" -eq "$(wc -l <"$T/ev")" ] && ! grep -q "$(printf '\r')" "$T/a"; then
	ok "same seed same rows, other seed other rows, one row per event, LF only"
else
	ko "same seed same rows, other seed other rows, one row per event, LF only"
fi

# FIFO order survives ring-buffer growth and wrap-around: 3 arrivals per
# dequeue, then drain; droptail must send 0, 1, 2, ... with nothing lost.
awk -v h="$H" 'BEGIN { print h; t = 0; for (i = 0; i < 3000; i++) { print t++ ",enq,100,,,"; if (i % 3 == 2) print t++ ",deq,,,," } for (i = 0; i < 2001; i++) print t++ ",deq,,,," }' >"$T/ev"
if "$R" droptail --param limit_pkts=1000000 <"$T/ev" >"$T/out" 2>&1 &&
   awk -F, 'NR > 1 && $4 == "sent" { if ($3 != n++) bad++ } NR > 1 && $4 != "sent" && $4 != "queued" { other++ }
	END { exit !(n == 3000 && !bad && other == 1) }' "$T/out"; then
	ok "FIFO order across buffer growth and wrap-around"
else
	ko "FIFO order across buffer growth and wrap-around"
fi

# -- bad events: exit 2 naming the row --------------------------------------

printf '%s\n0,enq,100,,,\n1,enq,abc,,,\n' "$H" >"$T/ev"
expect_err "malformed len names row and column" 'row 2 (line 3): column len' -- droptail <"$T/ev"
printf '%s\n0,enq,100,256,,\n' "$H" >"$T/ev"
expect_err "cls 256 out of range" 'row 1 (line 2): column cls' -- ncq <"$T/ev"
printf '%s\n0,enq,100,,-1,\n' "$H" >"$T/ev"
expect_err "negative prec" 'row 1 (line 2): column prec' -- droptail <"$T/ev"
printf '%s\n0,enq,0,,,\n' "$H" >"$T/ev"
expect_err "zero length" 'row 1 (line 2): column len' -- droptail <"$T/ev"
printf '%s\n0,enq,,,,\n' "$H" >"$T/ev"
expect_err "missing length" 'row 1 (line 2): column len' -- droptail <"$T/ev"
printf '%s\n0,enq,100,1,,\n1,enq,100,2,,\n' "$H" >"$T/ev"
expect_err "prio cls >= bands" 'row 2 (line 3): column cls: must be below bands (2), got 2' -- prio <"$T/ev"
printf '%s\n5,enq,100,,,\n10,deq,,,,\n9,enq,100,,,\n' "$H" >"$T/ev"
expect_err "decreasing time" 'row 3 (line 4): column t_ns: 9 is before' -- droptail <"$T/ev"
printf '%s\n0,send,100,,,\n' "$H" >"$T/ev"
expect_err "unknown op" 'row 1 (line 2): column op' -- droptail <"$T/ev"
printf '%s\n0,deq,100,,,\n' "$H" >"$T/ev"
expect_err "deq row with a length" 'row 1 (line 2): column len: must be empty' -- droptail <"$T/ev"
printf '%s\n0,enq,100,,\n' "$H" >"$T/ev"
expect_err "five columns" 'row 1 (line 2): expected 6 columns' -- droptail <"$T/ev"
printf '%s\n0,enq,100,,,,\n' "$H" >"$T/ev"
expect_err "seven columns" 'row 1 (line 2): expected 6 columns' -- droptail <"$T/ev"
printf '%s\n\n' "$H" >"$T/ev"
expect_err "blank line" 'row 1 (line 2)' -- droptail <"$T/ev"
printf 't_ns,op,len,cls,prec\n0,enq,100,,\n' >"$T/ev"
expect_err "wrong header" 'line 1: header must be exactly t_ns,op,len,cls,prec,flow' -- droptail <"$T/ev"
expect_err "empty input" 'line 1: missing header' -- droptail </dev/null

# -- bad arguments ------------------------------------------------------------

expect_err "unknown parameter lists valid names" "unknown parameter 'threshold' for ncq (valid: size_bytes, thresh," -- ncq --param threshold=0.1 </dev/null
expect_err "PPM with 7 places" "thresh: expected a decimal with at most 6 places between 0 and 1 (fraction), got '0.0000001'" -- ncq --param thresh=0.0000001 </dev/null
expect_err "PPM in exponent form" "thresh: .*got '1e-3'" -- ncq --param thresh=1e-3 </dev/null
expect_err "out of range, not clamped" "limit_pkts: expected an integer between 1 and 1000000 (packets), got '0'" -- droptail --param limit_pkts=0 </dev/null
expect_err "bad enum" "variant: expected one of journal|conf-literal" -- ncq --param variant=paper </dev/null
expect_err "param without =" "--param: expected NAME=VALUE" -- ncq --param thresh </dev/null
expect_err "unknown discipline" "unknown discipline 'fifo'" -- fifo </dev/null
expect_err "bad seed" "--seed: expected an integer" -- droptail --seed -1 </dev/null
expect_err "seed overflow" "--seed: expected an integer" -- droptail --seed 18446744073709551616 </dev/null
expect_err "unknown option" "unknown option '--limit'" -- droptail --limit 5 </dev/null
expect_err "two disciplines" "unexpected argument 'prio'" -- droptail prio </dev/null
expect_err "missing discipline" "missing discipline" -- </dev/null

# -- generic mechanisms, through the test-only discipline ----------------------

# headdrop d_ns=10: at t=20 pkts 0 and 1 (arrived 0 and 5) are too old and
# are dropped before the deq row, pkt 2 (arrived 15) is sent.
printf '%s\n0,enq,100,,,\n5,enq,200,,,\n15,enq,300,,,\n20,deq,,,,\n40,deq,,,,\n40,enq,100,,,\n99,deq,,,,\n' "$H" >"$T/ev"
printf '%s\n0,enq,0,queued,0,\n5,enq,1,queued,0,\n15,enq,2,queued,0,\n20,drop_head,0,dropped,0,delay\n20,drop_head,1,dropped,0,delay\n20,deq,2,sent,0,\n40,deq,-1,empty,,\n40,enq,3,queued,0,\n99,drop_head,3,dropped,0,delay\n99,deq,-1,empty,,\n' "$D" >"$T/want"
R_SAVED=$R
R=$RT
expect_out "head drops precede their deq row" "$T/want" -- headdrop <"$T/ev"
printf '%s\n0,enq,100,,,\n' "$H" >"$T/ev"
"$R" headdrop --param broken=1 <"$T/ev" >"$T/out" 2>"$T/err"
rc=$?
if [ $rc -eq 3 ] && grep -q 'invalid enqueue decision' "$T/err"; then
	ok "a discipline breaking the contract gives exit 3"
else
	ko "a discipline breaking the contract gives exit 3 (exit $rc)"
fi
R=$R_SAVED

# -- --help and --list ------------------------------------------------------------

# --list names the registry's disciplines in its order, as registry.json
# (qcore-replay --describe, committed) does
python3 -c 'import json, sys; print("\n".join(d["name"] for d in json.load(open(sys.argv[1]))["disciplines"]))' \
	"$(dirname "$0")/../registry.json" >"$T/want"
expect_out "--list" "$T/want" -- --list

if "$R" ncq --help >"$T/out" 2>&1 &&
   grep -q '^  size_bytes   unit bytes, default 130, an integer between 1 and 65535$' "$T/out" &&
   grep -q '^  thresh       unit fraction, default 0.05, a decimal with at most 6 places between 0 and 1$' "$T/out" &&
   grep -q '^  limit_pkts   unit packets, default 100, an integer between 1 and 1000000$' "$T/out" &&
   grep -q '^  variant      unit choice, default journal, one of journal|conf-literal$' "$T/out" &&
   grep -q '^  mode         unit choice, default deterministic, one of deterministic|probabilistic$' "$T/out" &&
   grep -q '^  favor_acks   unit bool, default 0, 0 or 1$' "$T/out" &&
   grep -q '^  ramp         unit fraction, default 0.5, a decimal with at most 6 places between 0 and 1$' "$T/out" &&
   grep -q '^bands: 2 (band 0 favoured' "$T/out"; then
	ok "ncq --help: every parameter with unit, default, range; bands line"
else
	ko "ncq --help: every parameter with unit, default, range; bands line"
	sed 's/^/    /' "$T/out"
fi

if "$R" prio --help >"$T/out" 2>&1 && grep -q '^  bands        unit bands, default 2, an integer between 2 and 8$' "$T/out" &&
   grep -q 'band = cls' "$T/out" && "$R" --help | grep -q '^usage: qcore-replay DISC'; then
	ok "prio --help and --help"
else
	ko "prio --help and --help"
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]

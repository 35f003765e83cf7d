#!/bin/sh
# test_runner.sh - end-to-end checks of qlab-ns3-run on tiny jobs.
#
#   disciplines/ns3/tests/test_runner.sh [path/to/qlab-ns3-run]
#
# Builds build/ns3 first when no binary is given and none exists.  Prints one
# line per check and "N passed, N failed"; exits 1 when anything failed.
set -u

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
runner=${1:-$repo/build/ns3/qlab-ns3-run}
python=/usr/bin/python3

if [ $# = 0 ] && [ ! -x "$runner" ]; then
	cmake -S "$repo/disciplines/ns3" -B "$repo/build/ns3" >/dev/null &&
		cmake --build "$repo/build/ns3" >/dev/null
fi
if [ ! -x "$runner" ]; then
	echo "no runner at $runner"
	echo "0 passed, 1 failed"
	exit 1
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0
failed=0

ok() {
	passed=$((passed + 1))
	echo "ok   $1"
}

fail() {
	failed=$((failed + 1))
	echo "FAIL $1"
}

# make_job FILE DISC FLOWS WINDOW_SCALING PACKETS: a 10 Mb/s dumbbell job.
# Flow 0 is the small one (MSS 100, 10 kB); flows 1.. are 200 kB, MSS 1460
# (1 MB in the 2-flow job), cls 1 for prio.  DISC is ncq, droptail or prio.
make_job() {
	"$python" - "$here" "$@" <<'EOF'
import json, sys
sys.path.insert(0, sys.argv[1])
import testjob
path, disc, nflows, wscale, packets = sys.argv[2:7]
nflows = int(nflows)
params = {
    "ncq": {"size_bytes": "141", "thresh": "0.05", "limit_pkts": "100"},
    "droptail": {"limit_pkts": "100"},
    "prio": {},
}[disc]
# In the bigger job the small flow starts once the large ones are running.
flows = [{"flow_id": 0, "app": "bulk", "group": "noncongestive", "cls": 0, "prec": 0,
          "seg_bytes": 100, "bytes": 10000, "start_s": 0.123456789 if nflows == 2 else 1.0}]
for i in range(1, nflows):
    flows.append({"flow_id": i, "app": "bulk", "group": "congestive",
                  "cls": 1 if disc == "prio" else 0, "prec": 0, "seg_bytes": 1460,
                  "bytes": 1000000 if nflows == 2 else 200000,
                  "start_s": round(0.01 + 0.0371 * i, 9)})
job = testjob.job(disc, params, flows, duration_s=2.0 if nflows == 2 else 60.0,
                  stop_when_done=nflows != 2, window_scaling=wscale == "1", packets=packets == "1")
json.dump(job, open(path, "w"), indent=1)
EOF
}

# run JOB OUT: run the job, 0 on success.
run() {
	"$runner" "$1" "$2" >"$2.log" 2>&1
}

flows_header="flow_id,app,group,cls,prec,seg_bytes,bytes_goal,bytes_delivered,start_s,end_s,completed,fct_s,goodput_bps,tx_packets,retx_packets,rx_packets,lost_packets,delay_mean_s,delay_max_s"
queues_header="time_s,band,backlog_pkts,backlog_bytes,enqueued_pkts,dequeued_pkts,dropped_pkts,drop_prob"
packets_header="seq,time_s,event,band,len_bytes,flow_id,sojourn_s,reason"

# --- the tiny job, twice, per discipline ------------------------------------
for disc in ncq droptail; do
	make_job "$tmp/$disc.json" "$disc" 2 0 1
	if run "$tmp/$disc.json" "$tmp/$disc-a" && run "$tmp/$disc.json" "$tmp/$disc-b"; then
		ok "$disc: tiny job runs"
	else
		fail "$disc: tiny job runs ($(cat "$tmp/$disc-a.log" "$tmp/$disc-b.log" 2>/dev/null))"
		continue
	fi
	same=1
	for t in flows queues packets; do
		cmp -s "$tmp/$disc-a/$t.csv" "$tmp/$disc-b/$t.csv" || same=0
	done
	[ $same = 1 ] && ok "$disc: identical CSVs on rerun" || fail "$disc: identical CSVs on rerun"

	[ "$(head -1 "$tmp/$disc-a/flows.csv")" = "$flows_header" ] &&
		[ "$(head -1 "$tmp/$disc-a/queues.csv")" = "$queues_header" ] &&
		[ "$(head -1 "$tmp/$disc-a/packets.csv")" = "$packets_header" ] &&
		ok "$disc: CSV headers" || fail "$disc: CSV headers"

	# Two rows sorted by flow_id, the small flow completed and delivered exactly its goal.
	"$python" - "$tmp/$disc-a/flows.csv" <<'EOF' && ok "$disc: flows.csv rows" || fail "$disc: flows.csv rows"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
assert [r["flow_id"] for r in rows] == ["0", "1"], rows
small = rows[0]
assert small["completed"] == "1" and small["bytes_delivered"] == "10000", small
assert abs(float(small["fct_s"]) - (float(small["end_s"]) - float(small["start_s"]))) < 1e-9
assert float(small["goodput_bps"]) > 0 and int(small["tx_packets"]) >= 100
for r in rows:
    assert int(r["bytes_delivered"]) <= int(r["bytes_goal"])
    assert int(r["retx_packets"]) <= int(r["tx_packets"])
EOF

	# Queue samples: sorted, 0.1 s apart from 0, counters consistent on every row.
	"$python" - "$tmp/$disc-a/queues.csv" "$disc" <<'EOF' && ok "$disc: queues.csv invariants" || fail "$disc: queues.csv invariants"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
nbands = {"ncq": 2, "droptail": 1}[sys.argv[2]]
keys = [(float(r["time_s"]), int(r["band"])) for r in rows]
assert keys == sorted(keys) and len(set(keys)) == len(keys)
assert {k[1] for k in keys} == set(range(nbands))
assert rows[0]["time_s"] == "0.000000000" and rows[-1]["time_s"] == "2.000000000"
total = {}
for r in rows:
    enq, deq, backlog = int(r["enqueued_pkts"]), int(r["dequeued_pkts"]), int(r["backlog_pkts"])
    assert enq - deq == backlog, r
    assert r["drop_prob"] == "NA"
    total[r["time_s"]] = total.get(r["time_s"], 0) + backlog
assert max(total.values()) <= 100
EOF
done

# --- NCQ: only small packets are favoured -----------------------------------
# With thresh 0.05 at most 5% of the arrivals go to band 0, so in the 2-flow
# job part of the small flow stays in band 1; the 11-flow job below checks
# that the small flow gets all of band 0 when there is enough other traffic.
"$python" - "$tmp/ncq-a/packets.csv" <<'EOF' && ok "ncq: band 0 holds only small packets" || fail "ncq: band 0 holds only small packets"
import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1], newline="")) if r["event"] == "enq"]
band0 = [r for r in rows if r["band"] == "0"]
assert all(int(r["len_bytes"]) < 141 for r in band0)
assert any(r["flow_id"] == "0" and r["len_bytes"] == "140" for r in band0)
EOF

# --- prio: cls travels in the ToS byte to the discipline ---------------------
make_job "$tmp/prio.json" prio 2 0 1
if run "$tmp/prio.json" "$tmp/prio"; then
	"$python" - "$tmp/prio/packets.csv" <<'EOF' && ok "prio: cls 1 flow in band 1" || fail "prio: cls 1 flow in band 1"
import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1], newline="")) if r["event"] == "enq"]
assert {r["band"] for r in rows if r["flow_id"] == "1"} == {"1"}
assert {r["band"] for r in rows if r["flow_id"] == "0"} == {"0"}
EOF
else
	fail "prio: job runs ($(cat "$tmp/prio.log"))"
fi

# --- regression: ns-3 3.37 issue #991 (receiver-window-limited senders) -----
# Twenty 200 kB flows without window scaling crash unpatched ns-3 3.37
# (ns3-tcp-fixes.cc).
# Started amid 20 large flows, the small flow's data packets are few enough
# (against thresh = 5% of arrivals) for NCQ to put most of them in band 0.
make_job "$tmp/rwnd.json" ncq 21 0 1
if run "$tmp/rwnd.json" "$tmp/rwnd"; then
	ok "20 flows without window scaling run (ns-3 #991 fix)"
	"$python" - "$tmp/rwnd" <<'EOF' && ok "ncq: 21 flows complete, small flow favoured" || fail "ncq: 21 flows complete, small flow favoured"
import csv, json, sys
d = sys.argv[1]
rows = list(csv.DictReader(open(d + "/flows.csv", newline="")))
assert len(rows) == 21 and all(r["completed"] == "1" for r in rows)
assert json.load(open(d + "/runner.json"))["all_completed"] is True
events = list(csv.DictReader(open(d + "/packets.csv", newline="")))
# NCQ's invariant at every arrival (enq, or an arrival dropped on overflow):
# favoured <= thresh * received, and only small packets are favoured.
received = favoured = 0
for r in events:
    if r["event"] == "enq" or (r["event"] == "drop" and r["sojourn_s"] == "NA"):
        received += 1
        if r["band"] == "0":
            favoured += 1
            assert int(r["len_bytes"]) < 141, r
        assert favoured * 100 <= 5 * received + 100, (favoured, received)
small = [r for r in events if r["event"] == "enq" and r["flow_id"] == "0" and r["len_bytes"] == "140"]
assert len(small) == 100
# most of the small flow rides in band 0 (a burst may hit the 5% bound)
assert sum(r["band"] == "0" for r in small) >= 50, [r["band"] for r in small]
EOF
else
	fail "20 flows without window scaling run (ns-3 #991 fix) ($(cat "$tmp/rwnd.log"))"
fi

# --- droptail through QlabQueueDisc == ns-3's own FifoQueueDisc ---------------
# The ncq-conf shapes: 30 flows, 2 with 100-byte segments (10 kB), 28 with
# 1000-byte segments (200 kB), starts uniform in [0, 1 s), 10 Mb/s, a
# 100-packet buffer.  The core's droptail in the adapter and the ns3-fifo
# kind (FifoQueueDisc, MaxSize 100p) must give byte-identical tables.
for disc in droptail ns3-fifo; do
	"$python" - "$here" "$tmp/id-$disc.json" "$disc" <<'EOF'
import json, random, sys
sys.path.insert(0, sys.argv[1])
import testjob
path, disc = sys.argv[2], sys.argv[3]
flows = testjob.ncq_conf_flows(30, 2, random.Random(7))
job = testjob.job(disc, {"limit_pkts": "100"}, flows, duration_s=300.0, packets=True)
json.dump(job, open(path, "w"), indent=1)
EOF
done
if run "$tmp/id-droptail.json" "$tmp/id-droptail" && run "$tmp/id-ns3-fifo.json" "$tmp/id-ns3-fifo"; then
	ok "droptail and ns3-fifo: 30-flow job runs"
	same=1
	for t in flows queues packets; do
		cmp -s "$tmp/id-droptail/$t.csv" "$tmp/id-ns3-fifo/$t.csv" || { same=0; echo "     $t.csv differs"; }
	done
	# Not vacuous: the buffer overflowed and every flow completed.
	drops=$(grep -c ',drop,0,.*,overflow$' "$tmp/id-droptail/packets.csv")
	completed=$(cut -d, -f11 "$tmp/id-droptail/flows.csv" | grep -c '^1$')
	if [ $same = 1 ] && [ "$drops" -gt 0 ] && [ "$completed" = 30 ]; then
		ok "droptail == ns3-fifo: identical flows/queues/packets.csv ($drops overflow drops)"
	else
		fail "droptail == ns3-fifo: identical flows/queues/packets.csv (same=$same drops=$drops completed=$completed)"
	fi
else
	fail "droptail and ns3-fifo: 30-flow job runs ($(cat "$tmp/id-droptail.log" "$tmp/id-ns3-fifo.log"))"
fi

# --- UDP flows: cbr / onoff / voip replay the job's on-periods ----------------
# make_udp_job FILE DISC LIMIT FLOWS-JSON: a 10 Mb/s dumbbell job of UDP flows
# (each flow's fields override group "g", cls 0, prec 0).
make_udp_job() {
	"$python" - "$here" "$@" <<'EOF'
import json, sys
sys.path.insert(0, sys.argv[1])
import testjob
path, disc, limit, flows = sys.argv[2], sys.argv[3], sys.argv[4], json.loads(sys.argv[5])
params = {"droptail": {"limit_pkts": limit}, "cqaqm": {}}[disc]
flows = [{"flow_id": i, "group": "g", "cls": 0, "prec": 0, **f} for i, f in enumerate(flows)]
job = testjob.job(disc, params, flows, seed=1, duration_s=10.0, packets=True)
json.dump(job, open(path, "w"), indent=1)
EOF
}

# Below capacity: every datagram the schedule holds is sent once and arrives;
# the delay is the path's (3 links: 12 ms propagation + 3 transmissions).
make_udp_job "$tmp/udp.json" droptail 100 '[
 {"app": "cbr", "pkt_bytes": 1000, "rate_bps": 2000000, "start_s": 0.1, "on_periods": [[0.1, 1.1]]},
 {"app": "voip", "pkt_bytes": 200, "rate_bps": 80000, "start_s": 0.2, "on_periods": [[0.2, 0.5], [0.9, 1.0]]}]'
if run "$tmp/udp.json" "$tmp/udp"; then
	"$python" - "$tmp/udp" <<'EOF' && ok "udp: schedule replayed, no loss, path delay" || fail "udp: schedule replayed, no loss, path delay"
import csv, json, sys
d = sys.argv[1]
rows = list(csv.DictReader(open(d + "/flows.csv", newline="")))
cbr, voip = rows
# cbr: 1 s / 4 ms = 250 datagrams; voip: 0.3 s / 20 ms + 0.1 s / 20 ms = 15 + 5
for r, n, payload in ((cbr, 250, 972), (voip, 20, 172)):
    assert r["tx_packets"] == r["rx_packets"] == str(n) and r["lost_packets"] == "0", r
    assert r["seg_bytes"] == str(payload) and r["bytes_goal"] == r["bytes_delivered"] == str(n * payload), r
    assert r["completed"] == "1" and r["fct_s"] == "NA" and r["retx_packets"] == "0", r
    lo = 0.012 + 3 * 8 * (int(r["seg_bytes"]) + 28) / 1e7
    assert lo <= float(r["delay_mean_s"]) <= float(r["delay_max_s"]) < lo + 0.002, (r, lo)
assert cbr["end_s"] == "1.100000000" and voip["end_s"] == "1.000000000"
# the run ends once the last flow's drain (1 s after its last on-period) is over
assert json.load(open(d + "/runner.json"))["sim_end_s"] == 2.1
EOF
else
	fail "udp: job runs ($(cat "$tmp/udp.log"))"
fi

# Overload (3 x 6 Mb/s into 10 Mb/s): losses are counted, tx = rx + lost.
make_udp_job "$tmp/udp-over.json" droptail 50 '[
 {"app": "cbr", "pkt_bytes": 1000, "rate_bps": 6000000, "start_s": 0.1, "on_periods": [[0.1, 1.1]]},
 {"app": "cbr", "pkt_bytes": 1000, "rate_bps": 6000000, "start_s": 0.1, "on_periods": [[0.1, 1.1]]},
 {"app": "onoff", "pkt_bytes": 1000, "rate_bps": 6000000, "start_s": 0.1, "on_periods": [[0.1, 0.6], [0.7, 1.1]]}]'
if run "$tmp/udp-over.json" "$tmp/udp-over"; then
	"$python" - "$tmp/udp-over" <<'EOF' && ok "udp overload: losses counted, queue drops match" || fail "udp overload: losses counted, queue drops match"
import csv, sys
d = sys.argv[1]
rows = list(csv.DictReader(open(d + "/flows.csv", newline="")))
lost = 0
for r in rows:
    assert int(r["rx_packets"]) + int(r["lost_packets"]) == int(r["tx_packets"]), r
    lost += int(r["lost_packets"])
# datagrams at start + k * interval, interval rounded to whole ns (1333333 ns)
# while before the period's end: ceil(period / interval) per period
interval = round(8e9 * 1000 / 6e6)
n = lambda s: -(-round(s * 1e9) // interval)
assert [int(r["tx_packets"]) for r in rows] == [n(1.0), n(1.0), n(0.5) + n(0.4)] == [751, 751, 677], rows
events = list(csv.DictReader(open(d + "/packets.csv", newline="")))
drops = sum(e["event"] == "drop" for e in events)
assert lost > 500 and drops == lost, (lost, drops)
EOF
else
	fail "udp overload: job runs ($(cat "$tmp/udp-over.log"))"
fi

# cls/prec of a UDP flow reach the discipline: CQ-AQM puts cls 1 in band 0.
make_udp_job "$tmp/udp-cq.json" cqaqm 0 '[
 {"app": "cbr", "pkt_bytes": 200, "rate_bps": 80000, "start_s": 0.1, "on_periods": [[0.1, 0.5]], "cls": 1, "prec": 1},
 {"app": "cbr", "pkt_bytes": 1000, "rate_bps": 80000, "start_s": 0.1, "on_periods": [[0.1, 0.5]]}]'
if run "$tmp/udp-cq.json" "$tmp/udp-cq"; then
	"$python" - "$tmp/udp-cq/packets.csv" <<'EOF' && ok "udp: cls travels in the ToS byte (cqaqm band 0)" || fail "udp: cls travels in the ToS byte (cqaqm band 0)"
import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1], newline="")) if r["event"] == "enq"]
assert {r["band"] for r in rows if r["flow_id"] == "0"} == {"0"}, rows[:3]
assert {r["band"] for r in rows if r["flow_id"] == "1"} == {"1"}
EOF
else
	fail "udp: cqaqm job runs ($(cat "$tmp/udp-cq.log"))"
fi

# --- bad jobs exit 2 and name the field --------------------------------------
bad_job() { # NAME PYTHON-EDIT EXPECTED-TEXT
	"$python" -c "
import json
j = json.load(open('$tmp/ncq.json'))
$2
json.dump(j, open('$tmp/bad.json', 'w'))
"
	"$runner" "$tmp/bad.json" "$tmp/bad" >"$tmp/bad.out" 2>"$tmp/bad.err"
	rc=$?
	if [ $rc = 2 ] && grep -q -- "$3" "$tmp/bad.err"; then
		ok "bad job: $1"
	else
		fail "bad job: $1 (exit $rc: $(cat "$tmp/bad.err"))"
	fi
}
bad_job "missing field" "del j['tcp']['min_rto_s']" "tcp.min_rto_s: missing"
bad_job "bad parameter value" "j['discipline']['params']['thresh'] = '1.5'" "discipline.params: thresh"
bad_job "unknown parameter" "j['discipline']['params']['bogus'] = '1'" "bogus"
bad_job "unknown discipline" "j['discipline']['kind'] = 'nope'" "discipline.kind"
bad_job "wrong type" "j['flows'][0]['seg_bytes'] = 'x'" "flows\[0\].seg_bytes"
bad_job "ns3-fifo takes droptail's parameters" "j['discipline'] = {'kind': 'ns3-fifo', 'params': {'thresh': '0.1'}}" "discipline.params: .*thresh"
bad_job "ns3-fifo limit range" "j['discipline'] = {'kind': 'ns3-fifo', 'params': {'limit_pkts': '0'}}" "discipline.params: limit_pkts"
bad_job "unknown app" "j['flows'][0]['app'] = 'udp'" "flows\[0\].app: .*bulk, cbr, onoff and voip"
bad_job "udp: datagram too small" "j['flows'][0].update(app='cbr', pkt_bytes=39, rate_bps=1000, on_periods=[])" "flows\[0\].pkt_bytes"
bad_job "udp: overlapping on-periods" "j['flows'][0].update(app='onoff', pkt_bytes=200, rate_bps=80000, on_periods=[[0.2, 0.5], [0.4, 0.6]])" "flows\[0\].on_periods\[1\]"
bad_job "udp: on-period before start" "j['flows'][0].update(app='voip', pkt_bytes=200, rate_bps=80000, on_periods=[[0.0, 0.5]])" "flows\[0\].on_periods\[0\]"
echo '{"schema": ' >"$tmp/bad.json"
"$runner" "$tmp/bad.json" "$tmp/bad" 2>/dev/null
[ $? = 2 ] && ok "bad job: invalid JSON" || fail "bad job: invalid JSON"

echo "$passed passed, $failed failed"
[ $failed = 0 ]

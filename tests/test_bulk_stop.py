"""Traffic groups that start and stop at given times (the RB-AQM paper's
Tables 1-3): a bulk group's `stop_s` (the plan's `stop_ns`: the sender
stops mid-transfer), a group's ramp of start times (`start_spacing_s`), the
ns-3 runner that stops the senders, and the backends that refuse it."""

from __future__ import annotations

import copy
import csv
import gzip
import subprocess
import sys
from pathlib import Path

import pytest

from qlab import paths, plan
from qlab import scenario as sc
from qlab.backends.mininet import MininetBackend
from qlab.backends.ns2 import Ns2Backend
from qlab.cli import main

from .conftest import REPO, needs
from .small_plans import MS, S, bulk_flow, queue, small_dumbbell, write_plan

SCENARIO = """\
extends: defaults.yaml
duration_s: 30
stop_when_done: false
workload:
  flows: 7
  start_jitter_s: 0
  groups:
    early: {count: 2, seg_bytes: 1000, task_bytes: 100000000, stop_s: 10}
    ramp: {count: 4, seg_bytes: 1000, task_bytes: 100000000, start_offset_s: 2, start_spacing_s: 1.5}
    voice: {count: 1, app: cbr, pkt_bytes: 1000, rate_bps: 100000, stop_s: 20}
series:
  tail: {kind: droptail, params: {limit_pkts: 100}}
"""


def flows_of(demo_dir: Path, text: str = SCENARIO) -> list[dict]:
    f = demo_dir / "stop.yaml"
    f.write_text(text)
    return [j for j in sc.expand(sc.load(f), "quick") if j.seed == 1][0].spec["flows"]


def test_bulk_stop_and_ramp_reach_the_plan(demo_dir):
    flows = flows_of(demo_dir)
    early, ramp = flows[:2], flows[2:6]
    assert [f["stop_ns"] for f in early] == [10 * S, 10 * S]
    assert all("stop_ns" not in f for f in ramp + flows[6:])
    assert [f["start_ns"] for f in ramp] == [2 * S, 3500 * MS, 5 * S, 6500 * MS]
    assert (
        plan.check([j for j in sc.expand(sc.load(demo_dir / "stop.yaml"), "quick") if j.seed == 1][0].spec)
        == []
    )


def test_a_ramp_keeps_the_jitter_draw(demo_dir):
    flows = flows_of(demo_dir, SCENARIO.replace("start_jitter_s: 0", "start_jitter_s: 0.5"))
    ramp = flows[2:6]
    for k, f in enumerate(ramp):
        assert (2 + 1.5 * k) * S <= f["start_ns"] < (2.5 + 1.5 * k) * S


def test_a_stop_before_the_start_is_refused(demo_dir, capsys):
    f = demo_dir / "stop.yaml"
    f.write_text(SCENARIO.replace("start_offset_s: 2, start_spacing_s: 1.5", "start_offset_s: 2, stop_s: 1"))
    assert main(["validate", str(f)]) == 2
    err = capsys.readouterr().err
    assert "workload.groups.ramp.stop_s" in err and "not after the start" in err


def test_a_ramp_past_the_run_s_end_is_refused(demo_dir, capsys):
    """A flow that would start at or after the run's end never sends (and
    its goodput would have no time to be over): refused, naming the flow."""
    f = demo_dir / "stop.yaml"
    f.write_text(SCENARIO.replace("start_spacing_s: 1.5", "start_spacing_s: 10"))
    assert main(["validate", str(f)]) == 2
    err = capsys.readouterr().err
    want = "workload.groups.ramp: its flow 5 starts at 32.0 s, at or after the run's end (duration_s 30)"
    assert want in err


def test_a_plan_flow_starting_at_the_run_s_end_is_refused():
    doc = small_dumbbell("ns3", duration_ns=2 * S, bulk_bytes=10**6)
    doc["flows"][1]["start_ns"] = 2 * S
    assert any(
        p.startswith("flows[1].start_ns: 2000000000 is at or after the run's end") for p in plan.check(doc)
    )


def test_web_groups_have_no_ramp(demo_dir, capsys):
    f = demo_dir / "stop.yaml"
    f.write_text(
        SCENARIO.replace(
            "voice: {count: 1, app: cbr, pkt_bytes: 1000, rate_bps: 100000, stop_s: 20}",
            "web: {app: web, seg_bytes: 1000, arrival_rate_per_s: 1, size_mean_bytes: 10000,"
            " start_spacing_s: 1}",
        )
    )
    assert main(["validate", str(f)]) == 2
    assert "workload.groups.web.start_spacing_s: not a field of app web" in capsys.readouterr().err


def test_plan_checks_stop_ns():
    doc = small_dumbbell("ns3", duration_ns=2 * S, bulk_bytes=10**6)
    doc["flows"][0]["stop_ns"] = 500 * MS
    assert plan.check(doc) == []
    bad = copy.deepcopy(doc)
    bad["flows"][0]["stop_ns"] = bad["flows"][0]["start_ns"]
    assert any("flows[0].stop_ns: expected after start_ns" in p for p in plan.check(bad))
    bad = copy.deepcopy(doc)
    bad["flows"][2]["stop_ns"] = 500 * MS  # a UDP flow stops with its on-periods
    assert plan.check(bad)


def test_ns2_refuses_stop_ns_and_mininet_runs_it():
    """ns-2's runner cannot stop a sender yet; the mininet backend's traffic
    tools can (tests/test_mininet.py runs one)."""
    doc = small_dumbbell("ns3", duration_ns=2 * S, bulk_bytes=10**6)
    doc["flows"][1]["stop_ns"] = 500 * MS
    refused = Ns2Backend().refuse(doc)
    assert any(r.startswith("flows[1].stop_ns:") and "ns3 backend does" in r for r in refused)
    assert MininetBackend().refuse(doc) == []
    del doc["flows"][1]["stop_ns"]
    assert not any("stop_ns" in r for r in Ns2Backend().refuse(doc))


@needs(paths.NS3_RUNNER)
def test_ns3_runner_stops_a_bulk_flow_mid_transfer(tmp_path):
    """A stopped flow's data cease at the bottleneck one access-link hop
    after stop_ns; the other flow, not stopped, carries on and completes;
    the stopped one is incomplete."""
    doc = small_dumbbell("ns3", duration_ns=4 * S, bulk_bytes=2_000_000)
    doc["stop_when_done"] = False
    doc["links"][-1]["queues"]["L"] = queue("droptail", limit_pkts=100)
    doc["flows"] = [
        dict(
            bulk_flow(0, src_port=10000, dst_port=5001, start_ns=50 * MS, seg_bytes=1000, nbytes=10**8),
            stop_ns=1 * S,
        ),
        bulk_flow(1, src_port=10001, dst_port=5002, start_ns=80 * MS, seg_bytes=1000, nbytes=2_000_000),
    ]
    job = write_plan(tmp_path, doc)
    out = tmp_path / "out"
    subprocess.run(
        [sys.executable, "-m", "qlab", "run-job", str(job), "--out", str(out)],
        check=True,
        capture_output=True,
        cwd=REPO,
    )
    with gzip.open(out / "flows.csv.gz", "rt") as f:
        rows = {int(r["flow_id"]): r for r in csv.DictReader(f)}
    assert rows[0]["completed"] == "0" and rows[1]["completed"] == "1"
    assert 0 < int(rows[0]["bytes_delivered"]) < 10**8
    # its goodput is over its life (start to stop), not diluted to the run's end
    life_s = 1.0 - 0.05
    want = 8 * int(rows[0]["bytes_delivered"]) / life_s
    assert float(rows[0]["goodput_bps"]) == pytest.approx(want, rel=1e-6)
    late: list[tuple[float, int]] = []
    before = 0
    with gzip.open(out / "packets.csv.gz", "rt") as f:
        for r in csv.DictReader(f):
            if r["event"] in ("enq", "drop") and r["flow_id"] == "0":
                if float(r["time_s"]) > 1.0 + 0.0011:  # one 1 ms access hop after the stop
                    late.append((float(r["time_s"]), int(r["len_bytes"])))
                elif float(r["time_s"]) > 0.9:
                    before += 1
    assert before > 10  # it was sending up to the stop
    # nothing but 40-byte RSTs: the abort's, and the sender's stack answering
    # the ACKs of the segments in flight (it has no connection for them any
    # more), all within a round trip (24 ms + at most 100 queued packets)
    assert late and all(length == 40 for _, length in late), late
    assert max(t for t, _ in late) < 1.0 + 0.024 + 0.085, late[-1]


@needs(paths.NS3_RUNNER)
def test_ns3_runner_stops_a_flow_still_opening_without_a_rst(tmp_path):
    """A sender stopped while its SYN is in flight (SYN_SENT) closes without a
    RST, as RFC 793's ABORT and Linux (the mininet backend's senders) do:
    the abort itself sends nothing. (A RST from SYN_SENT, when the SYN
    was dropped, reached the sink's listening socket, which ns-3 put into a
    zero-window persist state that crashed the run 6 s later.)"""
    doc = small_dumbbell("ns3", duration_ns=7 * S, bulk_bytes=2_000_000)
    doc["stop_when_done"] = False
    doc["links"][-1]["queues"]["L"] = queue("droptail", limit_pkts=100)
    doc["flows"] = [
        # the round trip is 24 ms: stopped 5 ms after its SYN left
        dict(
            bulk_flow(0, src_port=10000, dst_port=5001, start_ns=50 * MS, seg_bytes=1000, nbytes=10**8),
            stop_ns=55 * MS,
        ),
        bulk_flow(1, src_port=10001, dst_port=5002, start_ns=80 * MS, seg_bytes=1000, nbytes=2_000_000),
    ]
    assert doc["tcp"].get("handshake", True) is True
    job = write_plan(tmp_path, doc)
    out = tmp_path / "out"
    subprocess.run(
        [sys.executable, "-m", "qlab", "run-job", str(job), "--out", str(out)],
        check=True,
        capture_output=True,
        cwd=REPO,
    )
    with gzip.open(out / "flows.csv.gz", "rt") as f:
        rows = {int(r["flow_id"]): r for r in csv.DictReader(f)}
    assert rows[0]["completed"] == "0" and rows[0]["bytes_delivered"] == "0" and rows[1]["completed"] == "1"
    with gzip.open(out / "packets.csv.gz", "rt") as f:
        mine = [r for r in csv.DictReader(f) if r["event"] == "enq" and r["flow_id"] == "0"]
    # its SYN, then nothing until the SYN-ACK comes back (a round trip after
    # the SYN) and its stack, with no connection for it, answers with a RST;
    # an abort's RST would have left at the stop (55 ms)
    times = [float(r["time_s"]) for r in mine]
    assert len(times) == 2 and times[0] < 0.052 and times[1] > 0.050 + 0.024, mine

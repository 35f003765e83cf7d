from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from qlab import traces
from qlab.cli import main

FLOW_HEADER = [c.name for c in traces.TABLES["flows"]["columns"]]
QUEUE_HEADER = [c.name for c in traces.TABLES["queues"]["columns"]]
TCP_NA = [None] * 4  # rx_packets, lost_packets, delay_mean_s, delay_max_s
# a voip flow that sent 50 datagrams of 172 payload bytes, 48 arrived, ended sending at 5 s
UDP_ROW = [2, "voip", "voice", 1, 1, 172, 8600, 8256, 1.0, 5.0, 1, None, 16512.0, 50, 0, 48, 2, 0.013, 0.02]


def make_run(d: Path, flows=None, queues=None, run=None) -> Path:
    d.mkdir(parents=True, exist_ok=True)
    flows = (
        flows
        if flows is not None
        else [
            [0, "bulk", "noncongestive", 0, 0, 100, 1000, 1000, 0.5, 1.5, 1, 1.0, 8000.0, 12, 1, *TCP_NA],
            [1, "bulk", "congestive", 0, 0, 1000, 5000, 3000, 0.1, None, 0, None, 1000.0, 4, 0, *TCP_NA],
            UDP_ROW,
        ]
    )
    queues = (
        queues
        if queues is not None
        else [
            [0.0, "bottleneck:L", 0, 0, 0, 0, 0, 0, None],
            [0.0, "bottleneck:L", 1, 0, 0, 0, 0, 0, None],
            [0.1, "bottleneck:L", 0, 1, 140, 5, 4, 0, None],
            [0.1, "bottleneck:L", 1, 2, 2080, 9, 7, 1, None],
        ]
    )
    traces.write_csv_gz(d / "flows.csv.gz", FLOW_HEADER, flows)
    traces.write_csv_gz(d / "queues.csv.gz", QUEUE_HEADER, queues)
    base = {
        "schema": traces.RUN_SCHEMA,
        "scenario": "p/s",
        "paper": "p",
        "backend": "ns3",
        "series": "ncq",
        "point": "ncq_flows-2",
        "point_values": {"flows": 2},
        "seed": 1,
        "discipline": {"kind": "ncq", "params": {}},
        "job_sha256": "0" * 64,
        "sim_end_s": 20.0,
        "all_completed": False,
        "versions": {},
        "wall_time_s": 0.1,
        "valid": True,
        "invalid_reasons": [],
        # what run-job records of each table (checked against the files)
        "tables": {n: traces.file_record(d / n) for n in ("flows.csv.gz", "queues.csv.gz")},
    }
    base.update(run or {})
    (d / "run.json").write_text(json.dumps(base))
    return d


def test_gzip_is_reproducible():
    a = traces.gzip_bytes(b"x,y\n1,2\n")
    assert a == traces.gzip_bytes(b"x,y\n1,2\n")
    assert a[4:8] == b"\0\0\0\0"  # mtime 0 in the header
    assert gzip.decompress(a) == b"x,y\n1,2\n"


def test_valid_run_passes(tmp_path):
    assert traces.check_dir(make_run(tmp_path / "ok")) == []


def test_cli_check_traces(tmp_path, capsys):
    good = make_run(tmp_path / "ok")
    assert main(["check-traces", str(good)]) == 0
    bad = make_run(tmp_path / "bad", run={"seed": "one"})
    assert main(["check-traces", str(bad)]) == 2
    assert "seed: wrong type str" in capsys.readouterr().err


@pytest.mark.parametrize(
    "mutate, expect",
    [
        (lambda f, q: f[0].__setitem__(7, 2000), "bytes_delivered exceeds bytes_goal"),
        (lambda f, q: f[0].__setitem__(10, 0), "completed must be 1 exactly when"),
        (lambda f, q: f[0].__setitem__(11, 7.0), "fct_s != end_s - start_s"),
        (lambda f, q: f[1].__setitem__(0, 0), "duplicate flow ids"),
        (lambda f, q: f[1].__setitem__(12, -1), "goodput_bps: expected >= 0"),
        (lambda f, q: f[1].__setitem__(1, "ftp"), "app: expected one of bulk"),
        (lambda f, q: f[2].__setitem__(16, 3), "rx_packets + lost_packets != tx_packets"),
        (lambda f, q: f[2].__setitem__(11, 4.0), "a UDP flow has end_s exactly when completed, and no fct_s"),
        (lambda f, q: f[2].__setitem__(17, None), "delay_mean_s and delay_max_s are given exactly when"),
        (lambda f, q: f[2].__setitem__(17, 0.5), "delay_mean_s exceeds delay_max_s"),
        (lambda f, q: f[0].__setitem__(15, 12), "NA for TCP flows"),
        (lambda f, q: f[0].__setitem__(9, 30.0), None),  # end after run end -> fct mismatch too
        (lambda f, q: q[3].__setitem__(5, 1), "enqueued < dequeued + backlog"),
        (lambda f, q: q[3].__setitem__(7, 0) or q[1].__setitem__(7, 3), "dropped_pkts decreases"),
        (lambda f, q: q.reverse(), "not sorted by time_s, queue, band"),
        (lambda f, q: q[0].__setitem__(8, 1.5), "drop_prob: expected <= 1"),
    ],
)
def test_broken_runs_are_caught(tmp_path, mutate, expect):
    flows = [
        [0, "bulk", "noncongestive", 0, 0, 100, 1000, 1000, 0.5, 1.5, 1, 1.0, 8000.0, 12, 1, *TCP_NA],
        [1, "bulk", "congestive", 0, 0, 1000, 5000, 3000, 0.1, None, 0, None, 1000.0, 4, 0, *TCP_NA],
        list(UDP_ROW),
    ]
    q = "bottleneck:L"
    queues = [
        [0.0, q, 0, 0, 0, 0, 0, 0, None],
        [0.0, q, 1, 0, 0, 0, 0, 0, None],
        [0.1, q, 0, 1, 140, 5, 4, 0, None],
        [0.1, q, 1, 2, 2080, 9, 7, 1, None],
    ]
    mutate(flows, queues)
    problems = traces.check_dir(make_run(tmp_path / "r", flows, queues))
    assert problems
    if expect:
        assert any(expect in p for p in problems), problems


def test_missing_table_and_wrong_header(tmp_path):
    d = make_run(tmp_path / "r")
    (d / "queues.csv.gz").unlink()
    traces.write_csv_gz(d / "flows.csv.gz", FLOW_HEADER[:-1], [])
    problems = traces.check_dir(d)
    assert any("queues.csv.gz: missing" in p for p in problems)
    assert any("header: expected" in p and "missing delay_max_s" in p for p in problems)


def test_all_completed_must_match_flows(tmp_path):
    d = make_run(tmp_path / "r", run={"all_completed": True})
    assert any("all_completed is true" in p for p in traces.check_dir(d))

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


def test_rows_checked_skips_only_the_rows_of_that_table(tmp_path):
    """run-job checks the packet trace's rows as it writes them
    (finalise._check_packet_facts) and does not parse them again; the
    table is still held to run.json's record, and every other table
    still parsed."""
    header = [c.name for c in traces.TABLES["packets"]["columns"]]
    bad_rows = [
        [1, 0.5, "bottleneck:L", "enq", 0, 100, 0, None, None],
        [0, 0.1, "bottleneck:L", "enq", 0, 100, 0, None, None],
    ]
    d = make_run(
        tmp_path / "r",
        queues=[[0.0, "bottleneck:L", 0, 0, 0, 0, 0, 0, None], [0.0, "bottleneck:L", 0, 0, 0, 0, 0, 0, None]],
    )
    traces.write_csv_gz(d / "packets.csv.gz", header, bad_rows)
    run = json.loads((d / "run.json").read_text())
    run["tables"]["packets.csv.gz"] = traces.file_record(d / "packets.csv.gz")
    (d / "run.json").write_text(json.dumps(run))
    assert any("packets.csv.gz: rows are not sorted" in p for p in traces.check_dir(d))
    skipped = traces.check_dir(d, rows_checked=("packets",))
    assert not any("packets.csv.gz" in p for p in skipped)
    assert any("queues.csv.gz: line 3: a duplicate row" in p for p in skipped), skipped
    (d / "packets.csv.gz").write_bytes((d / "packets.csv.gz").read_bytes() + b"\0")
    assert any(
        "SHA-256 differs" in p or "bytes, run.json recorded" in p
        for p in traces.check_dir(d, rows_checked=("packets",))
    )


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


# --- the fast path of check_table against the field-by-field one ---------

PACKET_HEADER = [c.name for c in traces.RAW_TABLES["packet_facts"]["columns"]]
PACKET_ROWS = [
    ["0", "1000", "bottleneck:L", "enq", "0", "1040", "3", "NA", "NA"],
    ["1", "1000", "bottleneck:L", "enq", "1", "40", "NA", "NA", "NA"],
    ["0", "2500", "bottleneck:L", "deq", "0", "1040", "3", "1500", "NA"],
    ["2", "2600", "bottleneck:L", "drop", "1", "1040", "4", "NA", "precedence_cross"],
]
# Texts that the parser refuses, reads differently from how they look, or
# that csv reads otherwise: each, in each column, must give the same
# problems (named the same way) and the same rows on both paths.
HOSTILE = [
    "-1",
    "-0",
    "+1",
    " 7",
    "7 ",
    "1_0",
    "007",
    "0",
    "1",
    "1.5",
    "1e999",
    "1e5",
    "1E-3",
    "9" * 400,
    "nan",
    "inf",
    "NA",
    "na",
    "",
    '"3"',
    '"a,b"',
    "x\x00y",
    "enq",
    "deq",
    "aqm",
    "0.5",
    "2",
]


def _both(path, table, raw, monkeypatch, form="rows"):
    fast = traces.check_table(path, table, raw=raw, form=form)
    with monkeypatch.context() as m:
        m.setattr(traces, "_fast_spec", lambda table, raw: None)
        slow = traces.check_table(path, table, raw=raw, form=form)
    return fast, slow


def test_fast_path_is_taken_and_agrees_on_valid_tables(tmp_path, monkeypatch):
    raw = tmp_path / "packet_facts.csv"
    raw.write_text("\n".join([",".join(PACKET_HEADER), *(",".join(r) for r in PACKET_ROWS)]) + "\n")
    text = raw.read_text()
    assert traces._check_fast(text, "packet_facts", True, traces.RAW_TABLES["packet_facts"]) is not None
    for form in ("rows", "columns", "none"):
        fast, slow = _both(raw, "packet_facts", True, monkeypatch, form)
        assert fast == slow
        assert fast[0] == []
    d = make_run(tmp_path / "r")
    for table in ("flows", "queues"):
        fast, slow = _both(d / f"{table}.csv.gz", table, False, monkeypatch)
        assert fast == slow and fast[0] == [] and len(fast[1]) > 0
    # no final newline, and a table of no rows
    raw.write_text(text.rstrip("\n"))
    fast, slow = _both(raw, "packet_facts", True, monkeypatch)
    assert fast == slow and len(fast[1]) == len(PACKET_ROWS)
    raw.write_text(",".join(PACKET_HEADER) + "\n")
    assert _both(raw, "packet_facts", True, monkeypatch) == (([], []), ([], []))


@pytest.mark.parametrize("col", range(len(PACKET_HEADER)))
def test_fast_path_agrees_on_hostile_fields(tmp_path, monkeypatch, col):
    raw = tmp_path / "packet_facts.csv"
    for value in HOSTILE:
        rows = [list(r) for r in PACKET_ROWS]
        rows[2][col] = value
        raw.write_bytes(("\n".join([",".join(PACKET_HEADER), *(",".join(r) for r in rows)]) + "\n").encode())
        fast, slow = _both(raw, "packet_facts", True, monkeypatch)
        assert fast == slow, (PACKET_HEADER[col], value)


@pytest.mark.parametrize(
    "text",
    [
        "a,b\n1,2\n",
        "a,b\n1,2",
        "a,b\n",
        "",
        "a,b\n\n1,2\n",
        'a,b\n"1\n2",3\n',
        "a,b\r\n1,2\r\n",
        'a,b\n"x",2\n4,5\n',
    ],
)
def test_count_rows_is_what_csv_reads(tmp_path, text):
    path, data = tmp_path / "t.csv.gz", traces.gzip_bytes(text.encode())
    try:
        expect = len(traces.parse_csv_gz(path, data)[1])
    except traces.TableError as exc:  # a carriage return: refused by both, the same way
        with pytest.raises(traces.TableError, match="carriage return"):
            traces.count_rows(path, data)
        assert "carriage return" in str(exc)
        return
    assert traces.count_rows(path, data) == expect


def test_unsorted_and_duplicate_rows_are_caught_on_the_fast_path(tmp_path, monkeypatch):
    raw = tmp_path / "packet_facts.csv"
    for rows, expect in (
        ([PACKET_ROWS[1], PACKET_ROWS[0], *PACKET_ROWS[2:]], "not sorted by time_ns, seq"),
        ([PACKET_ROWS[0], PACKET_ROWS[0], *PACKET_ROWS[2:]], "a duplicate row (time_ns=1000, seq=0)"),
    ):
        raw.write_text("\n".join([",".join(PACKET_HEADER), *(",".join(r) for r in rows)]) + "\n")
        fast, slow = _both(raw, "packet_facts", True, monkeypatch)
        assert fast == slow
        assert any(expect in p for p in fast[0]), fast[0]


def test_packets_written_a_column_at_a_time_are_what_csv_writes(tmp_path, monkeypatch):
    from qlab import finalise

    raw = tmp_path / "packet_facts.csv"
    raw.write_text("\n".join([",".join(PACKET_HEADER), *(",".join(r) for r in PACKET_ROWS)]) + "\n")
    every = [c.name for c in traces.RAW_TABLES["packet_facts"]["columns"]]
    (facts,) = traces.iter_table(raw, "packet_facts", raw=True, as_text=every)
    names = [c.name for c in traces.TABLES["packets"]["columns"]]
    rows = [
        [
            str(r["seq"]),
            finalise.fmt_s(r["time_ns"]),
            r["queue"],
            r["event"],
            str(r["band"]),
            str(r["len_bytes"]),
            "NA" if r["flow_id"] is None else str(r["flow_id"]),
            "NA" if r["sojourn_ns"] is None else finalise.fmt_s(r["sojourn_ns"]),
            "NA" if r["reason"] is None else r["reason"],
        ]
        for r in traces.check_table(raw, "packet_facts", raw=True)[1]
    ]
    assert finalise._packet_lines(facts) == finalise._csv_bytes(names, rows).split(b"\n", 1)[1]
    # written a chunk at a time: the bytes of the whole table gzipped at once
    for chunk_chars in (1, 7, 50, 100, 10_000):  # chunks of no row, one, some and all
        monkeypatch.setattr(traces, "CHUNK_CHARS", chunk_chars)
        out = tmp_path / "packets.csv.gz"
        assert finalise._check_packet_facts(raw, {"bottleneck:L"}, {3, 4}, out) == []
        assert out.read_bytes() == traces.gzip_bytes(finalise._csv_bytes(names, rows))
    # a packet of an unknown flow or queue: named, and nothing written
    assert finalise._check_packet_facts(raw, {"bottleneck:L"}, {3}, out) == [f"{raw}: unknown flow 4"]
    assert not out.exists()
    problems = finalise._check_packet_facts(raw, {"bottleneck:R"}, {3, 4}, out)
    assert problems == [f"{raw}: queue 'bottleneck:L' is not in the plan's trace.queues"] and not out.exists()
    assert finalise.fmt_s(1500) == "0.000001500" and finalise.fmt_s(-1_000_000_001) == "-1.000000001"
    # integers with leading zeros, which the parser admits: written as their
    # values (the field-by-field path), as the canonical table is
    monkeypatch.setattr(traces, "CHUNK_CHARS", 10_000)
    padded = [[("00" + v if v.isdigit() else v) for v in r] for r in PACKET_ROWS]
    raw.write_text("\n".join([",".join(PACKET_HEADER), *(",".join(r) for r in padded)]) + "\n")
    assert finalise._check_packet_facts(raw, {"bottleneck:L"}, {3, 4}, out) == []
    assert out.read_bytes() == traces.gzip_bytes(finalise._csv_bytes(names, rows))
    # the text path's seconds are fmt_s's, on both sides of every digit count
    for ns in [0, 1, 999_999_999, 1_000_000_000, 12_345_678_901, *(10**k + 7 for k in range(19))]:
        assert finalise._s_text(str(ns)) == finalise.fmt_s(ns), ns


@pytest.mark.parametrize(
    "text",
    ["a,b\n1,2\n3,4\n", "a,b\n1,2", "a,b\n", "a,b\n\n1,2\n", 'a,b\n"1\n2",3\n', 'a,b\n"x",2\n4,5\n']
    + ["a,b\n,\n"],
)
def test_lines_copied_are_the_rows_csv_reads_and_writes(tmp_path, text):
    """What `qlab collect` copies of a trace table (traces.verify_lines):
    its own lines where they are exactly the rows, else the rows."""
    path = tmp_path / "t.csv.gz"
    path.write_bytes(traces.gzip_bytes(text.encode()))
    header, rows = traces.read_csv_gz(path)
    problem, got_header, body = traces.verify_lines(path, traces.file_record(path))
    assert problem is None and got_header == header
    assert body == rows if isinstance(body, list) else body == "".join(traces.csv_line(r) for r in rows)
    assert isinstance(body, str) == ('"' not in text and "\n\n" not in text)


def test_lines_of_a_table_that_differs_from_its_record_are_refused(tmp_path):
    path = tmp_path / "t.csv.gz"
    path.write_bytes(traces.gzip_bytes(b"a,b\n1,2\n"))
    record = traces.file_record(path)
    path.write_bytes(traces.gzip_bytes(b"a,b\n1,2\n1,2\n"))
    problem, header, body = traces.verify_lines(path, record)
    assert problem and problem.startswith("t.csv.gz: ") and header == [] and body == []
    gone = traces.verify_lines(tmp_path / "gone.csv.gz", record)[0]
    assert gone == "gone.csv.gz: missing (run.json records it)"

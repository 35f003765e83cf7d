"""TCP options of the plan (docs/jobs.md): tcp.handshake and trace.tcp, from
the scenario to the plan, the backends that refuse them, and the tcp trace
table from the runner's raw facts (docs/traces.md)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from qlab import finalise, plan, traces
from qlab import scenario as sc
from qlab.backends.mininet import MininetBackend

from .conftest import REPO
from .test_plan import tiny_plan, write_raw


@pytest.fixture
def ncq_plan() -> dict:
    return next(
        j.spec
        for j in sc.expand(sc.load(REPO / "scenarios/ncq-conf/flows.yaml"), "test", ["ns3"])
        if j.series == "ncq"
    )


# --- from the scenario to the plan --------------------------------------------------


def test_plans_say_the_handshake_runs_and_nothing_is_tcp_traced(ncq_plan):
    assert ncq_plan["tcp"]["handshake"] is True
    assert ncq_plan["trace"]["tcp"] == [] and ncq_plan["trace"]["tcp_sample_interval_ns"] == 100_000_000
    assert plan.check(ncq_plan) == []


def scenario_plans(tmp_path: Path, tcp: dict | None = None, trace: dict | None = None) -> list[dict]:
    """Plans of a small dumbbell scenario: 4 bulk flows and one cbr flow."""
    d = tmp_path / "test"
    d.mkdir(exist_ok=True)
    doc = {
        "paper": "test",
        "duration_s": 5,
        "seeds": 1,
        "topology": {
            "kind": "dumbbell",
            "access_rate_bps": 10_000_000,
            "access_delay_s": 0.001,
            "bottleneck_rate_bps": 10_000_000,
            "bottleneck_delay_s": 0.01,
        },
        "tcp": {"variant": "NewReno", **(tcp or {})},
        "workload": {
            "flows": 5,
            "groups": {
                "cbr": {"count": 1, "app": "cbr", "pkt_bytes": 200, "rate_bps": 80_000},
                "bulk": {"count": 4, "seg_bytes": 1000, "task_bytes": 10_000},
            },
        },
        "series": {"droptail": {"kind": "droptail"}},
        "trace": trace or {},
    }
    (d / "tcpopts.yaml").write_text(json.dumps(doc))
    return [j.spec for j in sc.expand(sc.load(d / "tcpopts.yaml"), "quick", ["ns3"])]


def test_handshake_false_reaches_the_plan(tmp_path):
    (p,) = scenario_plans(tmp_path, tcp={"handshake": False})
    assert p["tcp"]["handshake"] is False and plan.check(p) == []
    (p,) = scenario_plans(tmp_path)
    assert p["tcp"]["handshake"] is True


@pytest.mark.parametrize(
    "spec, want",
    [
        (True, [1, 2, 3, 4]),  # every bulk flow, not the cbr flow 0
        (False, []),
        ([4, 2, 99], [2, 4]),  # listed ids the run has, in flow order
    ],
)
def test_trace_tcp_names_bulk_flows(tmp_path, spec, want):
    (p,) = scenario_plans(tmp_path, trace={"tcp": spec, "tcp_sample_interval_s": 0.01})
    assert [f["app"] for f in p["flows"]] == ["cbr", "bulk", "bulk", "bulk", "bulk"]
    assert p["trace"]["tcp"] == want and p["trace"]["tcp_sample_interval_ns"] == 10_000_000
    assert plan.check(p) == []


def test_collecting_tcp_needs_trace_tcp(tmp_path):
    with pytest.raises(sc.ScenarioError, match="collecting tcp needs trace.tcp"):
        scenario_plans(tmp_path, trace={"collect": ["tcp"]})
    scenario_plans(tmp_path, trace={"collect": ["tcp"], "tcp": True})


@pytest.mark.parametrize(
    "mutate, expect",
    [
        (lambda p: p["trace"].update(tcp=[0]), "trace.tcp[0]: no bulk (TCP) flow 0"),  # the cbr flow
        (lambda p: p["trace"].update(tcp=[77]), "trace.tcp[0]: no bulk (TCP) flow 77"),
        (lambda p: p["trace"].update(tcp=[1, 1]), "trace.tcp: "),
        (
            lambda p: (p["trace"].update(tcp=[1]), p["trace"].pop("tcp_sample_interval_ns")),
            "tcp_sample_interval_ns",
        ),
        (lambda p: p["tcp"].update(handshake="no"), "tcp.handshake: "),
    ],
)
def test_bad_tcp_options_are_named(tmp_path, mutate, expect):
    (p,) = scenario_plans(tmp_path)
    p = copy.deepcopy(p)
    mutate(p)
    problems = plan.check(p)
    assert any(expect in line for line in problems), problems


def test_older_plans_without_the_fields_stay_valid(tmp_path):
    (p,) = scenario_plans(tmp_path)
    del p["tcp"]["handshake"]
    del p["trace"]["tcp"], p["trace"]["tcp_sample_interval_ns"]
    assert plan.check(p) == []


# --- what the mininet backend cannot build ----------------------------------------


def test_mininet_refuses_no_handshake_and_tcp_traces(tmp_path):
    (p,) = scenario_plans(tmp_path)
    mininet = MininetBackend()
    assert mininet.refuse(p) == []
    p["tcp"]["handshake"] = False
    p["trace"]["tcp"] = [1]
    problems = mininet.refuse(p)
    assert [line.split(":")[0] for line in problems] == ["tcp.handshake", "trace.tcp"], problems
    assert "Linux TCP always opens with a handshake" in problems[0]


# --- the tcp trace table ----------------------------------------------------------------


TCP_COLS = [c.name for c in traces.RAW_TABLES["tcp_facts"]["columns"]]


def write_tcp_facts(d: Path, rows: list[list]) -> None:
    (d / "tcp_facts.csv").write_text(
        ",".join(TCP_COLS)
        + "\n"
        + "".join(",".join("NA" if v is None else str(v) for v in r) + "\n" for r in rows)
    )


def traced_tiny(tmp_path: Path) -> tuple[dict, int, dict]:
    """tiny_plan with its first bulk flow traced, flow facts written."""
    p = tiny_plan()
    cbr, done, late = p["flows"]
    p["trace"].update(tcp=[done["flow_id"]], tcp_sample_interval_ns=100_000_000)
    n = cbr["packets"]
    payload = cbr["pkt_bytes"] - 28
    write_raw(
        tmp_path,
        sorted(
            [
                [cbr["flow_id"], n, 0, n, n * payload, 510_000_000, 2_490_000_000, 3 * n, 9],
                [done["flow_id"], 60, 10, None, 50_000, 1_100_000_000, 3_000_000_000, None, None],
                [late["flow_id"], 30, 0, None, 20_000, 2_200_000_000, 3_900_000_000, None, None],
            ]
        ),
    )
    return p, done["flow_id"], {"end_ns": 4_000_000_000}


def test_tcp_facts_become_tcp_csv_in_seconds(tmp_path):
    p, fid, facts = traced_tiny(tmp_path)
    write_tcp_facts(
        tmp_path,
        [
            [1_000_000_000, fid, 0, 0, None, 1_000_000_000, 0, 0, "SYN_SENT", "open"],
            [2_024_000_000, fid, 2000, 4294967295, None, 3_000_000_000, 0, 1, "ESTABLISHED", "open"],
            [2_100_000_000, fid, 3000, 4294967295, 24_000_000, 200_000_000, 0, 1, "ESTABLISHED", "open"],
            [3_000_000_000, fid, 1000, 2000, 30_000_000, 400_000_000, 10, 1, "FIN_WAIT_1", "loss"],
        ],
    )
    problems, tables = finalise.check_raw(tmp_path, p, facts)
    assert problems == []
    finalise.finalise(tmp_path, p, facts, tables)
    header, rows = traces.read_csv_gz(tmp_path / "tcp.csv.gz")
    assert header == [c.name for c in traces.TABLES["tcp"]["columns"]]
    assert rows[1] == [
        "2.024000000",
        str(fid),
        "2000",
        "4294967295",
        "NA",
        "3.000000000",
        "0",
        "1",
        "ESTABLISHED",
        "open",
    ]
    assert rows[3][4:6] == ["0.030000000", "0.400000000"]
    problems, parsed = traces.check_table(tmp_path / "tcp.csv.gz", "tcp")
    assert problems == [] and traces.check_tcp_rows(tmp_path / "tcp.csv.gz", parsed) == []


@pytest.mark.parametrize(
    "rows, expect",
    [
        (None, "tcp_facts.csv: missing"),
        (
            [[1_000_000_000, "{other}", 0, 0, None, 1, 0, 0, "SYN_SENT", "open"]],
            "is not in the plan's trace.tcp",
        ),
        ([[999_999_999, "{fid}", 0, 0, None, 1, 0, 0, "SYN_SENT", "open"]], "outside its start"),
        (
            [
                [1_000_000_000, "{fid}", 0, 0, None, 1, 3, 0, "ESTABLISHED", "open"],
                [1_100_000_000, "{fid}", 0, 0, None, 1, 2, 0, "ESTABLISHED", "open"],
            ],
            "retx_packets decreases",
        ),
        ([[1_000_000_000, "{fid}", 0, 0, None, 1, 0, 0, "SYN-SENT", "open"]], "state: expected one of"),
        (
            [
                [1_100_000_000, "{fid}", 0, 0, None, 1, 0, 0, "ESTABLISHED", "open"],
                [1_000_000_000, "{fid}", 0, 0, None, 1, 0, 0, "ESTABLISHED", "open"],
            ],
            "not sorted",
        ),
    ],
)
def test_bad_tcp_facts_are_caught(tmp_path, rows, expect):
    p, fid, facts = traced_tiny(tmp_path)
    other = next(f["flow_id"] for f in p["flows"] if f["app"] == "bulk" and f["flow_id"] != fid)
    if rows is not None:
        ids = {"{fid}": fid, "{other}": other}
        write_tcp_facts(tmp_path, [[ids.get(v, v) if isinstance(v, str) else v for v in r] for r in rows])
    problems, _ = finalise.check_raw(tmp_path, p, facts)
    assert any(expect in line for line in problems), problems

"""ns-3's own queue discs as plan queue kinds (qlab.native, docs/job.schema.json
$defs/queue_ns3-*): the native baselines CoDel, FQ-CoDel and PIE from a
scenario to the plan, every other backend refusing them, and the ns-3
runner's raw facts of them (their drops, their reasons, their random stream)."""

from __future__ import annotations

import copy
import csv
import json
import re
import subprocess
from pathlib import Path

import pytest

from qlab import core, native, paths, plan, traces
from qlab import scenario as sc
from qlab.backends.mininet import MininetBackend
from qlab.backends.ns2 import Ns2Backend
from qlab.backends.testbed import TestbedBackend

from .conftest import REPO, needs

QLAB = REPO / ".venv" / "bin" / "qlab"

# The RFC values the benchmark suite states (scenarios/bench/defaults.yaml).
CODEL = {"limit_pkts": 100, "target_ns": 5_000_000, "interval_ns": 100_000_000, "min_bytes": 1500}
FQ_CODEL = {
    "limit_pkts": 100,
    "flows": 1024,
    "quantum_bytes": 1514,
    "target_ns": 5_000_000,
    "interval_ns": 100_000_000,
    "drop_batch_pkts": 64,
}
PIE = {
    "limit_pkts": 100,
    "target_ns": 15_000_000,
    "tupdate_ns": 15_000_000,
    "alpha": 0.125,
    "beta": 1.25,
    "max_burst_ns": 150_000_000,
    "dq_rate_estimator": False,
    "dq_threshold_bytes": 16384,
    "cap_drop_adjustment": True,
    "derandomization": False,
}
SERIES = {
    "droptail": {"kind": "droptail", "params": {"limit_pkts": 100}},
    "codel": {"kind": "ns3-codel", "params": CODEL},
    "fq-codel": {"kind": "ns3-fq-codel", "params": FQ_CODEL},
    "pie": {"kind": "ns3-pie", "params": PIE},
}


def write_scenario(d: Path, series: dict | None = None, tcp: dict | None = None, seeds: int = 1) -> Path:
    """A 10 Mb/s dumbbell with 6 bulk flows, 3 s: the queue fills and every AQM acts."""
    d.mkdir(exist_ok=True)
    doc = {
        "paper": "test",
        "duration_s": 3,
        "stop_when_done": False,
        "seeds": seeds,
        "topology": {
            "kind": "dumbbell",
            "access_rate_bps": 100_000_000,
            "access_delay_s": 0.001,
            "bottleneck_rate_bps": 10_000_000,
            "bottleneck_delay_s": 0.01,
        },
        "tcp": {"variant": "NewReno", **(tcp or {})},
        "workload": {"flows": 6, "groups": {"bulk": {"count": 6, "seg_bytes": 1000, "task_bytes": 10**9}}},
        "series": series or SERIES,
        "trace": {"packets": True},
    }
    f = d / "native.yaml"
    f.write_text(json.dumps(doc))
    return f


def plans_of(f: Path, backend: str = "ns3") -> dict[tuple[str, int], dict]:
    return {(j.series, j.seed): j.spec for j in sc.expand(sc.load(f), "quick", [backend])}


def bottleneck(p: dict) -> tuple[int, dict]:
    i = next(i for i, lk in enumerate(p["links"]) if lk["id"] == "bottleneck")
    return i, p["links"][i]["queues"]["L"]


# --- the contract ----------------------------------------------------------------


def test_the_native_kinds_are_the_job_schemas_and_named_ns3():
    assert native.kinds() == ["ns3-fifo", "ns3-codel", "ns3-fq-codel", "ns3-pie"]
    assert all(k.startswith(native.PREFIX) for k in native.kinds())
    # the prefix alone tells them from the core's disciplines (ns-2's runner relies on it)
    assert not any(name.startswith(native.PREFIX) for name in core.names())
    text = (REPO / "disciplines/ns2/qlab_ns2_run.py").read_text(encoding="utf-8")
    assert f'NS3_OWN = "{native.PREFIX}"' in text


def test_the_runners_table_of_native_kinds_is_the_job_schemas():
    """disciplines/ns3/qlab-plan.cc's Ns3Kinds() repeats each kind's
    parameters, in the schema's order and with the schema's ranges (its
    comment says so): checked here, so neither can change alone."""
    text = (REPO / "disciplines/ns3/qlab-plan.cc").read_text(encoding="utf-8")
    table = text[text.index("Ns3Kinds()") : text.index("return kinds;")]
    consts = {"kMaxPkts": 1_000_000, "kMaxTimeNs": 1e12}
    entry = re.compile(r'\{"(\w+)",\s*(?:"\w+"|nullptr),\s*Ns3Value::(\w+),\s*([\w.]+),\s*([\w.]+)\}')
    starts = [(m.start(), m.group(1)) for m in re.finditer(r'\{"(ns3-[\w-]+)",', table)]
    assert [k for _, k in starts] == native.kinds()
    for i, (at, kind) in enumerate(starts):
        block = table[at : starts[i + 1][0] if i + 1 < len(starts) else len(table)]
        got = {
            name: (kind_of, float(consts.get(lo, lo)), float(consts.get(hi, hi)))
            for name, kind_of, lo, hi in entry.findall(block)
        }
        schema = native.param_schemas(kind)
        assert list(got) == list(schema), kind
        for name, spec in schema.items():
            if spec["type"] == "boolean":
                assert got[name] == ("BOOL", 0, 1), (kind, name)
            else:
                assert got[name][1:] == (spec["minimum"], spec["maximum"]), (kind, name)


def test_a_series_names_a_native_kind_with_every_parameter(tmp_path):
    plans = plans_of(write_scenario(tmp_path / "test"))
    for series, params in (("codel", CODEL), ("fq-codel", FQ_CODEL), ("pie", PIE)):
        p = plans[(series, 1)]
        _, q = bottleneck(p)
        # the plan carries the values as given: no seed (its draws are ns-3 streams), no defaults
        assert q == {"kind": SERIES[series]["kind"], "params": params}
        assert p["trace"]["queues"] == ["bottleneck:L"]
        assert plan.check(p) == []
    # the core's disciplines keep their seed
    assert bottleneck(plans[("droptail", 1)])[1]["seed"] == 1


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda p: p.pop("min_bytes"), "series.codel.params: min_bytes: missing; ns3-codel is ns-3's own"),
        (lambda p: p.update(target_ns=0), "series.codel.params: target_ns: expected an integer between 1"),
        (lambda p: p.update(target_ns=0.005), "target_ns: expected an integer between 1"),
        (lambda p: p.update(limit_pkts=True), "limit_pkts: expected an integer"),
        (lambda p: p.update(bogus=1), "series.codel.params: unknown parameter 'bogus' for ns3-codel"),
    ],
)
def test_native_parameters_have_no_defaults_and_are_checked(tmp_path, edit, message):
    params = dict(CODEL)
    edit(params)
    f = write_scenario(tmp_path / "test", series={"codel": {"kind": "ns3-codel", "params": params}})
    with pytest.raises(sc.ScenarioError) as err:
        plans_of(f)
    assert any(message in line for line in err.value.problems), err.value.problems


def test_a_scenario_kind_that_is_neither_core_nor_native_is_refused(tmp_path):
    f = write_scenario(tmp_path / "test", series={"x": {"kind": "ns3-red", "params": {}}})
    with pytest.raises(sc.ScenarioError, match=r"series.x.kind: expected one of .*ns3-pie"):
        sc.load(f)


@pytest.mark.parametrize(
    ("edit", "field"),
    [
        (lambda q: q.update(seed=1), ""),
        (lambda q: q["params"].pop("alpha"), ".params.alpha"),
        (lambda q: q["params"].update(beta="1.25"), ".params.beta"),
        (lambda q: q["params"].update(cap_drop_adjustment=1), ".params.cap_drop_adjustment"),
    ],
)
def test_the_plan_schema_checks_a_native_queue(tmp_path, edit, field):
    p = copy.deepcopy(plans_of(write_scenario(tmp_path / "test"))[("pie", 1)])
    i, q = bottleneck(p)
    edit(q)
    problems = plan.check(p)
    assert any(line.startswith(f"links[{i}].queues.L{field}") for line in problems), problems


@pytest.mark.parametrize("kind", ["ns3-fifo", "ns3-codel", "ns3-fq-codel", "ns3-pie"])
@pytest.mark.parametrize(
    ("backend", "words"),
    [
        (MininetBackend, "only the ns3 backend has it, not the mininet backend"),
        (TestbedBackend, "only the ns3 backend has it, not the testbed backend"),
        (Ns2Backend, "the ns3 backend only; the ns2 backend runs the core's disciplines"),
    ],
)
def test_every_other_backend_refuses_a_native_kind_naming_the_field(tmp_path, kind, backend, words):
    params = {"limit_pkts": 100} if kind == "ns3-fifo" else SERIES_BY_KIND[kind]
    series = {"n": {"kind": kind, "params": params}}
    p = next(iter(plans_of(write_scenario(tmp_path / "test", series=series)).values()))
    i, _ = bottleneck(p)
    p["trace"]["packets"] = False
    refused = backend().refuse(p)
    line = next((r for r in refused if r.startswith(f"links[{i}].queues.L.kind: {kind} ")), None)
    assert line is not None and words in line, refused
    assert "\n" not in line


SERIES_BY_KIND = {spec["kind"]: spec["params"] for spec in SERIES.values()}


def test_expanding_a_native_series_for_another_backend_fails_naming_backend_and_field(tmp_path):
    f = write_scenario(tmp_path / "test", series={"pie": {"kind": "ns3-pie", "params": PIE}})
    doc = json.loads(f.read_text())
    doc["backends"] = ["ns3", "ns2"]
    f.write_text(json.dumps(doc))
    with pytest.raises(sc.ScenarioError) as err:
        sc.expand(sc.load(f), "quick")
    i, _ = bottleneck(plans_of(f)[("pie", 1)])
    assert any(
        f"backend ns2 cannot run pie (profile quick): links[{i}].queues.L.kind: ns3-pie is ns-3's own" in line
        for line in err.value.problems
    ), err.value.problems


# --- the runner ------------------------------------------------------------------


def run(plan_doc: dict, out: Path) -> Path:
    """qlab run-job on a plan: checked, run, its raw facts checked and finalised."""
    job = out.with_suffix(".json")
    job.write_text(sc.plan_json(plan_doc))
    proc = subprocess.run(
        [str(QLAB), "run-job", str(job), "--out", str(out)], capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr
    assert traces.check_dir(out) == []
    return out


def raw(out: Path, name: str) -> bytes:
    import gzip

    return gzip.decompress((out / f"{name}.csv.gz").read_bytes())


def rows(out: Path, name: str) -> list[dict]:
    return list(csv.DictReader(raw(out, name).decode().splitlines()))


@needs(paths.NS3_RUNNER)
@pytest.mark.parametrize(
    ("series", "reasons"),
    [("codel", {"aqm"}), ("fq-codel", {"aqm"}), ("pie", {"aqm"})],
)
def test_the_runner_reports_a_native_queue_as_it_reports_ns3_fifo(tmp_path, series, reasons):
    p = plans_of(write_scenario(tmp_path / "test"))[(series, 1)]
    out = run(p, tmp_path / series)
    queue = rows(out, "queues")
    last = queue[-1]
    assert {r["band"] for r in queue} == {"0"} and last["queue"] == "bottleneck:L"
    packets = rows(out, "packets")
    events: dict[str, int] = {}
    for r in packets:
        events[r["event"]] = events.get(r["event"], 0) + 1
    # every packet event agrees with the queue disc's counters: a packet ns-3
    # dequeued and then dropped (CoDel's head drop) is a drop, not a deq
    assert events.get("enq", 0) == int(last["enqueued_pkts"])
    assert events.get("deq", 0) == int(last["dequeued_pkts"])
    assert events.get("drop", 0) == int(last["dropped_pkts"]) > 0
    dropped = {r["reason"] for r in packets if r["event"] == "drop"}
    assert reasons <= dropped <= {"aqm", "overflow"}, dropped
    assert int(last["enqueued_pkts"]) >= int(last["dequeued_pkts"]) + int(last["backlog_pkts"])
    if series == "codel":
        # CoDel drops at the head: with the time the packet spent queued
        assert all(r["sojourn_s"] != "NA" for r in packets if r["event"] == "drop")
    if series == "pie":
        # PIE drops arrivals: before they are queued
        assert all(r["sojourn_s"] == "NA" for r in packets if r["event"] == "drop")


@needs(paths.NS3_RUNNER)
def test_a_native_aqm_keeps_the_queue_shorter_than_droptail(tmp_path):
    plans = plans_of(write_scenario(tmp_path / "test"))
    mean = {}
    for series in ("droptail", "codel", "pie"):
        queue = rows(run(plans[(series, 1)], tmp_path / series), "queues")
        late = [int(r["backlog_pkts"]) for r in queue if float(r["time_s"]) >= 1.0]
        mean[series] = sum(late) / len(late)
    # 6 NewReno flows fill DropTail's 100 packets; CoDel (5 ms ~ 6 packets)
    # and PIE (15 ms ~ 18 packets) hold far less
    assert mean["codel"] < mean["droptail"] / 2 and mean["pie"] < mean["droptail"] / 2, mean


def facts(out: Path) -> dict[str, bytes]:
    return {name: raw(out, name) for name in ("flows", "queues", "packets")}


@needs(paths.NS3_RUNNER)
def test_same_seed_same_traces_another_seed_moves_only_what_draws(tmp_path):
    """PIE's random early drops come from an ns-3 stream of the run's seed: the
    same plan gives byte-identical tables; the same plan with another seed
    (the workload unchanged, only the plan's seed) gives other drops. CoDel
    draws nothing: another seed changes nothing."""
    plans = plans_of(write_scenario(tmp_path / "test"))
    for series, draws in (("pie", True), ("codel", False)):
        p = plans[(series, 1)]
        first = facts(run(p, tmp_path / f"{series}-a"))
        assert facts(run(p, tmp_path / f"{series}-b")) == first
        other = copy.deepcopy(p)
        other["seed"] = 2
        moved = facts(run(other, tmp_path / f"{series}-seed2"))
        assert (moved["packets"] != first["packets"]) is draws, series

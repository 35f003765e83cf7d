"""The ns2 backend: qlab's ns-2.35 with Queue/Qlab (disciplines/ns2), its
runner on resolved plans, `qlab run-job` on an ns2 plan (plan -> Tcl -> ns ->
raw facts -> finalised, validated traces), a test-profile scenario run on
ns2 through `qlab run-job`, and plans the backend refuses before anything
runs, naming the backend and the field. The golden vectors through the
adapter are disciplines/ns2/tests/test_golden.sh (scripts/test.sh).

Needs build/ns2/ns (disciplines/ns2/build.sh, the workflow's build_ns2 rule);
skipped without it.
"""

from __future__ import annotations

import copy
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from qlab import finalise, scenario, traces
from qlab import plan as plans
from qlab.backends.ns2 import NS2, RUNNER, Ns2Backend

from .conftest import REPO, needs
from .small_plans import MS, S, small_dumbbell
from .small_plans import link as _link
from .small_plans import write_plan as _write
from .test_native import PIE

QLAB = Path(sys.executable).parent / "qlab"
pytestmark = needs(NS2)


def small_plan(*, handshake: bool = False, packets: bool = True, limit_pkts: int = 50) -> dict:
    """tests/small_plans.py's dumbbell on ns2 (20 s, a 300 kB bulk flow),
    which ns-2 builds."""
    doc = small_dumbbell(
        "ns2",
        duration_ns=20 * S,
        bulk_bytes=300_000,
        packets=packets,
        limit_pkts=limit_pkts,
        tcp={"handshake": handshake},
    )
    assert plans.check(doc) == [] and Ns2Backend().refuse(doc) == []
    return doc


def _run(tmp_path: Path, doc: dict, name: str = "out") -> tuple[dict, dict]:
    out = tmp_path / name
    proc = subprocess.run(
        [sys.executable, str(RUNNER), str(_write(tmp_path, doc, f"{name}.json")), str(out), "--ns", str(NS2)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    run = json.loads((out / "runner.json").read_text())
    problems, tables = finalise.check_raw(out, doc, run)
    assert problems == []
    if "packet_facts" in tables:  # check_raw wrote them as it checked them: their rows, to look at
        assert tables["packet_facts"].exists()
        tables["packet_facts"] = traces.check_table(out / "packet_facts.csv", "packet_facts", raw=True)[1]
    return run, tables


def test_runner_writes_the_raw_facts_of_the_plan(tmp_path):
    doc = small_plan()
    run, tables = _run(tmp_path, doc)
    rows = {r["flow_id"]: r for r in tables["flow_facts"]}
    assert rows[0]["rx_bytes"] == 300_000 and rows[1]["rx_bytes"] == 100_000
    # no SYN (handshake false): the first data arrives one path delay after the start
    assert 62 * MS <= rows[0]["first_rx_ns"] < 70 * MS
    assert rows[0]["tx_packets"] >= 300 and rows[1]["tx_packets"] >= 200
    # UDP: exactly the plan's send times, all delivered over an idle-ish path
    assert rows[2]["tx_packets"] == doc["flows"][2]["packets"] == 32  # 0.5 s / 16 ms
    assert 0 < rows[2]["rx_packets"] <= 32 and rows[2]["delay_max_ns"] >= 12 * MS
    assert run["end_ns"] >= 1600 * MS  # the CBR flow is done 1 s after its last period
    assert run["versions"]["ns-2"] == "2.35"
    packets = tables["packet_facts"]
    assert {r["flow_id"] for r in packets} == {0, 1, 2}  # the ACKs go the other way
    assert {r["len_bytes"] for r in packets if r["flow_id"] == 2} == {200}
    # 500 + 40 bytes; ns-2 sends the first segment without its header (syn_ false)
    lens = [r["len_bytes"] for r in packets if r["flow_id"] == 1 and r["event"] == "enq"]
    assert lens[0] == 500 and set(lens[1:]) == {540}
    assert {r["queue"] for r in tables["queue_facts"] + packets} == {"bottleneck:L"}


def test_handshake_true_is_ns2s_modelled_syn(tmp_path):
    """tcp.handshake true: a 40-byte first segment the sink ACKs, data one
    round trip later; the SYN is no data segment in the facts."""
    lossless = small_plan(handshake=True, limit_pkts=100000)
    lossless["flows"] = lossless["flows"][:1]
    _, syn = _run(tmp_path, lossless, "syn")
    nosyn_doc = copy.deepcopy(lossless)
    nosyn_doc["tcp"]["handshake"] = False
    _, nosyn = _run(tmp_path, nosyn_doc, "nosyn")
    a, b = syn["flow_facts"][0], nosyn["flow_facts"][0]
    assert a["rx_bytes"] == b["rx_bytes"] == 300_000
    assert a["tx_packets"] == b["tx_packets"] == 300 and a["retx_packets"] == b["retx_packets"] == 0
    rtt = 2 * (10 * MS + 2 * MS)
    assert a["first_rx_ns"] - b["first_rx_ns"] >= rtt
    first = [r for r in syn["packet_facts"] if r["flow_id"] == 0][0]
    assert first["len_bytes"] == 40


def test_run_job_runs_an_ns2_plan_to_finalised_traces(tmp_path):
    doc = small_plan()
    out = tmp_path / "res"
    proc = subprocess.run(
        [str(QLAB), "run-job", str(_write(tmp_path, doc)), "--out", str(out)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert traces.check_dir(out) == []
    run = json.loads((out / "run.json").read_text())
    assert run["backend"] == "ns2" and run["all_completed"] is True and run["valid"] is True
    assert run["versions"]["ns-2"] == "2.35" and run["runner_cpu_s"] is not None


def test_a_test_profile_scenario_runs_on_ns2_through_run_job(tmp_path):
    """ncq-conf's flows figure, test profile, first point and seed of each
    series on ns2: qlab run-job, traces validated."""
    d = tmp_path / "ncq-conf"
    shutil.copytree(REPO / "scenarios" / "ncq-conf", d)
    scen = scenario.load(d / "flows.yaml")
    assert "ns2" in scenario.resolve(scen, "test")["backends"]
    jobs = scenario.expand(scen, "test", ["ns2"])
    assert jobs and {j.backend for j in jobs} == {"ns2"}
    first = {}
    for j in jobs:
        first.setdefault(j.series, j)
    for series, job in first.items():
        plan_file = tmp_path / f"{series}.json"
        plan_file.write_text(scenario.plan_json(job.spec))
        out = tmp_path / "results" / series
        proc = subprocess.run(
            [str(QLAB), "run-job", str(plan_file), "--out", str(out)],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert proc.returncode == 0, proc.stderr
        assert traces.check_dir(out) == []
        run = json.loads((out / "run.json").read_text())
        assert run["all_completed"] is True
        assert run["discipline"]["kind"] == job.spec["links"][-1]["queues"]["L"]["kind"]


def _ns3_fifo(doc: dict) -> dict:
    doc["links"][3]["queues"]["L"] = {"kind": "ns3-fifo", "params": {"limit_pkts": 100}}
    doc["trace"]["queues"] = []
    return doc


def _ns3_pie(doc: dict) -> dict:
    doc["links"][3]["queues"]["L"] = {"kind": "ns3-pie", "params": PIE}
    return doc


def _parallel_links(doc: dict) -> dict:
    doc["links"].append(_link("R", "L", rate_bps=10_000_000, delay_ns=10 * MS, link_id="backup"))
    return doc


def _tcp_traces(doc: dict) -> dict:
    doc["trace"]["tcp"] = [0]
    doc["trace"]["tcp_sample_interval_ns"] = 100 * MS
    return doc


def _three_segment_acks(doc: dict) -> dict:
    doc["tcp"]["delayed_ack_count"] = 3
    return doc


def _bbr(doc: dict) -> dict:
    doc["tcp"]["variant"] = "Bbr"
    return doc


def _window_scaling(doc: dict) -> dict:
    doc["tcp"]["window_scaling"] = True
    return doc


@pytest.mark.parametrize(
    ("make", "field", "words"),
    [
        (_ns3_fifo, "links[3].queues.L.kind", "ns3 backend only"),
        (_ns3_pie, "links[3].queues.L.kind", "ns3-pie is ns-3's own queue disc (the ns3 backend only"),
        (_parallel_links, "links[4]", "one link per pair of nodes"),
        (_tcp_traces, "trace.tcp", "only in the ns3 backend"),
        (_three_segment_acks, "tcp.delayed_ack_count", "every second one"),
        (_window_scaling, "tcp.window_scaling", "no window scaling"),
        (_bbr, "tcp.variant", "Bbr is not in the ns2 backend: its one-way TCP agents"),
    ],
)
def test_plans_the_backend_cannot_build_are_refused_before_anything_runs(tmp_path, make, field, words):
    doc = make(small_plan())
    assert plans.check(doc) == []  # a valid plan, for another backend
    log, out = tmp_path / "log", tmp_path / "res"
    proc = subprocess.run(
        [str(QLAB), "run-job", str(_write(tmp_path, doc)), "--out", str(out), "--log", str(log)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2, proc.stderr
    assert f"backend ns2 cannot run it: {field}:" in proc.stderr and words in proc.stderr, proc.stderr
    assert not log.exists() and not out.exists() and not list(tmp_path.glob(".res*"))  # nothing ran


def test_a_scenario_ns2_cannot_build_is_refused_when_expanded(tmp_path):
    """A graph with two links between the same routers, on ns2: refused when
    the scenario is expanded (qlab validate), naming the backend and the field."""
    d = tmp_path / "ns2test"
    d.mkdir()
    (d / "twin.yaml").write_text("""\
paper: ns2test
description: two routers joined by two links
duration_s: 5
backends: [ns3, ns2]
topology:
  kind: graph
  access_rate_bps: 10000000
  access_delay_s: 0.001
  routers: [a, b]
  links:
    - {a: a, b: b, rate_bps: 10000000, delay_s: 0.01, queue_a: series}
    - {id: twin, a: b, b: a, rate_bps: 10000000, delay_s: 0.01}
tcp: {variant: NewReno, sack: false, timestamps: false, window_scaling: false, initial_cwnd_segments: 2,
      delayed_ack_count: 1, min_rto_s: 0.2, syn_timeout_s: 1.0, rcv_buf_bytes: 131072, snd_buf_bytes: 131072}
workload:
  flows: 2
  groups:
    bulk: {share: rest, seg_bytes: 1000, task_bytes: 10000, from: a, to: b}
series:
  droptail: {kind: droptail, params: {limit_pkts: 100}}
seeds: 1
""")
    proc = subprocess.run(
        [str(QLAB), "validate", str(d / "twin.yaml")], cwd=REPO, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 2, proc.stdout + proc.stderr
    text = proc.stdout + proc.stderr
    assert "backend ns2 cannot run" in text and "one link per pair of nodes" in text, text
    assert "links[" in text, text
    assert "backend ns3" not in text


def test_the_workflow_builds_ns2_before_an_ns2_run(tmp_path):
    """On a fresh clone build/ns2/ns does not exist: each ns-2 run must depend
    on the build rule (its input named as that rule's output, not as an
    absolute path no rule produces, which failed `make reproduce`)."""
    cmd = [
        str(Path(sys.executable).parent / "snakemake"),
        "--workflow-profile",
        "workflows/profiles/local",
        "-n",
        "--cores",
        "1",
        "--forcerun",
        "build_ns2",
        "--config",
        "profile=test",
        f"results={tmp_path}",
        "backends=[ns2]",
        'scenarios=["scenarios/disciplines/rbaqm.yaml"]',
    ]
    proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    blocks = proc.stdout.split("rule ")
    simulate = [b.split("reason:")[1].splitlines()[0] for b in blocks if b.startswith("simulate:")]
    assert simulate and all("updated by another job" in r and "build/ns2/ns" in r for r in simulate), (
        simulate[:3]
    )

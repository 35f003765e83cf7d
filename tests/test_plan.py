"""The job contract: plans (docs/job.schema.json), the registries they are
typed from, topologies as graphs, and the one finaliser of raw facts."""

from __future__ import annotations

import copy
import json
import os
import random
import re
import stat
import statistics
import subprocess
import sys
from pathlib import Path

import pytest

from qlab import backends, core, finalise, native, paths, plan, traces
from qlab import scenario as sc
from qlab.backends.mininet import MininetBackend
from qlab.cli import main

from .conftest import REPO, needs


def first_plan(path: Path | str, backend: str = "ns3", profile: str = "test") -> dict:
    return sc.expand(sc.load(path), profile, [backend])[0].spec


@pytest.fixture(scope="module")
def dumbbell() -> dict:
    """An NCQ run of the conference paper's dumbbell."""
    return next(
        j.spec
        for j in sc.expand(sc.load(REPO / "scenarios/ncq-conf/flows.yaml"), "test", ["ns3"])
        if j.series == "ncq"
    )


# --- registries ----------------------------------------------------------------


@needs(paths.QCORE_REPLAY)
def test_committed_registry_is_the_cores():
    described = subprocess.run(
        [str(paths.QCORE_REPLAY), "--describe"], capture_output=True, text=True, check=True
    ).stdout
    assert json.loads(described) == json.loads(core.REGISTRY.read_text()), (
        "disciplines/core/registry.json is stale: make -C disciplines/core registry"
    )
    listed = subprocess.run(
        [str(paths.QCORE_REPLAY), "--list"], capture_output=True, text=True, check=True
    ).stdout.split()
    assert core.names() == listed


def test_schemas_take_their_names_from_the_registries():
    scen = sc.schema()
    assert scen["properties"]["backends"]["items"]["enum"] == backends.names()
    assert scen["$defs"]["discipline"]["properties"]["kind"]["enum"] == core.names() + native.kinds()
    assert plan.schema()["$defs"]["disc_kind"]["enum"] == core.names()
    # the files themselves hold no list of names to drift
    for f in (paths.SCHEMA, REPO / "workflows/config.schema.json", plan.SCHEMA_FILE):
        text = f.read_text()
        assert '"mininet"' not in text and '"droptail"' not in text, f


def test_a_backend_is_found_by_its_module_alone(tmp_path, monkeypatch):
    import qlab.backends as registry

    (tmp_path / "toy.py").write_text(
        "from qlab.backends.base import Backend\n"
        "class ToyBackend(Backend):\n"
        "    name = 'toy'\n"
        "    summary = 'a test backend'\n"
        "    def tools(self):\n        return {}\n"
        "    def run(self, job_file, workdir, log):\n        return {}\n"
    )
    monkeypatch.setattr(registry, "__path__", [*registry.__path__, str(tmp_path)])
    found = registry._discover()
    assert list(found)[0] == "ns3" and "toy" in found and found["toy"].summary == "a test backend"


def test_every_backend_declares_itself():
    for name in backends.names():
        b = backends.get(name)
        assert b.name == name and b.summary
        assert b.image is None or (REPO / "containers" / b.image / "Dockerfile").exists()


# --- plans ---------------------------------------------------------------------


def test_repository_plans_are_valid(dumbbell):
    assert plan.check(dumbbell) == []
    assert dumbbell["schema"] == "qlab-plan/1"
    assert [n["id"] for n in dumbbell["nodes"][:2]] == ["L", "R"]
    assert {f["src"] for f in dumbbell["flows"]} == {n["id"] for n in dumbbell["nodes"] if n["id"][0] == "s"}
    assert dumbbell["routes"] == [
        {"node": "L", "dst": "10.2.0.0/16", "link": "bottleneck"},
        {"node": "R", "dst": "10.1.0.0/16", "link": "bottleneck"},
    ]


def mutated(p: dict, fn) -> dict:
    q = copy.deepcopy(p)
    fn(q)
    return q


def link(p: dict, lid: str) -> dict:
    return next(lk for lk in p["links"] if lk["id"] == lid)


BAD_PLANS = [
    ("missing field", lambda p: p["flows"][0].pop("start_ns"), "flows[0].start_ns: missing required field"),
    ("wrong unit", lambda p: link(p, "bottleneck").update(delay_s=0.01), "links["),
    ("seconds as a float", lambda p: p.update(duration_ns=1.5), "duration_ns: expected integer"),
    (
        "unknown parameter",
        lambda p: link(p, "bottleneck")["queues"]["L"]["params"].update(colour=1),
        "params.colour: unknown field",
    ),
    (
        "parameter out of range",
        lambda p: link(p, "bottleneck")["queues"]["L"]["params"].update(thresh=2),
        "params.thresh: expected a value <= 1.0",
    ),
    (
        "seven decimals",
        lambda p: link(p, "bottleneck")["queues"]["L"]["params"].update(thresh=0.1234567),
        "params.thresh: expected a decimal with at most 6 places",
    ),
    (
        "a parameter left out",
        lambda p: link(p, "bottleneck")["queues"]["L"]["params"].pop("ramp"),
        "params.ramp: missing required field",
    ),
    (
        "a core queue without its seed",
        lambda p: link(p, "bottleneck")["queues"]["L"].pop("seed"),
        "queues.L.seed: missing required field",
    ),
    (
        "unknown discipline",
        lambda p: link(p, "bottleneck")["queues"]["L"].update(kind="fq"),
        "queues.L.kind: expected one of droptail",
    ),
    ("a link to a missing node", lambda p: link(p, "bottleneck").update(b="X"), ".b: no node 'X'"),
    (
        "a third queue",
        lambda p: link(p, "bottleneck")["queues"].update(Z={"kind": "lossless"}),
        "queues: expected at most 2 entries",
    ),
    (
        "queues keyed wrongly",
        lambda p: link(p, "bottleneck")["queues"].update(Z=link(p, "bottleneck")["queues"].pop("R")),
        "expected one queue per end, keyed 'L' and 'R'",
    ),
    (
        "a route over a foreign link",
        lambda p: p["routes"][0].update(link="R-d0"),
        "routes[0].link: no link 'R-d0' at L",
    ),
    ("a route to a host", lambda p: p["routes"][0].update(link="s0-L"), "the path from s0 reaches host s0"),
    ("no route", lambda p: p["routes"].pop(0), "no route at L to d0"),
    ("tos and class disagree", lambda p: p["flows"][0].update(tos=32), "flows[0].tos: expected cls << 5"),
    ("duplicate flow", lambda p: p["flows"][1].update(flow_id=0), "duplicate flow_id 0"),
    ("a port twice", lambda p: p["flows"][1].update(src="s0"), "port 10000/tcp is used twice on host s0"),
    ("a flow from a router", lambda p: p["flows"][0].update(src="L"), "flows[0].src: no host 'L'"),
    ("tracing a lossless queue", lambda p: p["trace"].update(queues=["bottleneck:R"]), "lossless queue"),
    ("not a plan", lambda p: p.update(schema="qlab-job/1"), "schema: expected 'qlab-plan/1'"),
    (
        "a TCP flow with a UDP field",
        lambda p: p["flows"][0].update(pkt_bytes=1000),
        "flows[0].pkt_bytes: unexpected field: a field this kind of flow does not have",
    ),
    (
        "a lossless queue with parameters",
        lambda p: link(p, "bottleneck")["queues"]["R"].update(params={}),
        "queues.R.params: unknown field (allowed: kind)",
    ),
    (
        "a native queue without its parameters",
        lambda p: (
            link(p, "bottleneck")["queues"]["L"].update(kind="ns3-fifo")
            or link(p, "bottleneck")["queues"]["L"].pop("params")
        ),
        "queues.L.params: missing required field",
    ),
]


@pytest.mark.parametrize("what, fn, expect", BAD_PLANS, ids=[b[0] for b in BAD_PLANS])
def test_bad_plans_are_refused_naming_the_field(dumbbell, what, fn, expect):
    problems = plan.check(mutated(dumbbell, fn))
    assert problems, what
    assert any(expect in p for p in problems), problems


# --- on/off periods --------------------------------------------------------------


def test_exponential_on_off_periods_are_unchanged():
    """The default draws exactly what it drew before Pareto periods existed:
    expovariate on, expovariate off, alternating on one stream."""
    spec = {"app": "onoff", "on_s": 1.0, "off_s": 1.35}
    got = plan.on_periods(spec, 0.5, 60.0, random.Random("7/on-off/3"))
    replay, t, want = random.Random("7/on-off/3"), 0.5, []
    while t < 60.0:
        end = min(t + replay.expovariate(1 / 1.0), 60.0)
        want.append([round(t, 9), round(end, 9)])
        t = end + replay.expovariate(1 / 1.35)
    assert got == want
    assert (
        plan.on_periods({**spec, "onoff_dist": "exponential"}, 0.5, 60.0, random.Random("7/on-off/3")) == got
    )


def durations(periods: list[list[float]]) -> tuple[list[float], list[float]]:
    """On-durations and the off-gaps between them."""
    on = [b - a for a, b in periods]
    off = [nxt[0] - b for (_, b), nxt in zip(periods, periods[1:], strict=False)]
    return on, off


def test_pareto_periods_have_the_means_and_shape_asked_for():
    # shape 3: finite variance, so the sample mean of ~40,000 draws is within 2%
    spec = {"app": "voip", "on_s": 1.0, "off_s": 1.35, "onoff_dist": "pareto", "pareto_shape": 3.0}
    on, off = durations(plan.on_periods(spec, 0.0, 1e5, random.Random(1))[:-1])
    assert statistics.mean(on) == pytest.approx(1.0, rel=0.02)
    assert statistics.mean(off) == pytest.approx(1.35, rel=0.02)
    # every period at least the scale mean (alpha - 1) / alpha: 2/3 of the mean
    assert min(on) >= 2 / 3 - 1e-9 and min(off) >= 0.9 - 1e-9
    # shape 1.5 (the NCQ journal's): the sample mean converges too slowly to
    # test, the median x_m 2^(1/alpha) = 1/3 * 2^(2/3) * mean does not
    spec = {**spec, "pareto_shape": 1.5}
    on, off = durations(plan.on_periods(spec, 0.0, 1e5, random.Random(2))[:-1])
    assert statistics.median(on) == pytest.approx(2 ** (2 / 3) / 3, rel=0.03)
    assert statistics.median(off) == pytest.approx(1.35 * 2 ** (2 / 3) / 3, rel=0.03)
    assert max(on) > 20  # heavy tail: talk spurts far beyond the exponential's reach
    # without pareto_shape, the default 1.5
    default = {k: v for k, v in spec.items() if k != "pareto_shape"}
    assert plan.on_periods(default, 0.0, 100.0, random.Random(3)) == plan.on_periods(
        spec, 0.0, 100.0, random.Random(3)
    )


def test_pareto_periods_are_reproducible_by_seed():
    spec = {"app": "voip", "on_s": 1.0, "off_s": 1.35, "onoff_dist": "pareto", "pareto_shape": 1.5}
    first = plan.on_periods(spec, 0.2, 120.0, random.Random("5/on-off/0"))
    assert plan.on_periods(spec, 0.2, 120.0, random.Random("5/on-off/0")) == first
    assert plan.on_periods(spec, 0.2, 120.0, random.Random("6/on-off/0")) != first
    assert first[0][0] == 0.2 and first[-1][1] <= 120.0
    exponential = plan.on_periods(
        {**spec, "onoff_dist": "exponential"}, 0.2, 120.0, random.Random("5/on-off/0")
    )
    assert exponential != first


def test_pareto_groups_reach_the_plan(demo_dir_voip):
    """A scenario group's onoff_dist and pareto_shape shape its flows' periods."""
    f = demo_dir_voip / "voip.yaml"
    text = f.read_text()
    pareto = [j.spec for j in sc.expand(sc.load(f), "quick", ["ns3"]) if j.seed == 1][0]["flows"]
    f.write_text(text.replace("onoff_dist: pareto, pareto_shape: 1.5, ", ""))
    exponential = [j.spec for j in sc.expand(sc.load(f), "quick", ["ns3"]) if j.seed == 1][0]["flows"]
    assert pareto[0]["on_periods_ns"] != exponential[0]["on_periods_ns"]
    assert pareto[0]["packets"] == plan.udp_packets(pareto[0]["on_periods_ns"], pareto[0]["interval_ns"])


@pytest.fixture
def demo_dir_voip(tmp_path: Path) -> Path:
    d = tmp_path / "disciplines"
    d.mkdir()
    (d / "defaults.yaml").write_text((REPO / "scenarios/disciplines/defaults.yaml").read_text())
    (d / "voip.yaml").write_text(
        "extends: defaults.yaml\n"
        "duration_s: 30\n"
        "workload:\n"
        "  flows: 2\n"
        "  groups:\n"
        "    voice: {count: 2, app: voip, onoff_dist: pareto, pareto_shape: 1.5, "
        "pkt_bytes: 120, rate_bps: 96000}\n"
        "series:\n"
        "  tail: {kind: droptail, params: {limit_pkts: 100}}\n"
    )
    return d


def test_udp_schedules_are_checked():
    p = first_plan(REPO / "scenarios/disciplines/cqaqm.yaml")
    voice = next(i for i, f in enumerate(p["flows"]) if f["app"] == "voip")
    assert plan.check(p) == []
    bad = mutated(p, lambda q: q["flows"][voice].update(packets=q["flows"][voice]["packets"] + 1))
    assert any(f"flows[{voice}].packets: expected" in x for x in plan.check(bad))
    bad = mutated(p, lambda q: q["flows"][voice]["on_periods_ns"].reverse())
    assert any("periods start at or after start_ns, are sorted" in x for x in plan.check(bad))
    bad = mutated(p, lambda q: q["flows"][voice].update(interval_ns=1))
    assert any("interval_ns: expected 20000000" in x for x in plan.check(bad))


def test_ppm_parameters_are_exact_decimals():
    thresh = next(p for p in core.disciplines()["ncq"]["params"] if p["name"] == "thresh")
    assert core.typed_value(thresh, "0.05") == 0.05 and core.typed_value(thresh, 1e-05) == 0.00001
    assert core.typed_value(thresh, 1) == 1
    assert core.param_text(thresh, 0.05) == "0.05" and core.param_text(thresh, 1e-05) == "0.00001"
    with pytest.raises(core.ParamError, match="at most 6 places"):
        core.typed_value(thresh, 0.0000001)


# --- topologies ----------------------------------------------------------------

DEMO = """\
paper: demo
duration_s: 10
tcp: {{variant: NewReno}}
topology: {topology}
workload:
  flows: 4
  groups:
    long: {{count: 2, seg_bytes: 1000, task_bytes: 100000}}
    cross: {{count: 2, from: {cross_from}, to: {cross_to}, seg_bytes: 1000, task_bytes: 50000,
            access_delay_s: 0.05}}
    web: {{app: web, arrival_rate_per_s: 5, size_mean_bytes: 10000, seg_bytes: 1000, hosts: 2, stop_s: 5}}
series:
  ncq: {{kind: ncq}}
seeds: 1
"""
PARKING = (
    "{kind: parking_lot, hops: 3, hop_rate_bps: 10000000, hop_delay_s: 0.005, "
    "access_rate_bps: 100000000, access_delay_s: 0.001}"
)
GRAPH = """
  kind: graph
  access_rate_bps: 100000000
  access_delay_s: 0.001
  routers: [a1, a2, core, b1]
  links:
    - {a: a1, b: core, rate_bps: 10000000, delay_s: 0.005, queue_a: series}
    - {a: a2, b: core, rate_bps: 10000000, delay_s: 0.005,
       queue_a: {kind: droptail, params: {limit_pkts: 50}}}
    - {id: exit, a: core, b: b1, rate_bps: 20000000, delay_s: 0.010, queue_a: series}
"""


@pytest.fixture
def demo_dir(tmp_path: Path) -> Path:
    d = tmp_path / "demo"
    d.mkdir()
    return d


def test_parking_lot_expands_to_a_chain_with_the_discipline_on_every_hop(demo_dir):
    f = demo_dir / "parking.yaml"
    f.write_text(DEMO.format(topology=PARKING, cross_from="r1", cross_to="r2"))
    p = first_plan(f)
    assert plan.check(p) == []
    assert [n["id"] for n in p["nodes"] if n["kind"] == "router"] == ["r0", "r1", "r2", "r3"]
    assert p["trace"]["queues"] == ["hop1:r0", "hop2:r1", "hop3:r2"]
    seeds = [link(p, f"hop{i}")["queues"][f"r{i - 1}"]["seed"] for i in (1, 2, 3)]
    assert seeds[0] == 1 and len(set(seeds)) == 3  # the run's seed, then streams of their own
    cross = [f for f in p["flows"] if f["group"] == "cross"]
    assert all(
        next(lk for lk in p["links"] if f["src"] in (lk["a"], lk["b"]))["delay_ns"] == 50_000_000
        for f in cross
    )
    web = [f for f in p["flows"] if f["group"] == "web"]
    assert len({f["src"] for f in web}) == 2  # hosts: 2
    # the emulator builds dumbbells only: refused before anything runs, naming the field
    refused = MininetBackend().refuse(p)
    assert refused and refused[0].startswith("links: the mininet backend builds a dumbbell")


def test_graph_topology_with_a_discipline_of_its_own(demo_dir):
    f = demo_dir / "graph.yaml"
    f.write_text(
        DEMO.format(topology=GRAPH, cross_from="a2", cross_to="b1")
        .replace("long: {", "long: {from: a1, to: b1, ")
        .replace("web: {", "web: {from: a1, to: b1, ")
    )
    p = first_plan(f)
    assert plan.check(p) == []
    assert p["trace"]["queues"] == ["a1-core:a1", "exit:core"]
    assert link(p, "a2-core")["queues"]["a2"]["kind"] == "droptail"
    assert {"node": "core", "dst": "10.4.0.0/16", "link": "exit"} in p["routes"]

    # routes that send a1's traffic for b1 back to a1 loop: named
    def send_back(q: dict) -> None:
        next(r for r in q["routes"] if r["node"] == "core" and r["dst"] == "10.4.0.0/16")["link"] = "a1-core"

    loop = mutated(p, send_back)
    assert any("the routes from s0 to d0 loop" in x for x in plan.check(loop)), plan.check(loop)
    # a group without from/to on a graph: named
    f.write_text(DEMO.format(topology=GRAPH, cross_from="a2", cross_to="b1"))
    with pytest.raises(sc.ScenarioError, match="groups.long: a graph topology needs `from` and `to`"):
        first_plan(f)
    f.write_text(
        DEMO.format(topology=GRAPH, cross_from="a2", cross_to="nowhere")
        .replace("long: {", "long: {from: a1, to: b1, ")
        .replace("web: {", "web: {from: a1, to: b1, ")
    )
    with pytest.raises(sc.ScenarioError, match="nowhere"):
        first_plan(f)


DEPLOY = """\
paper: demo
duration_s: 10
tcp: {variant: NewReno}
topology:
  kind: graph
  access_rate_bps: 100000000
  access_delay_s: 0.001
  routers: [a, b, c]
  undeployed: {kind: droptail, params: {limit_pkts: 50}}
  links:
    - {a: a, b: b, rate_bps: 10000000, delay_s: 0.005, queue_a: series, queue_b: series}
    - {a: b, b: c, rate_bps: 10000000, delay_s: 0.005, queue_a: series, queue_b: series}
workload:
  flows: 2
  groups:
    ftp: {count: {min: 1, max: 50}, from: a, to: c, seg_bytes: 1000, task_bytes: 100000}
    calls: {count: {min: 1, max: 10}, app: voip, from: a, to: c}
    fixed: {count: 2, from: b, to: c, seg_bytes: 1000, task_bytes: 100000}
series:
  none: {kind: droptail, params: {limit_pkts: 50}}
  first: {kind: ncq, routers: [a]}
  both: {kind: ncq, routers: [a, b]}
seeds: 12
"""


def test_counts_drawn_per_seed_are_reproducible_and_the_same_in_every_series(demo_dir):
    f = demo_dir / "deploy.yaml"
    f.write_text(DEPLOY)
    jobs = sc.expand(sc.load(f), "quick", ["ns3"])
    by_run = {(j.series, j.seed): collections_counter(j.spec) for j in jobs}
    for seed in range(1, 13):
        first = by_run[("none", seed)]
        # every series of a seed runs the same applications: runs pair
        assert by_run[("first", seed)] == first == by_run[("both", seed)]
        assert 1 <= first["ftp"] <= 50 and 1 <= first["calls"] <= 10 and first["fixed"] == 2
        # drawn from the group's own stream "<seed>/count/<group>"
        assert first["ftp"] == random.Random(f"{seed}/count/ftp").randint(1, 50)
        assert first["calls"] == random.Random(f"{seed}/count/calls").randint(1, 10)
    assert len({by_run[("none", s)]["ftp"] for s in range(1, 13)}) > 3  # they do vary
    # reproducible: expanding again draws the same
    again = sc.expand(sc.load(f), "quick", ["ns3"])
    assert [j.spec for j in again] == [j.spec for j in jobs]
    # the size checks bound every draw by the max
    doc = sc.resolve(sc.load(f), "quick")
    assert dict(plan.group_counts(doc["workload"], "w")) == {"ftp": 50, "calls": 10, "fixed": 2}
    assert dict(sc.estimate_packets(doc))["ftp"] == 50 * 100


def collections_counter(p: dict) -> dict[str, int]:
    out: dict[str, int] = {}
    for fl in p["flows"]:
        out[fl["group"]] = out.get(fl["group"], 0) + 1
    return out


def test_a_series_deploys_its_discipline_at_its_routers_only(demo_dir):
    f = demo_dir / "deploy.yaml"
    f.write_text(DEPLOY)
    jobs = {j.series: j.spec for j in sc.expand(sc.load(f), "quick", ["ns3"]) if j.seed == 1}
    kinds = {
        s: {
            (lk["id"], n): q["kind"]
            for lk in p["links"]
            for n, q in lk["queues"].items()
            if lk["id"] in ("a-b", "b-c")
        }
        for s, p in jobs.items()
    }
    assert set(kinds["none"].values()) == {"droptail"}
    assert kinds["first"] == {
        ("a-b", "a"): "ncq",
        ("a-b", "b"): "droptail",
        ("b-c", "b"): "droptail",
        ("b-c", "c"): "droptail",
    }
    assert kinds["both"] == {
        ("a-b", "a"): "ncq",
        ("a-b", "b"): "ncq",
        ("b-c", "b"): "ncq",
        ("b-c", "c"): "droptail",
    }
    # only the queues running the series' discipline are traced; undeployed ones are typed and seeded
    assert jobs["first"]["trace"]["queues"] == ["a-b:a"]
    undeployed = link(jobs["first"], "a-b")["queues"]["b"]
    assert undeployed["params"] == {"limit_pkts": 50} and "seed" in undeployed
    for p in jobs.values():
        assert plan.check(p) == []


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (
            lambda s: s.replace("{min: 1, max: 10}", "{min: 10, max: 1}"),
            "groups.calls.count: expected min <= max",
        ),
        (lambda s: s.replace("{min: 1, max: 10}", "{min: 1}"), "groups.calls.count"),
        (lambda s: s.replace("{min: 1, max: 10}", "{min: 1, max: 10, mean: 5}"), "groups.calls.count"),
        (lambda s: s.replace("routers: [a]}", "routers: [z]}"), "series.first.routers.0: no router 'z'"),
        (
            lambda s: s.replace("  undeployed: {kind: droptail, params: {limit_pkts: 50}}\n", ""),
            "topology.undeployed",
        ),
        (
            lambda s: s.replace("{kind: ncq, routers: [a]}", "{kind: ncq, routers: [a], rate: 1}"),
            "series.first",
        ),
    ],
)
def test_counts_and_deployment_errors_name_the_field(demo_dir, edit, message):
    f = demo_dir / "deploy.yaml"
    f.write_text(edit(DEPLOY))
    with pytest.raises(sc.ScenarioError, match=re.escape(message)):
        sc.check_resolved(sc.load(f), "quick")


def test_mininet_refuses_what_it_cannot_emulate(dumbbell):
    p = mutated(dumbbell, lambda q: q.update(backend="mininet"))
    assert MininetBackend().refuse(p) == []
    p = mutated(p, lambda q: link(q, "s1-L").update(delay_ns=5_000_000))
    assert any("must all be equal" in r for r in MininetBackend().refuse(p))
    fifo = {"kind": "ns3-fifo", "params": {"limit_pkts": 100}}
    p = mutated(dumbbell, lambda q: link(q, "bottleneck")["queues"].update(L=fifo))
    refused = MininetBackend().refuse(p)
    assert any("ns3-fifo is ns-3's own queue disc: only the ns3 backend has it" in r for r in refused)


# --- run-job: nothing starts on a bad plan ----------------------------------------


def test_run_job_refuses_a_bad_plan_before_the_runner_starts(dumbbell, tmp_path):
    marker = tmp_path / "runner-started"
    runner = tmp_path / "fake-runner"
    runner.write_text(f"#!/bin/sh\ntouch {marker}\nexit 1\n")
    runner.chmod(runner.stat().st_mode | stat.S_IEXEC)
    bad = mutated(dumbbell, lambda p: link(p, "bottleneck").update(b="X"))
    job = tmp_path / "job.json"
    job.write_text(json.dumps(bad))
    out = tmp_path / "results" / "run"
    env = dict(os.environ, QLAB_NS3_RUNNER=str(runner))
    proc = subprocess.run(
        [sys.executable, "-m", "qlab", "run-job", str(job), "--out", str(out)],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=env,
        check=False,
    )
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "not a valid plan" in proc.stderr and ".b: no node 'X'" in proc.stderr
    assert not marker.exists() and not (tmp_path / "results").exists()
    job.write_text("{not json")
    assert main(["run-job", str(job), "--out", str(out)]) == 2


# --- the finaliser: raw facts to trace tables, the same for every backend --------


def tiny_plan() -> dict:
    """Three flows: a bulk task, a bulk task that never finishes, a cbr flow."""
    p = first_plan(REPO / "scenarios/disciplines/cqaqm.yaml")
    flows = [f for f in p["flows"] if f["app"] == "cbr"][:1] + [f for f in p["flows"] if f["app"] == "voip"][
        :2
    ]
    flows[1] = {
        k: v
        for k, v in flows[1].items()
        if k not in ("pkt_bytes", "rate_bps", "interval_ns", "on_periods_ns", "packets")
    }
    flows[1].update(app="bulk", seg_bytes=1000, bytes=50_000, start_ns=1_000_000_000)
    flows[2] = {
        k: v
        for k, v in flows[2].items()
        if k not in ("pkt_bytes", "rate_bps", "interval_ns", "on_periods_ns", "packets")
    }
    flows[2].update(app="bulk", seg_bytes=1000, bytes=80_000, start_ns=2_000_000_000)
    flows[0].update(
        on_periods_ns=[[500_000_000, 2_500_000_000]],
        start_ns=500_000_000,
        interval_ns=plan.udp_interval_ns(flows[0]["pkt_bytes"], flows[0]["rate_bps"]),
    )
    flows[0]["packets"] = plan.udp_packets(flows[0]["on_periods_ns"], flows[0]["interval_ns"])
    p["flows"] = flows
    p["trace"]["packets"] = False  # the fixture's facts hold no packet events, whatever the scenario traces
    return p


def write_raw(d: Path, rows: list[list], queues: list[list] | None = None) -> None:
    d.mkdir(parents=True, exist_ok=True)
    cols = [c.name for c in traces.RAW_TABLES["flow_facts"]["columns"]]
    text = (
        ",".join(cols)
        + "\n"
        + "".join(",".join("NA" if v is None else str(v) for v in r) + "\n" for r in rows)
    )
    (d / "flow_facts.csv").write_text(text)  # rows in the caller's order (sorted, or a test)
    qcols = [c.name for c in traces.RAW_TABLES["queue_facts"]["columns"]]
    queues = (
        queues
        if queues is not None
        else [[0, "bottleneck:L", 0, 0, 0, 0, 0, 0], [0, "bottleneck:L", 1, 0, 0, 0, 0, 0]]
    )
    (d / "queue_facts.csv").write_text(
        ",".join(qcols) + "\n" + "".join(",".join(map(str, r)) + "\n" for r in queues)
    )


def test_finalise_derives_completion_fct_goodput_and_losses(tmp_path):
    p = tiny_plan()
    cbr, done, late = p["flows"]
    payload = cbr["pkt_bytes"] - 28
    n = cbr["packets"]
    rows = sorted(
        [
            [cbr["flow_id"], n, 0, n - 2, (n - 2) * payload, 510_000_000, 2_490_000_000, 3 * (n - 2), 9],
            [done["flow_id"], 60, 10, None, 50_000, 1_100_000_000, 3_000_000_000, None, None],
            [late["flow_id"], 30, 0, None, 20_000, 2_200_000_000, 3_900_000_000, None, None],
        ]
    )
    write_raw(tmp_path, rows)
    facts = {"end_ns": 4_000_000_000}
    problems, tables = finalise.check_raw(tmp_path, p, facts)
    assert problems == []
    assert finalise.finalise(tmp_path, p, facts, tables) is False
    header, out = traces.read_csv_gz(tmp_path / "flows.csv.gz")
    row = {r[0]: dict(zip(header, r, strict=True)) for r in out}
    u, d, lt = row[str(cbr["flow_id"])], row[str(done["flow_id"])], row[str(late["flow_id"])]
    # UDP: done 1 s (udp_drain_ns) after its last period ended at 2.5 s; ends there
    assert (u["completed"], u["end_s"], u["fct_s"]) == ("1", "2.500000000", "NA")
    assert (u["rx_packets"], u["lost_packets"], u["bytes_goal"]) == (str(n - 2), "2", str(n * payload))
    assert (u["delay_mean_s"], u["delay_max_s"]) == ("0.000000003", "0.000000009")
    # bulk, complete: end is when the last byte arrived; goodput over its lifetime
    assert (d["completed"], d["end_s"], d["fct_s"]) == ("1", "3.000000000", "2.000000000")
    assert d["goodput_bps"] == "200000.000000" and (d["tx_packets"], d["retx_packets"]) == ("60", "10")
    # bulk, incomplete: no end, goodput up to the run's end
    assert (lt["completed"], lt["end_s"], lt["fct_s"]) == ("0", "NA", "NA")
    assert lt["goodput_bps"] == f"{8 * 20_000 / 2.0:.6f}"
    # a run that ends (stop_when_done cannot, but the duration can) before the
    # UDP flow's drain: it is not complete, and its goodput runs to the end
    next(r for r in rows if r[0] == late["flow_id"])[6] = 3_300_000_000
    write_raw(tmp_path, rows)
    problems, tables = finalise.check_raw(tmp_path, p, {"end_ns": 3_400_000_000})
    assert problems == []
    finalise.finalise(tmp_path, p, {"end_ns": 3_400_000_000}, tables)
    header, out = traces.read_csv_gz(tmp_path / "flows.csv.gz")
    u = next(dict(zip(header, r, strict=True)) for r in out if r[0] == str(cbr["flow_id"]))
    assert (u["completed"], u["end_s"]) == ("0", "NA")
    assert u["goodput_bps"] == f"{8 * (n - 2) * payload / 2.9:.6f}"


@pytest.mark.parametrize(
    "mutate, expect",
    [
        (lambda r: r["done"].__setitem__(2, 99), "retx_packets exceeds tx_packets"),
        (lambda r: r["done"].__setitem__(4, 60_000), "rx_bytes 60000 exceeds the flow's 50000 bytes"),
        (lambda r: r["cbr"].__setitem__(3, r["cbr"][1] + 1), "rx_packets exceeds tx_packets"),
        (lambda r: r["cbr"].__setitem__(4, 1), "rx_bytes != rx_packets"),
        (lambda r: r["cbr"].__setitem__(1, 10**6), "exceeds the"),
        (lambda r: r["done"].__setitem__(3, 5), "NA for TCP flows"),
        (lambda r: r["late"].__setitem__(0, 999), "expected one row per flow of the plan"),
        (lambda r: r["done"].__setitem__(6, 5_000_000_000), "last_rx_ns after the run's end"),
        (lambda r: r["done"].__setitem__(5, None), "first_rx_ns and last_rx_ns are given together"),
        (lambda r: r.pop("late"), "expected one row per flow of the plan (3), got 2 rows"),
    ],
)
def test_raw_facts_that_break_the_contract_are_caught(tmp_path, mutate, expect):
    p = tiny_plan()
    cbr, done, late = p["flows"]
    n, payload = cbr["packets"], cbr["pkt_bytes"] - 28
    rows = {
        "cbr": [cbr["flow_id"], n, 0, n, n * payload, 510_000_000, 2_490_000_000, 3 * n, 9],
        "done": [done["flow_id"], 60, 10, None, 50_000, 1_100_000_000, 3_000_000_000, None, None],
        "late": [late["flow_id"], 30, 0, None, 20_000, 2_200_000_000, 3_900_000_000, None, None],
    }
    mutate(rows)
    write_raw(tmp_path, sorted(rows.values(), key=lambda r: r[0]))
    problems, _ = finalise.check_raw(tmp_path, p, {"end_ns": 4_000_000_000})
    assert any(expect in x for x in problems), problems


def test_raw_queue_facts_are_checked(tmp_path):
    p = tiny_plan()
    cbr, done, late = p["flows"]
    rows = sorted(
        [f["flow_id"], 0, 0, 0 if f["app"] == "cbr" else None, 0, None, None, None, None]
        for f in (cbr, done, late)
    )
    write_raw(tmp_path, rows, queues=[[0, "elsewhere:X", 0, 0, 0, 0, 0, 0]])
    problems, _ = finalise.check_raw(tmp_path, p, {"end_ns": 1})
    assert any("queue 'elsewhere:X' is not in the plan's trace.queues" in x for x in problems)
    write_raw(
        tmp_path, rows, queues=[[0, "bottleneck:L", 0, 0, 0, 5, 0, 0], [1, "bottleneck:L", 0, 0, 0, 4, 0, 0]]
    )
    problems, _ = finalise.check_raw(tmp_path, p, {"end_ns": 1})
    assert any("band 0: enqueued_pkts decreases at time 1" in x for x in problems), problems
    problems, _ = finalise.check_raw(tmp_path, p, {"end_ns": "soon"})
    assert any("end_ns: expected a non-negative integer" in x for x in problems)


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda p: p.update(duration_ns=float(p["duration_ns"])), "duration_ns: expected integer"),
        (lambda p: p["flows"][0].update(start_ns=float("nan")), "flows[0].start_ns: expected"),
        (lambda p: p["links"][0].update(delay_ns=float("inf")), "links[0].delay_ns: expected"),
    ],
)
def test_plan_numbers_are_strict(dumbbell, change, message):
    """The compiled validator refuses 2.0 where an integer is due (JSON
    Schema takes it), and NaN or infinity anywhere; the message names the field."""
    doc = copy.deepcopy(dumbbell)
    change(doc)
    problems = plan.check(doc)
    assert any(message in p for p in problems), problems


def test_an_integral_float_where_a_number_is_due_takes_the_fast_path():
    """A Poisson flow's mean interval is a number and often integral (91000000.0):
    such a plan is accepted by the compiled validator alone, without jsonschema."""
    doc = first_plan(REPO / "scenarios/validation/mg1.yaml")
    intervals = [f["mean_interval_ns"] for f in doc["flows"]]
    assert any(isinstance(x, float) and x.is_integer() for x in intervals), intervals
    assert plan.schema_problems(doc) == []
    code = (
        "import json, sys; from qlab import plan as p; "
        f"doc = json.loads({json.dumps(json.dumps(doc))}); "
        "assert p.schema_problems(doc) == []; print('jsonschema' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO)
    assert out.stdout.strip() == "False"

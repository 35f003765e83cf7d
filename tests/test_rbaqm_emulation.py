"""The RB-AQM paper's Scenarios 1A and 1B on the mininet backend (issue 16,
item 7): scenarios/rbaqm/emu.yaml runs Table 1's classes, switched on and
off, in ns-3 and in Mininet from the same plans, within the quick profile's
emulation budget. The paper's own scenario (rbaqm/1) stays ns-3 only: its
one-way TCP without a handshake is ns-2's, which Linux cannot run."""

from __future__ import annotations

import copy

from qlab import scenario as sc
from qlab.backends.mininet import MininetBackend

from .conftest import REPO

RBAQM = REPO / "scenarios" / "rbaqm"
# The quick profile's emulation budget for these scenarios (the brief):
# at most 8 Mininet runs, 90 s of added wall time (docs/benchmarks.md).
MAX_QUICK_MININET_RUNS = 8


def test_mininet_refuses_scenario_1_only_for_its_one_way_tcp():
    """rbaqm/1 as the paper ran it: refused for tcp.handshake: false alone;
    with Linux's handshake, its stop times (bulk flows stopped mid-transfer)
    are something the emulator runs."""
    jobs = sc.expand(sc.load(RBAQM / "1.yaml"), "quick")
    doc = next(j for j in jobs if j.seed == 1 and j.series == "rb").spec
    problems = MininetBackend().refuse(doc)
    assert len(problems) == 1 and problems[0].startswith("tcp.handshake: false"), problems
    doc = copy.deepcopy(doc)
    doc["tcp"]["handshake"] = True
    assert any("stop_ns" in f for f in doc["flows"])
    assert MininetBackend().refuse(doc) == []


def test_emu_scenario_runs_1a_and_1b_on_both_backends_from_the_same_plans():
    for profile in ("quick", "paper"):
        jobs = sc.expand(sc.load(RBAQM / "emu.yaml"), profile)
        by_backend: dict[str, dict] = {}
        for j in jobs:
            by_backend.setdefault(j.spec["backend"], {})[(j.series, j.point, j.seed)] = j.spec
        assert set(by_backend) == {"ns3", "mininet"}
        assert by_backend["ns3"].keys() == by_backend["mininet"].keys()
        assert {k[0] for k in by_backend["mininet"]} == {"rb", "wred"}
        for key, plan in by_backend["mininet"].items():
            assert MininetBackend().refuse(plan) == [], key
            # the classes are switched off mid-transfer, as in Table 1
            stops = {f["group"]: f.get("stop_ns") for f in plan["flows"]}
            assert all(stops.values()) and len(set(stops.values())) == 4, stops
            # run by run the same job: only the backend differs
            twin = copy.deepcopy(by_backend["ns3"][key])
            twin["backend"] = "mininet"
            assert twin == plan, key
        if profile == "quick":
            assert len(by_backend["mininet"]) <= MAX_QUICK_MININET_RUNS
        else:  # the paper profile runs Table 1's times
            assert max(p["duration_ns"] for p in by_backend["mininet"].values()) == 220 * 10**9

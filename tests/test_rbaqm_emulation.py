"""The RB-AQM paper's Scenarios 1A and 1B (issue 16, item 7) are not run on
the mininet backend: its refusal names what the emulator lacks, and the
emulation page says so (reports/emulation.qmd, "RB-AQM Scenarios 1A and
1B"). If the emulator learns to stop a bulk flow mid-transfer, this test
fails: the scenarios can then list mininet and the page must change."""

from __future__ import annotations

import copy

from qlab import scenario as sc
from qlab.backends.mininet import MininetBackend

from .conftest import REPO


def scenario1_plan() -> dict:
    jobs = sc.expand(sc.load(REPO / "scenarios" / "rbaqm" / "1.yaml"), "quick")
    return next(j for j in jobs if j.seed == 1 and j.series == "rb").spec


def test_mininet_refuses_scenario_1_naming_the_mid_transfer_stop():
    """First the one-way TCP without a handshake (ns-2's, the paper's
    simulator's model, ns-3's only); with Linux's handshake instead, the
    stop times of Table 1 (a bulk flow stopped mid-transfer)."""
    doc = scenario1_plan()
    assert any(p.startswith("tcp.handshake: false") for p in MininetBackend().refuse(doc))
    doc = copy.deepcopy(doc)
    doc["tcp"]["handshake"] = True
    problems = MininetBackend().refuse(doc)
    stops = [p for p in problems if p.startswith("flows[") and ".stop_ns:" in p]
    assert stops and "does not yet stop a bulk flow mid-transfer" in stops[0], problems


def test_the_mid_transfer_stop_is_what_the_emulator_lacks():
    """With Linux's handshake and no class switched off, the same plan is
    one the emulator runs: the stop times of Table 1 are the missing part."""
    doc = copy.deepcopy(scenario1_plan())
    doc["tcp"]["handshake"] = True
    for flow in doc["flows"]:
        flow.pop("stop_ns", None)
    assert MininetBackend().refuse(doc) == []

"""Poisson arrivals of calls (a UDP group's `arrivals`, qlab/plan.py
call_arrivals): drawn from the run's seed, so every series and backend
replays the same calls; the counts and holding times have the laws asked for."""

from __future__ import annotations

import math
import statistics
from pathlib import Path

import pytest

from qlab import backends, plan
from qlab import scenario as sc
from qlab.cli import main

from .conftest import REPO

CALLS = """\
extends: defaults.yaml
duration_s: 60
workload:
  flows: 40
  groups:
    calls: {count: 40, app: voip, stop_s: 59,
            arrivals: {process: poisson, rate_per_s: 1.0, holding_mean_s: 10}}
series:
  tail: {kind: droptail, params: {limit_pkts: 100}}
  other: {kind: droptail, params: {limit_pkts: 50}}
seeds: 3
"""


@pytest.fixture
def calls_file(tmp_path: Path) -> Path:
    d = tmp_path / "disciplines"
    d.mkdir()
    (d / "defaults.yaml").write_text((REPO / "scenarios/disciplines/defaults.yaml").read_text())
    f = d / "calls.yaml"
    f.write_text(CALLS)
    return f


def flows_by_run(f: Path) -> dict[tuple[str, int], list[dict]]:
    return {(j.series, j.seed): j.spec["flows"] for j in sc.expand(sc.load(f), "quick", ["ns3"])}


def test_the_same_seed_replays_the_same_calls_in_every_series(calls_file):
    runs = flows_by_run(calls_file)
    again = flows_by_run(calls_file)
    assert runs == again  # reproducible
    for seed in (1, 2, 3):
        assert runs[("tail", seed)] == runs[("other", seed)]  # runs pair by seed
        flows = runs[("tail", seed)]
        starts = [f["start_ns"] for f in flows]
        assert starts == sorted(starts) and len(set(starts)) == 40  # arrivals, one call each
        for f in flows:
            assert f["on_periods_ns"][0][0] == f["start_ns"]
            assert f["packets"] == plan.udp_packets(f["on_periods_ns"], f["interval_ns"])
    assert runs[("tail", 1)] != runs[("tail", 2)]  # and seeds differ
    # the draws are the plan's, from the streams the docs name
    calls = plan.call_arrivals(
        "calls", {"arrivals": {"process": "poisson", "rate_per_s": 1.0, "holding_mean_s": 10}}, 2, 40, "w"
    )
    assert [plan.ns(t) for t, _ in calls] == [f["start_ns"] for f in runs[("tail", 2)]]
    # each call hangs up after its holding time (or at the group's stop)
    for (_start, end), f in zip(calls, runs[("tail", 2)], strict=True):
        assert f["on_periods_ns"][-1][1] <= plan.ns(min(end, 59.0))


def test_a_new_holding_time_leaves_the_arrivals_alone(calls_file):
    before = flows_by_run(calls_file)[("tail", 1)]
    calls_file.write_text(CALLS.replace(", holding_mean_s: 10", ""))
    after = flows_by_run(calls_file)[("tail", 1)]
    assert [f["start_ns"] for f in before] == [f["start_ns"] for f in after]
    # without a holding time every call talks until the group's stop
    assert sum(f["packets"] for f in after) > sum(f["packets"] for f in before)
    assert max(f["on_periods_ns"][-1][1] for f in after) > 50 * 10**9


def test_arrival_counts_are_poisson_and_holding_times_exponential():
    """A fixed seed; bounds at about four standard errors of the laws asked
    for, so a grid of arrivals (dispersion 0) or a constant holding time
    (coefficient of variation 0) fails."""
    rate, window_s, windows = 5.0, 1.0, 400
    spec = {"arrivals": {"process": "poisson", "rate_per_s": rate, "holding_mean_s": 30.0}}
    calls = plan.call_arrivals("calls", spec, 7, 2200, "w")
    starts = [t for t, _ in calls]
    assert starts[-1] > windows * window_s
    counts = [0] * windows
    for t in starts:
        if t < windows * window_s:
            counts[int(t // window_s)] += 1
    lam = rate * window_s
    mean = statistics.fmean(counts)
    assert abs(mean - lam) < 4 * math.sqrt(lam / windows)
    # index of dispersion: variance / mean = 1 for Poisson counts
    dispersion = statistics.variance(counts) / mean
    assert abs(dispersion - 1) < 4 * math.sqrt(2 / (windows - 1))
    # P(N = 0) = exp(-lambda)
    zeros = counts.count(0) / windows
    p0 = math.exp(-lam)
    assert abs(zeros - p0) < 4 * math.sqrt(p0 * (1 - p0) / windows) + 1 / windows
    holds = [end - start for start, end in calls]
    assert abs(statistics.fmean(holds) - 30.0) < 4 * 30.0 / math.sqrt(len(holds))
    cv = statistics.stdev(holds) / statistics.fmean(holds)
    assert abs(cv - 1) < 0.1


@pytest.mark.parametrize(
    "edit, message",
    [
        # 40 calls at 1/s cannot all arrive within 10 s
        (lambda s: s.replace("stop_s: 59", "stop_s: 10"), "workload.groups.calls.arrivals: call "),
        (
            lambda s: s.replace("app: voip", "app: bulk, seg_bytes: 1000, task_bytes: 1000"),
            "workload.groups.calls.arrivals: not a field of app bulk",
        ),
        (
            lambda s: s.replace("process: poisson", "process: uniform"),
            "workload.groups.calls.arrivals.process",
        ),
        (
            lambda s: s.replace("rate_per_s: 1.0", "rate_per_s: 0"),
            "workload.groups.calls.arrivals.rate_per_s",
        ),
        (
            lambda s: s.replace("app: voip,", "app: voip, start_spacing_s: 1,"),
            "workload.groups.calls.start_spacing_s",
        ),
    ],
)
def test_bad_arrivals_are_refused_naming_the_field(calls_file, edit, message, capsys):
    calls_file.write_text(edit(CALLS))
    assert main(["validate", str(calls_file)]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_calls_are_plain_udp_flows_every_backend_takes(calls_file):
    """The plan carries nothing new for arrivals (docs/jobs.md): each call is
    a voip flow with its start and on-periods: ns3, ns2, mininet, mnkernel and the
    testbed all take a plan of calls (on the default dumbbell of
    scenarios/disciplines/; the testbed's machines hold each plan host's
    own address, so the flows' reused ports are no obstacle)."""
    spec = sc.expand(sc.load(calls_file), "quick", ["ns3"])[0].spec
    assert plan.check(spec) == []
    for name in ("ns3", "ns2", "mininet", "testbed", "mnkernel"):
        assert backends.get(name).refuse({**spec, "backend": name}) == [], name

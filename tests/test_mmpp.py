"""The CQ-AQM paper's traffic in the job contract (docs/jobs.md): app
poisson with a Markov-modulated rate (`mmpp`: a mean gap per on-period) and
exponentially distributed datagram sizes (`size_mean_bytes`), qlab's
reference draws, the ns-3 runner's (which must send the same datagrams at
the same instants), the scenario fields, a sweep that sets two fields, and
the backends that refuse it."""

from __future__ import annotations

import copy
import csv
import gzip
import random
import statistics
import subprocess
import sys

import pytest
import yaml

from qlab import paths, plan
from qlab import scenario as sc
from qlab.backends.mininet import MininetBackend
from qlab.backends.ns2 import Ns2Backend

from .conftest import REPO, needs
from .small_plans import MS, S, poisson_flow, small_dumbbell, write_plan

MIXED = REPO / "scenarios" / "cqaqm" / "mixed.yaml"
# the paper's bursty data source: 460 us / 46 ms gaps, leaving after a datagram with 0.011 / 0.091
PAPER_MMPP = {"intervals_s": [0.00046, 0.046], "leave_prob": [0.011, 0.091]}


def sized_mmpp_flow(flow_id: int, seed: int) -> dict:
    """A Markov-modulated poisson flow with exponential sizes, drawn as qlab.plan does."""
    states = plan.mmpp_periods(PAPER_MMPP, 0.1, 3.0, random.Random(seed))
    flow = poisson_flow(
        flow_id, mean_ns=1.0, seed=seed, periods_ns=[[round(a * 1e9), round(b * 1e9)] for a, b, _ in states]
    )
    del flow["mean_interval_ns"]
    flow.update(
        pkt_bytes=1500,
        period_mean_intervals_ns=[g * 1e9 for _, _, g in states],
        size_mean_bytes=100.0,
        size_seed=seed * 7 + 1,
    )
    return flow


def dumbbell(flows: list[dict]) -> dict:
    doc = small_dumbbell("ns3", duration_ns=5 * S, bulk_bytes=1000, packets=True, limit_pkts=100000)
    doc["flows"] = flows
    return doc


# --- the reference draws -------------------------------------------------------


def test_mmpp_rate_and_sojourns_are_the_papers():
    """Per-datagram leaving probabilities become exponential sojourns of mean
    gap / probability; the long-run rate is about 186 datagrams/s, 18.6 kB/s
    at 100 bytes (the paper's 'roughly 20 KBytes per second')."""
    assert plan.mmpp_sojourn_s(PAPER_MMPP) == pytest.approx([0.00046 / 0.011, 0.046 / 0.091])
    rate = 1 / plan.mmpp_mean_interval_s(PAPER_MMPP)
    assert rate == pytest.approx((1 / 0.011 + 1 / 0.091) / (0.00046 / 0.011 + 0.046 / 0.091))
    assert 180 < rate < 190


def test_mmpp_periods_alternate_back_to_back_with_the_sojourn_means():
    states = plan.mmpp_periods(PAPER_MMPP, 1.0, 5000.0, random.Random(3))
    assert states[0][0] == 1.0 and states[-1][1] == 5000.0
    assert all(a[1] == b[0] for a, b in zip(states, states[1:], strict=False))  # back to back
    assert all(a[2] != b[2] for a, b in zip(states, states[1:], strict=False))  # alternating
    for gap, mean in zip(PAPER_MMPP["intervals_s"], plan.mmpp_sojourn_s(PAPER_MMPP), strict=True):
        lengths = [e - s for s, e, g in states[:-1] if g == gap]
        assert statistics.mean(lengths) == pytest.approx(mean, rel=0.1)
    # the first state from the stationary time shares: bursty about 7.6% of the time
    firsts = [plan.mmpp_periods(PAPER_MMPP, 0.0, 1.0, random.Random(k))[0][2] for k in range(2000)]
    assert firsts.count(0.00046) / 2000 == pytest.approx(0.0764, abs=0.02)


def test_exponential_sizes_have_the_mean_and_bounds():
    sizes = plan.exponential_sizes(100.0, 1500, 42)
    draws = [next(sizes) for _ in range(200_000)]
    assert min(draws) == 40 and max(draws) <= 1500
    assert statistics.mean(draws) == pytest.approx(100, rel=0.01)
    # shifted exponential: P(size > 40 + 60 x) = e^-x
    assert sum(d > 100 for d in draws) / len(draws) == pytest.approx(0.3679, abs=0.01)
    capped = plan.exponential_sizes(1000.0, 200, 1)
    assert max(next(capped) for _ in range(1000)) == 200


def test_poisson_times_take_a_mean_per_period():
    """With one mean per period the gaps follow each period's; one mean for
    all is the same stream as a list of that mean."""
    periods = [[0, 10**9], [10**9, 2 * 10**9]]
    one = list(plan.poisson_times(1e6, 5, periods))
    assert one == list(plan.poisson_times([1e6, 1e6], 5, periods))
    two = list(plan.poisson_times([1e6, 1e8], 5, periods))
    assert 900 < sum(t < 10**9 for t in two) < 1100 and 3 < sum(t >= 10**9 for t in two) < 25


# --- scenarios and plans -------------------------------------------------------


def test_mixed_scenario_plans_the_papers_sources():
    jobs = [j for j in sc.expand(sc.load(MIXED), "test", ["ns3"]) if j.series == "cqaqm"]
    flows = jobs[0].spec["flows"]
    groups = {g: [f for f in flows if f["group"] == g] for g in {f["group"] for f in flows}}
    # the sweep's `also`: both p=0 background groups get the point's count
    assert len(groups["voice-low"]) == len(groups["data-low"]) == jobs[0].spec["point_values"]["pairs"]
    data = groups["data-high"][0]
    assert data["size_mean_bytes"] == 100 and data["pkt_bytes"] == 1500 and "size_seed" in data
    assert len(data["period_mean_intervals_ns"]) == len(data["on_periods_ns"]) > 1
    assert set(data["period_mean_intervals_ns"]) == {460000.0, 46000000.0}
    voice = groups["voice-high"][0]
    assert (voice["pkt_bytes"], voice["interval_ns"], voice["tos"]) == (68, 20 * MS, 1 << 5 | 1 << 3)
    assert plan.check(jobs[0].spec) == []


def test_plan_check_refuses_inconsistent_fields():
    doc = dumbbell([sized_mmpp_flow(0, 3)])
    assert plan.check(doc) == []
    bad = copy.deepcopy(doc)
    bad["flows"][0]["period_mean_intervals_ns"].pop()
    assert any("period_mean_intervals_ns: expected one per on-period" in p for p in plan.check(bad))
    bad = copy.deepcopy(doc)
    bad["flows"][0]["size_mean_bytes"] = 2000
    assert any("size_mean_bytes" in p for p in plan.check(bad))
    bad = copy.deepcopy(doc)
    del bad["flows"][0]["size_seed"]
    assert any("size_seed" in p for p in plan.check(bad))
    bad = copy.deepcopy(doc)
    bad["flows"][0]["mean_interval_ns"] = 1e6  # and period means: one of the two
    assert plan.check(bad)


def test_other_backends_refuse_it_naming_flow_and_backend():
    doc = dumbbell([sized_mmpp_flow(0, 3)])
    assert any("flow 0" in r and "ns3 backend does" in r for r in Ns2Backend().refuse(doc))
    # mininet's sender draws it (qlab_traffic.py) while its datagrams fit the MTU
    assert not any("flow 0" in r for r in MininetBackend().refuse(doc))
    doc["flows"][0]["pkt_bytes"] = 9000
    assert any("flow 0" in r and "MTU" in r for r in MininetBackend().refuse(doc))


def test_size_mean_is_refused_outside_poisson_and_out_of_range(tmp_path):
    (tmp_path / "cqaqm").mkdir()
    (tmp_path / "cqaqm" / "defaults.yaml").write_text((MIXED.parent / "defaults.yaml").read_text())
    for group, field, value, want in (
        ("voice-low", "size_mean_bytes", 100, "voice-low"),
        ("data-low", "size_mean_bytes", 2000, "data-low.size_mean_bytes"),
        ("voice-low", "mmpp", PAPER_MMPP, "voice-low"),
    ):
        doc = copy.deepcopy(sc.load(MIXED).doc)
        doc["workload"]["groups"][group][field] = value
        path = tmp_path / "cqaqm" / "bad.yaml"
        path.write_text(yaml.safe_dump(doc))
        with pytest.raises(sc.ScenarioError) as err:
            sc.check_resolved(sc.load(path), "test")
        assert want in str(err.value), (group, field, str(err.value))


# --- the ns-3 runner sends the same datagrams ------------------------------------


@needs(paths.NS3_RUNNER)
def test_ns3_runner_sends_the_reference_sizes_at_the_reference_times(tmp_path):
    flows = [sized_mmpp_flow(0, 11)]
    job = write_plan(tmp_path, dumbbell(flows))
    out = tmp_path / "out"
    subprocess.run(
        [sys.executable, "-m", "qlab", "run-job", str(job), "--out", str(out)],
        check=True,
        capture_output=True,
        cwd=REPO,
    )
    f = flows[0]
    want_t = list(plan.poisson_times(f["period_mean_intervals_ns"], f["poisson_seed"], f["on_periods_ns"]))
    sizes = plan.exponential_sizes(f["size_mean_bytes"], f["pkt_bytes"], f["size_seed"])
    want_len = [next(sizes) for _ in want_t]
    with gzip.open(out / "flows.csv.gz", "rt") as fh:
        row = next(csv.DictReader(fh))
    assert int(row["tx_packets"]) == len(want_t) == int(row["rx_packets"]) > 100
    assert int(row["bytes_goal"]) == sum(n - 28 for n in want_len) == int(row["bytes_delivered"])
    with gzip.open(out / "packets.csv.gz", "rt") as fh:
        arrived = [r for r in csv.DictReader(fh) if r["event"] == "enq" and r["flow_id"] == "0"]
    assert [int(r["len_bytes"]) for r in arrived] == want_len
    # each arrives after its send, never before (the access link's 1 ms and its transmission)
    assert all(float(r["time_s"]) >= (t + MS) / 1e9 - 2e-9 for r, t in zip(arrived, want_t, strict=True))
    assert all(float(r["time_s"]) < (t + 2 * MS) / 1e9 for r, t in zip(arrived, want_t, strict=True))

"""The job contract's Poisson packet source (app `poisson`, docs/jobs.md):
qlab's reference generator, the ns-3 runner's (which must send at the same
instants), the scenario fields that set it, and the backends that refuse it."""

from __future__ import annotations

import copy
import csv
import gzip
import itertools
import math
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

MG1 = REPO / "scenarios" / "validation" / "mg1.yaml"


def poisson_dumbbell(flows: list[dict]) -> dict:
    doc = small_dumbbell("ns3", duration_ns=10 * S, bulk_bytes=1000, packets=True, limit_pkts=1000)
    doc["flows"] = flows
    return doc


# --- the reference generator ---------------------------------------------------


def test_reference_generator_is_poisson():
    """Gaps of mean `mean`, exponential (CV 1, P(gap > mean) = 1/e), and the
    same stream for the same seed."""
    times = list(plan.poisson_times(1_000_000.0, 7, [[0, 20_000 * 1_000_000]]))
    gaps = [b - a for a, b in zip([0, *times[:-1]], times, strict=True)]
    mean = sum(gaps) / len(gaps)
    sd = math.sqrt(sum((g - mean) ** 2 for g in gaps) / (len(gaps) - 1))
    assert len(times) == pytest.approx(20_000, rel=0.03)
    assert mean == pytest.approx(1e6, rel=0.03) and sd / mean == pytest.approx(1.0, abs=0.03)
    assert sum(g > 1e6 for g in gaps) / len(gaps) == pytest.approx(math.exp(-1), abs=0.015)
    assert times == list(plan.poisson_times(1_000_000.0, 7, [[0, 20_000 * 1_000_000]]))
    assert times[:50] != list(plan.poisson_times(1_000_000.0, 8, [[0, 20_000 * 1_000_000]]))[:50]


def test_reference_generator_periods():
    """One stream across the periods: each period's gaps count from its start,
    and the draw that lands past a period's end is spent."""
    one = list(plan.poisson_times(1000.0, 3, [[0, 10**9]]))
    assert all(0 < t < 10**9 for t in one) and one == sorted(one)
    two = list(plan.poisson_times(1000.0, 3, [[0, 5000], [10**6, 10**6 + 5000]]))
    first = [t for t in two if t < 5000]
    assert first == [t for t in one if t < 5000]
    assert all(10**6 < t < 10**6 + 5000 for t in two[len(first) :])
    assert list(plan.poisson_times(1000.0, 3, [[5, 5]])) == []


# --- the ns-3 runner sends at the same instants --------------------------------


@needs(paths.NS3_RUNNER)
def test_ns3_runner_sends_at_the_reference_times(tmp_path):
    """Every datagram of two poisson flows reaches the bottleneck exactly its
    (fixed) access-link latency after the reference generator's send time."""
    periods = [[100 * MS, 900 * MS], [1200 * MS, 1500 * MS]]
    flows = [
        poisson_flow(0, mean_ns=2e6, seed=11, periods_ns=periods),
        poisson_flow(
            1, mean_ns=3.5e6, seed=2**64 - 5, periods_ns=[[50 * MS, 1000 * MS]], pkt_bytes=1000, src="s0"
        ),
    ]
    job = write_plan(tmp_path, poisson_dumbbell(flows))
    out = tmp_path / "out"
    subprocess.run(
        [sys.executable, "-m", "qlab", "run-job", str(job), "--out", str(out)],
        check=True,
        capture_output=True,
        cwd=REPO,
    )
    with gzip.open(out / "flows.csv.gz", "rt") as f:
        rows = {int(r["flow_id"]): r for r in csv.DictReader(f)}
    with gzip.open(out / "packets.csv.gz", "rt") as f:
        arrivals: dict[int, list[float]] = {0: [], 1: []}
        for r in csv.DictReader(f):
            if r["event"] in ("enq", "drop") and r["flow_id"] != "NA":
                arrivals[int(r["flow_id"])].append(float(r["time_s"]))
    for f in flows:
        want = list(plan.poisson_times(f["mean_interval_ns"], f["poisson_seed"], f["on_periods_ns"]))
        got = rows[f["flow_id"]]
        assert int(got["tx_packets"]) == len(want) == int(got["rx_packets"]), f["flow_id"]
        assert int(got["bytes_goal"]) == len(want) * (f["pkt_bytes"] - 28)
        # the 100 Mb/s, 1 ms access link: (pkt_bytes + 2) * 80 ns + 1 ms after
        # the send, unless the flow's previous datagram was still on the wire
        tx_ns = (f["pkt_bytes"] + 2) * 80
        seen = arrivals[f["flow_id"]]
        assert len(seen) == len(want)
        clear = [k for k in range(len(want)) if k == 0 or want[k] - want[k - 1] > tx_ns]
        assert len(clear) > 0.9 * len(want)
        assert all(abs(seen[k] - (want[k] + tx_ns + MS) / 1e9) < 2e-9 for k in clear)
        assert all(a >= (t + tx_ns + MS) / 1e9 - 2e-9 for a, t in zip(seen, want, strict=True))


# --- scenarios: poisson_load, packet_share, poisson_packets ---------------------


def test_packet_share_sets_rates_and_stop():
    """The groups' rates load the bottleneck to poisson_load in IP bytes, in
    their packet shares, and they send poisson_packets / lambda seconds."""
    job = next(j for j in sc.expand(sc.load(MG1), "test", ["ns3"]) if j.series == "fifo")
    flows = {f["group"]: f for f in job.spec["flows"]}
    lam = {g: 1e9 / f["mean_interval_ns"] for g, f in flows.items()}
    total = sum(lam.values())
    assert lam["noncongestive"] / total == pytest.approx(0.1)
    load = sum(lam[g] * 8 * flows[g]["pkt_bytes"] for g in lam) / 2_000_000
    assert load == pytest.approx(job.spec["point_values"]["u"], rel=1e-6)
    stop = flows["congestive"]["on_periods_ns"][0][1] / 1e9
    assert stop * total == pytest.approx(2000, rel=1e-6)  # the test profile's poisson_packets


def test_packet_share_needs_a_load(tmp_path):
    """A packet_share without workload.poisson_load is refused, naming the field."""
    bad = copy.deepcopy(sc.load(MG1).doc)
    del bad["workload"]["poisson_load"]
    bad.pop("extends", None)
    (tmp_path / "validation").mkdir()
    scen = tmp_path / "validation" / "v.yaml"
    scen.write_text(yaml.safe_dump(bad))
    with pytest.raises(sc.ScenarioError) as err:
        sc.check_resolved(sc.load(scen), "test")
    assert "workload.poisson_load" in str(err.value) and "packet_share" in str(err.value)


def test_other_backends_refuse_poisson():
    doc = poisson_dumbbell([poisson_flow(0, mean_ns=2e6, seed=1, periods_ns=[[0, S]])])
    assert any("app poisson" in r and "ns3 backend does" in r for r in Ns2Backend().refuse(doc))
    # mininet sends them (qlab_traffic.py), but not datagrams longer than the MTU: they would be fragmented
    assert not any("poisson" in r for r in MininetBackend().refuse(doc))
    big = poisson_dumbbell([poisson_flow(0, mean_ns=2e6, seed=1, periods_ns=[[0, S]], pkt_bytes=65507)])
    assert any("app poisson" in r and "MTU (1500 bytes)" in r for r in MininetBackend().refuse(big))


def test_emulation_traffic_tool_draws_the_reference_schedule():
    """qlab_traffic.py (the mininet backend's sender, stdlib only, so a copy
    of the generator) sends at the reference's instants and lengths, in
    every on-period, Markov-modulated or with exponential sizes, and stops
    at the run's end."""
    sys.path.insert(0, str(REPO / "disciplines" / "emu"))
    try:
        import qlab_traffic
    finally:
        sys.path.pop(0)
    periods = [[100 * MS, 900 * MS], [1200 * MS, 1500 * MS]]
    plain = poisson_flow(0, mean_ns=2e6, seed=2**64 - 5, periods_ns=periods, pkt_bytes=1250)
    epoch = 10**18
    got = list(qlab_traffic.udp_schedule(plain, epoch, epoch + 10 * S))
    want = list(plan.poisson_times(2e6, 2**64 - 5, periods))
    assert len(want) > 300 and [t - epoch for t, _ in got] == want
    assert {b for _, b in got} == {1250}
    sized = dict(plain, pkt_bytes=65507, size_mean_bytes=5000, size_seed=7)
    sized["period_mean_intervals_ns"] = [1e6, 4e6]
    del sized["mean_interval_ns"]
    got = list(qlab_traffic.udp_schedule(sized, epoch, epoch + 10 * S))
    want_t = list(plan.poisson_times([1e6, 4e6], 2**64 - 5, periods))
    want_b = list(itertools.islice(plan.exponential_sizes(5000, 65507, 7), len(want_t)))
    assert [t - epoch for t, _ in got] == want_t and [b for _, b in got] == want_b
    cut = list(qlab_traffic.udp_schedule(plain, epoch, epoch + 500 * MS))
    assert cut == [(epoch + t, 1250) for t in want if t < 500 * MS]


def test_plan_schema_checks_poisson_fields():
    doc = poisson_dumbbell([poisson_flow(0, mean_ns=2e6, seed=1, periods_ns=[[0, S]])])
    assert plan.check(doc) == []
    for field, value in (("mean_interval_ns", 0), ("poisson_seed", -1), ("interval_ns", 5)):
        bad = copy.deepcopy(doc)
        bad["flows"][0][field] = value
        assert plan.check(bad), field
    bad = copy.deepcopy(doc)
    del bad["flows"][0]["poisson_seed"]
    assert any("poisson_seed" in p for p in plan.check(bad))

"""The wireless topology kind (wireless_dumbbell): a grid of sensor nodes
behind the dumbbell's router L, which relays their datagrams (docs/jobs.md,
wireless). Plans, refusals, and the ns-3 runner: identical traces for a
seed, different ones for another, and wired runs that link no radio."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from qlab import paths
from qlab import plan as plans
from qlab import scenario as sc
from qlab.backends.mininet import MininetBackend
from qlab.backends.ns2 import Ns2Backend

from .conftest import REPO, needs

SENSORS = REPO / "scenarios/ncq-journal/sensors.yaml"
WIRELESS_RUNNER = paths.NS3_RUNNER.parent / "qlab-ns3-run-wireless"


@pytest.fixture(scope="module")
def jobs() -> list:
    return sc.expand(sc.load(SENSORS), "test", ["ns3"])


def test_the_grid_sensors_and_their_flows_reach_the_plan(jobs):
    p = jobs[0].spec
    assert plans.check(p) == []
    w = p["wireless"]
    assert w["gateway"] == "L" and w["routing"] == "aodv" and w["propagation"] == "two_ray_ground"
    assert w["nodes"] == [f"n{j}" for j in range(25)]
    # 5 x 5, 100 m apart (sensors.yaml), in millimetres
    assert w["positions_mm"][0] == [0, 0] and w["positions_mm"][6] == [100_000, 100_000]
    assert w["positions_mm"][24] == [400_000, 400_000]
    assert w["gateway_position_mm"] == [-70711, -70711]  # 100 m from n0 on the diagonal
    assert w["tx_power_mdbm"] == 24500 and w["rx_sensitivity_mdbm"] == -94370
    nodes = {n["id"]: n for n in p["nodes"]}
    assert nodes["n0"]["address"] == "10.0.0.1" and nodes["n24"]["address"] == "10.0.0.25"
    linked = {lk["a"] for lk in p["links"]} | {lk["b"] for lk in p["links"]}
    assert not linked & set(w["nodes"]), "sensors have no links"
    sensor_flows = [f for f in p["flows"] if f["group"] == "sensors"]
    assert [f["src"] for f in sensor_flows] == ["n0", "n1"]  # the test profile's 2 reporting sensors
    assert all(f["app"] == "cbr" and f["pkt_bytes"] == 64 for f in sensor_flows)
    assert all(nodes[f["dst"]]["kind"] == "host" for f in sensor_flows)


def test_wired_plans_carry_no_wireless_object():
    p = sc.expand(sc.load(REPO / "scenarios/ncq-journal/voip.yaml"), "test", ["ns3"])[0].spec
    assert "wireless" not in p


def bad(p: dict, edit) -> list[str]:
    q = copy.deepcopy(p)
    edit(q)
    return plans.check(q)


def test_bad_wireless_plans_are_refused_naming_the_field(jobs):
    p = jobs[0].spec
    sensor = next(i for i, f in enumerate(p["flows"]) if f["group"] == "sensors")

    def tcp_sensor(q):
        f = q["flows"][sensor]
        for k in ("pkt_bytes", "rate_bps", "interval_ns", "on_periods_ns", "packets"):
            f.pop(k)
        f.update(app="bulk", seg_bytes=40, bytes=1000)

    assert any("a flow from a wireless node is UDP" in e for e in bad(p, tcp_sensor))
    assert any(
        "wireless.positions_mm: expected one position per node" in e
        for e in bad(p, lambda q: q["wireless"]["positions_mm"].pop())
    )
    assert any(
        "wireless.gateway: no router 'd0'" in e for e in bad(p, lambda q: q["wireless"].update(gateway="d0"))
    )

    def linked_sensor(q):
        q["wireless"]["nodes"].append("d0")
        q["wireless"]["positions_mm"].append([0, 0])

    assert any("wireless.nodes: host 'd0' has links" in e for e in bad(p, linked_sensor))
    assert any("rx_sensitivity_mdbm" in e for e in bad(p, lambda q: q["wireless"].pop("rx_sensitivity_mdbm")))
    # a sensor outside the wireless object is a host without a link
    assert any(
        "host 'n24' has 0 links" in e
        for e in bad(p, lambda q: q["wireless"]["nodes"].pop() and q["wireless"]["positions_mm"].pop())
    )


def test_other_backends_refuse_the_wireless_kind_naming_backend_and_kind(jobs, tmp_path):
    p = jobs[0].spec
    for backend in (Ns2Backend(), MininetBackend()):
        (msg,) = backend.refuse(p)
        assert f"the {backend.name} backend cannot build a wireless_dumbbell topology" in msg
    # and a scenario asking for them is refused when it is validated
    doc = yaml.safe_load(SENSORS.read_text())
    doc["backends"] = ["ns3", "ns2"]
    d = tmp_path / "ncq-journal"
    d.mkdir()
    (d / "defaults.yaml").write_text((SENSORS.parent / "defaults.yaml").read_text())
    (d / "sensors.yaml").write_text(yaml.safe_dump(doc))
    with pytest.raises(sc.ScenarioError, match="ns2 backend cannot build a wireless_dumbbell"):
        sc.expand(sc.load(d / "sensors.yaml"), "test")


def test_the_schema_refuses_a_wireless_block_on_another_kind(tmp_path):
    doc = yaml.safe_load(SENSORS.read_text())
    doc["topology"]["kind"] = "dumbbell"
    d = tmp_path / "ncq-journal"
    d.mkdir()
    (d / "defaults.yaml").write_text((SENSORS.parent / "defaults.yaml").read_text())
    (d / "sensors.yaml").write_text(yaml.safe_dump(doc))
    with pytest.raises(sc.ScenarioError, match="wireless"):
        sc.check_resolved(sc.load(d / "sensors.yaml"), "test")


# --- the ns-3 runner ------------------------------------------------------------


def run_job(job: Path, out: Path) -> None:
    subprocess.run(
        [sys.executable, "-m", "qlab", "run-job", str(job), "--out", str(out)],
        check=True,
        cwd=REPO,
        capture_output=True,
    )


def flows_of(d: Path) -> list[dict]:
    import csv
    import gzip

    with gzip.open(d / "flows.csv.gz", "rt") as fh:
        return list(csv.DictReader(fh))


@needs(paths.NS3_RUNNER)
@needs(WIRELESS_RUNNER)
def test_same_seed_gives_identical_wireless_traces_and_another_seed_does_not(jobs, tmp_path):
    ncq = [j for j in jobs if j.series == "ncq-0.01"]
    j1 = next(j for j in ncq if j.seed == 1)
    j2 = next(j for j in ncq if j.seed == 2)
    for j in (j1, j2):
        (tmp_path / f"seed-{j.seed}.json").write_text(json.dumps(j.spec))
    run_job(tmp_path / "seed-1.json", tmp_path / "a")
    run_job(tmp_path / "seed-1.json", tmp_path / "b")
    run_job(tmp_path / "seed-2.json", tmp_path / "c")
    for table in ("flows.csv.gz", "queues.csv.gz"):
        assert (tmp_path / "a" / table).read_bytes() == (tmp_path / "b" / table).read_bytes(), table
    assert (tmp_path / "a/flows.csv.gz").read_bytes() != (tmp_path / "c/flows.csv.gz").read_bytes()
    # the sensors' reports crossed the radio and the gateway
    sensors = {f["flow_id"] for f in j1.spec["flows"] if f["group"] == "sensors"}
    rows = [r for r in flows_of(tmp_path / "a") if int(r["flow_id"]) in sensors]
    assert rows and all(int(r["rx_packets"]) > 0 for r in rows), rows


@needs(paths.NS3_RUNNER)
@needs(WIRELESS_RUNNER)
def test_the_wired_runner_links_no_radio_and_the_wireless_one_does():
    def ldd(binary: Path) -> str:
        return subprocess.run(["ldd", str(binary)], capture_output=True, text=True, check=True).stdout

    wired, wireless = ldd(paths.NS3_RUNNER), ldd(WIRELESS_RUNNER)
    for lib in ("libns3-wifi", "libns3-aodv", "libns3-mobility", "libns3-propagation"):
        assert lib not in wired, lib
        assert lib in wireless, lib

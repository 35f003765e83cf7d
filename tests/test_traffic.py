"""UDP traffic models in scenarios, and every discipline run in ns-3 from a scenario."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from qlab import paths, traces
from qlab import scenario as sc
from qlab.cli import main

from .conftest import REPO, needs

UDP_SCENARIO = """\
extends: defaults.yaml
duration_s: 30
workload:
  flows: 4
  start_jitter_s: 0.5
  groups:
    voice: {count: 2, app: voip, cls: 1, prec: 1, stop_s: 20}
    data: {count: 1, app: cbr, pkt_bytes: 1000, rate_bps: 1000000, stop_s: 10}
    web: {count: 1, app: onoff, pkt_bytes: 500, rate_bps: 2000000, on_s: 0.5, off_s: 2, start_offset_s: 3}
series:
  tail: {kind: droptail, params: {limit_pkts: 100}}
"""


def udp_flows(demo_dir: Path, seed: int = 1, text: str = UDP_SCENARIO) -> list[dict]:
    f = demo_dir / "udp.yaml"
    f.write_text(text)
    jobs = [j for j in sc.expand(sc.load(f), "quick") if j.seed == seed]
    return jobs[0].spec["flows"]


def test_udp_groups_expand_to_on_periods_within_start_and_stop(demo_dir):
    flows = udp_flows(demo_dir)
    voice, data, web = flows[0], flows[2], flows[3]
    assert voice["app"] == "voip" and (voice["pkt_bytes"], voice["rate_bps"]) == (200, 80000)  # defaults
    assert (voice["cls"], voice["prec"]) == (1, 1)
    assert data["on_periods_ns"] == [[data["start_ns"], 10_000_000_000]]
    assert 3_000_000_000 <= web["start_ns"] < 3_500_000_000  # offset + jitter
    assert voice["interval_ns"] == 20_000_000 and data["interval_ns"] == 8_000_000
    for f in flows:
        periods = f["on_periods_ns"]
        assert "seg_bytes" not in f and "bytes" not in f
        assert periods and periods[0][0] == f["start_ns"]
        for (a, b), nxt in zip(periods, periods[1:] + [None], strict=True):
            assert a < b and (nxt is None or b < nxt[0])  # sorted, disjoint, off-gaps between
        assert periods[-1][1] <= 1e9 * (10 if f["app"] == "cbr" else 20 if f["app"] == "voip" else 30)
        # one datagram per interval from each period's start while it lasts
        assert f["packets"] == sum(-(-(b - a) // f["interval_ns"]) for a, b in periods)
        assert f["tos"] == f["cls"] << 5 | f["prec"] << 3
    # a call alternates talk spurts (mean 1.004 s) and pauses: many periods in 20 s
    assert len(voice["on_periods_ns"]) > 3


def test_on_off_schedules_depend_on_seed_and_flow_only(demo_dir):
    first = udp_flows(demo_dir, seed=1)
    assert udp_flows(demo_dir, seed=1) == first
    assert udp_flows(demo_dir, seed=2)[0]["on_periods_ns"] != first[0]["on_periods_ns"]
    # adding a flow to another group leaves the existing schedules alone
    more = udp_flows(
        demo_dir,
        seed=1,
        text=UDP_SCENARIO.replace("data: {count: 1,", "data: {count: 2,").replace("flows: 4", "flows: 5"),
    )
    assert more[0]["on_periods_ns"] == first[0]["on_periods_ns"]
    assert more[1]["on_periods_ns"] == first[1]["on_periods_ns"]


def test_fields_of_the_wrong_app_are_refused(demo_dir, capsys):
    f = demo_dir / "udp.yaml"
    f.write_text(UDP_SCENARIO.replace("app: voip, cls: 1", "app: voip, seg_bytes: 100, cls: 1"))
    assert main(["validate", str(f)]) == 2
    assert f"{f}: workload.groups.voice.seg_bytes: not a field of app voip" in capsys.readouterr().err
    f.write_text(UDP_SCENARIO.replace("on_s: 0.5, off_s: 2", "on_s: 0.5"))
    assert main(["validate", str(f)]) == 2
    assert f"{f}: workload.groups.web.off_s: missing required field" in capsys.readouterr().err


def test_floats_reach_the_core_as_plain_decimals():
    assert sc.format_value(1e-05) == "0.00001"
    assert sc.format_value(0.05) == "0.05"
    assert sc.format_value(2.0) == "2"


def test_collecting_packets_needs_packet_traces(demo_dir, capsys):
    f = demo_dir / "udp.yaml"
    f.write_text(UDP_SCENARIO + "trace: {collect: [packets]}\n")
    assert main(["validate", str(f)]) == 2
    assert "trace.collect: collecting packets needs trace.packets: true" in capsys.readouterr().err
    # collect is the analysis' business: it does not reach the runner's job
    f.write_text(UDP_SCENARIO + "trace: {collect: [queues]}\n")
    assert "collect" not in sc.expand(sc.load(f), "quick")[0].spec["trace"]


@needs(paths.QCORE_REPLAY)
def test_related_parameters_are_checked_together(demo_dir, capsys):
    # classes=3 with three weights is valid, though each alone contradicts the other's default
    f = demo_dir / "udp.yaml"
    f.write_text(
        UDP_SCENARIO.replace(
            "tail: {kind: droptail, params: {limit_pkts: 100}}",
            'w: {kind: wred, params: {classes: 3, weights_bytes: "3:2:1"}}',
        ).replace("cls: 1, prec: 1", "cls: 1")
    )
    assert main(["validate", str(f)]) == 0, capsys.readouterr().err
    f.write_text(f.read_text().replace('"3:2:1"', '"3:2"'))
    assert main(["validate", str(f)]) == 2
    assert "weights_bytes: expected 1 or 3 values (classes), got 2" in capsys.readouterr().err


# --- every discipline of the core, in ns-3, from a scenario file ------------


def core_disciplines() -> list[str]:
    if not paths.QCORE_REPLAY.exists():
        return []
    return subprocess.run(
        [str(paths.QCORE_REPLAY), "--list"], capture_output=True, text=True, check=True
    ).stdout.split()


# Parameters each discipline needs to suit a 10 Mb/s link with two classes.
PARAMS = {
    "prio": "{bands: 2}",
    "wred": '{classes: 2, weights_bytes: "2000:1000"}',
    "rbaqm": '{classes: 2, weights_bytes: "2000:1000", rate_bps: 10000000, rate_estimate: admitted}',
    "rd": "{rate_bps: 10000000, d_ns: 20000000}",
    "srd": "{rate_bps: 10000000, d_ns: 20000000}",
}

EVERY_DISCIPLINE = """\
extends: defaults.yaml
duration_s: 4
stop_when_done: false
workload:
  flows: 4
  groups:
    bulk0: {{count: 1, cls: 0, seg_bytes: 1000, task_bytes: 100000000}}
    bulk1: {{count: 1, cls: 1, prec: 1, seg_bytes: 1000, task_bytes: 100000000}}
    voice: {{count: 1, app: voip, cls: 1, prec: 1}}
    data: {{count: 1, app: cbr, pkt_bytes: 1000, rate_bps: 4000000, stop_s: 3}}
    web: {{app: web, seg_bytes: 500, arrival_rate_per_s: 3, size_mean_bytes: 20000, stop_s: 2}}
series:
  {kind}: {{kind: {kind}, params: {params}}}
trace: {{packets: true}}
"""


@needs(paths.QCORE_REPLAY)
@needs(REPO / "build/ns3/qlab-ns3-run")
@pytest.mark.parametrize("kind", core_disciplines() or ["(core not built)"])
def test_every_discipline_runs_in_ns3_from_a_scenario(kind, demo_dir, tmp_path):
    f = demo_dir / f"every-{kind}.yaml"
    f.write_text(EVERY_DISCIPLINE.format(kind=kind, params=PARAMS.get(kind, "{}")))
    assert main(["validate", str(f)]) == 0
    job = sc.expand(sc.load(f), "quick")[0]
    sc.write_jobs([job], tmp_path)
    assert job.spec["trace"]["queues"] == ["bottleneck:L"]
    out = tmp_path / job.rel_dir
    job_file = tmp_path / "jobs" / f"{job.rel_dir}.json"
    proc = subprocess.run(
        [sys.executable, "-m", "qlab", "run-job", str(job_file), "--out", str(out)],
        capture_output=True,
        text=True,
        check=False,
        cwd=REPO,
    )
    assert proc.returncode == 0, proc.stderr
    assert traces.check_dir(out) == []
    _, rows = traces.read_csv_gz(out / "flows.csv.gz")
    # every long flow, TCP and UDP, delivered data; of the short web transfers
    # (low precedence, late arrivals), at least one did
    assert all(int(r[7]) > 0 for r in rows if r[2] != "web"), rows
    assert any(int(r[7]) > 0 for r in rows if r[2] == "web"), rows
    _, events = traces.read_csv_gz(out / "packets.csv.gz")
    assert {e[3] for e in events} >= {"enq", "deq"} and {e[2] for e in events} == {"bottleneck:L"}


WEB_SCENARIO = """\
extends: defaults.yaml
duration_s: 60
workload:
  flows: 1
  groups:
    bulk: {count: 1, seg_bytes: 1000, task_bytes: 100000}
    web: {app: web, seg_bytes: 1000, arrival_rate_per_s: 10, size_mean_bytes: 30000,
          start_offset_s: 2, stop_s: 52}
series:
  tail: {kind: droptail, params: {limit_pkts: 100}}
"""


def test_web_groups_draw_poisson_arrivals_and_pareto_sizes(demo_dir):
    flows = udp_flows(demo_dir, seed=3, text=WEB_SCENARIO)
    web = [f for f in flows if f["group"] == "web"]
    assert flows[0]["group"] == "bulk" and [f["flow_id"] for f in flows] == list(range(len(flows)))
    assert all(f["app"] == "bulk" and f["seg_bytes"] == 1000 for f in web)
    starts = [f["start_ns"] / 1e9 for f in web]
    assert starts == sorted(starts) and 2 < starts[0] and starts[-1] < 52
    # 50 s at 10/s: about 500 arrivals (Poisson: sd ~22)
    assert 410 < len(web) < 590
    gaps = [b - a for a, b in zip(starts, starts[1:], strict=False)]
    assert abs(sum(gaps) / len(gaps) - 0.1) < 0.01
    sizes = sorted(f["bytes"] for f in web)
    scale = 30000 * 0.5 / 1.5  # Pareto(1.5) with mean 30 kB
    assert sizes[0] >= round(scale) and sizes[len(sizes) // 2] < 2 * scale  # median = scale * 2^(1/1.5)
    assert udp_flows(demo_dir, seed=3, text=WEB_SCENARIO) == flows
    assert udp_flows(demo_dir, seed=4, text=WEB_SCENARIO) != flows
    # a web group's flows share its host pairs (8 by default), each on its own ports
    assert len({f["src"] for f in web}) == 8 and len({(f["src"], f["src_port"]) for f in web}) == len(web)


def test_web_groups_are_checked(demo_dir, capsys):
    f = demo_dir / "udp.yaml"
    f.write_text(WEB_SCENARIO.replace("arrival_rate_per_s: 10,", "arrival_rate_per_s: 10, count: 3,"))
    assert main(["validate", str(f)]) == 2
    assert "workload.groups.web.count: a web group's flows arrive at random" in capsys.readouterr().err
    f.write_text(WEB_SCENARIO.replace("arrival_rate_per_s: 10,", "arrival_rate_per_s: 50,"))
    assert main(["validate", str(f)]) == 2
    assert "more than max_flows = 1000 arrivals" in capsys.readouterr().err

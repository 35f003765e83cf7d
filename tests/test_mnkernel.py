"""The mnkernel backend (qlab/backends/mnkernel.py): the mininet backend's
dumbbell with qlab's kernel qdisc as its bottleneck, on the testbed's
router. What can be checked without the virtual testbed: the mapping, the
refusals, the ingest and its checks, the host tool's and the run helper's
refusals of what they cannot run. The run itself is in tests/test_testbed.py
(make test-testbed: `test_vm_mnkernel_...`)."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys

import pytest
import yaml

from qlab import backends
from qlab.backends.mnkernel import MnKernelBackend

from .conftest import REPO
from .small_plans import small_dumbbell
from .test_testbed import _busy_samples

HOST_TOOL = REPO / "testbed" / "host" / "qlab_tb_host.py"
RUN_HELPER = REPO / "disciplines" / "emu" / "qlab_mn_run.py"


def _plan(**kw) -> dict:
    return small_dumbbell("mnkernel", duration_ns=20_000_000_000, bulk_bytes=200_000, packets=False, **kw)


def test_mnkernel_is_a_registered_realtime_backend_of_the_testbed():
    b = backends.get("mnkernel")
    assert b.realtime and b.exclusive and b.image is None
    # available exactly where the testbed is (its router VM runs it)
    assert b.unavailable() == backends.get("testbed").unavailable()


def test_job_gives_the_discipline_s_tc_words():
    plan = _plan()
    job = MnKernelBackend.job(plan)
    k = job["kernel"]
    seed = [q["seed"] for lk in plan["links"] for q in lk["queues"].values() if q["kind"] == "ncq"]
    assert k["qdisc"][:3] == ["ncq", "seed", str(seed[0])]
    assert k["expect"] == {"kind": "ncq", "options": {}} and k["handle"] == "10:"
    # the typed parameters in the core's text syntax, as the testbed's router gets them
    words = dict(zip(k["qdisc"][1::2], k["qdisc"][2::2], strict=False))
    assert words["thresh"] == "0.05" and words["favor_acks"] == "1" and words["variant"] == "journal"
    assert job["duration_ns"] == 20_000_000_000


def test_refuses_packet_traces_and_other_tcp_variants():
    b = MnKernelBackend()
    assert b.refuse(_plan()) == []
    plan = _plan()
    plan["trace"]["packets"] = True
    assert any(r.startswith("trace.packets: the mnkernel backend") for r in b.refuse(plan))
    plan = _plan(tcp={"variant": "Cubic"})
    assert any(r.startswith("tcp.variant: Cubic is not in the mnkernel backend") for r in b.refuse(plan))


def _got(plan: dict, *, arrivals: int = 700, rate_bps: float | None = None) -> dict:
    """What the router's run sends back: the helper's runner.json and
    flow_facts.csv, and the sampler's counters."""
    rows = [
        "flow_id,tx_packets,retx_packets,rx_packets,rx_bytes,first_rx_ns,last_rx_ns,delay_sum_ns,delay_max_ns"
    ]
    rows += [f"{f['flow_id']},200,0,NA,1000,5,9,NA,NA" for f in plan["flows"]]
    band = {"band": 0, "backlog_pkts": 0, "backlog_bytes": 0, "arrivals": 0, "sent": 0}
    samples = (
        _busy_samples(rate_bps)
        if rate_bps
        else [
            {"time_ns": t, "bands": [dict(band, arrivals=n, sent=n)], "sent_bytes": 0}
            for t, n in ((0, 0), (100_000_000, 300), (3_000_000_000, arrivals))
        ]
    )
    return {
        "runner.json": {"end_ns": 3_000_000_000, "valid": True, "invalid_reasons": [], "fidelity": {}},
        "flow_facts.csv": "\n".join(rows) + "\n",
        "queue-samples.json": {"queue": "bottleneck:L", "samples": samples},
    }


def test_ingest_writes_the_raw_facts_and_judges_the_kernel_qdisc(tmp_path):
    plan = _plan()
    work = tmp_path / "work"
    facts = MnKernelBackend.ingest(plan, _got(plan), work, "rtr")
    assert facts["valid"], facts["invalid_reasons"]
    assert facts["fidelity"]["qdisc_arrivals_pkts"] == 700 and facts["fidelity"]["senders_data_pkts"] == 600
    q = (work / "queue_facts.csv").read_text().splitlines()
    assert q[0].startswith("time_ns,queue,band") and q[-1] == "3000000000,bottleneck:L,0,0,0,700,700,0"
    assert (work / "flow_facts.csv").read_text().startswith("flow_id,tx_packets")
    assert json.loads((work / "runner.json").read_text())["valid"] is True


def test_ingest_marks_traffic_that_bypassed_the_qdisc_invalid(tmp_path):
    plan = _plan()
    facts = MnKernelBackend.ingest(plan, _got(plan, arrivals=500), tmp_path / "w", "rtr")
    assert not facts["valid"]
    assert facts["invalid_reasons"] == [
        "the discipline saw 500 packets but the senders sent 600 data packets: "
        "traffic bypassed the bridge's qdisc"
    ]


@pytest.mark.parametrize(("rate_bps", "valid"), [(10e6, True), (9.5e6, False)])
def test_ingest_judges_the_shaper_rate_while_busy(tmp_path, rate_bps, valid):
    plan = _plan()
    got = _got(plan, rate_bps=rate_bps)
    got["flow_facts.csv"] = got["flow_facts.csv"].replace(",200,", ",1,")  # fewer than the qdisc saw
    facts = MnKernelBackend.ingest(plan, got, tmp_path / "w", "rtr")
    assert facts["valid"] is valid, facts["invalid_reasons"]
    if not valid:
        assert facts["invalid_reasons"][0].startswith("achieved rate ")


def test_ingest_keeps_the_helper_s_own_reasons(tmp_path):
    plan = _plan()
    got = _got(plan)
    got["runner.json"].update(valid=False, invalid_reasons=["flow 2: sender late: ..."])
    facts = MnKernelBackend.ingest(plan, got, tmp_path / "w", "rtr")
    assert not facts["valid"] and facts["invalid_reasons"] == ["flow 2: sender late: ..."]


def test_ingest_collects_nothing_when_a_result_is_missing(tmp_path):
    plan = _plan()
    got = _got(plan)
    del got["queue-samples.json"]
    with pytest.raises(backends.BackendError, match="host rtr: the mnkernel run sent no queue-samples.json"):
        MnKernelBackend.ingest(plan, got, tmp_path / "w", "rtr")
    assert not (tmp_path / "w").exists()


def test_host_tool_refuses_to_run_without_its_bundle(tmp_path):
    """The mininet step runs from a bundle (the run helper, the traffic
    tool, the plan and the tc words in it); as a plain script it names
    what it lacks and changes nothing."""
    spec = base64.b64encode(json.dumps({"dir": str(tmp_path / "run"), "timeout_s": 60}).encode()).decode()
    p = subprocess.run(
        [sys.executable, str(HOST_TOOL), "mininet", "--spec", spec],
        capture_output=True,
        text=True,
        check=False,
    )
    got = json.loads(p.stdout.splitlines()[-1])
    assert got["failed"]["step"] == "bundle"
    assert "qlab_mn_run.py" in got["failed"]["message"] and "kernel.json" in got["failed"]["message"]
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize(
    ("content", "says"),
    [("{not json", "a JSON object"), (json.dumps({"qdisc": ["ncq"]}), "needs expect, handle, burst_bytes")],
)
def test_run_helper_names_a_bad_kernel_file(tmp_path, content, says):
    """--kernel with a file it cannot use: exit 2 (a job this runner cannot
    build), the file and what it lacks named, nothing built."""
    if os.geteuid() != 0:
        pytest.skip("the run helper runs as root")
    k = tmp_path / "kernel.json"
    k.write_text(content)
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps(_plan()))
    p = subprocess.run(
        ["/usr/bin/python3", str(RUN_HELPER), str(plan), str(tmp_path / "out"), "--kernel", str(k)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert p.returncode == 2, p.stderr
    assert f"--kernel {k}: needs" in p.stderr and says in p.stderr
    assert not (tmp_path / "out").exists()


def test_role_defaults_agree_with_the_testbed_tc_role():
    """HTB's burst and netem's queue: the same on the testbed's router and in
    Mininet on it, so the two backends differ in where the hosts are only."""
    mk = yaml.safe_load((REPO / "roles/testbed_mininet/defaults/main.yml").read_text())
    tc = yaml.safe_load((REPO / "roles/testbed_tc/defaults/main.yml").read_text())
    assert mk["testbed_mininet_burst_bytes"] == tc["testbed_tc_burst_bytes"]
    assert mk["testbed_mininet_netem_limit"] == tc["testbed_tc_netem_limit"]


def test_host_tool_keeps_the_asked_cpus_online(tmp_path):
    """The virtual testbed's router keeps one CPU online for a testbed run
    and two for an mnkernel run (set_online_cpus, the tc and mininet
    steps' "cpus"); 0 leaves them as they are."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("qlab_tb_host", HOST_TOOL)
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    (tmp_path / "cpu0").mkdir()  # the boot CPU has no online switch
    for k in (1, 2):
        (tmp_path / f"cpu{k}").mkdir()
        (tmp_path / f"cpu{k}" / "online").write_text("1\n")

    def online() -> list[str]:
        return [(tmp_path / f"cpu{k}" / "online").read_text().strip() for k in (1, 2)]

    assert tool.set_online_cpus(2, str(tmp_path)) == "" and online() == ["1", "0"]
    assert tool.set_online_cpus(0, str(tmp_path)) == "" and online() == ["1", "0"]
    assert tool.set_online_cpus(3, str(tmp_path)) == "" and online() == ["1", "1"]
    assert tool.set_online_cpus(1, str(tmp_path)) == "" and online() == ["0", "0"]
    (tmp_path / "cpu2" / "online").unlink()
    (tmp_path / "cpu2" / "online").mkdir()  # not writable as a file
    problem = tool.set_online_cpus(3, str(tmp_path))
    assert problem.startswith(f"cannot set {tmp_path / 'cpu2' / 'online'}")


def test_the_virtual_testbed_gives_each_run_its_router_cpus(tmp_path, monkeypatch):
    """Its inventory: a testbed run forwards on one of the router's CPUs,
    an mnkernel run gets them all (docs/benchmarks.md, "mnkernel"). No
    testbed need have been built: the guests' kernel version is faked."""
    from qlab import testbed_vm

    monkeypatch.setattr(testbed_vm, "BUILD", tmp_path)
    monkeypatch.setattr(testbed_vm, "RUN", tmp_path / "run")
    (tmp_path / "kver").write_text("6.1.0-test-amd64\n")
    testbed_vm.write_inventory(tmp_path / "inv.yml")
    router = yaml.safe_load((tmp_path / "inv.yml").read_text())["all"]["children"]["testbed"]["children"]
    hv = router["routers"]["hosts"]["tb-router"]
    assert (
        yaml.safe_load((tmp_path / "inv.yml").read_text())["all"]["children"]["testbed"]["vars"][
            "testbed_preflight_kernel"
        ]
        == "6.1.0-test-amd64"
    )
    assert hv["testbed_tc_router_cpus"] == 1
    assert hv["testbed_mininet_router_cpus"] == testbed_vm.ROUTER_CPUS == 2
    assert "-smp" in (cmd := testbed_vm.qemu_command(testbed_vm.VMS[1])) and cmd[cmd.index("-smp") + 1] == "2"


def test_queue_facts_keep_time_order_when_the_sampler_ran_past_the_end():
    """A sampler told of the run's end late (a loaded guest) samples on to
    the plan's duration: the rows stop at the end, the last sample's
    counters stamped with it, each time once (the validator wants the rows
    sorted by time, queue, band)."""
    from qlab.backends.testbed import queue_facts

    band = {"backlog_pkts": 0, "backlog_bytes": 0, "arrivals": 5, "sent": 5}
    samples = [
        {"time_ns": t, "bands": [dict(band, band=0), dict(band, band=1, arrivals=9, sent=9)], "sent_bytes": 0}
        for t in (100, 200, 300, 400, 500)
    ]
    rows, arrivals, _sent, _rate = queue_facts(samples, "b:L", end_ns=250)
    keys = [(int(r.split(",")[0]), int(r.split(",")[2])) for r in rows[1:]]
    assert keys == [(100, 0), (100, 1), (200, 0), (200, 1), (250, 0), (250, 1)]
    assert arrivals == 14

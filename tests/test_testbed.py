"""The testbed backend (qlab/backends/testbed.py): mapping a plan onto an
inventory and ingesting the hosts' facts (fast, here), and the virtual
testbed end to end (`make test-testbed`: three QEMU VMs, one job with the
NCQ kernel qdisc, and a host that is down: a clear failure, nothing
collected)."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import pytest

from qlab import backends, runjob, traces
from qlab.backends.testbed import TestbedBackend

from .conftest import REPO, faithful
from .small_plans import queue, small_dumbbell, write_plan

GROUPS = {
    "senders": ["snd"],
    "routers": ["rtr"],
    "receivers": ["rcv"],
    "hostvars": {
        "snd": {"testbed_data_addr": "10.1.0.1", "testbed_data_if": "eth1"},
        "rtr": {"testbed_ingress_if": "eth1", "testbed_egress_if": "eth2"},
        "rcv": {"testbed_data_addr": "10.2.0.1", "testbed_data_if": "eth1"},
    },
}


def _plan(**kw) -> dict:
    return small_dumbbell("testbed", duration_ns=20_000_000_000, bulk_bytes=200_000, packets=False, **kw)


def test_testbed_is_a_registered_backend():
    assert "testbed" in backends.names()


def test_job_maps_the_dumbbell_onto_the_inventory():
    plan = _plan()
    job = TestbedBackend().job(plan, GROUPS)
    assert set(job["hosts"]) == {"snd", "rcv"}
    assert job["hosts"]["snd"]["role"] == "send" and job["hosts"]["rcv"]["role"] == "sink"
    # every flow on both ends, between the plan's own addresses (its 5-tuple)
    for h in ("snd", "rcv"):
        assert sorted(i["flow"]["flow_id"] for i in job["hosts"][h]["flows"]) == [0, 1, 2]
        for i in job["hosts"][h]["flows"]:
            f = i["flow"]
            assert i["src_address"] == {"s0": "10.1.0.1", "s1": "10.1.0.2"}[f["src"]]
            assert i["dst_address"] == i["listen_address"] == "10.2.0.1"
    # the machines hold the plan hosts' addresses; each reaches the other
    # side's by a /32 route with the plan's initcwnd and rto_min
    snd, rcv = job["hosts"]["snd"]["net"], job["hosts"]["rcv"]["net"]
    assert snd["aliases"] == ["10.1.0.1", "10.1.0.2"] and snd["data_addr"] == "10.1.0.1"
    assert rcv["aliases"] == ["10.2.0.1"]
    assert [(r["dst"], r["gateway_to"]) for r in snd["routes"]] == [("10.2.0.1", "10.2.0.1")]
    assert [(r["dst"], r["gateway_to"]) for r in rcv["routes"]] == [
        ("10.1.0.1", "10.1.0.1"),
        ("10.1.0.2", "10.1.0.1"),
    ]
    assert {(r["initcwnd"], r["rto_min_ms"]) for r in snd["routes"] + rcv["routes"]} == {
        (plan["tcp"]["initial_cwnd_segments"], round(plan["tcp"]["min_rto_ns"] / 1e6))
    }
    r = job["router"]
    # the router reaches each plan address through the machine holding it
    # (not its own machine's data address: that one is on-link)
    assert r["net"] == {"aliases": [], "routes": [{"dst": "10.1.0.2", "via": "10.1.0.1"}]}
    assert r["host"] == "rtr" and r["rate_bps"] == 10_000_000 and r["queue"] == "bottleneck:L"
    # the plan's discipline by the core's names, through its dedicated qdisc
    assert r["qdisc"][:3] == ["ncq", "seed", "1"]
    assert r["expect"] == {"kind": "ncq", "options": {}}
    args = dict(zip(r["qdisc"][3::2], r["qdisc"][4::2], strict=True))
    assert args["size_bytes"] == "141" and args["thresh"] == "0.05" and args["favor_acks"] == "1"
    # 10 ms across and 1 ms access links: a 24 ms round trip, on the reverse path
    assert r["delay_ns"] == 24_000_000


def test_every_core_kind_maps_onto_a_kernel_qdisc():
    """Each kind of the core's registry runs as its dedicated qdisc (whose tc
    plugin exists and takes the variant keyword) or as `qlab disc KIND`."""
    from qlab import core
    from qlab.backends.testbed import DEDICATED, qdisc_argv

    kinds = set(core.names())
    assert set(DEDICATED) <= kinds, set(DEDICATED) - kinds
    for kind in sorted(kinds):
        argv, expect = qdisc_argv(kind, 7, [("limit_pkts", "50")])
        assert argv[-4:] == ["seed", "7", "limit_pkts", "50"], argv
        if kind in DEDICATED:
            plugin = (REPO / "disciplines/linux/tc" / f"q_{argv[0]}.c").read_text()
            assert expect["kind"] == argv[0]
            for key, value in expect["options"].items():
                assert argv[1:3] == [key, value]
                assert f'.variant_keyword = "{key}"' in plugin and f'{{ "{value}", ' in plugin
        else:
            assert argv[:3] == ["qlab", "disc", kind] and expect == {
                "kind": "qlab",
                "options": {"disc": kind},
            }


def test_preflight_reads_chrony(tmp_path, monkeypatch):
    """The host tool's reading of `chronyc -n tracking`: the sign of the
    offset, chrony's maximum error, and an unsynchronised or absent chronyd."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("qlab_tb_host", REPO / "testbed/host/qlab_tb_host.py")
    host = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(host)
    fake = tmp_path / "chronyc"
    monkeypatch.setenv("PATH", f"{tmp_path}:{os.environ['PATH']}")

    def tracking(text: str, rc: int = 0) -> dict | None:
        fake.write_text(f"#!/bin/sh\ncat <<'EOF'\n{text}\nEOF\nexit {rc}\n")
        fake.chmod(0o755)
        return host.chrony_tracking()

    synced = """Reference ID    : 0A000202 (10.0.2.2)
Stratum         : 9
System time     : 0.002500000 seconds slow of NTP time
Root delay      : 0.001000000 seconds
Root dispersion : 0.000250000 seconds
Leap status     : Normal"""
    got = tracking(synced)
    assert got["synchronised"] and got["offset_ms"] == -2.5 and got["max_error_ms"] == 0.75, got
    assert tracking(synced.replace("slow", "fast"))["offset_ms"] == 2.5
    assert not tracking(synced.replace("Leap status     : Normal", "Leap status     : Not synchronised"))[
        "synchronised"
    ]
    assert tracking("506 Cannot talk to daemon", rc=1) is None


def test_the_module_lists_agree():
    """Kbuild's modules, dkms.conf's and the testbed_qdisc_kmod role's load
    list name the same modules; the role loads qlab_core (the others'
    dependency) first."""
    import re

    import yaml

    kbuild = re.search(r"^obj-m \+= (.*)$", (REPO / "disciplines/linux/Kbuild").read_text(), re.M)[1]
    dkms = re.findall(
        r'^BUILT_MODULE_NAME\[\d+\]="([^"]+)"', (REPO / "disciplines/linux/dkms.conf").read_text(), re.M
    )
    role = yaml.safe_load((REPO / "roles/testbed_qdisc_kmod/defaults/main.yml").read_text())
    load = role["testbed_qdisc_kmod_modules"]
    assert sorted(m.removesuffix(".o") for m in kbuild.split()) == sorted(dkms) == sorted(load)
    assert load[0] == "qlab_core"


def test_dkms_method_builds_the_bundled_tree_only_when_it_changed(tmp_path, monkeypatch):
    """The host tool's DKMS method (testbed_qdisc_kmod_method: dkms) with a
    fake dkms: the bundle's tree (mkbundle.py --tree, from `make dkms-src`)
    lands in /usr/src/qlab-<dkms.conf's version> and is added, built and
    installed; the same tree, installed, builds nothing; a stray file in
    the installed tree is removed and the tree rebuilt; a failing build is
    named with dkms's words."""
    import importlib.util
    import re
    import subprocess
    import sys

    spec = importlib.util.spec_from_file_location("qlab_tb_host", REPO / "testbed/host/qlab_tb_host.py")
    host = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(host)
    tree = tmp_path / "tree"
    subprocess.run(
        ["make", "-s", "-C", "disciplines/linux", "dkms-src", f"DEST={tree}"], cwd=REPO, check=True
    )
    bundle = tmp_path / "kmod.pyz"
    mk = [sys.executable, str(REPO / "testbed/host/mkbundle.py"), str(bundle), "--tree", "dkms", str(tree)]
    subprocess.run(mk, check=True)
    bad = subprocess.run(
        [*mk[:3], "--tree", "dkms", str(tmp_path / "nothing")], capture_output=True, text=True
    )
    assert bad.returncode == 2 and "--tree needs" in bad.stderr
    version = re.search(r'PACKAGE_VERSION="([^"]+)"', (tree / "dkms.conf").read_text())[1]
    log, state, fail = tmp_path / "dkms.log", tmp_path / "installed", tmp_path / "fail"
    fake = tmp_path / "bin" / "dkms"
    fake.parent.mkdir()
    fake.write_text(
        f"""#!/bin/sh
echo "$1" >> {log}
case "$1" in
status) [ -e {state} ] && echo "qlab/{version}, 6.1.0-test, x86_64: installed"; exit 0 ;;
build) [ -e {fail} ] && {{ echo "Error! Bad return status for module build" >&2; exit 10; }} ;;
install) touch {state} ;;
remove) rm -f {state} ;;
esac
exit 0
"""
    )
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake.parent}:{os.environ['PATH']}")
    monkeypatch.setattr(sys, "argv", [str(bundle)])
    src = tmp_path / "usr-src"

    def build() -> tuple[dict, list[str]]:
        log.unlink(missing_ok=True)
        res = host.dkms_build("6.1.0-test", src_root=str(src))
        return res, log.read_text().split() if log.exists() else []

    res, calls = build()
    assert res == {"built": True, "version": version, "error": ""}, res
    assert calls[-3:] == ["add", "build", "install"], calls
    dest = src / f"qlab-{version}"
    assert sorted(p.relative_to(dest) for p in dest.rglob("*") if p.is_file()) == sorted(
        p.relative_to(tree) for p in tree.rglob("*") if p.is_file()
    )
    res, calls = build()
    assert not res["built"] and calls == ["status"], (res, calls)
    (dest / "core" / "stale.c").write_text("/* from an older tree */\n")
    res, calls = build()
    assert res["built"] and not (dest / "core" / "stale.c").exists(), (res, calls)
    fail.touch()
    (dest / "dkms.conf").write_text((tree / "dkms.conf").read_text() + "# changed\n")
    res, _ = build()
    assert (
        not res["built"] and "dkms build exit 10" in res["error"] and "Bad return status" in res["error"]
    ), res


def test_the_router_s_image_follows_up_and_shows_in_the_inventory(tmp_path, monkeypatch):
    """`qlab testbed up --dkms` boots the router from the DKMS image and the
    inventory tells the roles (testbed_qdisc_kmod_method: dkms); a running
    router is not silently given the other image; `down` forgets it."""
    import yaml

    from qlab import testbed_vm as tv

    monkeypatch.setattr(tv, "BUILD", tmp_path)
    monkeypatch.setattr(tv, "RUN", tmp_path / "run")
    (tmp_path / "kver").write_text("6.1.0-test-amd64\n")
    router = next(vm for vm in tv.VMS if vm.group == "routers")

    def method_in_inventory() -> str:
        tv.write_inventory(tmp_path / "inv.yml")
        doc = yaml.safe_load((tmp_path / "inv.yml").read_text())
        return doc["all"]["children"]["testbed"]["children"]["routers"]["hosts"][router.name][
            "testbed_qdisc_kmod_method"
        ]

    assert tv.router_method() == "prebuilt" == method_in_inventory()
    cmd = tv.qemu_command(router, tv.IMAGES["dkms"])
    assert any(a.startswith(f"file={tmp_path / 'rootfs-dkms.ext4'},") for a in cmd), cmd
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "tb-router.method").write_text("dkms\n")
    assert tv.router_method() == "dkms" == method_in_inventory()
    monkeypatch.setattr(tv, "_pid", lambda vm: 4242 if vm is router else None)
    with pytest.raises(tv.TestbedError, match="tb-router runs the dkms image: `qlab testbed down` first"):
        tv.up(build=False, dkms=False)
    monkeypatch.setattr(tv, "_pid", lambda vm: None)
    monkeypatch.setattr(tv, "_ntp_pid", lambda: None)
    tv.down()
    assert tv.router_method() == "prebuilt"
    for f in ("vmlinuz", "initrd.gz", "rootfs.ext4", "ssh/id_ed25519", "ssh/host_ed25519.pub"):
        (tmp_path / f).parent.mkdir(exist_ok=True)
        (tmp_path / f).write_text("")
    with pytest.raises(
        tv.TestbedError, match=r"rootfs-dkms.ext4 missing: build the image \(testbed/vm/mkrootfs.sh --dkms\)"
    ):
        tv.up(build=False, dkms=True)


def test_refuses_what_it_cannot_build():
    # plan hosts of a side share a machine under their own addresses: the
    # plan's ports may repeat (the ncq-conf emulation's do)
    plan = _plan()
    plan["flows"][1]["src_port"] = plan["flows"][0]["src_port"]
    assert TestbedBackend().refuse(plan) == []
    plan = _plan()
    plan["flows"][0]["src"], plan["flows"][0]["dst"] = "d0", "s0"
    assert any(
        "testbed backend sends data through the discipline" in p for p in TestbedBackend().refuse(plan)
    )


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("ip") is None, reason="needs root and iproute2")
def test_host_tool_puts_the_plan_addresses_on_and_takes_the_last_run_s_off(tmp_path):
    """step_net in a network namespace, with real `ip`: the aliases on the
    interface holding the data address, /32 routes with the plan's TCP
    settings, and the next run's call removes what the last one added."""
    import subprocess

    ns = f"qlabtb{os.getpid()}"

    def sh(*argv: str) -> str:
        return subprocess.run(
            ["ip", "netns", "exec", ns, *argv], capture_output=True, text=True, check=True
        ).stdout

    def step(net: dict) -> str:
        tool = str(REPO / "testbed/host/qlab_tb_host.py")
        code = (
            "import importlib.util, json, sys\n"
            f"spec = importlib.util.spec_from_file_location('h', {tool!r})\n"
            "h = importlib.util.module_from_spec(spec); spec.loader.exec_module(h)\n"
            f"h.NET_STATE = {str(tmp_path / 'net.json')!r}\n"
            "print(json.dumps(h.step_net(json.loads(sys.argv[1]))))"
        )
        return json.loads(sh("python3", "-c", code, json.dumps(net)))

    subprocess.run(["ip", "netns", "add", ns], check=True)
    try:
        for dev, addr in (("data0", "10.1.0.1/24"), ("mgmt0", "192.168.7.1/24")):
            sh("ip", "link", "add", dev, "type", "veth", "peer", "name", f"{dev}p")
            sh("ip", "addr", "add", addr, "dev", dev)
            sh("ip", "link", "set", f"{dev}p", "up")
            sh("ip", "link", "set", dev, "up")
        sh("ip", "route", "add", "10.2.0.0/24", "via", "10.1.0.254")
        route = {"gateway_to": "10.2.0.1", "initcwnd": 2, "rto_min_ms": 200}
        first = {
            "aliases": ["10.1.0.1", "10.1.0.2", "10.1.0.3"],
            "data_addr": "10.1.0.1",
            "routes": [dict(route, dst="10.2.0.1"), dict(route, dst="10.2.0.9")],
        }
        assert step(first) == ""
        held = sh("ip", "-o", "addr", "show", "dev", "data0")
        assert "10.1.0.2/32" in held and "10.1.0.3/32" in held and "10.1.0.1/24" in held
        r = sh("ip", "route", "show", "10.2.0.9/32")
        assert "via 10.1.0.254 dev data0" in r and "initcwnd 2" in r and "200ms" in r.split("rto_min")[1], r
        # the next run: its own aliases and routes only (its own address kept)
        second = {"aliases": ["10.1.0.4"], "data_addr": "10.1.0.1", "routes": [dict(route, dst="10.2.0.5")]}
        assert step(second) == ""
        held = sh("ip", "-o", "addr", "show", "dev", "data0")
        assert "10.1.0.4/32" in held and "10.1.0.2/" not in held and "10.1.0.1/24" in held
        assert sh("ip", "route", "show", "10.2.0.9/32") == "" and "initcwnd 2" in sh(
            "ip", "route", "show", "10.2.0.5/32"
        )
        # a plan address another interface holds: named, not moved
        problem = step({"aliases": ["192.168.7.1"], "data_addr": "10.1.0.1", "routes": []})
        assert (
            problem == "the plan's address 192.168.7.1 is already on mgmt0, not on the data interface data0"
        )
        assert step({"aliases": ["10.1.0.5"], "data_addr": "10.9.9.9", "routes": []}).startswith(
            "no interface holds the data address 10.9.9.9"
        )
    finally:
        subprocess.run(["ip", "netns", "del", ns], check=False)


def test_a_flow_process_survives_a_late_start_signal(tmp_path):
    """The host's worker signals SIGUSR1 to each flow process once the
    epoch file is there; a process that found the file by itself first
    (its one-second look) must not die of the signal arriving after."""
    import signal
    import subprocess

    flow = {"flow": {"flow_id": 0, "app": "cbr", "dst_port": 0}, "dst_address": "127.0.0.1", "tcp": {}}
    (tmp_path / "flow.json").write_text(json.dumps(flow))
    epoch = tmp_path / "epoch.json"
    out = tmp_path / "sink-0.json"
    tool = str(REPO / "disciplines/emu/qlab_traffic.py")
    argv = ["python3", tool, "sink", "--flow", str(tmp_path / "flow.json")]
    argv += ["--epoch-file", str(epoch), "--end-ns", "30000000000", "--out", str(out)]
    p = subprocess.Popen(argv)
    try:
        deadline = time.monotonic() + 20
        while not Path(f"{out}.waiting").exists():
            assert p.poll() is None and time.monotonic() < deadline
            time.sleep(0.05)
        epoch.write_text(json.dumps({"epoch_ns": time.time_ns()}))
        time.sleep(2.5)  # the process found the file by itself and runs
        p.send_signal(signal.SIGUSR1)
        time.sleep(0.5)
        assert p.poll() is None, f"the flow process died of a late SIGUSR1 (exit {p.returncode})"
    finally:
        p.terminate()
        p.wait(timeout=10)


def _staging(
    tmp: Path,
    plan: dict,
    job: dict,
    *,
    drop: str | None = None,
    incomplete: str | None = None,
    behind: bool = False,
) -> Path:
    """The facts the playbook would fetch: every flow done, three queue
    samples; `behind`: the UDP senders never got through their schedules."""
    st = tmp / "staging"
    epoch = 1_000_000_000_000
    (st).mkdir()
    (st / "epoch_ns").write_text(f"{epoch}\n")
    (st / "clock.json").write_text(
        json.dumps({"offset_ms": {"snd": 1.0, "rcv": -2.0, "rtr": 0.5}, "bound_ms": 50})
    )
    flows = {f["flow_id"]: f for f in plan["flows"]}
    for h, part in job["hosts"].items():
        doc = {
            "host": h,
            "role": part["role"],
            "ended_ns": epoch + 3_000_000_000,
            "complete": True,
            "flows": {},
        }
        for item in part["flows"]:
            f = flows[item["flow"]["flow_id"]]
            if part["role"] == "send":
                got = {"tx_packets": 200, "retx_packets": 0, "final": True}
                if f["app"] != "bulk":
                    got.update(schedule_done=not behind, late_max_ns=3_000_000)
            elif f["app"] == "bulk":
                t = epoch + f["start_ns"]
                got = {"rx_bytes": f["bytes"], "first_rx_ns": t + 30_000_000, "last_rx_ns": t + 900_000_000}
            else:
                got = {
                    "rx_packets": 10,
                    "rx_bytes": 10 * (f["pkt_bytes"] - 28),
                    "first_rx_ns": epoch + 200_000_000,
                    "last_rx_ns": epoch + 500_000_000,
                    "delay_sum_ns": 10 * 20_000_000,
                    "delay_max_ns": 25_000_000,
                }
            doc["flows"][str(f["flow_id"])] = got
        if h == incomplete:
            doc["complete"], doc["problem"] = False, "flow 0's sink process exited (1)"
        (st / h).mkdir()
        (st / h / "host-facts.json").write_text(json.dumps(doc))
    band = {"band": 0, "backlog_pkts": 0, "backlog_bytes": 0, "arrivals": 0, "sent": 0, "drop_overflow": 0}
    samples = [
        {"time_ns": t, "bands": [dict(band, arrivals=n, sent=n), dict(band, band=1, arrivals=n, sent=n)]}
        for t, n in ((0, 0), (100_000_000, 200), (3_000_000_000, 400))
    ]
    (st / "rtr").mkdir()
    (st / "rtr" / "queue-samples.json").write_text(json.dumps({"queue": "bottleneck:L", "samples": samples}))
    (st / "rtr" / "host-facts.json").write_text(json.dumps({"host": "rtr", "complete": True}))
    if drop:
        shutil.rmtree(st / drop)
    return st


def test_ingest_writes_raw_facts_when_every_host_is_complete(tmp_path):
    plan = _plan()
    job = TestbedBackend().job(plan, GROUPS)
    work = tmp_path / "work"
    facts = TestbedBackend().ingest(plan, job, _staging(tmp_path, plan, job), work)
    assert facts["end_ns"] == 3_000_000_000 and facts["valid"], facts
    rows = (work / "flow_facts.csv").read_text().splitlines()
    assert rows[0].startswith("flow_id,tx_packets") and len(rows) == 4
    q = (work / "queue_facts.csv").read_text().splitlines()
    assert len(q) == 1 + 3 * 2 and q[-1] == "3000000000,bottleneck:L,1,0,0,400,400,0"
    assert facts["fidelity"]["clock_offset_ms"]["rcv"] == -2.0
    assert facts["fidelity"]["sender_late_max_s"] == 0.003


def test_ingest_marks_a_run_whose_senders_fell_behind_invalid(tmp_path):
    """A UDP sender that had not got through its schedule when its host
    stopped: its tail was never sent, so the run is not faithful."""
    plan = _plan()
    job = TestbedBackend().job(plan, GROUPS)
    udp = [f["flow_id"] for f in plan["flows"] if f["app"] != "bulk"]
    facts = TestbedBackend().ingest(plan, job, _staging(tmp_path, plan, job, behind=True), tmp_path / "w")
    assert udp and not facts["valid"]
    assert facts["invalid_reasons"] == [
        f"flow {i}: sender late: its schedule was unfinished when the run ended (200 datagrams sent)"
        for i in udp
    ]


def test_ingest_places_the_router_pcap_beside_the_tables(tmp_path):
    """With testbed_capture_pcap the router's pcap comes back with its part,
    and tcpdump's own counts (a kernel that dropped packets from the
    capture) go into the fidelity record."""
    plan = _plan()
    job = TestbedBackend().job(plan, GROUPS)
    st = _staging(tmp_path, plan, job)
    (st / "rtr" / "host-facts.json").write_text(
        json.dumps({"host": "rtr", "complete": True, "pcap": {"captured": 812, "dropped_by_kernel": 3}})
    )
    (st / "rtr" / "router-egress.pcap").write_bytes(b"\xd4\xc3\xb2\xa1pcap")
    work = tmp_path / "work"
    facts = TestbedBackend().ingest(plan, job, st, work)
    assert (work / "router-egress.pcap").read_bytes() == b"\xd4\xc3\xb2\xa1pcap"
    fid = facts["fidelity"]
    assert fid["pcap_captured_pkts"] == 812 and fid["pcap_dropped_by_kernel_pkts"] == 3
    # without it, no pcap
    (tmp_path / "b").mkdir()
    facts = TestbedBackend().ingest(plan, job, _staging(tmp_path / "b", plan, job), tmp_path / "w2")
    assert not (tmp_path / "w2" / "router-egress.pcap").exists()
    assert "pcap_captured_pkts" not in facts["fidelity"]


def _busy_samples(rate_bps: float, read_ms: float = 5.0) -> list[dict]:
    """Samples every 100 ms of a discipline that holds a queue from 0.1 s to
    1.3 s and sends at rate_bps meanwhile; each read takes read_ms."""
    out, sent = [], 0
    for k in range(16):
        t = k * 100_000_000
        busy = 1 <= k <= 13
        if 1 < k <= 13:
            sent += int(rate_bps * 0.1 / 8)
        band = {
            "band": 0,
            "backlog_pkts": 30 if busy else 0,
            "backlog_bytes": 0,
            "arrivals": 100 * k,
            "sent": 100 * k,
        }
        read = [t + 1_000_000, t + 1_000_000 + int(read_ms * 1e6)]
        out.append({"time_ns": t, "bands": [band], "sent_bytes": sent, "read_ns": read})
    return out


def test_busy_rate_brackets_the_shaper_rate():
    from qlab.backends.testbed import busy_rate

    got = busy_rate(_busy_samples(10e6))
    # 12 busy intervals of 100 ms, each read within 5 ms
    assert got["busy_s"] == pytest.approx(1.2) and got["achieved_rate_bps"] == pytest.approx(10e6)
    # the bracket spans one read at each end of the busy run, not one per interval
    assert got["low_bps"] == pytest.approx(10e6 * 1.2 / 1.205) and got["high_bps"] == pytest.approx(
        10e6 * 1.2 / 1.195
    )
    # an idle discipline, or samples of an older host tool: nothing judged
    idle = [dict(s, bands=[dict(s["bands"][0], backlog_pkts=0)]) for s in _busy_samples(10e6)]
    assert busy_rate(idle) == {}
    assert busy_rate([{k: v for k, v in s.items() if k != "read_ns"} for s in _busy_samples(10e6)]) == {}


@pytest.mark.parametrize(
    ("rate_bps", "valid"), [(10e6, True), (9.9e6, True), (9.5e6, False), (10.5e6, False)]
)
def test_ingest_judges_the_shaper_rate_while_busy(tmp_path, rate_bps, valid):
    """A router that cannot forward at the plan's rate (a loaded TCG VM)
    queues elsewhere: the run is not faithful, as in the mininet backend."""
    plan = _plan()
    job = TestbedBackend().job(plan, GROUPS)
    st = _staging(tmp_path, plan, job)
    (st / "rtr" / "queue-samples.json").write_text(
        json.dumps({"queue": "bottleneck:L", "samples": _busy_samples(rate_bps)})
    )
    facts = TestbedBackend().ingest(plan, job, st, tmp_path / "work")
    assert facts["fidelity"]["achieved_rate_bps"] == pytest.approx(rate_bps, rel=1e-3)
    assert facts["valid"] is valid, facts["invalid_reasons"]
    if not valid:
        assert facts["invalid_reasons"][-1].startswith("achieved rate ")
        assert "against the configured 10000000 b/s (tolerance 2%)" in facts["invalid_reasons"][-1]


@pytest.mark.parametrize("fault", ["drop", "incomplete"])
def test_ingest_collects_nothing_of_a_partial_run(tmp_path, fault):
    plan = _plan()
    job = TestbedBackend().job(plan, GROUPS)
    st = _staging(tmp_path, plan, job, **{fault: "rcv"})
    work = tmp_path / "work"
    with pytest.raises(backends.BackendError, match=r"host rcv: .*nothing collected"):
        TestbedBackend().ingest(plan, job, st, work)
    assert not work.exists()


def test_ingest_marks_a_run_whose_clocks_drifted_invalid(tmp_path):
    plan = _plan()
    job = TestbedBackend().job(plan, GROUPS)
    st = _staging(tmp_path, plan, job)
    clock = {
        "offset_ms": {"snd": 80.0, "rcv": 80.0},
        "uncertainty_ms": {"snd": 20.0, "rcv": 40.0},
        "bound_ms": 50,
    }
    (st / "clock.json").write_text(json.dumps(clock))
    facts = TestbedBackend().ingest(plan, job, st, tmp_path / "work")
    # 80 ms off, known to within 20 ms: beyond the bound; within 40 ms: not proven beyond it
    assert not facts["valid"] and facts["invalid_reasons"] == [
        "host snd: clock offset 80.0 ms (probe uncertainty 20.0 ms) exceeds 50 ms"
    ]


# --- the virtual testbed (make test-testbed) --------------------------------


def _vm_skip() -> str | None:
    if not os.environ.get("QLAB_TEST_TESTBED"):
        return "the virtual testbed runs in `make test-testbed` (QLAB_TEST_TESTBED=1): minutes of TCG"
    if os.geteuid() != 0:
        return "the virtual testbed needs root (debootstrap)"
    for tool in ("qemu-system-x86_64", "debootstrap", "mkfs.ext4", "chronyd"):
        if not shutil.which(tool) and not Path("/usr/sbin", tool).exists():
            return f"{tool} not installed (apt-get install qemu-system-x86 debootstrap e2fsprogs chrony)"
    if (
        not (REPO / "build/linux/kmod/sch_qlab.ko").exists()
        or not (REPO / "build/linux/tc/q_qlab.so").exists()
    ):
        return "qlab's modules and tc plugins not built (make -C disciplines/linux modules plugins)"
    return None


@pytest.fixture(scope="module")
def vm_testbed():
    why = _vm_skip()
    if why and os.environ.get("QLAB_TEST_TESTBED"):
        # asked for (make test-testbed, CI's smoke): a missing piece is a failure, not a skip
        pytest.fail(why)
    if why:
        pytest.skip(why)
    from qlab import testbed_vm

    t0 = time.monotonic()
    try:
        testbed_vm.up()
    except BaseException:
        testbed_vm.down()  # nothing left running by a failed boot
        raise
    print(f"virtual testbed up in {time.monotonic() - t0:.0f} s")
    try:
        yield testbed_vm
    finally:
        testbed_vm.down()


def _prepare() -> dict[str, int]:
    """playbooks/testbed-prepare.yml on the testbed: each host's changed count."""
    import re
    import subprocess

    from qlab.backends import testbed as tb

    extra = json.dumps({"qlab_tb_kmod_dir": str(tb.KMOD_DIR), "qlab_tb_tc_dir": str(tb.TC_DIR)})
    env = {**os.environ, "ANSIBLE_CONFIG": str(REPO / "playbooks/ansible.cfg"), "ANSIBLE_NOCOLOR": "1"}
    proc = subprocess.run(
        [str(REPO / ".venv/bin/ansible-playbook"), "-i", str(tb.inventory()), "playbooks/testbed-prepare.yml"]
        + ["-e", extra],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert proc.returncode == 0, proc.stdout[-3000:]
    return {h: int(c) for h, c in re.findall(r"(tb-\w+)\s+: ok=\d+\s+changed=(\d+)", proc.stdout)}


def test_vm_testbed_preparation_is_idempotent(vm_testbed):
    """preflight and qdisc_kmod (playbooks/testbed-prepare.yml): the second run changes nothing."""
    _prepare()
    second = _prepare()
    assert len(second) == 3 and not any(second.values()), second


def _full(what: str) -> None:
    """The full suite only (make test-testbed); CI's smoke (QLAB_TEST_TESTBED=smoke)
    runs one job and one fault."""
    if os.environ.get("QLAB_TEST_TESTBED") == "smoke":
        pytest.skip(f"{what}: make test-testbed runs it (CI runs the smoke)")


# The rate the virtual testbed's router holds on two cores (docs/benchmarks.md,
# "The virtual testbed": about 8 of a 10 Mb/s plan, 4.94 of a 5 Mb/s one).
VM_RATE_BPS = 5_000_000


def _vm_plan(kind: str = "ncq") -> dict:
    plan = small_dumbbell("testbed", duration_ns=30_000_000_000, bulk_bytes=200_000, packets=False)
    for link in plan["links"]:
        if link["id"] == "bottleneck":
            link["rate_bps"] = VM_RATE_BPS
    if kind != "ncq":
        params = {"srd": {"rate_bps": VM_RATE_BPS}, "rbaqm": {"rate_bps": VM_RATE_BPS}}.get(kind, {})
        for link in plan["links"]:
            for end, q in link["queues"].items():
                if q["kind"] == "ncq":
                    link["queues"][end] = queue(kind, **params)
    return plan


def _fails_cleanly(run, match: str, tmp_path: Path) -> str:
    """run() must raise BackendError matching `match` and leave nothing behind."""
    t0 = time.monotonic()
    with pytest.raises(backends.BackendError, match=match) as err:
        run()
    print(f"failed as it should in {time.monotonic() - t0:.0f} s: {str(err.value)[:400]}")
    assert not (tmp_path / "out").exists()
    assert not list(tmp_path.glob(".out.work-*"))
    return str(err.value)


def _play(plan: dict, tmp_path: Path, **kw) -> dict:
    from qlab.backends import testbed as tb

    backend = TestbedBackend()
    job = backend.job(plan, tb._groups(tb.inventory()))
    for key, value in kw.pop("router", {}).items():
        job["router"][key] = value
    return backend.play(plan, job, tmp_path / "out", tmp_path / "run.log", "a testbed test", **kw)


def test_vm_testbed_names_the_tc_option_the_module_refuses(vm_testbed, tmp_path):
    _full("a refused tc option")
    plan = _vm_plan()
    from qlab.backends import testbed as tb

    job = TestbedBackend().job(plan, tb._groups(tb.inventory()))
    bad = [*job["router"]["qdisc"], "thresh", "7"]  # NCQ's threshold is a fraction of the link
    msg = _fails_cleanly(
        lambda: _play(plan, tmp_path, router={"qdisc": bad}), r"tb-router: tc: discipline", tmp_path
    )
    assert "thresh" in msg


def test_vm_testbed_names_a_module_that_fails_to_load(vm_testbed, tmp_path):
    _full("a module that fails to load")
    from qlab.backends import testbed as tb

    kmod = tmp_path / "kmod"
    shutil.copytree(tb.KMOD_DIR, kmod)
    (kmod / "sch_ncq.ko").write_bytes((kmod / "sch_ncq.ko").read_bytes()[:4096])  # truncated
    _fails_cleanly(
        lambda: _play(_vm_plan(), tmp_path, kmod_dir=kmod),
        r"tb-router: qdisc_kmod: sch_ncq failed to load",
        tmp_path,
    )


def _ssh(vm_testbed, name: str, command: str) -> str:
    import subprocess

    vm = next(v for v in vm_testbed.VMS if v.name == name)
    # stdin not shared: ssh makes its stdin non-blocking, which would break an
    # ansible-playbook started beside it
    r = subprocess.run(
        [*vm_testbed._ssh_base(vm), command],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_vm_testbed_refuses_a_host_whose_clock_is_off(vm_testbed, tmp_path):
    _full("a clock out of sync")
    # two seconds ahead, behind chrony's back; chronyd then slews (it steps only at start)
    _ssh(vm_testbed, "tb-sender", "date -u -s @$(( $(date +%s) + 2 )) >/dev/null; sleep 6")
    try:
        _fails_cleanly(
            lambda: runjob.run_job(write_plan(tmp_path, _vm_plan()), tmp_path / "out", tmp_path / "run.log"),
            r"tb-sender: preflight: clock out of sync",
            tmp_path,
        )
    finally:
        _ssh(vm_testbed, "tb-sender", "chronyc -n makestep >/dev/null")
        vm = next(v for v in vm_testbed.VMS if v.name == "tb-sender")
        vm_testbed.wait_clock(vm, time.monotonic())


def test_vm_testbed_fails_loudly_when_a_host_dies_mid_run(vm_testbed, tmp_path):
    _full("a host that dies mid-run")
    import threading

    killed = threading.Event()

    def kill_once_begun() -> None:
        # the receiver has its epoch: the run has begun
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline and not killed.is_set():
            try:
                if _ssh(
                    vm_testbed, "tb-receiver", "test -e /var/tmp/qlab-testbed/epoch.json && echo yes || true"
                ):
                    break
            except AssertionError:
                pass
            time.sleep(1)
        vm_testbed.kill_vm("tb-receiver")
        killed.set()

    watcher = threading.Thread(target=kill_once_begun, daemon=True)
    watcher.start()
    try:
        # run_job in the main thread (it installs signal handlers)
        _fails_cleanly(
            lambda: runjob.run_job(write_plan(tmp_path, _vm_plan()), tmp_path / "out", tmp_path / "run.log"),
            r"tb-receiver",
            tmp_path,
        )
        assert killed.is_set()
    finally:
        killed.set()
        watcher.join(timeout=60)
        vm_testbed.up(build=False)


def test_vm_testbed_fails_loudly_on_a_dead_host_and_collects_nothing(vm_testbed, tmp_path):
    vm_testbed.kill_vm("tb-receiver")
    try:
        _fails_cleanly(
            lambda: runjob.run_job(write_plan(tmp_path, _vm_plan()), tmp_path / "out", tmp_path / "run.log"),
            r"tb-receiver",
            tmp_path,
        )
    finally:
        vm_testbed.up(build=False)


# After the faults: the next run starts clean, with each of the kernel's qlab
# qdiscs (qlab, ncq, cqaqm, srd, rbwfq).
@pytest.mark.parametrize("kind", ["ncq", "droptail", "cqaqm", "srd", "rbaqm"])
def test_vm_testbed_runs_a_job_through_each_kernel_qdisc(vm_testbed, tmp_path, kind):
    if kind != "ncq":
        _full(f"the job with {kind}")
    plan = _vm_plan(kind)
    job = write_plan(tmp_path, plan)
    out = tmp_path / "out"
    t0 = time.monotonic()
    run = runjob.run_job(job, out, tmp_path / "run.log")
    print(
        f"one job ({kind}) on the virtual testbed: {time.monotonic() - t0:.0f} s; fidelity {run['fidelity']}"
    )
    assert traces.check_dir(out, job=job) == []
    assert run["backend"] == "testbed" and run["all_completed"], run
    # a router the machine's load kept below the plan's rate: a warning (the
    # run says why); any other reason fails
    faithful(run["valid"], run["invalid_reasons"])
    fid = run["fidelity"]
    # every data packet crossed the router's qdisc (the kernel forwarded them)
    assert fid["qdisc_arrivals_pkts"] >= fid["senders_data_pkts"] > 0, fid
    # the clocks, by chrony, within the bound
    assert all(abs(v) <= fid["clock_bound_ms"] for v in fid["clock_offset_ms"].values()), fid


def test_vm_testbed_captures_the_router_egress_when_asked(vm_testbed, tmp_path, monkeypatch):
    """testbed_capture_pcap in the inventory: tcpdump on the router's egress
    for the run, the pcap placed beside the run's tables, tcpdump's counts
    in its fidelity record."""
    _full("the pcap")
    import yaml

    from qlab.backends import testbed as tb

    inv = yaml.safe_load(tb.inventory().read_text())
    router = inv["all"]["children"]["testbed"]["children"]["routers"]["hosts"]["tb-router"]
    router["testbed_capture_pcap"] = True
    (tmp_path / "inv.yml").write_text(yaml.safe_dump(inv))
    monkeypatch.setenv("QLAB_TESTBED_INVENTORY", str(tmp_path / "inv.yml"))
    job = write_plan(tmp_path, _vm_plan())
    out = tmp_path / "out"
    run = runjob.run_job(job, out, tmp_path / "run.log")
    assert traces.check_dir(out, job=job) == []
    pcap = (out / "router-egress.pcap").read_bytes()
    # a pcap's magic (microsecond timestamps, this machine's byte order)
    assert pcap[:4] in (b"\xd4\xc3\xb2\xa1", b"\xa1\xb2\xc3\xd4"), pcap[:4]
    fid = run["fidelity"]
    # every packet the discipline sent left on that interface
    assert fid["pcap_captured_pkts"] >= fid["qdisc_sent_pkts"] > 0, fid


# --- the mnkernel backend: Mininet inside the router VM, the kernel qdisc as its bottleneck


def test_vm_mnkernel_runs_a_job_in_mininet_with_the_kernel_qdisc(vm_testbed, tmp_path):
    """issue 21, item 3: the mininet backend's dumbbell in the router VM
    (whose kernel loads qlab's modules), with the NCQ qdisc under HTB as
    its bottleneck instead of qlab-emu; the traces pass the validator,
    every data packet crossed the qdisc."""
    _full("mnkernel's job")
    plan = {**_vm_plan(), "backend": "mnkernel"}
    job = write_plan(tmp_path, plan)
    out = tmp_path / "out"
    t0 = time.monotonic()
    run = runjob.run_job(job, out, tmp_path / "run.log")
    print(f"one mnkernel job on the router VM: {time.monotonic() - t0:.0f} s; fidelity {run['fidelity']}")
    assert traces.check_dir(out, job=job) == []
    assert run["backend"] == "mnkernel" and run["all_completed"], run
    faithful(run["valid"], run["invalid_reasons"])
    fid = run["fidelity"]
    assert fid["qdisc_arrivals_pkts"] >= fid["senders_data_pkts"] > 0, fid
    assert run["versions"]["mininet"] and run["versions"]["kernel"].endswith("-amd64")


def test_vm_mnkernel_names_the_tc_option_the_module_refuses(vm_testbed, tmp_path, monkeypatch):
    """A tc option the qdisc refuses stops the run in the helper, naming the
    host, the step and tc's words; nothing is collected, and the helper
    leaves no namespace or process behind (the next test runs clean)."""
    _full("mnkernel's refused tc option")
    from qlab.backends.mnkernel import MnKernelBackend

    real = MnKernelBackend.job

    def bad(plan):
        job = real(plan)
        job["kernel"]["qdisc"] = [*job["kernel"]["qdisc"], "thresh", "7"]
        return job

    monkeypatch.setattr(MnKernelBackend, "job", staticmethod(bad))
    plan = {**_vm_plan(), "backend": "mnkernel"}
    msg = _fails_cleanly(
        lambda: MnKernelBackend().run(write_plan(tmp_path, plan), tmp_path / "out", tmp_path / "run.log"),
        r"tb-router: mininet: run: .*tc: discipline",
        tmp_path,
    )
    assert "thresh" in msg
    # Mininet's host shells and the flows' processes, gone with the run
    left = _ssh(vm_testbed, "tb-router", "pgrep -fc '[m]ininet:|[q]lab_traffic' || true")
    assert left.strip() == "0", left


# Last: it boots the testbed twice more.
def test_vm_testbed_router_builds_the_modules_with_dkms(vm_testbed, tmp_path):
    """The role's DKMS method on the router itself: the router boots the
    DKMS image (`qlab testbed up --dkms`: dkms, make, gcc and its kernel's
    headers), the role sends the DKMS tree made from this checkout and dkms
    builds and installs it there; a job runs through the modules it built,
    and a second preparation builds and changes nothing."""
    _full("the DKMS method on the router")
    vm_testbed.down()
    try:
        t0 = time.monotonic()
        vm_testbed.up(dkms=True)
        print(f"virtual testbed up with the DKMS router in {time.monotonic() - t0:.0f} s")
        assert "testbed_qdisc_kmod_method: dkms" in vm_testbed.INVENTORY.read_text()
        job = write_plan(tmp_path, _vm_plan())
        t0 = time.monotonic()
        run = runjob.run_job(job, tmp_path / "out", tmp_path / "run.log")
        print(
            f"the first job, DKMS build included: {time.monotonic() - t0:.0f} s; fidelity {run['fidelity']}"
        )
        assert run["versions"]["testbed-kmod"] == "dkms", run["versions"]
        faithful(run["valid"], run["invalid_reasons"])
        kver = run["versions"]["testbed-kernel"]
        for mod in ("qlab_core", "sch_ncq"):
            assert (
                _ssh(vm_testbed, "tb-router", f"modinfo -n {mod}")
                .strip()
                .startswith(f"/lib/modules/{kver}/updates/dkms/{mod}.ko")
            )
        assert "qlab/" in _ssh(vm_testbed, "tb-router", f"dkms status -k {kver}")
        t0 = time.monotonic()
        again = _prepare()
        print(f"a second preparation: {time.monotonic() - t0:.0f} s, changed {again}")
        assert len(again) == 3 and not any(again.values()), again
    finally:
        vm_testbed.down()
        vm_testbed.up(dkms=False)

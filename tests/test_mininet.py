"""The mininet backend: qlab-emu between network namespaces, the Mininet run
helper, its cleanup after a kill, and the whole path Snakemake -> Ansible ->
Mininet -> qlab-emu -> traces.

Needs root, Debian's Mininet (/usr/bin/python3) and a C compiler; skipped
otherwise. Every namespace, interface and process a test makes carries a
random tag and is removed in the test's teardown.
"""

from __future__ import annotations

import gzip
import importlib.util
import json
import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from qlab import traces

from .conftest import REPO

EMU_DIR = REPO / "disciplines" / "emu"
EMU = REPO / "build" / "emu" / "qlab-emu"
TRAFFIC = EMU_DIR / "qlab_traffic.py"
HELPER = EMU_DIR / "qlab_mn_run.py"
DEBIAN_PY = "/usr/bin/python3"
SNAKEMAKE = Path(sys.executable).parent / "snakemake"


def _have_mininet() -> bool:
    if not Path(DEBIAN_PY).exists():
        return False
    return subprocess.run([DEBIAN_PY, "-c", "import mininet.net"], capture_output=True).returncode == 0


pytestmark = [
    pytest.mark.skipif(os.geteuid() != 0, reason="needs root (namespaces, raw sockets)"),
    pytest.mark.skipif(shutil.which("ip") is None, reason="needs iproute2"),
]
needs_mininet = pytest.mark.skipif(not _have_mininet(), reason="Debian's Mininet is not installed")


def _load_helper():
    spec = importlib.util.spec_from_file_location("qlab_mn_run", HELPER)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


helper = _load_helper()


@pytest.fixture(scope="module")
def emu() -> Path:
    proc = subprocess.run(["make", "-s", "-C", str(EMU_DIR)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return EMU


# ---------------------------------------------------------------------------
# qlab-emu alone: sender namespace -- middle (qlab-emu) -- receiver namespace


class Wire:
    """Three namespaces TAGa -- TAGm -- TAGb joined by veth pairs, offloads off."""

    def __init__(self) -> None:
        self.tag = f"qt{secrets.token_hex(2)}"
        self.ns = {k: f"{self.tag}{k}" for k in "amb"}
        self.procs: list[subprocess.Popen] = []
        t = self.tag
        cmds = [f"ip netns add {n}" for n in self.ns.values()] + [
            f"ip link add {t}a0 type veth peer name {t}ma",
            f"ip link add {t}b0 type veth peer name {t}mb",
            f"ip link set {t}a0 netns {t}a", f"ip link set {t}ma netns {t}m",
            f"ip link set {t}b0 netns {t}b", f"ip link set {t}mb netns {t}m",
            f"ip -n {t}a addr add 10.9.0.1/24 dev {t}a0", f"ip -n {t}b addr add 10.9.0.2/24 dev {t}b0",
        ]
        for ns, dev in (("a", "a0"), ("b", "b0"), ("m", "ma"), ("m", "mb")):
            cmds += [f"ip -n {t}{ns} link set {t}{dev} up",
                     f"ip netns exec {t}{ns} ethtool -K {t}{dev} tso off gso off gro off tx off rx off"]
        for ns in "amb":
            cmds += [f"ip -n {t}{ns} link set lo up",
                     f"ip netns exec {t}{ns} sysctl -qw net.ipv6.conf.all.disable_ipv6=1"]
        for c in cmds:
            subprocess.run(c.split(), check=True, capture_output=True)

    def popen(self, ns: str, cmd: list[str], **kw) -> subprocess.Popen:
        p = subprocess.Popen(["ip", "netns", "exec", self.ns[ns], *cmd], **kw)
        self.procs.append(p)
        return p

    def close(self) -> None:
        for p in self.procs:
            if p.poll() is None:
                p.kill()
                p.wait()
        for n in self.ns.values():
            subprocess.run(["ip", "netns", "del", n], capture_output=True)


@pytest.fixture
def wire():
    w = Wire()
    yield w
    w.close()
    leftover = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    assert w.tag not in leftover


def run_emu(wire: Wire, emu: Path, tmp: Path, args: list[str], traffic) -> dict:
    """qlab-emu in the middle for the duration of traffic(); returns its summary."""
    (tmp / "flowmap").write_text("10.9.0.1 7\n")
    epoch = time.time_ns() + 200_000_000
    p = wire.popen("m", [str(emu), "--if-a", f"{wire.tag}ma", "--if-b", f"{wire.tag}mb",
                         "--epoch-ns", str(epoch), "--flowmap", str(tmp / "flowmap"),
                         "--queues", str(tmp / "queues.csv"), "--packets", str(tmp / "packets.csv"),
                         "--summary", str(tmp / "summary.json"), "--ready", str(tmp / "ready"),
                         "--rt-priority", "50", *args])
    deadline = time.monotonic() + 5
    while not (tmp / "ready").exists():
        assert p.poll() is None and time.monotonic() < deadline, "qlab-emu did not start"
        time.sleep(0.01)
    traffic()
    p.send_signal(signal.SIGTERM)
    assert p.wait(timeout=10) == 0
    return json.loads((tmp / "summary.json").read_text())


def check_tables(tmp: Path) -> None:
    """The emulator's tables pass the trace validator's table rules."""
    for table in ("queues", "packets"):
        plain = tmp / f"{table}.csv"
        (tmp / f"{table}.csv.gz").write_bytes(traces.gzip_bytes(plain.read_bytes()))
        problems, rows = traces.check_table(tmp / f"{table}.csv.gz", table)
        assert not problems, problems
        if table == "queues":
            assert not traces._check_queues(tmp / "queues.csv.gz", rows)


def udp_flow(wire: Wire, tmp: Path, *, rate_bps: float, pkt_bytes: int, seconds: float, tos: int = 0) -> dict:
    sink = wire.popen("b", [sys.executable, str(TRAFFIC), "udp-sink", "--port", "6001",
                            "--out", str(tmp / "sink.json")])
    while not (tmp / "sink.json.listening").exists():
        time.sleep(0.01)
    epoch = time.time_ns() + 100_000_000
    send = wire.popen("a", [sys.executable, str(TRAFFIC), "udp-send", "--dst", "10.9.0.2", "--port", "6001",
                            "--pkt-bytes", str(pkt_bytes), "--rate-bps", str(rate_bps),
                            "--periods", json.dumps([[0.0, seconds]]), "--tos", str(tos),
                            "--epoch-ns", str(epoch), "--out", str(tmp / "send.json")])
    while not (tmp / "send.json").exists():
        assert send.poll() is None
        time.sleep(0.05)
    time.sleep(0.3)  # the queue drains (<= 40 packets at 10 Mb/s) and the last delay passes
    for p in (send, sink):
        p.send_signal(signal.SIGTERM)
        p.wait(timeout=5)
    return {"send": json.loads((tmp / "send.json").read_text()),
            "sink": json.loads((tmp / "sink.json").read_text())}


def test_emu_rate_delay_and_buffer(wire, emu, tmp_path):
    """12 Mb/s of 1000-byte datagrams into a 10 Mb/s, 10 ms, 40-packet DropTail link."""
    res = {}

    def traffic():
        res.update(udp_flow(wire, tmp_path, rate_bps=12e6, pkt_bytes=1000, seconds=1.5))

    s = run_emu(wire, emu, tmp_path, ["--rate-bps", "10000000", "--delay-ns", "10000000",
                                      "--disc", "droptail", "--param", "limit_pkts=40"], traffic)
    tx, rx = res["send"]["tx"], res["sink"]["rx"]
    assert tx == 2250
    tx_time_s = 1000 * 8 / 10e6
    # Delivered: what the link serves in 1.5 s plus the buffer's content (the
    # first packets find an idle link: + 1).
    expected = 1.5 / tx_time_s + 40 + 1
    assert abs(rx - expected) <= 0.02 * expected, (rx, expected)
    fwd = s["forward"]
    assert fwd["dropped_pkts"] == tx - rx
    assert abs(fwd["achieved_rate_bps"] / 10e6 - 1) < 0.01
    # One-way delay: at least propagation + one transmission, at most with a
    # full buffer ahead (40 packets), plus scheduling slack.
    # (The sender stamps a datagram just before sendto(); on a loaded machine
    # it may be descheduled in between, so the receiver's maximum is loose.)
    min_delay = 0.010 + tx_time_s
    delay_max_s = res["sink"]["delay_max_ns"] / 1e9
    assert min_delay + 30 * tx_time_s <= delay_max_s <= min_delay + 40 * tx_time_s + 0.03
    mean = res["sink"]["delay_sum_ns"] / rx / 1e9
    assert min_delay <= mean <= min_delay + 40 * tx_time_s + 1e-3
    assert fwd["added_delay"]["mean_s"] == pytest.approx(0.010, abs=2e-4)
    valid, reasons, _ = helper.fidelity(s)
    assert valid, reasons
    check_tables(tmp_path)
    with gzip.open(tmp_path / "packets.csv.gz", "rt") as f:
        rows = [line.split(",") for line in f.read().splitlines()[1:]]
    drops = [r for r in rows if r[2] == "drop"]
    assert len(drops) == tx - rx and {r[7] for r in drops} == {"overflow"}
    assert {r[5] for r in rows} == {"7"}  # flow id from the source address
    assert {int(r[4]) for r in rows if r[2] == "enq"} == {1000}  # the IP length, no Ethernet header
    # The model's own sojourn (virtual time): at most the 40 packets ahead.
    sojourns = [float(r[6]) for r in rows if r[2] == "deq"]
    assert 30 * tx_time_s <= max(sojourns) <= 40 * tx_time_s + 1e-9


def test_emu_classifies_tos_like_ns3(wire, emu, tmp_path):
    """ToS 0x28 (cls 1, prec 1) lands in prio's band 1; prio rejects nothing here."""

    def traffic():
        udp_flow(wire, tmp_path, rate_bps=400e3, pkt_bytes=200, seconds=0.5, tos=1 << 5 | 1 << 3)

    s = run_emu(wire, emu, tmp_path, ["--rate-bps", "10000000", "--disc", "prio", "--param", "bands=2"],
                traffic)
    assert s["forward"]["rejected_pkts"] == 0
    rows = [line.split(",") for line in (tmp_path / "packets.csv").read_text().splitlines()[1:]]
    assert rows and {r[3] for r in rows} == {"1"}


def test_emu_tcp_transfer(wire, emu, tmp_path):
    """A 500 kB TCP transfer with a 1000-byte MSS completes in about its transmission time."""
    res = {}

    def traffic():
        sink = wire.popen("b", [sys.executable, str(TRAFFIC), "tcp-sink", "--port", "5001",
                                "--goal", "500000", "--mss", "1000", "--out", str(tmp_path / "sink.json")])
        while not (tmp_path / "sink.json.listening").exists():
            time.sleep(0.01)
        start = time.time_ns() + 50_000_000
        send = wire.popen("a", [sys.executable, str(TRAFFIC), "tcp-send", "--dst", "10.9.0.2",
                                "--port", "5001", "--bytes", "500000", "--mss", "1000", "--tos", "0",
                                "--start-ns", str(start),
                                "--out", str(tmp_path / "send.json")])
        deadline = time.monotonic() + 10
        while not (tmp_path / "send.json").exists():
            assert time.monotonic() < deadline
            time.sleep(0.05)
        for p in (send, sink):
            p.send_signal(signal.SIGTERM)
            p.wait(timeout=5)
        res["sink"] = json.loads((tmp_path / "sink.json").read_text())
        res["send"] = json.loads((tmp_path / "send.json").read_text())
        res["start"] = start

    run_emu(wire, emu, tmp_path, ["--rate-bps", "10000000", "--delay-ns", "5000000",
                                  "--param", "limit_pkts=100"], traffic)
    assert res["sink"]["delivered"] == 500000
    fct = (res["sink"]["end_ns"] - res["start"]) / 1e9
    assert 0.4 < fct < 1.5, fct  # 0.4 s of transmission at 10 Mb/s plus slow start over a 10 ms RTT
    assert res["send"]["tx_segments"] >= 500


# ---------------------------------------------------------------------------
# fidelity invariants


def _summary(**fwd) -> dict:
    base = {"rate_bps": 10_000_000, "delay_s": 0.01, "overhead_bytes": 2, "achieved_rate_bps": 10_000_000.0,
            "spacing_error": {"n": 1000, "abs_p99_s": 20e-6},
            "added_delay": {"n": 1000, "mean_s": 0.01002, "abs_p99_s": 0.01005},
            "kernel_drops": 0, "send_failed_pkts": 0, "truncated_pkts": 0, "rejected_pkts": 0}
    base.update(fwd)
    rev = {k: 0 for k in ("kernel_drops", "send_failed_pkts", "truncated_pkts", "rejected_pkts")}
    return {"forward": base, "reverse": rev}


def test_fidelity_accepts_a_faithful_run():
    valid, reasons, facts = helper.fidelity(_summary())
    assert valid and reasons == []
    assert facts["achieved_rate_bps"] == 10_000_000.0


@pytest.mark.parametrize(("change", "words"), [
    ({"achieved_rate_bps": 9_500_000.0}, "achieved rate"),
    ({"spacing_error": {"n": 1000, "abs_p99_s": 2e-3}}, "spacing"),
    ({"added_delay": {"n": 1000, "mean_s": 0.0105, "abs_p99_s": 0.0106}}, "mean added delay"),
    ({"added_delay": {"n": 1000, "mean_s": 0.0101, "abs_p99_s": 0.013}}, "p99 added delay"),
    ({"kernel_drops": 3}, "kernel dropped"),
    ({"send_failed_pkts": 1}, "could not send"),
])
def test_fidelity_flags_an_unfaithful_run(change, words):
    valid, reasons, _ = helper.fidelity(_summary(**change))
    assert not valid
    assert any(words in r for r in reasons), reasons


# ---------------------------------------------------------------------------
# Mininet: the helper, a kill mid-way, the next run


def _job(tmp: Path, duration_s: float, task_bytes: int) -> Path:
    job = {
        "schema": "qlab-job/1", "scenario": "emutest/kill", "paper": "emutest", "backend": "mininet",
        "series": "droptail", "point": "droptail", "point_values": {}, "seed": 1,
        "duration_s": duration_s, "stop_when_done": True,
        "topology": {"kind": "dumbbell", "access_rate_bps": 100_000_000, "access_delay_s": 0.001,
                     "bottleneck_rate_bps": 10_000_000, "bottleneck_delay_s": 0.01},
        "tcp": {"variant": "NewReno", "sack": False, "timestamps": False, "window_scaling": False,
                "initial_cwnd_segments": 2, "delayed_ack_count": 1, "min_rto_s": 0.2, "syn_timeout_s": 1.0,
                "rcv_buf_bytes": 131072, "snd_buf_bytes": 131072},
        "discipline": {"kind": "droptail", "params": {"limit_pkts": "50"}},
        "flows": [
            {"flow_id": 0, "app": "bulk", "group": "bulk", "cls": 0, "prec": 0, "seg_bytes": 1000,
             "bytes": task_bytes, "start_s": 0.05},
            {"flow_id": 1, "app": "cbr", "group": "cbr", "cls": 1, "prec": 0, "pkt_bytes": 200,
             "rate_bps": 100_000, "start_s": 0.1, "on_periods": [[0.1, 0.6]]},
        ],
        "trace": {"queue_sample_interval_s": 0.1, "packets": True},
    }
    path = tmp / "job.json"
    path.write_text(json.dumps(job))
    return path


def _leftovers(tag: str) -> list[str]:
    out = [f"process {pid}" for pid in helper.tagged_pids(tag)]
    out += [f"link {name}" for name in helper.tagged_links(tag)]
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                if f"mininet:{tag}".encode() in (d / "cmdline").read_bytes():
                    out.append(f"host shell {d.name}")
            except OSError:
                pass
    if (helper.STATE_DIR / f"{tag}.json").exists():
        out.append("state file")
    return out


# Fidelity is judged on real timing: on a loaded machine a run can break the
# invariants (and is marked invalid, as it should be). Tests that need a
# faithful run try up to this many times before failing.
TIMING_ATTEMPTS = 3


@needs_mininet
def test_helper_run_writes_valid_tables(emu, tmp_path):
    job = _job(tmp_path, 10, 300_000)
    for attempt in range(TIMING_ATTEMPTS):
        out = tmp_path / f"out{attempt}"
        proc = subprocess.run([DEBIAN_PY, str(HELPER), str(job), str(out), "--emu", str(emu)],
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
        facts = json.loads((out / "runner.json").read_text())
        if facts["valid"]:
            break
    assert facts["all_completed"] is True and facts["valid"] is True, facts
    tag = facts["emulator"]["tag"]
    assert _leftovers(tag) == []
    for table in ("flows", "queues", "packets"):
        (out / f"{table}.csv.gz").write_bytes(traces.gzip_bytes((out / f"{table}.csv").read_bytes()))
        problems, rows = traces.check_table(out / f"{table}.csv.gz", table)
        assert not problems, problems
        if table == "flows":
            assert not traces._check_flows(out / "flows.csv.gz", rows, facts["sim_end_s"])
            bulk, cbr = rows
            assert bulk["bytes_delivered"] == 300_000 and bulk["fct_s"] > 0.24
            assert cbr["tx_packets"] == 32 and cbr["rx_packets"] + cbr["lost_packets"] == 32  # 0.5 s / 16 ms


@needs_mininet
def test_kill_mid_run_leaves_nothing_and_next_run_succeeds(emu, tmp_path):
    """SIGKILL the whole run (qlab run-job, ansible-playbook, the helper) while
    traffic flows; the reaper removes everything; the next run passes."""
    before = set(helper.STATE_DIR.glob("q*.json")) if helper.STATE_DIR.exists() else set()
    job = _job(tmp_path, 60, 200_000_000)  # would run for a minute
    proc = subprocess.Popen([sys.executable, "-m", "qlab", "run-job", str(job),
                             "--out", str(tmp_path / "res"), "--log", str(tmp_path / "log")],
                            cwd=REPO, start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    tag = None
    deadline = time.monotonic() + 90
    try:
        while time.monotonic() < deadline:
            new = set(helper.STATE_DIR.glob("q*.json")) - before if helper.STATE_DIR.exists() else set()
            if new:
                tag = json.loads(sorted(new)[0].read_text())["tag"]
                emu_running = any(b"qlab-emu" in Path(f"/proc/{pid}/cmdline").read_bytes()
                                  for pid in helper.tagged_pids(tag) if Path(f"/proc/{pid}").exists())
                if emu_running:
                    break
            assert proc.poll() is None, "the run ended before it could be killed"
            time.sleep(0.1)
        else:
            pytest.fail("the run never started qlab-emu")
        time.sleep(1.0)  # traffic flowing
        assert _leftovers(tag), "the run should be visible before the kill"
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    deadline = time.monotonic() + 20
    while _leftovers(tag) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _leftovers(tag) == []
    assert not (tmp_path / "res" / "run.json").exists()

    from qlab import runjob

    for attempt in range(TIMING_ATTEMPTS):
        out = tmp_path / f"res-again{attempt}"
        run = runjob.run_job(_job(tmp_path, 10, 200_000), out, tmp_path / "log2")
        if run["valid"]:
            break
    assert run["valid"] is True and run["all_completed"] is True, run["invalid_reasons"]
    assert traces.check_dir(out) == []


# ---------------------------------------------------------------------------
# Snakemake -> Ansible -> Mininet -> qlab-emu -> traces


@needs_mininet
@pytest.mark.skipif(not SNAKEMAKE.exists(), reason="no snakemake in the venv")
def test_snakemake_ansible_mininet_end_to_end(emu, tmp_path):
    """The ncq-conf/emu scenario (test profile: 10 flows, DropTail and NCQ,
    one seed) through the whole workflow on ns3 and mininet, to the
    sim-vs-emulation page."""
    scen_dir = tmp_path / "scenarios" / "ncq-conf"
    scen_dir.mkdir(parents=True)
    for name in ("defaults.yaml", "emu.yaml"):
        shutil.copy(REPO / "scenarios" / "ncq-conf" / name, scen_dir / name)
    results, site = tmp_path / "results", tmp_path / "site"
    cmd = [str(SNAKEMAKE), "--workflow-profile", "workflows/profiles/local", "--cores", "2", "--quiet",
           "rules", "host", "--config", "profile=test", f"results={results}", f"site={site}",
           f"scenarios={json.dumps([str(scen_dir / 'emu.yaml')])}", 'backends=["ns3", "mininet"]']
    runs = [results / "ncq-conf" / "emu" / b / f"{s}_flows-10" / "seed-1" / "run.json"
            for b in ("mininet", "ns3") for s in ("droptail", "ncq")]

    def snakemake(*extra: str) -> None:
        proc = subprocess.run([*cmd, *extra], cwd=REPO, capture_output=True, text=True, timeout=300,
                              env=dict(os.environ, TZ="UTC"))
        if proc.returncode != 0:
            logs = "\n".join(p.read_text(errors="replace")[-2000:] for p in (results / "logs").rglob("*.log"))
            pytest.fail(f"snakemake failed:\n{proc.stderr[-3000:]}\n{logs}")

    t0 = time.monotonic()
    snakemake()
    assert time.monotonic() - t0 < 180
    for _ in range(TIMING_ATTEMPTS - 1):  # an emulation run the machine's load made unfaithful: again
        unfaithful = [str(r) for r in runs if not json.loads(r.read_text())["valid"]]
        if not unfaithful:
            break
        snakemake("--forcerun", *unfaithful)
    for run_json in runs:
        d = run_json.parent
        assert traces.check_dir(d) == [], d
        run = json.loads(run_json.read_text())
        header, rows = traces.read_csv_gz(d / "flows.csv.gz")
        assert len(rows) == 10 and all(r[header.index("completed")] == "1" for r in rows)
        if run["backend"] == "mininet":
            assert run["valid"] is True, run["invalid_reasons"]
            assert run["versions"]["mininet"] and run["versions"]["qlab-emu"]
            assert run["fidelity"]["configured_rate_bps"] == 10_000_000
    # the page: four figures, the ratio table, every run's validity
    page = (site / "emulation.html").read_text(encoding="utf-8")
    assert page.count("data:image/png;base64") == 4
    assert "Mininet / ns-3 per metric" in page and "No results" not in page
    text = re.sub(r"<[^>]+>", " ", page)
    assert re.search(r"mininet\s+droptail\s+1\s+1", text) and re.search(r"ns3\s+ncq\s+1\s+1", text)
    assert "Every run passed its backend" in text

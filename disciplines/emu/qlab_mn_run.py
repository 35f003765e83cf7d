#!/usr/bin/python3
"""Run one qlab job (docs/jobs.md) in Mininet with qlab-emu as the bottleneck.

    /usr/bin/python3 qlab_mn_run.py JOB.json OUTDIR [--emu PATH] [--rt-priority N]
    /usr/bin/python3 qlab_mn_run.py --cleanup TAG | --cleanup-stale

Debian's Mininet is importable by Debian's /usr/bin/python3 only. Writes
OUTDIR/flows.csv, queues.csv, packets.csv (when trace.packets),
emu-summary.json and runner.json (facts for qlab.runjob, with `valid` and
`invalid_reasons` from the fidelity checks below); exit 2 for a job this
backend cannot run, 1 for a failed run.

The network (dumbbell; every name starts with the run's tag, e.g. `q3f2`):
  - flow i: source host TAGs<i> (10.1.x.y) on Linux bridge TAGL, sink host
    TAGd<i> (10.2.x.y) on bridge TAGR; no controller, no OpenFlow;
  - the middlebox TAGm has one interface on each bridge (no IP addresses) and
    runs qlab-emu between them: forward (L -> R) the job's discipline at
    bottleneck_rate_bps, reverse a 10000-packet droptail at the same rate;
    both directions delay packets by bottleneck_delay_s + 2 * access_delay_s
    (this kernel has no netem, so the access links' propagation is folded
    into the emulator; access links are not rate-limited);
  - offloads off everywhere (the core must see real IP packets), IPv6 off,
    static ARP between each source and its sink, TCP per host namespace from
    job.tcp (congestion control reno for NewReno, SACK, timestamps, window
    scaling, ECN off; initcwnd and rto_min on the route).

Cleanup: every process started for the run carries QLAB_MN_TAG=<tag> in its
environment; the run's bridges and root-namespace interfaces carry the tag in
their names. A reaper in its own session watches this process and, should it
die (even by SIGKILL), kills exactly those processes and deletes exactly
those links. With --watch-launcher (the emu_run role passes it), should the
leader of this process's group (an Ansible worker) or its parent
(ansible-playbook, killed with the job) die first, it stops this process
with SIGTERM first. A normal exit cleans up the same way. Nothing outside the tag is
touched (unlike `mn -c`). State files live in /run/qlab-mn/.
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import platform
import secrets
import signal
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
STATE_DIR = Path("/run/qlab-mn")
TAG_ENV = "QLAB_MN_TAG"
EXIT_BAD_JOB = 2
UDP_APPS = ("cbr", "onoff", "voip")
TCP_PORT = 5001
UDP_PORT = 6001
# IP + the 2-byte PPP header ns-3's point-to-point links add on the wire.
LINK_OVERHEAD_BYTES = 2
REVERSE_LIMIT_PKTS = 10000
UDP_DRAIN_S = 1.0

# Fidelity invariants (Mininet-HiFi style), from the emulator's own log of
# the forward link.  Thresholds are loose enough for a shared 2-core machine
# with qlab-emu at real-time priority (measured p99 lateness ~20 us), tight
# enough that a starved emulator (ms-scale lateness) fails them.
FIDELITY = {
    "rate_rel_tol": 0.02,          # achieved rate in busy periods vs configured
    "min_busy_pkts": 20,           # below this the rate is not judged
    # p99 |departure spacing - transmission time| <= max(floor, frac * MTU time)
    "spacing_p99_floor_s": 100e-6,
    "spacing_p99_mtu_frac": 0.1,
    "delay_mean_tol_s": 200e-6,    # |mean added delay - configured|
    "delay_p99_tol_s": 1e-3,       # p99 added delay - configured
}


class BadJob(Exception):
    pass


# ---------------------------------------------------------------------------
# cleanup: only what carries the tag


def tagged_pids(tag: str) -> list[int]:
    """Processes whose environment holds QLAB_MN_TAG=<tag>."""
    want = f"{TAG_ENV}={tag}".encode()
    me = os.getpid()
    out = []
    for d in os.listdir("/proc"):
        if not d.isdigit() or int(d) == me:
            continue
        try:
            env = Path(f"/proc/{d}/environ").read_bytes()
        except OSError:
            continue
        if want in env.split(b"\0"):
            out.append(int(d))
    return out


def tagged_links(tag: str) -> list[str]:
    """Root-namespace interfaces (veth ends, bridges) whose name starts with the tag."""
    out = subprocess.run(["ip", "-o", "link", "show"], capture_output=True, text=True, check=False)
    names = []
    for line in out.stdout.splitlines():
        parts = line.split(":", 2)
        if len(parts) >= 2:
            name = parts[1].strip().split("@")[0]
            if name.startswith(tag):
                names.append(name)
    return names


def cleanup(tag: str) -> dict[str, int]:
    """Kill the run's processes, delete its links and bridges; idempotent."""
    killed = 0
    for sig in (signal.SIGTERM, signal.SIGKILL):
        pids = tagged_pids(tag)
        for pid in pids:
            try:
                os.kill(pid, sig)
                killed += sig == signal.SIGTERM
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + 2.0
        while pids and time.monotonic() < deadline:
            pids = [p for p in pids if Path(f"/proc/{p}").exists() and not _zombie(p)]
            time.sleep(0.05)
        if not pids:
            break
    links = tagged_links(tag)
    # Bridges first (deleting one releases its ports), then what is left.
    for name in sorted(links, key=lambda n: "-" in n):
        subprocess.run(["ip", "link", "del", name], capture_output=True, check=False)
    (STATE_DIR / f"{tag}.json").unlink(missing_ok=True)
    return {"processes": killed, "links": len(links)}


def _zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] == "Z"
    except (OSError, IndexError):
        return True


def cleanup_stale() -> list[str]:
    """Clean every recorded run whose owner process is gone."""
    done = []
    if not STATE_DIR.is_dir():
        return done
    for f in sorted(STATE_DIR.glob("*.json")):
        try:
            state = json.loads(f.read_text())
        except (OSError, json.JSONDecodeError):
            continue
        if not Path(f"/proc/{state.get('pid', 0)}").exists():
            cleanup(state["tag"])
            done.append(state["tag"])
    return done


def _alive(pid: int) -> bool:
    return Path(f"/proc/{pid}").exists() and not _zombie(pid)


def _ppid(pid: int) -> int:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return 0


def reap(tag: str, owner: int, leader: int, leader_parent: int) -> None:
    """The reaper: when the owner (the helper) dies, clean up the tag. When
    the leader of the owner's process group (an Ansible worker, which makes
    itself a session leader) or that leader's parent (ansible-playbook) dies
    first, the run was abandoned: SIGTERM the owner (it cleans up on
    SIGTERM), then clean up whatever is left."""
    while _alive(owner):
        abandoned = leader != owner and (
            not _alive(leader) or (leader_parent > 1 and not _alive(leader_parent)))
        if abandoned:
            try:
                os.kill(owner, signal.SIGTERM)
            except ProcessLookupError:
                break
            deadline = time.monotonic() + 15
            while _alive(owner) and time.monotonic() < deadline:
                time.sleep(0.1)
            if _alive(owner):
                os.kill(owner, signal.SIGKILL)
            break
        time.sleep(0.2)
    cleanup(tag)


def start_reaper(tag: str, watch_launcher: bool) -> subprocess.Popen:
    """watch_launcher: also end the run when its process group's leader or
    that leader's parent dies (Ansible's worker and ansible-playbook);
    otherwise only the helper's own death ends it (a run started from a
    shell that exits, or under nohup, goes on)."""
    env = {k: v for k, v in os.environ.items() if k != TAG_ENV}
    leader = os.getpgrp() if watch_launcher else os.getpid()
    return subprocess.Popen(
        [sys.executable, str(Path(__file__).resolve()), "--reap", tag, str(os.getpid()), str(leader),
         str(_ppid(leader)) if watch_launcher else "0"],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        start_new_session=True, env=env, close_fds=True)


# ---------------------------------------------------------------------------
# the job


def load_job(path: Path) -> dict:
    job = json.loads(path.read_text(encoding="utf-8"))
    topo = job.get("topology", {})
    if topo.get("kind") != "dumbbell":
        raise BadJob(f"{path}: topology.kind: the mininet backend builds dumbbell only, "
                     f"got {topo.get('kind')!r}")
    if job["discipline"]["kind"] == "ns3-fifo":
        raise BadJob(f"{path}: discipline.kind: ns3-fifo exists only in the ns3 backend")
    for f in job["flows"]:
        if f["app"] not in ("bulk", *UDP_APPS):
            raise BadJob(f"{path}: flows[{f['flow_id']}].app: unknown application {f['app']!r}")
    if len(job["flows"]) > 2000:
        raise BadJob(f"{path}: flows: at most 2000 flows in emulation, got {len(job['flows'])}")
    return job


def addr(side: int, i: int) -> str:
    return f"10.{side}.{i // 250}.{i % 250 + 1}"


def tos_of(f: dict) -> int:
    return (f["cls"] << 5) | (f["prec"] << 3)


def emu_args(job: dict, emu: Path, out: Path, m_a: str, m_b: str, epoch_ns: int, rt: int) -> list[str]:
    topo = job["topology"]
    delay_ns = round((topo["bottleneck_delay_s"] + 2 * topo["access_delay_s"]) * 1e9)
    args = [str(emu), "--if-a", m_a, "--if-b", m_b,
            "--rate-bps", str(int(topo["bottleneck_rate_bps"])), "--delay-ns", str(delay_ns),
            "--rev-param", f"limit_pkts={REVERSE_LIMIT_PKTS}",
            "--overhead-bytes", str(LINK_OVERHEAD_BYTES),
            "--disc", job["discipline"]["kind"], "--seed", str(job["seed"]),
            "--epoch-ns", str(epoch_ns), "--flowmap", str(out / "flowmap.txt"),
            "--queues", str(out / "queues.csv"),
            "--sample-ns", str(round(job["trace"]["queue_sample_interval_s"] * 1e9)),
            "--summary", str(out / "emu-summary.json"), "--ready", str(out / "emu.ready")]
    for name, value in sorted(job["discipline"].get("params", {}).items()):
        args += ["--param", f"{name}={value}"]
    if job["trace"].get("packets"):
        args += ["--packets", str(out / "packets.csv")]
    if rt:
        args += ["--rt-priority", str(rt)]
    return args


def fidelity(summary: dict, mtu_bytes: int = 1500) -> tuple[bool, list[str], dict]:
    """The Mininet-HiFi-style invariants on the forward link; (valid, reasons, facts)."""
    fwd = summary["forward"]
    rate = fwd["rate_bps"]
    delay = fwd["delay_s"]
    reasons = []
    facts = {"configured_rate_bps": rate, "configured_delay_s": delay}
    busy = fwd["spacing_error"]["n"]
    if busy >= FIDELITY["min_busy_pkts"]:
        ratio = fwd["achieved_rate_bps"] / rate
        facts["achieved_rate_bps"] = round(fwd["achieved_rate_bps"], 1)
        if abs(ratio - 1) > FIDELITY["rate_rel_tol"]:
            reasons.append(f"achieved rate {fwd['achieved_rate_bps']:.0f} b/s is {100 * (ratio - 1):+.1f}% "
                           f"from the configured {rate} b/s "
                           f"(tolerance {100 * FIDELITY['rate_rel_tol']:.0f}%)")
        mtu_s = (mtu_bytes + fwd["overhead_bytes"]) * 8 / rate
        tol = max(FIDELITY["spacing_p99_floor_s"], FIDELITY["spacing_p99_mtu_frac"] * mtu_s)
        p99 = fwd["spacing_error"]["abs_p99_s"]
        facts["spacing_error_p99_s"] = p99
        if p99 > tol:
            reasons.append(f"p99 departure spacing error {p99 * 1e6:.0f} us exceeds {tol * 1e6:.0f} us")
    d = fwd["added_delay"]
    if d["n"]:
        facts["added_delay_mean_s"] = round(d["mean_s"], 9)
        facts["added_delay_p99_s"] = d["abs_p99_s"]
        if abs(d["mean_s"] - delay) > FIDELITY["delay_mean_tol_s"]:
            reasons.append(f"mean added delay {d['mean_s'] * 1e3:.3f} ms differs from the configured "
                           f"{delay * 1e3:.3f} ms by more than {FIDELITY['delay_mean_tol_s'] * 1e6:.0f} us")
        if d["abs_p99_s"] - delay > FIDELITY["delay_p99_tol_s"]:
            reasons.append(f"p99 added delay {d['abs_p99_s'] * 1e3:.3f} ms exceeds the configured "
                           f"{delay * 1e3:.3f} ms by more than {FIDELITY['delay_p99_tol_s'] * 1e3:.1f} ms")
    for link in ("forward", "reverse"):
        s = summary[link]
        for key, what in (("kernel_drops", "frames the kernel dropped before qlab-emu read them"),
                          ("send_failed_pkts", "packets qlab-emu could not send"),
                          ("truncated_pkts", "frames larger than qlab-emu's buffer (offloads on?)"),
                          ("rejected_pkts", "packets the discipline cannot classify")):
            if s[key]:
                reasons.append(f"{link}: {s[key]} {what}")
    return not reasons, reasons, facts


# ---------------------------------------------------------------------------
# the run


def fmt_s(ns: int) -> str:
    return f"{ns // 1_000_000_000}.{ns % 1_000_000_000:09d}"


def read_json(path: Path) -> dict | None:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return None


def write_flows(job: dict, out: Path, res: dict, end_ns: int) -> bool:
    """flows.csv with the ns-3 runner's columns and semantics; returns all_completed."""
    header = ("flow_id,app,group,cls,prec,seg_bytes,bytes_goal,bytes_delivered,start_s,end_s,"
              "completed,fct_s,goodput_bps,tx_packets,retx_packets,rx_packets,lost_packets,"
              "delay_mean_s,delay_max_s")
    lines = [header]
    all_done = True
    for f in sorted(job["flows"], key=lambda f: f["flow_id"]):
        r = res[f["flow_id"]]
        start_ns = round(f["start_s"] * 1e9)
        udp = f["app"] in UDP_APPS
        if udp:
            seg = f["pkt_bytes"] - 28
            snd = r["send"] or {}
            rcv = r["sink"] or {}
            tx = int(snd.get("tx", 0))
            rx = min(int(rcv.get("rx", 0)), tx)
            goal = int(snd.get("scheduled", 0)) * seg
            delivered = min(rx * seg, goal)
            stop_ns = round(f["on_periods"][-1][1] * 1e9) if f["on_periods"] else start_ns
            done = end_ns >= stop_ns + round(UDP_DRAIN_S * 1e9)
            flow_end = stop_ns if done else end_ns
            retx = 0
            udp_cols = [str(rx), str(tx - rx)]
            if rx:
                mean = (int(rcv["delay_sum_ns"]) + rx // 2) // rx
                udp_cols += [fmt_s(mean), fmt_s(int(rcv["delay_max_ns"]))]
            else:
                udp_cols += ["NA", "NA"]
        else:
            seg = f["seg_bytes"]
            goal = int(f["bytes"])
            rcv = r["sink"] or {}
            snd = r["send"] or {}
            delivered = min(int(rcv.get("delivered", 0)), goal)
            end_abs = rcv.get("end_ns")
            done = end_abs is not None and delivered == goal
            rel_end = max(start_ns, int(end_abs) - r["epoch_ns"]) if done else end_ns
            if done and rel_end > end_ns:
                done, rel_end = False, end_ns
            flow_end = rel_end
            tx = int(snd.get("tx_segments", 0))
            retx = min(int(snd.get("retx_segments", 0)), tx)
            udp_cols = ["NA"] * 4
        all_done &= done
        elapsed = flow_end - start_ns
        goodput = 8 * delivered / (elapsed / 1e9) if elapsed > 0 else 0.0
        row = [str(f["flow_id"]), f["app"], f["group"], str(f["cls"]), str(f["prec"]), str(seg),
               str(goal), str(delivered), fmt_s(start_ns),
               fmt_s(flow_end) if done else "NA", "1" if done else "0",
               fmt_s(flow_end - start_ns) if done and not udp else "NA",
               f"{goodput:.6f}", str(tx), str(retx), *udp_cols]
        lines.append(",".join(row))
    (out / "flows.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return all_done


def configure_host(h, job: dict, ifname: str) -> None:
    tcp = job["tcp"]
    cc = {"NewReno": "reno", "Reno": "reno", "Cubic": "cubic", "Bbr": "bbr"}.get(tcp["variant"], "reno")
    sysctls = {
        "net.ipv6.conf.all.disable_ipv6": 1, "net.ipv6.conf.default.disable_ipv6": 1,
        "net.ipv4.tcp_congestion_control": cc, "net.ipv4.tcp_sack": int(tcp["sack"]),
        "net.ipv4.tcp_timestamps": int(tcp["timestamps"]),
        "net.ipv4.tcp_window_scaling": int(tcp["window_scaling"]), "net.ipv4.tcp_ecn": 0,
        "net.ipv4.tcp_no_metrics_save": 1, "net.ipv4.tcp_slow_start_after_idle": 0,
    }
    h.cmd("sysctl -qw " + " ".join(f"{k}={v}" for k, v in sysctls.items()))
    h.cmd(f"ethtool -K {ifname} tso off gso off gro off tx off rx off >/dev/null 2>&1")
    rto_ms = max(1, round(tcp["min_rto_s"] * 1000))
    h.cmd(f"ip route change 10.0.0.0/8 dev {ifname} proto kernel scope link src {h.IP()} "
          f"initcwnd {tcp['initial_cwnd_segments']} rto_min {rto_ms}ms")


def run(job_file: Path, out: Path, emu: Path, rt: int, tag: str) -> int:
    from mininet.link import Link
    from mininet.log import setLogLevel
    from mininet.net import Mininet
    from mininet.node import Host
    from mininet.nodelib import LinuxBridge

    job = load_job(job_file)
    t_wall = time.monotonic()
    out.mkdir(parents=True, exist_ok=True)
    setLogLevel("error")
    # Mininet.init() would raise limits and sysctls of the root namespace
    # (fixLimits): qlab leaves the host's configuration alone.
    Mininet.inited = True
    flows = sorted(job["flows"], key=lambda f: f["flow_id"])
    net = Mininet(topo=None, controller=None, switch=LinuxBridge, host=Host, link=Link,
                  build=False, autoSetMacs=False, autoStaticArp=False, waitConnected=False)
    # Bridges in their own namespaces: the root namespace's bridge netfilter
    # (net.bridge.bridge-nf-call-iptables, per namespace) and firewall (Docker
    # sets FORWARD to DROP) never see the run's frames, and the host's
    # configuration stays untouched.
    sw_l = net.addSwitch(f"{tag}L", dpid="1", inNamespace=True)
    sw_r = net.addSwitch(f"{tag}R", dpid="2", inNamespace=True)
    mbox = net.addHost(f"{tag}m", ip=None)
    net.addLink(mbox, sw_l, intfName1=f"{tag}m-a", intfName2=f"{tag}L-m")
    net.addLink(mbox, sw_r, intfName1=f"{tag}m-b", intfName2=f"{tag}R-m")
    srcs, dsts = [], []
    for i, _f in enumerate(flows):
        s = net.addHost(f"{tag}s{i}", ip=f"{addr(1, i)}/8")
        d = net.addHost(f"{tag}d{i}", ip=f"{addr(2, i)}/8")
        net.addLink(s, sw_l, intfName1=f"{tag}s{i}-0", intfName2=f"{tag}L-{i}")
        net.addLink(d, sw_r, intfName1=f"{tag}d{i}-0", intfName2=f"{tag}R-{i}")
        srcs.append(s)
        dsts.append(d)
    net.build()
    net.start()
    for sw in (sw_l, sw_r):
        sw.cmd("sysctl -qw net.bridge.bridge-nf-call-iptables=0 net.bridge.bridge-nf-call-ip6tables=0"
               " net.bridge.bridge-nf-call-arptables=0 net.ipv6.conf.all.disable_ipv6=1 >/dev/null 2>&1")
    # The middlebox forwards frames, it is no IP host.
    for ifname in (f"{tag}m-a", f"{tag}m-b"):
        mbox.cmd(f"ip addr flush dev {ifname}; ethtool -K {ifname} tso off gso off gro off tx off rx off"
                 " >/dev/null 2>&1")
    mbox.cmd("sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1")
    for sw in (sw_l, sw_r):
        sw.cmd(f"for i in $(ls /sys/class/net | grep '^{sw.name}-'); do"
               " ethtool -K $i tso off gso off gro off tx off rx off >/dev/null 2>&1; done")
    for i, (s, d) in enumerate(zip(srcs, dsts, strict=True)):
        configure_host(s, job, f"{tag}s{i}-0")
        configure_host(d, job, f"{tag}d{i}-0")
        s.setARP(ip=d.IP(), mac=d.MAC())
        d.setARP(ip=s.IP(), mac=s.MAC())
    (out / "flowmap.txt").write_text("".join(f"{addr(1, i)} {f['flow_id']}\n" for i, f in enumerate(flows)))

    logs = out / "logs"
    logs.mkdir(exist_ok=True)
    procs = []

    def popen(host, name: str, cmd: list[str]):
        log = open(logs / f"{name}.log", "wb")  # noqa: SIM115 (closed with the process)
        p = host.popen(cmd, stdout=log, stderr=subprocess.STDOUT)
        procs.append((name, p, log))
        return p

    lead_s = 1.0 + 0.02 * len(flows)
    epoch_ns = time.time_ns() + round(lead_s * 1e9)
    emu_proc = popen(mbox, "qlab-emu", emu_args(job, emu, out, f"{tag}m-a", f"{tag}m-b", epoch_ns, rt))
    traffic = [sys.executable, str(HERE / "qlab_traffic.py")]
    res_dir = out / "apps"
    res_dir.mkdir(exist_ok=True)
    results: dict[int, dict] = {}
    app_procs = []
    for i, f in enumerate(flows):
        fid = f["flow_id"]
        sink_out = res_dir / f"sink-{fid}.json"
        send_out = res_dir / f"send-{fid}.json"
        results[fid] = {"sink_path": sink_out, "send_path": send_out, "epoch_ns": epoch_ns}
        if f["app"] == "bulk":
            app_procs.append(popen(dsts[i], f"sink-{fid}", traffic + [
                "tcp-sink", "--port", str(TCP_PORT), "--goal", str(f["bytes"]), "--mss", str(f["seg_bytes"]),
                "--rcvbuf", str(job["tcp"]["rcv_buf_bytes"]), "--out", str(sink_out)]))
        else:
            app_procs.append(popen(dsts[i], f"sink-{fid}", traffic + [
                "udp-sink", "--port", str(UDP_PORT), "--out", str(sink_out)]))
    # Sinks listening and the emulator's sockets open before any sender starts.
    deadline = time.monotonic() + 10 + 0.2 * len(flows)
    while time.monotonic() < deadline:
        if emu_proc.poll() is not None:
            raise RuntimeError(f"qlab-emu exited with {emu_proc.returncode}: "
                               + (logs / "qlab-emu.log").read_text(errors="replace")[-500:])
        if (out / "emu.ready").exists() and all(Path(f"{r['sink_path']}.listening").exists()
                                                 for r in results.values()):
            break
        time.sleep(0.02)
    else:
        raise RuntimeError("the emulator or the sinks did not start within the deadline")
    if time.time_ns() > epoch_ns:
        raise RuntimeError(f"start-up took longer than the {lead_s:.2f} s lead; the schedule would be late")
    for i, f in enumerate(flows):
        fid = f["flow_id"]
        r = results[fid]
        if f["app"] == "bulk":
            app_procs.append(popen(srcs[i], f"send-{fid}", traffic + [
                "tcp-send", "--dst", addr(2, i), "--port", str(TCP_PORT), "--bytes", str(f["bytes"]),
                "--mss", str(f["seg_bytes"]), "--tos", str(tos_of(f)),
                "--sndbuf", str(job["tcp"]["snd_buf_bytes"]),
                "--start-ns", str(epoch_ns + round(f["start_s"] * 1e9)), "--out", str(r["send_path"])]))
        else:
            app_procs.append(popen(srcs[i], f"send-{fid}", traffic + [
                "udp-send", "--dst", addr(2, i), "--port", str(UDP_PORT), "--pkt-bytes", str(f["pkt_bytes"]),
                "--rate-bps", str(f["rate_bps"]), "--periods", json.dumps(f["on_periods"]),
                "--tos", str(tos_of(f)), "--epoch-ns", str(epoch_ns), "--out", str(r["send_path"])]))

    duration_ns = round(job["duration_s"] * 1e9)

    def done_at(f: dict) -> int | None:
        """Run time at which the flow is done, if known yet."""
        if f["app"] in UDP_APPS:
            stop = f["on_periods"][-1][1] if f["on_periods"] else f["start_s"]
            return round((stop + UDP_DRAIN_S) * 1e9)
        sink = read_json(results[f["flow_id"]]["sink_path"])
        if sink and sink.get("end_ns") is not None:
            return int(sink["end_ns"]) - epoch_ns
        return None

    while True:
        now = time.time_ns() - epoch_ns
        if now >= duration_ns:
            end_ns = duration_ns
            break
        if job.get("stop_when_done", True):
            ends = [done_at(f) for f in flows]
            if all(e is not None and e <= now for e in ends):
                end_ns = max([now] + [e for e in ends if e is not None])
                end_ns = min(end_ns, duration_ns)
                break
        if emu_proc.poll() is not None:
            raise RuntimeError(f"qlab-emu died during the run (exit {emu_proc.returncode})")
        time.sleep(0.02)
    # Stop the applications (their counters are final on SIGTERM), then the emulator.
    for p in app_procs:
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
    for p in app_procs:
        try:
            p.wait(timeout=5)
        except subprocess.TimeoutExpired:
            p.kill()
    emu_proc.send_signal(signal.SIGTERM)
    emu_proc.wait(timeout=10)
    for _name, _p, log in procs:
        log.close()
    if emu_proc.returncode != 0:
        raise RuntimeError(f"qlab-emu exited with {emu_proc.returncode}")
    for r in results.values():
        r["sink"] = read_json(r["sink_path"])
        r["send"] = read_json(r["send_path"])
    all_done = write_flows(job, out, results, end_ns)
    summary = json.loads((out / "emu-summary.json").read_text())
    valid, reasons, fid_facts = fidelity(summary)
    net.stop()
    mn = subprocess.run(["mn", "--version"], capture_output=True, text=True, check=False)
    mn_version = (mn.stdout + mn.stderr).strip().splitlines()[-1:] or ["unknown"]
    facts = {
        "sim_end_s": end_ns / 1e9,
        "all_completed": all_done,
        "versions": {"mininet": mn_version[0], "qlab-emu": summary["version"],
                     "compiler": summary["compiler"], "kernel": platform.release(),
                     "python": platform.python_version()},
        "wall_time_s": round(time.monotonic() - t_wall, 3),
        "valid": valid,
        "invalid_reasons": reasons,
        "fidelity": fid_facts,
        "emulator": {"tag": tag, "rt_priority": rt},
    }
    (out / "runner.json").write_text(json.dumps(facts, indent=1) + "\n", encoding="utf-8")
    for name in ("emu.ready", "flowmap.txt"):
        (out / name).unlink(missing_ok=True)
    return 0


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("job", nargs="?", type=Path)
    p.add_argument("out", nargs="?", type=Path)
    p.add_argument("--emu", type=Path, default=HERE.parent.parent / "build" / "emu" / "qlab-emu")
    p.add_argument("--rt-priority", type=int, default=50,
                   help="qlab-emu's SCHED_FIFO priority (0: normal scheduling)")
    p.add_argument("--tag", help="name prefix of the run's nodes (default: random q + 3 hex digits)")
    p.add_argument("--watch-launcher", action="store_true",
                   help="also stop when the launcher (Ansible's worker or ansible-playbook) dies")
    p.add_argument("--cleanup", metavar="TAG", help="remove what run TAG left behind")
    p.add_argument("--cleanup-stale", action="store_true", help="clean every run whose owner died")
    p.add_argument("--reap", nargs=4, metavar=("TAG", "PID", "PGID", "PGID_PARENT"), help=argparse.SUPPRESS)
    a = p.parse_args()
    if os.geteuid() != 0:
        print("qlab_mn_run: must run as root (network namespaces, raw sockets)", file=sys.stderr)
        return 1
    if a.reap:
        reap(a.reap[0], int(a.reap[1]), int(a.reap[2]), int(a.reap[3]))
        return 0
    if a.cleanup:
        print(json.dumps(cleanup(a.cleanup)))
        return 0
    if a.cleanup_stale:
        print(json.dumps(cleanup_stale()))
        return 0
    if not a.job or not a.out:
        p.error("JOB and OUTDIR are required")
    if not a.emu.exists():
        print(f"qlab_mn_run: qlab-emu not found at {a.emu} (make -C disciplines/emu)", file=sys.stderr)
        return 1
    STATE_DIR.mkdir(parents=True, exist_ok=True)
    # One run at a time per emulation host: concurrent runs would share the
    # 2 cores and break each other's timing (Snakemake may start several).
    lock = open(STATE_DIR / "run.lock", "w")  # noqa: SIM115 (held until exit)
    fcntl.flock(lock, fcntl.LOCK_EX)
    cleanup_stale()
    tag = a.tag or f"q{secrets.token_hex(2)[:3]}"
    if len(tag) > 5 or not tag.isalnum():
        p.error("--tag: at most 5 letters or digits (interface names are limited to 15 characters)")
    (STATE_DIR / f"{tag}.json").write_text(json.dumps({"tag": tag, "pid": os.getpid(), "job": str(a.job)}))
    reaper = start_reaper(tag, a.watch_launcher)
    os.environ[TAG_ENV] = tag

    def on_term(_sig, _frame):
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, on_term)
    try:
        return run(a.job, a.out, a.emu.resolve(), a.rt_priority, tag)
    except BadJob as exc:
        print(f"qlab_mn_run: {exc}", file=sys.stderr)
        return EXIT_BAD_JOB
    except KeyboardInterrupt:
        print("qlab_mn_run: interrupted; cleaning up", file=sys.stderr)
        return 1
    except Exception as exc:  # noqa: BLE001 (report, then clean up whatever failed)
        print(f"qlab_mn_run: run failed: {exc}", file=sys.stderr)
        return 1
    finally:
        cleanup(tag)
        reaper.kill()
        reaper.wait()


if __name__ == "__main__":
    sys.exit(main())

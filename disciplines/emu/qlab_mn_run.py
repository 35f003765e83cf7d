#!/usr/bin/python3
"""Run one resolved plan (docs/jobs.md) in Mininet with qlab-emu (or a kernel qdisc) as the bottleneck.

    /usr/bin/python3 qlab_mn_run.py PLAN.json OUTDIR [--emu PATH] [--rt-priority N]
    /usr/bin/python3 qlab_mn_run.py PLAN.json OUTDIR --kernel KERNEL.json
    /usr/bin/python3 qlab_mn_run.py --cleanup TAG | --cleanup-stale

Debian's Mininet is importable by Debian's /usr/bin/python3 only. Writes the
raw facts of docs/traces.md ("Raw facts") into OUTDIR: flow_facts.csv,
queue_facts.csv, packet_facts.csv (when trace.packets), runner.json (end_ns,
versions, wall_time_s, and valid/invalid_reasons/fidelity from the fidelity
checks below) and emu-summary.json; qlab run-job checks and finalises them.
Exit 2 for a plan this backend cannot build, 1 for a failed run.

The plan's dumbbell (every name starts with the run's tag, e.g. `q3f`):
  - the bottleneck's end with the discipline is side A (qlab-emu's forward
    link), the other end side B; each side is a Linux bridge, TAGA and TAGB,
    in its own namespace; no controller, no OpenFlow;
  - the plan's hosts: TAGs<i> on TAGA (side A's hosts in plan order), TAGd<j>
    on TAGB, each with its plan address on one Ethernet segment (the prefix
    covering every host), static ARP between the ends of each flow;
  - the middlebox TAGm (no IP address) joins the bridges through qlab-emu:
    forward the discipline with the plan's typed parameters (as --param
    text) and the queue's seed, at the bottleneck's rate; reverse (the
    plan's lossless queue) a 10000-packet droptail at the same rate; both
    delay packets by the bottleneck's delay + 2 x the access links' delay
    (this kernel has no netem, so the access links' propagation is folded
    into the emulator; access links are not rate-limited); every interface
    gets the plan's largest MTU;
  - offloads off everywhere (the core must see real IP packets), IPv6 off,
    TCP per host namespace from the plan's tcp (congestion control reno for
    NewReno, cubic for Cubic, bbr for Bbr, when the kernel offers it: a
    variant whose algorithm tcp_available_congestion_control does not list
    is refused, exit 2; SACK, timestamps, window scaling, ECN off; initcwnd
    and rto_min on the route);
  - one sender and one sink process per flow (qlab_traffic.py), bound to the
    flow's ports, so hosts may carry several flows and the 5-tuple is the plan's;
    a bulk flow with stop_ns is aborted then by its sender (done then, as in ns-3).

With --kernel (the mnkernel backend, on a host whose kernel has qlab's
qdisc modules loaded and netem: the virtual testbed's router VM), the
middlebox is a Linux bridge instead, and the bottleneck is the kernel's:
on the bridge's port towards side B, HTB at the bottleneck's rate with
the plan's discipline as its leaf; on the port towards side A, netem
with the round trip's propagation (2 x the delay above) - the testbed
backend's arrangement, installed by its host tool's `tc` step
(qlab_tb_host.py, beside this file or in testbed/host/). KERNEL.json is
{"qdisc": [tc's words after the handle], "expect": {"kind", "options"},
"handle", "burst_bytes", "netem_limit"} (qlab.backends.mnkernel). The
host tool's sampler reads the qdisc's counters (OUTDIR/queue-samples.json,
which the backend turns into queue_facts.csv and judges the shaper's rate
by, as the testbed's). The flows' processes start first and wait for the
epoch (qlab_traffic.py --epoch-file), so a slow host (a TCG VM) pays their
start-up before time 0. No packet facts (trace.packets: refused, exit 2).

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
import decimal
import fcntl
import ipaddress
import json
import os
import platform
import secrets
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import NamedTuple

HERE = Path(__file__).resolve().parent
STATE_DIR = Path("/run/qlab-mn")
TAG_ENV = "QLAB_MN_TAG"
EXIT_BAD_JOB = 2
UDP_APPS = ("cbr", "onoff", "voip", "poisson")
# IP + the 2-byte PPP header ns-3's point-to-point links add on the wire.
LINK_OVERHEAD_BYTES = 2
# The plan's lossless queue (the reverse direction): a droptail nothing fills.
REVERSE_LIMIT_PKTS = 10000
OFFLOADS_OFF = ("tso", "off", "gso", "off", "gro", "off", "tx", "off", "rx", "off")
NA = "NA"
FLOW_FACTS_COLUMNS = (
    "flow_id",
    "tx_packets",
    "retx_packets",
    "rx_packets",
    "rx_bytes",
    "first_rx_ns",
    "last_rx_ns",
    "delay_sum_ns",
    "delay_max_ns",
)

# Fidelity invariants (Mininet-HiFi style), from the emulator's own log of
# the forward link.  Thresholds are loose enough for a shared 2-core machine
# with qlab-emu at real-time priority (measured p99 lateness ~20 us), tight
# enough that a starved emulator (ms-scale lateness) fails them.
FIDELITY = {
    "rate_rel_tol": 0.02,  # achieved rate in busy periods vs configured
    "min_busy_pkts": 20,  # below this the rate is not judged
    # p99 |departure spacing - transmission time| <= max(floor, frac * MTU time)
    "spacing_p99_floor_s": 100e-6,
    "spacing_p99_mtu_frac": 0.1,
    "delay_mean_tol_s": 200e-6,  # |mean added delay - configured|
    "delay_p99_tol_s": 1e-3,  # p99 added delay - configured
}


# The plan's tcp.variant as Linux's congestion control (net.ipv4.tcp_congestion_control).
LINUX_CC = {"NewReno": "reno", "Cubic": "cubic", "Bbr": "bbr"}
# What the running kernel offers (built in, or modules loaded); per kernel, not per namespace.
AVAILABLE_CC = Path("/proc/sys/net/ipv4/tcp_available_congestion_control")


def congestion_control_problem(variant: str, available: Path | None = None) -> str | None:
    """Why the hosts cannot run the plan's tcp.variant here (None: they can):
    it sets each host's net.ipv4.tcp_congestion_control, which takes only an
    algorithm the kernel lists as available (a module it has not loaded
    would need loading first, which a run does not do)."""
    available = available or AVAILABLE_CC
    cc = LINUX_CC.get(variant)
    if cc is None:
        return f"tcp.variant: expected one of {', '.join(LINUX_CC)}, got {variant!r}"
    try:
        offered = available.read_text(encoding="utf-8").split()
    except OSError as exc:
        return f"tcp.variant: {variant} needs Linux's {cc}, and {available} cannot be read ({exc.strerror})"
    if cc in offered:
        return None
    return (
        f"tcp.variant: {variant} needs Linux's {cc} congestion control, which this kernel "
        f"({platform.release()}) does not offer ({available.name}: {' '.join(offered) or 'empty'}); "
        f"load its module (modprobe tcp_{cc}) or run the plan on the ns3 backend"
    )


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
    # Rescanned after every round: a process caught in execve shows no
    # environment yet (the kernel sets it after the new program's image),
    # and one may fork while the others die.
    for sig in (signal.SIGTERM, signal.SIGKILL, signal.SIGKILL):
        pids = tagged_pids(tag)
        if not pids:
            break
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
            not _alive(leader) or (leader_parent > 1 and not _alive(leader_parent))
        )
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
        [
            sys.executable,
            str(Path(__file__).resolve()),
            "--reap",
            tag,
            str(os.getpid()),
            str(leader),
            str(_ppid(leader)) if watch_launcher else "0",
        ],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        env=env,
        close_fds=True,
    )


# ---------------------------------------------------------------------------
# the plan as a dumbbell


class Dumbbell(NamedTuple):
    """What the run builds from a plan (qlab.backends.mininet refuses other plans first)."""

    link: dict  # the bottleneck
    side: str  # its end with the discipline: where qlab-emu's forward link starts
    queue: dict  # that end's queue: kind, params (typed), seed
    hosts_a: list[dict]  # hosts attached to side, plan order
    hosts_b: list[dict]  # hosts attached to the other end
    access_delay_ns: int  # every access link's delay (folded into the emulator's)
    mtu_bytes: int  # the largest MTU of the plan's links: every interface's

    @property
    def queue_id(self) -> str:
        return f"{self.link['id']}:{self.side}"

    @property
    def emu_delay_ns(self) -> int:
        return self.link["delay_ns"] + 2 * self.access_delay_ns


def dumbbell(plan: dict) -> Dumbbell:
    nodes = {n["id"]: n for n in plan["nodes"]}
    between = [lk for lk in plan["links"] if all(nodes[lk[e]]["kind"] == "router" for e in "ab")]
    if len(between) != 1:
        raise BadJob(f"links: a dumbbell has one link between two routers, got {len(between)}")
    link = between[0]
    shaped = [n for n, q in link["queues"].items() if q["kind"] != "lossless"]
    if len(shaped) != 1:
        raise BadJob(
            f"links.{link['id']}.queues: a discipline at one end of the bottleneck, got {len(shaped)}"
        )
    side = shaped[0]
    access = [lk for lk in plan["links"] if lk is not link]
    delays = {lk["delay_ns"] for lk in access}
    if len(delays) != 1:
        raise BadJob(
            f"links: the access links' delays must be equal (folded into the emulator), got {sorted(delays)}"
        )
    at: dict[str, str] = {}
    for lk in access:
        host, router = (lk["a"], lk["b"]) if nodes[lk["a"]]["kind"] == "host" else (lk["b"], lk["a"])
        at[host] = router
    for i, f in enumerate(plan["flows"]):
        if at.get(f["src"]) != side or at.get(f["dst"]) == side:
            raise BadJob(
                f"flows[{i}]: data goes from hosts at {side} through the discipline to the other side"
            )
    hosts = [n for n in plan["nodes"] if n["kind"] == "host"]
    return Dumbbell(
        link=link,
        side=side,
        queue=link["queues"][side],
        hosts_a=[h for h in hosts if at[h["id"]] == side],
        hosts_b=[h for h in hosts if at[h["id"]] != side],
        access_delay_ns=delays.pop(),
        mtu_bytes=max(lk["mtu_bytes"] for lk in plan["links"]),
    )


def param_text(value: object) -> str:
    """A typed plan parameter in the core's text syntax (qlab-emu --param): bool 1/0,
    u32_list a:b:c, ppm an exact decimal, integers and enum names as they are."""
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, list):
        return ":".join(str(v) for v in value)
    if isinstance(value, float):
        # repr: the shortest digits that read back as this float (0.05, 1e-06)
        text = format(decimal.Decimal(repr(value)), "f")
        return text.rstrip("0").rstrip(".") if "." in text else text
    return str(value)


def emu_args(
    plan: dict, d: Dumbbell, emu: Path, out: Path, ifs: tuple[str, str], epoch_ns: int, rt: int
) -> list[str]:
    q = d.queue
    args = [
        str(emu),
        "--if-a",
        ifs[0],
        "--if-b",
        ifs[1],
        "--rate-bps",
        str(d.link["rate_bps"]),
        "--delay-ns",
        str(d.emu_delay_ns),
        "--rev-param",
        f"limit_pkts={REVERSE_LIMIT_PKTS}",
        "--overhead-bytes",
        str(LINK_OVERHEAD_BYTES),
        "--disc",
        q["kind"],
        "--seed",
        str(q["seed"]),
        "--epoch-ns",
        str(epoch_ns),
        "--end-ns",
        str(plan["duration_ns"]),
        "--queue-id",
        d.queue_id,
        "--sample-ns",
        str(plan["trace"]["queue_sample_interval_ns"]),
        "--summary",
        str(out / "emu-summary.json"),
        "--ready",
        str(out / "emu.ready"),
    ]
    for name, value in sorted(q["params"].items()):
        args += ["--param", f"{name}={param_text(value)}"]
    if d.queue_id in plan["trace"]["queues"]:
        args += ["--queues", str(out / "queue_facts.csv")]
        if plan["trace"]["packets"]:
            args += ["--packets", str(out / "packet_facts.csv"), "--flowmap", str(out / "flowmap.txt")]
    if rt:
        args += ["--rt-priority", str(rt)]
    return args


def flowmap(plan: dict) -> str:
    """qlab-emu's flow map: each flow's 5-tuple (data direction) and id."""
    addr = {n["id"]: n["address"] for n in plan["nodes"]}
    return "".join(
        f"{'tcp' if f['app'] == 'bulk' else 'udp'} {addr[f['src']]} {f['src_port']} "
        f"{addr[f['dst']]} {f['dst_port']} {f['flow_id']}\n"
        for f in plan["flows"]
    )


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
            reasons.append(
                f"achieved rate {fwd['achieved_rate_bps']:.0f} b/s is {100 * (ratio - 1):+.1f}% "
                f"from the configured {rate} b/s "
                f"(tolerance {100 * FIDELITY['rate_rel_tol']:.0f}%)"
            )
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
            reasons.append(
                f"mean added delay {d['mean_s'] * 1e3:.3f} ms differs from the configured "
                f"{delay * 1e3:.3f} ms by more than {FIDELITY['delay_mean_tol_s'] * 1e6:.0f} us"
            )
        if d["abs_p99_s"] - delay > FIDELITY["delay_p99_tol_s"]:
            reasons.append(
                f"p99 added delay {d['abs_p99_s'] * 1e3:.3f} ms exceeds the configured "
                f"{delay * 1e3:.3f} ms by more than {FIDELITY['delay_p99_tol_s'] * 1e3:.1f} ms"
            )
    for link in ("forward", "reverse"):
        s = summary[link]
        for key, what in (
            ("kernel_drops", "frames the kernel dropped before qlab-emu read them"),
            ("send_failed_pkts", "packets qlab-emu could not send"),
            ("truncated_pkts", "frames larger than qlab-emu's buffer (offloads on?)"),
            ("rejected_pkts", "packets the discipline cannot classify"),
        ):
            if s[key]:
                reasons.append(f"{link}: {s[key]} {what}")
    return not reasons, reasons, facts


def sender_fidelity(plan: dict, apps: dict[int, dict]) -> tuple[list[str], dict]:
    """The UDP senders against their schedules: a sender that never got
    through its schedule before the run ended (the host fell behind: its
    datagrams are missing, not lost) or could not send some of them makes
    the run unfaithful; (reasons, facts: the largest lateness)."""
    reasons, late = [], 0
    for f in sorted(plan["flows"], key=lambda f: f["flow_id"]):
        if f["app"] not in UDP_APPS:
            continue
        snd = apps[f["flow_id"]].get("send") or {}
        late = max(late, snd.get("late_max_ns", 0))
        if not snd.get("schedule_done"):
            reasons.append(
                f"flow {f['flow_id']}: sender late: its schedule was unfinished when the run ended "
                f"({snd.get('tx_packets', 0)} datagrams sent)"
            )
        if snd.get("send_errors"):
            reasons.append(f"flow {f['flow_id']}: {snd['send_errors']} datagrams the host could not send")
    return reasons, {"sender_late_max_s": late / 1e9}


# ---------------------------------------------------------------------------
# the run


def read_json(path: Path) -> dict | None:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return None


def flow_facts(plan: dict, apps: dict[int, dict], epoch_ns: int) -> str:
    """flow_facts.csv (docs/traces.md, "Raw facts") from the applications' counters."""

    def rel(t: int | None) -> str:
        return NA if t is None else str(t - epoch_ns)

    lines = [",".join(FLOW_FACTS_COLUMNS)]
    for f in sorted(plan["flows"], key=lambda f: f["flow_id"]):
        snd = apps[f["flow_id"]].get("send") or {}
        rcv = apps[f["flow_id"]].get("sink") or {}
        rx_bytes = rcv.get("rx_bytes", 0)
        row = [f["flow_id"], snd.get("tx_packets", 0), snd.get("retx_packets", 0)]
        if f["app"] in UDP_APPS:
            rx = rcv.get("rx_packets", 0)
            row += [
                rx,
                rx_bytes,
                rel(rcv.get("first_rx_ns")),
                rel(rcv.get("last_rx_ns")),
                rcv.get("delay_sum_ns", 0) if rx else NA,
                rcv.get("delay_max_ns") if rx else NA,
            ]
        else:
            row += [NA, rx_bytes, rel(rcv.get("first_rx_ns")), rel(rcv.get("last_rx_ns")), NA, NA]
        lines.append(",".join(str(v) for v in row))
    return "\n".join(lines) + "\n"


def segment(hosts: list[dict]) -> ipaddress.IPv4Network:
    """The longest prefix holding every host: the run's one Ethernet segment."""
    addrs = [int(ipaddress.IPv4Address(h["address"])) for h in hosts]
    differ = 0
    for a in addrs:
        differ |= a ^ addrs[0]
    return ipaddress.ip_interface(f"{hosts[0]['address']}/{32 - differ.bit_length()}").network


MTU_FIELD = "links.mtu_bytes"


def whole(value: object, field: str) -> int:
    """A plan value that goes on a command line, checked (the plan passed
    qlab's validator already; this runner may be run on a hand-made file)."""
    if type(value) is not int:
        raise BadJob(f"{field}: expected an integer, got {value!r}")
    return value


def configure_host(h, plan: dict, ifname: str, net: ipaddress.IPv4Network, mtu: int) -> None:
    tcp = plan["tcp"]
    for key in ("sack", "timestamps", "window_scaling"):
        if type(tcp[key]) is not bool:
            raise BadJob(f"tcp.{key}: expected true or false, got {tcp[key]!r}")
    sysctls = {
        "net.ipv6.conf.all.disable_ipv6": 1,
        "net.ipv6.conf.default.disable_ipv6": 1,
        "net.ipv4.tcp_congestion_control": LINUX_CC[tcp["variant"]],
        "net.ipv4.tcp_sack": int(tcp["sack"]),
        "net.ipv4.tcp_timestamps": int(tcp["timestamps"]),
        "net.ipv4.tcp_window_scaling": int(tcp["window_scaling"]),
        "net.ipv4.tcp_ecn": 0,
        "net.ipv4.tcp_no_metrics_save": 1,
        "net.ipv4.tcp_slow_start_after_idle": 0,
    }
    h.cmd(shlex.join(["sysctl", "-qw", *(f"{k}={v}" for k, v in sysctls.items())]))
    # A sysctl that did not take (a read-only /proc/sys, as Docker mounts
    # it) would leave the host on Linux's defaults (CUBIC or BBR, SACK):
    # the run would look fine and be another experiment.
    got = h.cmd(shlex.join(["sysctl", "-n", *sysctls])).split()
    if len(got) == len(sysctls):
        wrong = [
            f"{k} is {g}, not {v}" for (k, v), g in zip(sysctls.items(), got, strict=True) if g != str(v)
        ]
    else:
        wrong = [f"sysctl -n said {' '.join(got)!r}"]
    if wrong:
        raise RuntimeError(
            f"host {h.name}: TCP settings not applied ({'; '.join(wrong)}); is /proc/sys "
            "writable? (in a container: --security-opt systempaths=unconfined)"
        )
    h.cmd(
        shlex.join(["ethtool", "-K", ifname, *OFFLOADS_OFF])
        + " >/dev/null 2>&1; "
        + shlex.join(["ip", "link", "set", "dev", ifname, "mtu", str(whole(mtu, MTU_FIELD))])
    )
    rto_ms = max(1, round(whole(tcp["min_rto_ns"], "tcp.min_rto_ns") / 1e6))
    h.cmd(
        shlex.join(
            [
                "ip",
                "route",
                "change",
                str(net),
                "dev",
                ifname,
                "proto",
                "kernel",
                "scope",
                "link",
                "src",
                h.IP(),
                "initcwnd",
                str(whole(tcp["initial_cwnd_segments"], "tcp.initial_cwnd_segments")),
                "rto_min",
                f"{rto_ms}ms",
            ]
        )
    )


def build_network(plan: dict, d: Dumbbell, tag: str):
    """The dumbbell in Mininet: (net, plan host id -> Mininet host, the middlebox)."""
    from mininet.link import Link
    from mininet.net import Mininet
    from mininet.node import Host
    from mininet.nodelib import LinuxBridge

    # Mininet.init() would raise limits and sysctls of the root namespace
    # (fixLimits): qlab leaves the host's configuration alone.
    Mininet.inited = True
    net = Mininet(
        topo=None,
        controller=None,
        switch=LinuxBridge,
        host=Host,
        link=Link,
        build=False,
        autoSetMacs=False,
        autoStaticArp=False,
        waitConnected=False,
    )
    # Bridges in their own namespaces: the root namespace's bridge netfilter
    # (net.bridge.bridge-nf-call-iptables, per namespace) and firewall (Docker
    # sets FORWARD to DROP) never see the run's frames, and the host's
    # configuration stays untouched.
    bridges = {
        "A": net.addSwitch(f"{tag}A", dpid="1", inNamespace=True),
        "B": net.addSwitch(f"{tag}B", dpid="2", inNamespace=True),
    }
    mbox = net.addHost(f"{tag}m", ip=None)
    # Before any interface is up: no IPv6, and no IGMP reports for link-local
    # groups (a bridge joins 224.0.0.106, the snoopers' group): only the
    # plan's packets reach the discipline.
    for node in (*bridges.values(), mbox):
        node.cmd(
            "sysctl -qw net.ipv4.igmp_link_local_mcast_reports=0 net.ipv6.conf.all.disable_ipv6=1"
            " net.ipv6.conf.default.disable_ipv6=1 net.bridge.bridge-nf-call-iptables=0"
            " net.bridge.bridge-nf-call-ip6tables=0 net.bridge.bridge-nf-call-arptables=0"
            " >/dev/null 2>&1"
        )
    for end in "AB":
        net.addLink(mbox, bridges[end], intfName1=f"{tag}m-{end}", intfName2=f"{tag}{end}-m")
    seg = segment(d.hosts_a + d.hosts_b)
    hosts, ifname = {}, {}
    for end, prefix, members in (("A", "s", d.hosts_a), ("B", "d", d.hosts_b)):
        for i, node in enumerate(members):
            name = f"{tag}{prefix}{i}"
            hosts[node["id"]] = net.addHost(name, ip=f"{node['address']}/{seg.prefixlen}")
            ifname[node["id"]] = f"{name}-0"
            net.addLink(
                hosts[node["id"]], bridges[end], intfName1=ifname[node["id"]], intfName2=f"{tag}{end}-{i}"
            )
    net.build()
    net.start()
    mtu = str(whole(d.mtu_bytes, MTU_FIELD))
    for br in bridges.values():
        ports = [
            p for p in br.cmd(shlex.join(["ls", "/sys/class/net"])).split() if p.startswith(f"{br.name}-")
        ]
        br.cmd(
            "; ".join(
                shlex.join(["ip", "link", "set", "dev", p, "mtu", mtu])
                + "; "
                + shlex.join(["ethtool", "-K", p, *OFFLOADS_OFF])
                + " >/dev/null 2>&1"
                for p in ports
            )
        )
    # The middlebox forwards frames, it is no IP host.
    for end in "AB":
        port = f"{tag}m-{end}"
        mbox.cmd(
            shlex.join(["ip", "addr", "flush", "dev", port])
            + "; "
            + shlex.join(["ip", "link", "set", "dev", port, "mtu", mtu])
            + "; "
            + shlex.join(["ethtool", "-K", port, *OFFLOADS_OFF])
            + " >/dev/null 2>&1"
        )
    for hid, h in hosts.items():
        configure_host(h, plan, ifname[hid], seg, d.mtu_bytes)
    for src, dst in {(f["src"], f["dst"]) for f in plan["flows"]}:
        hosts[src].setARP(ip=hosts[dst].IP(), mac=hosts[dst].MAC())
        hosts[dst].setARP(ip=hosts[src].IP(), mac=hosts[src].MAC())
    return net, hosts, mbox


def done_at(plan: dict, f: dict, apps_dir: Path, epoch_ns: int) -> int | None:
    """Run time at which the flow is done (docs/jobs.md), once known. A UDP
    flow's sender must have got through its schedule (a host that fell
    behind sends late, and the in-flight datagrams get udp_drain_ns from
    then, not from the plan's stop)."""
    fid = f["flow_id"]
    if f["app"] in UDP_APPS:
        sent = read_json(apps_dir / f"send-{fid}.json")
        if not (sent and sent.get("schedule_done")):
            return None
        periods = f["on_periods_ns"]
        stop = periods[-1][1] if periods else f["start_ns"]
        return max(stop, sent["done_ns"] - epoch_ns) + plan["udp_drain_ns"]
    if f["bytes"] == 0:
        return f["start_ns"]
    got = read_json(apps_dir / f"sink-{fid}.json")
    if got and got.get("rx_bytes") == f["bytes"]:
        return got["last_rx_ns"] - epoch_ns
    # stopped mid-transfer (stop_ns; qlab_traffic.py aborts the sender then)
    return f.get("stop_ns")


def wait_for_end(
    plan: dict, emu_proc: subprocess.Popen, apps_dir: Path, epoch_ns: int, what: str = "qlab-emu"
) -> None:
    """Until duration_ns (qlab-emu, or the kernel mode's sampler, stops by
    itself then) or, with stop_when_done, until every flow is done."""
    pending = {f["flow_id"]: f for f in plan["flows"]}
    while True:
        ended = emu_proc.poll() is not None
        now = time.time_ns() - epoch_ns
        if ended:
            if emu_proc.returncode == 0 and now >= plan["duration_ns"]:
                return
            raise RuntimeError(f"{what} died during the run (exit {emu_proc.returncode})")
        if now >= plan["duration_ns"]:
            return
        if plan["stop_when_done"]:
            for fid, f in list(pending.items()):
                t = done_at(plan, f, apps_dir, epoch_ns)
                if t is not None and t <= now:
                    del pending[fid]
            if not pending:
                return
        time.sleep(0.02)


def run(plan_file: Path, out: Path, emu: Path, rt: int, tag: str, kernel: dict | None = None) -> int:
    from mininet.log import setLogLevel

    t_wall = time.monotonic()
    plan = json.loads(plan_file.read_text(encoding="utf-8"))
    d = dumbbell(plan)
    problem = congestion_control_problem(plan["tcp"]["variant"])
    if problem:
        raise BadJob(problem)
    if kernel is not None and plan["trace"]["packets"]:
        raise BadJob("trace.packets: with a kernel qdisc there are no per-packet events (its counters only)")
    out.mkdir(parents=True, exist_ok=True)
    setLogLevel("error")
    net, hosts, mbox = build_network(plan, d, tag)
    if kernel is not None:
        return run_kernel(plan, d, net, hosts, mbox, out, tag, kernel, t_wall)
    addr = {n["id"]: n["address"] for n in plan["nodes"]}
    if plan["trace"]["packets"]:
        (out / "flowmap.txt").write_text(flowmap(plan), encoding="utf-8")
    logs, apps_dir = out / "logs", out / "apps"
    logs.mkdir(exist_ok=True)
    apps_dir.mkdir(exist_ok=True)
    procs = []

    def popen(host, name: str, cmd: list[str]) -> subprocess.Popen:
        log = open(logs / f"{name}.log", "wb")  # noqa: SIM115 (closed with the process)
        p = host.popen(cmd, stdout=log, stderr=subprocess.STDOUT)
        procs.append((p, log))
        return p

    # Time 0 is an epoch far enough ahead that the emulator and every sink
    # are up before the first sender starts.
    lead_s = 1.0 + 0.02 * len(plan["flows"])
    epoch_ns = time.time_ns() + round(lead_s * 1e9)
    emu_proc = popen(mbox, "qlab-emu", emu_args(plan, d, emu, out, (f"{tag}m-A", f"{tag}m-B"), epoch_ns, rt))
    times = ["--epoch-ns", str(epoch_ns), "--end-ns", str(plan["duration_ns"])]
    traffic = [sys.executable, str(HERE / "qlab_traffic.py")]
    sinks, senders, sinks_p = {}, [], []
    for f in plan["flows"]:
        fid = f["flow_id"]
        spec = apps_dir / f"flow-{fid}.json"
        spec.write_text(json.dumps({"flow": f, "dst_address": addr[f["dst"]], "tcp": plan["tcp"]}))
        sinks[fid] = apps_dir / f"sink-{fid}.json"
        sinks_p.append(
            popen(
                hosts[f["dst"]],
                f"sink-{fid}",
                traffic + ["sink", "--flow", str(spec), *times, "--out", str(sinks[fid])],
            )
        )
    # Sinks listening and the emulator's sockets open before any sender starts.
    deadline = time.monotonic() + 10 + 0.2 * len(plan["flows"])
    while not ((out / "emu.ready").exists() and all(Path(f"{s}.listening").exists() for s in sinks.values())):
        if emu_proc.poll() is not None:
            raise RuntimeError(
                f"qlab-emu exited with {emu_proc.returncode}: "
                + (logs / "qlab-emu.log").read_text(errors="replace")[-500:]
            )
        if time.monotonic() > deadline:
            raise RuntimeError("the emulator or the sinks did not start within the deadline")
        time.sleep(0.02)
    if time.time_ns() > epoch_ns:
        raise RuntimeError(f"start-up took longer than the {lead_s:.2f} s lead; the schedule would be late")
    for f in plan["flows"]:
        fid = f["flow_id"]
        senders.append(
            popen(
                hosts[f["src"]],
                f"send-{fid}",
                traffic
                + [
                    "send",
                    "--flow",
                    str(apps_dir / f"flow-{fid}.json"),
                    *times,
                    "--out",
                    str(apps_dir / f"send-{fid}.json"),
                ],
            )
        )

    wait_for_end(plan, emu_proc, apps_dir, epoch_ns)
    # The end: the emulator (its last sample) and the senders first, then
    # the sinks; every counter is final on SIGTERM.
    for p in (emu_proc, *senders):
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
    emu_proc.wait(timeout=10)
    for p in sinks_p:
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
    for p in (*senders, *sinks_p):
        try:
            p.wait(timeout=5)
        except subprocess.TimeoutExpired:
            p.kill()
    for _p, log in procs:
        log.close()
    if emu_proc.returncode != 0:
        raise RuntimeError(f"qlab-emu exited with {emu_proc.returncode}")
    apps = {
        f["flow_id"]: {
            "sink": read_json(sinks[f["flow_id"]]),
            "send": read_json(apps_dir / f"send-{f['flow_id']}.json"),
        }
        for f in plan["flows"]
    }
    (out / "flow_facts.csv").write_text(flow_facts(plan, apps, epoch_ns), encoding="utf-8")
    summary = json.loads((out / "emu-summary.json").read_text())
    valid, reasons, fid_facts = fidelity(summary, d.mtu_bytes)
    late_reasons, late_facts = sender_fidelity(plan, apps)
    reasons += late_reasons
    valid = valid and not late_reasons
    fid_facts.update(late_facts)
    net.stop()
    mn = subprocess.run(["mn", "--version"], capture_output=True, text=True, check=False)
    mn_version = (mn.stdout + mn.stderr).strip().splitlines()[-1:] or ["unknown"]
    facts = {
        "end_ns": summary["end_ns"],
        "versions": {
            "mininet": mn_version[0],
            "qlab-emu": summary["version"],
            "compiler": summary["compiler"],
            "kernel": platform.release(),
            "python": platform.python_version(),
        },
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


# ---------------------------------------------------------------------------
# --kernel: the kernel's qdisc as the bottleneck (the mnkernel backend)

# A flow process's time to write its final counters after SIGTERM (a slow guest).
STOP_WAIT_S = 30


def host_tool() -> Path:
    """The testbed's host tool (its tc step and its sampler): beside this
    file in the testbed's bundle, else in the checkout."""
    for p in (HERE / "qlab_tb_host.py", HERE.parent.parent / "testbed" / "host" / "qlab_tb_host.py"):
        if p.exists():
            return p
    raise RuntimeError(f"qlab_tb_host.py is neither beside {HERE / 'qlab_mn_run.py'} nor in testbed/host/")


def node_json(node, argv: list[str], what: str) -> dict:
    """A command in a node's namespace whose last line of output is JSON."""
    text = node.cmd(shlex.join(argv) + " 2>&1").strip()
    try:
        return json.loads(text.splitlines()[-1])
    except (IndexError, json.JSONDecodeError):
        raise RuntimeError(f"{what}: {text[-300:] or 'no output'}") from None


def kernel_bottleneck(mbox, d: Dumbbell, tag: str, kernel: dict, tool: Path) -> dict:
    """The middlebox as a bridge between its two ports, and the kernel's
    bottleneck on them (the host tool's tc step: HTB with the discipline as
    its leaf towards B, netem towards A); the discipline's dump."""
    br = f"{tag}mb"
    said = mbox.cmd(
        " && ".join(
            [
                shlex.join(["ip", "link", "add", br, "type", "bridge"]),
                shlex.join(["ip", "link", "set", f"{tag}m-A", "master", br]),
                shlex.join(["ip", "link", "set", f"{tag}m-B", "master", br]),
                shlex.join(["ip", "link", "set", br, "up"]),
            ]
        )
        + " 2>&1 && echo qlab-bridge-up"
    )
    if "qlab-bridge-up" not in said:
        raise RuntimeError(f"the middlebox's bridge: {said.strip()[-300:]}")
    spec = {
        "egress": f"{tag}m-B",
        "ingress": f"{tag}m-A",
        "rate_bps": whole(d.link["rate_bps"], "links.rate_bps"),
        "burst_bytes": kernel["burst_bytes"],
        "handle": kernel["handle"],
        "qdisc": kernel["qdisc"],
        "expect": kernel["expect"],
        # the round trip's propagation, on the reverse path (as the testbed)
        "delay_ns": 2 * d.emu_delay_ns,
        "netem_limit": kernel["netem_limit"],
    }
    res = node_json(mbox, [sys.executable, str(tool), "tc", "--spec", json.dumps(spec)], "tc")
    failed = res.get("failed")
    if failed:
        raise RuntimeError(f"tc: {failed['step']}: {failed['command']}: {failed['message']}")
    return res


def write_atomic(path: Path, doc: dict) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(doc), encoding="utf-8")
    os.replace(tmp, path)


class Forked:
    """A process forked from this one (the flows' and the sampler's with
    --kernel), with the part of Popen's interface the run uses."""

    def __init__(self, pid: int) -> None:
        self.pid, self.returncode = pid, None

    def poll(self) -> int | None:
        if self.returncode is None:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def send_signal(self, sig: int) -> None:
        if self.poll() is None:
            os.kill(self.pid, sig)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def wait(self, timeout: float | None = None) -> int:
        end = None if timeout is None else time.monotonic() + timeout
        while self.poll() is None:
            if end is not None and time.monotonic() > end:
                raise subprocess.TimeoutExpired(str(self.pid), timeout or 0)
            time.sleep(0.02)
        return self.returncode


CLONE_NEWNET = 0x40000000
PR_SET_PDEATHSIG = 1


def load_module(name: str, path: Path):
    """A stdlib-only tool beside this one (qlab_traffic.py, qlab_tb_host.py), imported."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def fork_into(node, log: Path, main, argv: list[str]) -> Forked:
    """main(argv) in a child of this process inside the node's network
    namespace, its output into log: a slow guest (a TCG VM) pays Python's
    start-up and imports once, not once per flow (two processes per flow
    took about 2 s each there). The child dies with this process
    (PR_SET_PDEATHSIG): its environment does not carry the run's tag."""
    import ctypes
    import traceback

    libc = ctypes.CDLL(None, use_errno=True)
    ns = os.open(f"/proc/{node.pid}/ns/net", os.O_RDONLY)
    parent = os.getpid()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid:
        os.close(ns)
        return Forked(pid)
    code = 1
    try:
        libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
        if os.getppid() != parent:
            os._exit(1)
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGUSR1):
            signal.signal(sig, signal.SIG_DFL)
        if libc.setns(ns, CLONE_NEWNET) != 0:
            raise OSError(ctypes.get_errno(), f"setns into {node.name}'s network namespace")
        os.close(ns)
        fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        os.close(fd)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
        code = main(argv) or 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    except BaseException:  # noqa: BLE001 (the child's own log says why; its exit status tells the run)
        traceback.print_exc()
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


def run_kernel(
    plan: dict, d: Dumbbell, net, hosts: dict, mbox, out: Path, tag: str, kernel: dict, t_wall: float
) -> int:
    tool = host_tool()
    # where a slow host's time goes (seconds from the helper's start)
    phases = {"network_s": round(time.monotonic() - t_wall, 3)}
    tc = kernel_bottleneck(mbox, d, tag, kernel, tool)
    phases["bottleneck_s"] = round(time.monotonic() - t_wall, 3)
    addr = {n["id"]: n["address"] for n in plan["nodes"]}
    logs, apps_dir, sdir = out / "logs", out / "apps", out / "sampler"
    for x in (logs, apps_dir, sdir):
        x.mkdir(exist_ok=True)
    epoch_file = apps_dir / "epoch.json"
    epoch_file.unlink(missing_ok=True)
    procs: list[tuple[Forked, str]] = []
    traffic_tool = load_module("qlab_traffic", HERE / "qlab_traffic.py")
    sampler_tool = load_module("qlab_tb_host", tool)

    def spawn(host, name: str, main, argv: list[str]) -> Forked:
        p = fork_into(host, logs / f"{name}.log", main, argv)
        procs.append((p, name))
        return p

    def log_tail(name: str) -> str:
        return (logs / f"{name}.log").read_text(errors="replace").strip()[-300:]

    # The sampler on the discipline's port (its counters, read through one
    # long-lived tc), then every flow's processes; each waits for the epoch.
    sample_spec = {
        "host": mbox.name,
        "dev": f"{tag}m-B",
        "handle": kernel["handle"],
        "queue": d.queue_id,
        "interval_ns": plan["trace"]["queue_sample_interval_ns"],
        "duration_ns": plan["duration_ns"],
        "stop_file": str(sdir / "stop.json"),
        "pcap_snaplen": 0,
    }
    (sdir / "sample.json").write_text(json.dumps(sample_spec), encoding="utf-8")
    sampler = spawn(
        mbox,
        "sampler",
        sampler_tool.main,
        ["sample", "--spec", str(sdir / "sample.json"), "--epoch-file", str(epoch_file), "--out", str(sdir)],
    )
    times = ["--epoch-file", str(epoch_file), "--end-ns", str(plan["duration_ns"])]
    waiting, listening = [sdir / "armed.json"], []
    senders, sinks_p = [], []
    for f in plan["flows"]:
        fid = f["flow_id"]
        spec = apps_dir / f"flow-{fid}.json"
        spec.write_text(json.dumps({"flow": f, "dst_address": addr[f["dst"]], "tcp": plan["tcp"]}))
        for role, node, group in (("sink", hosts[f["dst"]], sinks_p), ("send", hosts[f["src"]], senders)):
            o = apps_dir / f"{role}-{fid}.json"
            group.append(
                spawn(
                    node,
                    f"{role}-{fid}",
                    traffic_tool.main,
                    [role, "--flow", str(spec), *times, "--out", str(o)],
                )
            )
            waiting.append(Path(f"{o}.waiting"))
        listening.append(Path(f"{apps_dir / f'sink-{fid}.json'}.listening"))
    deadline = time.monotonic() + 60 + 2 * len(plan["flows"])
    while not all(w.exists() for w in waiting):
        for p, name in procs:
            if p.poll() is not None:
                raise RuntimeError(f"{name} exited ({p.returncode}) before the run began: {log_tail(name)}")
        if time.monotonic() > deadline:
            raise RuntimeError("the flows' processes had not started within the deadline")
        time.sleep(0.05)
    armed = read_json(sdir / "armed.json") or {}
    if armed.get("problem"):
        raise RuntimeError(f"the sampler: {armed['problem']}")
    phases["armed_s"] = round(time.monotonic() - t_wall, 3)
    # Everything started and idle: time 0 a little ahead, then each is told.
    # (a sink listens once told; on a loaded TCG guest waking 40 processes
    # took longer than half a second)
    lead_s = 2.0 + 0.1 * len(plan["flows"])
    epoch_ns = time.time_ns() + round(lead_s * 1e9)
    write_atomic(epoch_file, {"epoch_ns": epoch_ns})
    for p, _name in procs:
        if p.poll() is None:
            p.send_signal(signal.SIGUSR1)
    first = epoch_ns + min((f["start_ns"] for f in plan["flows"]), default=0)
    while not all(x.exists() for x in listening):
        if time.time_ns() > first:
            raise RuntimeError(
                f"start-up took longer than the {lead_s:.2f} s lead: a sink was not listening "
                "by the first flow's start"
            )
        time.sleep(0.01)

    wait_for_end(plan, sampler, apps_dir, epoch_ns, "the qdisc's sampler")
    end_rel = min(time.time_ns() - epoch_ns, plan["duration_ns"])
    phases["ended_s"] = round(time.monotonic() - t_wall, 3)
    write_atomic(sdir / "stop.json", {"end_ns": end_rel})
    for p in senders:
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
    for p in sinks_p:
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
    for p in (*senders, *sinks_p):
        try:
            p.wait(timeout=STOP_WAIT_S)
        except subprocess.TimeoutExpired:
            p.kill()
    try:
        sampler.wait(timeout=STOP_WAIT_S)
    except subprocess.TimeoutExpired:
        sampler.kill()
    got = read_json(sdir / "host-facts.json") or {}
    if sampler.returncode != 0 or not got.get("complete"):
        raise RuntimeError(
            f"the qdisc's sampler failed (exit {sampler.returncode}): "
            f"{got.get('problem') or log_tail('sampler')}"
        )
    os.replace(sdir / "queue-samples.json", out / "queue-samples.json")
    apps = {
        f["flow_id"]: {
            "sink": read_json(apps_dir / f"sink-{f['flow_id']}.json"),
            "send": read_json(apps_dir / f"send-{f['flow_id']}.json"),
        }
        for f in plan["flows"]
    }
    (out / "flow_facts.csv").write_text(flow_facts(plan, apps, epoch_ns), encoding="utf-8")
    reasons, late_facts = sender_fidelity(plan, apps)
    phases["stopped_s"] = round(time.monotonic() - t_wall, 3)
    # No net.stop(): it deletes each link in turn (two processes per host,
    # a TCG guest's half minute); the cleanup on exit kills the run's
    # namespaces' shells, and the namespaces go with their interfaces.
    del net
    mn = subprocess.run(["mn", "--version"], capture_output=True, text=True, check=False)
    mn_version = (mn.stdout + mn.stderr).strip().splitlines()[-1:] or ["unknown"]
    leaf = (tc.get("dump") or [{}])[0]
    facts = {
        "end_ns": end_rel,
        "versions": {
            "mininet": mn_version[0],
            "kernel": platform.release(),
            "python": platform.python_version(),
        },
        "wall_time_s": round(time.monotonic() - t_wall, 3),
        "valid": not reasons,
        "invalid_reasons": reasons,
        "fidelity": {
            **late_facts,
            "bottleneck_rate_bps": d.link["rate_bps"],
            "reverse_delay_ns": 2 * d.emu_delay_ns,
        },
        "bottleneck": {"tag": tag, "qdisc": leaf.get("kind"), "options": leaf.get("options", {})},
        "phases_s": phases,
    }
    (out / "runner.json").write_text(json.dumps(facts, indent=1) + "\n", encoding="utf-8")
    return 0


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("plan", nargs="?", type=Path, help="the resolved plan (JSON)")
    p.add_argument("out", nargs="?", type=Path)
    p.add_argument("--emu", type=Path, default=HERE.parent.parent / "build" / "emu" / "qlab-emu")
    p.add_argument(
        "--rt-priority", type=int, default=50, help="qlab-emu's SCHED_FIFO priority (0: normal scheduling)"
    )
    p.add_argument(
        "--kernel",
        type=Path,
        help="the kernel's qdisc as the bottleneck instead of qlab-emu: its tc words (JSON, see above)",
    )
    p.add_argument("--tag", help="name prefix of the run's nodes (default: random q + 3 hex digits)")
    p.add_argument(
        "--watch-launcher",
        action="store_true",
        help="also stop when the launcher (Ansible's worker or ansible-playbook) dies",
    )
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
    if not a.plan or not a.out:
        p.error("PLAN and OUTDIR are required")
    kernel = None
    if a.kernel:
        try:
            kernel = json.loads(a.kernel.read_text(encoding="utf-8"))
            missing = [
                k for k in ("qdisc", "expect", "handle", "burst_bytes", "netem_limit") if k not in kernel
            ]
        except (OSError, ValueError, TypeError) as exc:
            missing = [f"a JSON object ({exc})"]
        if missing:
            print(f"qlab_mn_run: --kernel {a.kernel}: needs {', '.join(missing)}", file=sys.stderr)
            return EXIT_BAD_JOB
    elif not a.emu.exists():
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
    (STATE_DIR / f"{tag}.json").write_text(json.dumps({"tag": tag, "pid": os.getpid(), "plan": str(a.plan)}))
    reaper = start_reaper(tag, a.watch_launcher)
    os.environ[TAG_ENV] = tag

    def on_term(_sig, _frame):
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, on_term)
    try:
        return run(a.plan, a.out, a.emu.resolve(), a.rt_priority, tag, kernel)
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

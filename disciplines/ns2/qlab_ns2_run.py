#!/usr/bin/env python3
"""qlab-ns2-run: run one resolved plan (docs/jobs.md) in ns-2 and write its raw
facts (docs/traces.md, "Raw facts: what a runner writes").

    qlab-ns2-run PLAN.json OUTDIR [--ns PATH] [--keep-tcl]

Writes OUTDIR/flow_facts.csv, OUTDIR/queue_facts.csv, OUTDIR/packet_facts.csv
(with trace.packets) and OUTDIR/runner.json; ``qlab run-job`` checks them
against the plan and derives the trace tables. The simulator is qlab's ns-2.35
(build/ns2/ns, disciplines/ns2/build.sh: Queue/Qlab and the agents below are
compiled into it). Exit 2: a plan this runner cannot build (the ns2 backend's
refuse() names the same things before a run); 1: ns failed.

The model (the Tcl this writes, run.tcl, is kept in OUTDIR with --keep-tcl):

- One ns-2 node per plan node (in plan order: node i has ns-2 address i), two
  simplex links per plan link (a->b, then b->a), each with the link's rate
  and delay. ns-2 serialises the IP length (hdr_cmn size) at the link rate: no
  link-layer header (ns-3's point-to-point adds 2 bytes per packet).
- The queue at each link end: ``lossless`` is Queue/DropTail with a limit of
  10^9 packets (never drops); a core discipline is Queue/Qlab (qlab-queue.h)
  with every parameter in the core's text syntax, the queue's seed, and the
  name LINK:NODE. The packet on the wire is on the link, not in the queue.
- Routes: manual (``$ns rtproto Manual``): a host sends everything over its
  one link; a router reaches each host attached to it directly and every
  other host by the plan's routes (longest prefix first), one hash entry per
  destination host.
- TCP (bulk flows): ns-2's one-way agents, Agent/TCP/Newreno (or
  Agent/TCP/Sack1 with ``tcp.sack``) to Agent/TCPSink (/DelAck when
  ``delayed_ack_count`` is 2, its interval_ 200 ms as ns-3's DelAckTimeout;
  /Sack1, /Sack1/DelAck with SACK); packetSize_ = seg_bytes (segments of
  seg_bytes + 40 on the wire: ns-2 sends whole segments, the last one too),
  window_ = rcv_buf_bytes / seg_bytes packets, windowInit_, minrto_,
  rtxcur_init_ = syn_timeout (the RTO before the first sample),
  timestamps_; everything else ns-2.35's defaults (tcpTick_ 10 ms, maxrto_
  60 s, no delayed-ACK unless asked). ``tcp.handshake: true`` is ns-2's
  modelled SYN (syn_ true, its default): the first segment is a 40-byte
  seqno-0 "SYN" the sink ACKs; data starts when that ACK arrives, with
  windowInit_ (delay_growth_); a lost SYN is resent after rtxcur_init_ (no
  SYN flag on the wire, no third segment). ``false``: syn_ false, the first
  data segment leaves at start_ns. An FTP source sends the flow's bytes at
  start_ns; Application/QlabTcpSink on the sink counts the in-order bytes.
  The sender's prio_ (hdr_ip prio, read by the adapter as the ToS byte) is
  the flow's tos; ACKs carry 0 (as in ns-3). Both agents' fid_ is the flow id.
- UDP (cbr, onoff, voip): Agent/QlabUDP sends a datagram of pkt_bytes at
  start + k * interval_ns in each on-period (exactly the plan's times) to
  Agent/QlabUDPSink, which measures the one-way delay from the send time.
- The run ends at duration_ns, or with stop_when_done as soon as every bulk
  flow's sink has its bytes (a 0-byte flow as it starts) and every UDP flow's
  last on-period ended udp_drain_ns ago.
- Queue samples of every trace.queues queue at k * queue_sample_interval_ns
  and once more at the end (unless sampled then); packet events of those
  queues with trace.packets (flow_id NA for ACKs: the reverse direction).
- Randomness: none of ns-2's (no model used draws from its RNG); each
  discipline's generator has its queue's seed. The workload is in the plan.
"""

from __future__ import annotations

import argparse
import csv
import decimal
import io
import ipaddress
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
DEFAULT_NS = Path(os.environ.get("QLAB_NS2", HERE.parent.parent / "build" / "ns2" / "ns"))
LOSSLESS_LIMIT = 1_000_000_000
DELACK_INTERVAL_S = 0.2
TCP_HEADER_BYTES = 40
# The plan names ns-3's own queue discs ns3-<name> (qlab.native.PREFIX; a test holds them equal).
NS3_OWN = "ns3-"
NS2_VERSION = "2.35"
NS2_SOURCE = "ns2_2.35+dfsg.orig.tar.xz (Debian 2.35+dfsg-5)"


class Refused(Exception):
    """The plan asks for something this runner cannot build."""


def param_text(value: Any) -> str:
    """A typed plan value in the core's text syntax (qcore_param_parse)."""
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, list):
        return ":".join(str(int(v)) for v in value)
    if isinstance(value, float):
        text = format(decimal.Decimal(repr(value)), "f")
        if "." in text:
            text = text.rstrip("0").rstrip(".")
        return text or "0"
    return str(value)


def tcl_word(text: str) -> str:
    """A Tcl word that stands for exactly text (braced; plan names are safe patterns)."""
    if any(c in text for c in "{}\\\n\r") or not text:
        raise Refused(f"cannot quote {text!r} for Tcl")
    return "{" + text + "}"


def seconds(ns: int) -> str:
    return f"{ns // 1_000_000_000}.{ns % 1_000_000_000:09d}"


def ipv4(text: str) -> int:
    return int(ipaddress.IPv4Address(text))


def check(plan: dict[str, Any]) -> list[str]:
    """What of the plan this runner cannot build (the backend's refuse() uses it)."""
    out = []
    nodes = {n["id"]: n for n in plan["nodes"]}
    pairs: dict[frozenset, str] = {}
    traced = set(plan["trace"]["queues"])
    for i, lk in enumerate(plan["links"]):
        pair = frozenset((lk["a"], lk["b"]))
        if pair in pairs:
            out.append(
                f"links[{i}]: ns-2 has one link per pair of nodes; {lk['a']}-{lk['b']} is also "
                f"link {pairs[pair]}"
            )
        pairs[pair] = lk["id"]
        for node, q in lk["queues"].items():
            if q["kind"].startswith(NS3_OWN):
                out.append(
                    f"links[{i}].queues.{node}.kind: {q['kind']} is ns-3's own queue disc "
                    "(the ns3 backend only; the ns2 backend runs the core's disciplines)"
                )
            elif q["kind"] == "lossless" and f"{lk['id']}:{node}" in traced:
                out.append(f"trace.queues: {lk['id']}:{node} is lossless; ns-2 traces discipline queues")
    poisson = [f["flow_id"] for f in plan["flows"] if f["app"] == "poisson"]
    if poisson:
        out.append(
            f"flows: app poisson (flow {poisson[0]}): ns-2's runner does not yet implement the "
            "contract's Poisson generator (docs/jobs.md); the ns3 backend does"
        )
    stopped = [j for j, f in enumerate(plan["flows"]) if "stop_ns" in f]
    if stopped:
        out.append(
            f"flows[{stopped[0]}].stop_ns: ns-2's runner does not yet stop a bulk flow mid-transfer "
            "(docs/jobs.md, stop_ns); the ns3 backend does"
        )
    tcp = plan["tcp"]
    if tcp.get("variant", "NewReno") != "NewReno":
        out.append(
            f"tcp.variant: {tcp['variant']} is not in the ns2 backend: its one-way TCP agents "
            "(Agent/TCP/Newreno, or Agent/TCP/Sack1 with tcp.sack) are NewReno only"
        )
    if tcp["delayed_ack_count"] not in (1, 2):
        out.append(
            f"tcp.delayed_ack_count: ns-2's sinks ACK every segment (1) or every second one "
            f"(2, TCPSink/DelAck); got {tcp['delayed_ack_count']}"
        )
    if tcp.get("window_scaling"):
        out.append(
            "tcp.window_scaling: ns-2's one-way TCP has no window scaling option "
            "(its window is window_ packets)"
        )
    if plan["trace"].get("tcp"):
        out.append("trace.tcp: per-flow TCP state traces exist only in the ns3 backend")
    for j, f in enumerate(plan["flows"]):
        for end in ("src", "dst"):
            if nodes[f[end]]["kind"] != "host":
                out.append(f"flows[{j}].{end}: {f[end]} is not a host")
    return out


class Model:
    """The plan as ns-2 Tcl."""

    def __init__(self, plan: dict[str, Any], outdir: Path):
        self.plan = plan
        self.out = outdir
        self.index = {n["id"]: i for i, n in enumerate(plan["nodes"])}
        self.lines: list[str] = []

    def emit(self, line: str) -> None:
        self.lines.append(line)

    def tcl(self) -> str:
        p = self.plan
        self.emit("set ns [new Simulator]")
        self.emit("$ns rtproto Manual")
        self.emit("set qlab_left 0")
        self.emit(f"set qlab_stop {1 if p['stop_when_done'] else 0}")
        self.emit(
            "proc qlab-done {fid} {\n\tglobal ns qlab_left qlab_stop\n\tincr qlab_left -1\n"
            "\tif {$qlab_left <= 0 && $qlab_stop} { $ns halt }\n}"
        )
        for i in range(len(p["nodes"])):
            self.emit(f"set n({i}) [$ns node]")
        self.links()
        self.routes()
        self.flows()
        self.traces()
        self.emit(f"$ns at {seconds(p['duration_ns'])} {{$ns halt}}")
        self.emit("$ns run")
        self.finish()
        return "\n".join(self.lines) + "\n"

    def links(self) -> None:
        p = self.plan
        self.discs: list[str] = []  # Tcl variables of the Queue/Qlab queues
        self.traced: list[str] = []
        traced = set(p["trace"]["queues"])
        for lk in p["links"]:
            for frm, to in ((lk["a"], lk["b"]), (lk["b"], lk["a"])):
                q = lk["queues"][frm]
                kind = "DropTail" if q["kind"] == "lossless" else "Qlab"
                a, b = self.index[frm], self.index[to]
                self.emit(
                    f"$ns simplex-link $n({a}) $n({b}) {lk['rate_bps']} {seconds(lk['delay_ns'])} {kind}"
                )
                var = f"qq({a},{b})"
                self.emit(f"set {var} [[$ns link $n({a}) $n({b})] queue]")
                if kind == "DropTail":
                    self.emit(f"${var} set limit_ {LOSSLESS_LIMIT}")
                    continue
                name = f"{lk['id']}:{frm}"
                self.emit(f"${var} disc {tcl_word(q['kind'])}")
                for pname, value in q.get("params", {}).items():
                    self.emit(f"${var} param {tcl_word(pname)} {tcl_word(param_text(value))}")
                self.emit(f"${var} seed {int(q['seed'])}")
                self.emit(f"${var} name {tcl_word(name)}")
                self.emit(f"${var} configure-core")
                self.discs.append(var)
                if name in traced:
                    self.traced.append(var)
        self.link_of = {}
        for lk in p["links"]:
            self.link_of[lk["id"]] = lk

    def routes(self) -> None:
        p = self.plan
        kind = {n["id"]: n["kind"] for n in p["nodes"]}
        attached: dict[str, str] = {}  # host -> its router (or peer)
        for lk in p["links"]:
            for h, other in ((lk["a"], lk["b"]), (lk["b"], lk["a"])):
                if kind[h] == "host":
                    attached[h] = other
        for h, peer in attached.items():
            self.emit(
                f"$n({self.index[h]}) add-route default [[$ns link $n({self.index[h]}) "
                f"$n({self.index[peer]})] head]"
            )
        routes: dict[str, list[tuple[ipaddress.IPv4Network, str]]] = {}
        for r in p["routes"]:
            routes.setdefault(r["node"], []).append((ipaddress.IPv4Network(r["dst"]), r["link"]))
        for rlist in routes.values():
            rlist.sort(key=lambda x: -x[0].prefixlen)  # longest first, stable
        hosts = [n for n in p["nodes"] if n["kind"] == "host"]
        for router in (n["id"] for n in p["nodes"] if n["kind"] == "router"):
            ri = self.index[router]
            for h in hosts:
                if attached.get(h["id"]) == router:
                    nxt = h["id"]
                else:
                    addr = ipaddress.IPv4Address(h["address"])
                    link = next((lid for net, lid in routes.get(router, []) if addr in net), None)
                    if link is None:
                        continue  # no route: ns-2 drops what is sent there (no flow does)
                    lk = self.link_of[link]
                    nxt = lk["b"] if lk["a"] == router else lk["a"]
                self.emit(
                    f"$n({ri}) add-route {self.index[h['id']]} "
                    f"[[$ns link $n({ri}) $n({self.index[nxt]})] head]"
                )

    def flows(self) -> None:
        p = self.plan
        tcp = p["tcp"]
        nodes = {n["id"]: n for n in p["nodes"]}
        sack = bool(tcp.get("sack"))
        syn = tcp.get("handshake", True) is not False
        sender = "Agent/TCP/Sack1" if sack else "Agent/TCP/Newreno"
        sink = (
            "Agent/TCPSink"
            + ("/Sack1" if sack else "")
            + ("/DelAck" if tcp["delayed_ack_count"] == 2 else "")
        )
        self.emit("set qlab_facts [new QlabTcpFacts]")
        first_disc = self.discs[0] if self.discs else None
        self.emit(f"set qlab_left {len(p['flows'])}")
        for f in p["flows"]:
            fid = f["flow_id"]
            s, d = self.index[f["src"]], self.index[f["dst"]]
            if first_disc:
                proto = 17 if f["app"] != "bulk" else 6
                self.emit(
                    f"${first_disc} flow {fid} {s} {ipv4(nodes[f['src']]['address'])} "
                    f"{ipv4(nodes[f['dst']]['address'])} {f['src_port']} {f['dst_port']} {proto}"
                )
            if f["app"] == "bulk":
                seg = f["seg_bytes"]
                window = max(1, tcp["rcv_buf_bytes"] // seg)
                self.emit(f"set src({fid}) [new {sender}]")
                for k, v in (
                    ("fid_", fid),
                    ("prio_", f["tos"]),
                    ("packetSize_", seg),
                    ("window_", window),
                    ("windowInit_", tcp["initial_cwnd_segments"]),
                    ("minrto_", seconds(tcp["min_rto_ns"])),
                    ("rtxcur_init_", seconds(tcp["syn_timeout_ns"])),
                    ("syn_", "true" if syn else "false"),
                    ("timestamps_", "true" if tcp.get("timestamps") else "false"),
                ):
                    self.emit(f"$src({fid}) set {k} {v}")
                self.emit(f"$ns attach-agent $n({s}) $src({fid})")
                self.emit(f"set dst({fid}) [new {sink}]")
                self.emit(f"$dst({fid}) set fid_ {fid}")
                if tcp["delayed_ack_count"] == 2:
                    self.emit(f"$dst({fid}) set interval_ {DELACK_INTERVAL_S}")
                self.emit(f"$ns attach-agent $n({d}) $dst({fid})")
                self.emit(f"$ns connect $src({fid}) $dst({fid})")
                self.emit(f"set app({fid}) [new Application/QlabTcpSink]")
                self.emit(f"$app({fid}) attach-agent $dst({fid})")
                self.emit(f"$app({fid}) flow {fid} {seg + TCP_HEADER_BYTES} {seg} {f['bytes']} {int(syn)}")
                self.emit(f"set ftp({fid}) [new Application/FTP]")
                self.emit(f"$ftp({fid}) attach-agent $src({fid})")
                if f["bytes"] > 0:
                    self.emit(f"$ns at {seconds(f['start_ns'])} {{$ftp({fid}) send {f['bytes']}}}")
                else:
                    self.emit(f"$ns at {seconds(f['start_ns'])} {{qlab-done {fid}}}")
            else:
                self.emit(f"set src({fid}) [new Agent/QlabUDP]")
                self.emit(f"$src({fid}) set fid_ {fid}")
                self.emit(f"$src({fid}) set prio_ {f['tos']}")
                self.emit(f"$ns attach-agent $n({s}) $src({fid})")
                self.emit(f"set dst({fid}) [new Agent/QlabUDPSink]")
                self.emit(f"$dst({fid}) set fid_ {fid}")
                self.emit(f"$ns attach-agent $n({d}) $dst({fid})")
                self.emit(f"$ns connect $src({fid}) $dst({fid})")
                self.emit(f"$src({fid}) schedule {f['interval_ns']} {f['pkt_bytes']}")
                for a, b in f["on_periods_ns"]:
                    self.emit(f"$src({fid}) period {a} {b}")
                self.emit(f"$ns at 0 {{$src({fid}) go}}")
                stop = max((b for _, b in f["on_periods_ns"]), default=f["start_ns"])
                self.emit(f"$ns at {seconds(stop + p['udp_drain_ns'])} {{qlab-done {fid}}}")

    def traces(self) -> None:
        p, t = self.plan, self.plan["trace"]
        qf = self.out / "queue_facts.raw"
        self.emit(f"set qlab_qf [open {tcl_word(str(qf))} w]")
        self.emit(f"set qlab_queues [list {' '.join('$' + v for v in self.traced)}]")
        self.emit(f"set qlab_I {t['queue_sample_interval_ns']}")
        self.emit(f"set qlab_D {p['duration_ns']}")
        self.emit("set qlab_last -1")
        self.emit(
            "proc qlab-sample {k} {\n\tglobal ns qlab_qf qlab_queues qlab_I qlab_D qlab_last\n"
            "\tforeach qv $qlab_queues { puts -nonewline $qlab_qf [$qv sample] }\n"
            "\tset qlab_last [expr {$k * $qlab_I}]\n"
            "\tset next [expr {($k + 1) * $qlab_I}]\n"
            "\tif {$next <= $qlab_D} {\n"
            '\t\t$ns at [expr {$next / 1e9}] "qlab-sample [expr {$k + 1}]"\n\t}\n}'
        )
        self.emit("$ns at 0 {qlab-sample 0}")
        if t["packets"] and self.traced:
            pf = self.out / "packet_facts.raw"
            for v in self.traced:
                self.emit(f"${v} packet-trace {tcl_word(str(pf))}")

    def finish(self) -> None:
        p = self.plan
        self.emit("set qlab_end [expr {round([$ns now] * 1e9)}]")
        self.emit(
            "if {$qlab_end != $qlab_last} {\n"
            "\tforeach qv $qlab_queues { puts -nonewline $qlab_qf [$qv sample] }\n}"
        )
        self.emit("close $qlab_qf")
        if p["trace"]["packets"] and self.traced:
            self.emit(f"${self.traced[0]} packet-trace-close")
        ff = self.out / "flow_facts.raw"
        self.emit(f"set ff [open {tcl_word(str(ff))} w]")
        for f in p["flows"]:
            fid = f["flow_id"]
            if f["app"] == "bulk":
                self.emit(f'puts $ff "{fid} [$qlab_facts facts $src({fid})] [$app({fid}) facts]"')
            else:
                self.emit(f'puts $ff "{fid} [$src({fid}) facts] [$dst({fid}) facts]"')
        self.emit("close $ff")
        self.emit(f"set ef [open {tcl_word(str(self.out / 'end_ns.raw'))} w]")
        self.emit("puts $ef $qlab_end")
        self.emit("close $ef")
        self.emit("exit 0")


def write_csv(path: Path, header: list[str], rows: list[list[Any]]) -> None:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(header)
    w.writerows(rows)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(buf.getvalue(), encoding="utf-8")
    tmp.replace(path)


def facts(plan: dict[str, Any], out: Path) -> int:
    """Turn ns's output into the raw facts; returns end_ns."""
    end_ns = int((out / "end_ns.raw").read_text().strip())
    apps = {f["flow_id"]: f["app"] for f in plan["flows"]}
    rows = []
    for line in (out / "flow_facts.raw").read_text().splitlines():
        v = line.split()
        fid = int(v[0])
        if apps[fid] == "bulk":  # fid tx retx rx_bytes first last
            rows.append([fid, v[1], v[2], "NA", v[3], v[4], v[5], "NA", "NA"])
        else:  # fid tx rx rx_bytes first last dsum dmax
            rows.append([fid, v[1], 0, v[2], v[3], v[4], v[5], v[6], v[7]])
    rows.sort(key=lambda r: r[0])
    write_csv(
        out / "flow_facts.csv",
        [
            "flow_id",
            "tx_packets",
            "retx_packets",
            "rx_packets",
            "rx_bytes",
            "first_rx_ns",
            "last_rx_ns",
            "delay_sum_ns",
            "delay_max_ns",
        ],
        rows,
    )
    qrows = [r.split(",") for r in (out / "queue_facts.raw").read_text().splitlines() if r]
    qrows = [[int(r[0]), r[1], int(r[2]), *r[3:]] for r in qrows]
    qrows.sort(key=lambda r: (r[0], r[1], r[2]))
    write_csv(
        out / "queue_facts.csv",
        [
            "time_ns",
            "queue",
            "band",
            "backlog_pkts",
            "backlog_bytes",
            "enqueued_pkts",
            "dequeued_pkts",
            "dropped_pkts",
        ],
        qrows,
    )
    if plan["trace"]["packets"]:
        raw = out / "packet_facts.raw"
        prow = [r.split(",") for r in raw.read_text().splitlines() if r] if raw.exists() else []
        write_csv(
            out / "packet_facts.csv",
            ["seq", "time_ns", "queue", "event", "band", "len_bytes", "flow_id", "sojourn_ns", "reason"],
            prow,
        )
    for name in ("flow_facts.raw", "queue_facts.raw", "packet_facts.raw", "end_ns.raw"):
        (out / name).unlink(missing_ok=True)
    return end_ns


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="qlab-ns2-run", description=__doc__.split("\n\n")[0])
    ap.add_argument("plan", type=Path)
    ap.add_argument("outdir", type=Path)
    ap.add_argument("--ns", type=Path, default=DEFAULT_NS, help="qlab's ns-2 (build/ns2/ns)")
    ap.add_argument("--keep-tcl", action="store_true", help="keep the generated run.tcl in OUTDIR")
    args = ap.parse_args(argv)
    try:
        plan = json.loads(args.plan.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        print(f"qlab-ns2-run: {args.plan}: {exc}", file=sys.stderr)
        return 2
    problems = check(plan)
    if problems:
        print("qlab-ns2-run: ns-2 cannot build this plan:\n  " + "\n  ".join(problems), file=sys.stderr)
        return 2
    out = args.outdir.resolve()
    out.mkdir(parents=True, exist_ok=True)
    try:
        script = Model(plan, out).tcl()
    except Refused as exc:
        print(f"qlab-ns2-run: {exc}", file=sys.stderr)
        return 2
    tcl = out / "run.tcl"
    tcl.write_text(script, encoding="utf-8")
    t0 = time.monotonic()
    proc = subprocess.run([str(args.ns), str(tcl)], cwd=out, capture_output=True, text=True, check=False)
    wall = time.monotonic() - t0
    if proc.stdout:
        sys.stdout.write(proc.stdout)
    if proc.stderr:
        sys.stderr.write(proc.stderr)
    if proc.returncode != 0 or not (out / "end_ns.raw").exists():
        print(f"qlab-ns2-run: ns exited {proc.returncode}", file=sys.stderr)
        return 1
    if not args.keep_tcl:
        tcl.unlink()
    end_ns = facts(plan, out)
    tcp = plan["tcp"]
    info = {
        "end_ns": end_ns,
        "versions": {
            "ns-2": NS2_VERSION,
            "ns-2-source": NS2_SOURCE,
            "ns-2-tcp": (
                "one-way "
                + ("Sack1" if tcp.get("sack") else "Newreno")
                + (", no SYN" if tcp.get("handshake", True) is False else ", modelled SYN (syn_)")
            ),
        },
        "wall_time_s": round(wall, 3),
    }
    (out / "runner.json").write_text(json.dumps(info, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())

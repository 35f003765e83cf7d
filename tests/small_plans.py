"""Hand-built resolved plans (docs/jobs.md) for the backends' runner tests:
the pieces of a plan, and the small dumbbell the ns-2 and Mininet tests run.
UDP schedules are worked out by qlab.plan, as for every plan qlab makes."""

from __future__ import annotations

import json
from pathlib import Path

from qlab import core
from qlab import plan as plans

MS = 1_000_000
S = 1_000_000_000

# ns-2-like TCP (scenarios/ncq-conf/defaults.yaml's settings)
TCP = {
    "variant": "NewReno",
    "sack": False,
    "timestamps": False,
    "window_scaling": False,
    "initial_cwnd_segments": 2,
    "delayed_ack_count": 1,
    "min_rto_ns": 200 * MS,
    "syn_timeout_ns": 1 * S,
    "rcv_buf_bytes": 131072,
    "snd_buf_bytes": 131072,
}
LOSSLESS = {"kind": "lossless"}


def queue(kind: str, seed: int = 1, **params) -> dict:
    """A discipline queue of a plan, its parameters typed by the core's registry."""
    return {"kind": kind, "params": core.typed_params(kind, params), "seed": seed}


def link(
    a: str,
    b: str,
    *,
    rate_bps: int = 100_000_000,
    delay_ns: int = 1 * MS,
    queues: dict | None = None,
    link_id: str | None = None,
) -> dict:
    """A link of a plan; lossless queues at both ends unless given."""
    return {
        "id": link_id or f"{a}-{b}",
        "a": a,
        "b": b,
        "rate_bps": rate_bps,
        "delay_ns": delay_ns,
        "mtu_bytes": 1500,
        "queues": queues or {a: dict(LOSSLESS), b: dict(LOSSLESS)},
    }


def udp_flow(
    flow_id: int,
    *,
    src_port: int,
    dst_port: int,
    rate_bps: int,
    pkt_bytes: int,
    periods_ns: list[list[int]],
    tos: int = 0,
    src: str = "s1",
    dst: str = "d0",
) -> dict:
    """A CBR flow of a plan, its schedule worked out as qlab does."""
    interval = plans.udp_interval_ns(pkt_bytes, rate_bps)
    return {
        "flow_id": flow_id,
        "app": "cbr",
        "group": "udp",
        "src": src,
        "dst": dst,
        "src_port": src_port,
        "dst_port": dst_port,
        "tos": tos,
        "cls": tos >> 5,
        "prec": (tos >> 3) & 3,
        "start_ns": periods_ns[0][0],
        "pkt_bytes": pkt_bytes,
        "rate_bps": rate_bps,
        "interval_ns": interval,
        "on_periods_ns": periods_ns,
        "packets": plans.udp_packets(periods_ns, interval),
    }


def poisson_flow(
    flow_id: int,
    *,
    mean_ns: float,
    seed: int,
    periods_ns: list[list[int]],
    pkt_bytes: int = 125,
    src: str = "s1",
) -> dict:
    """A poisson flow of a plan (app poisson: the runner draws its send times)."""
    return {
        "flow_id": flow_id,
        "app": "poisson",
        "group": "poisson",
        "src": src,
        "dst": "d0",
        "src_port": 10000 + flow_id,
        "dst_port": 6000 + flow_id,
        "tos": 0,
        "cls": 0,
        "prec": 0,
        "start_ns": periods_ns[0][0],
        "pkt_bytes": pkt_bytes,
        "mean_interval_ns": mean_ns,
        "poisson_seed": seed,
        "on_periods_ns": periods_ns,
    }


def bulk_flow(
    flow_id: int, *, src_port: int, dst_port: int, start_ns: int, seg_bytes: int, nbytes: int
) -> dict:
    """A bulk TCP transfer from s0 to d0."""
    return {
        "flow_id": flow_id,
        "app": "bulk",
        "group": "bulk",
        "src": "s0",
        "dst": "d0",
        "src_port": src_port,
        "dst_port": dst_port,
        "tos": 0,
        "cls": 0,
        "prec": 0,
        "start_ns": start_ns,
        "seg_bytes": seg_bytes,
        "bytes": nbytes,
    }


def small_dumbbell(
    backend: str,
    *,
    duration_ns: int,
    bulk_bytes: int,
    packets: bool = True,
    limit_pkts: int = 50,
    tcp: dict | None = None,
) -> dict:
    """A dumbbell: NCQ at L (every kind of typed parameter), two bulk flows
    between the same two hosts (apart in ports only) and a CBR flow of class
    1 from a second host, 10 Mb/s and 10 ms across, 1 ms access links."""
    flows = [
        bulk_flow(0, src_port=10000, dst_port=5001, start_ns=50 * MS, seg_bytes=1000, nbytes=bulk_bytes),
        bulk_flow(1, src_port=10001, dst_port=5002, start_ns=80 * MS, seg_bytes=500, nbytes=100_000),
        udp_flow(
            2,
            src_port=10000,
            dst_port=5003,
            rate_bps=100_000,
            pkt_bytes=200,
            periods_ns=[[100 * MS, 600 * MS]],
            tos=1 << 5,
        ),
    ]
    ncq = queue("ncq", size_bytes=141, thresh=0.05, limit_pkts=limit_pkts, variant="journal", favor_acks=True)
    return {
        "schema": "qlab-plan/1",
        "scenario": f"{backend}test/small",
        "paper": f"{backend}test",
        "backend": backend,
        "series": "ncq",
        "point": "ncq",
        "point_values": {},
        "seed": 1,
        "duration_ns": duration_ns,
        "stop_when_done": True,
        "udp_drain_ns": 1 * S,
        "tcp": dict(TCP, **(tcp or {})),
        "nodes": [
            {"id": "L", "kind": "router", "address": "10.1.255.254", "prefix": "10.1.0.0/16"},
            {"id": "R", "kind": "router", "address": "10.2.255.254", "prefix": "10.2.0.0/16"},
            {"id": "s0", "kind": "host", "address": "10.1.0.1"},
            {"id": "s1", "kind": "host", "address": "10.1.0.2"},
            {"id": "d0", "kind": "host", "address": "10.2.0.1"},
        ],
        "links": [
            link("s0", "L"),
            link("s1", "L"),
            link("R", "d0"),
            link(
                "L",
                "R",
                rate_bps=10_000_000,
                delay_ns=10 * MS,
                link_id="bottleneck",
                queues={"L": ncq, "R": dict(LOSSLESS)},
            ),
        ],
        "routes": [
            {"node": "L", "dst": "10.2.0.0/16", "link": "bottleneck"},
            {"node": "R", "dst": "10.1.0.0/16", "link": "bottleneck"},
        ],
        "flows": flows,
        "trace": {"queue_sample_interval_ns": 100 * MS, "packets": packets, "queues": ["bottleneck:L"]},
    }


def write_plan(tmp: Path, doc: dict, name: str = "plan.json") -> Path:
    path = tmp / name
    path.write_text(json.dumps(doc, sort_keys=True))
    return path

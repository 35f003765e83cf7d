"""Resolved plans: what one run executes (docs/jobs.md, docs/job.schema.json).

``build`` turns a resolved scenario document at one sweep point, one seed
and one series into a plan: the graph (qlab.topology), the flows with every
random draw made from the seed, typed discipline parameters, integer
nanoseconds. ``check`` is the validator every runner's input passes before
any simulator or emulator starts: the schema (composed with the core's
parameter tables) and the rules a schema cannot say (references between
nodes, links and routes, a route for every flow, consistent UDP schedules).
"""

from __future__ import annotations

import functools
import hashlib
import ipaddress
import json
import math
import os
import random
import re
from typing import Any

import fastjsonschema

from qlab import core, native, paths, topology
from qlab.topology import ns

SCHEMA_ID = "qlab-plan/1"
SCHEMA_FILE = paths.ROOT / "docs" / "job.schema.json"
# UDP applications: the first three send on a fixed grid (interval_ns), the
# last at Poisson times the runner draws with the contract's generator.
UDP_APPS = ("cbr", "onoff", "voip", "poisson")
GRID_APPS = ("cbr", "onoff", "voip")
POISSON = "poisson"
# voip: a G.711 call, 160 payload bytes + RTP/UDP/IP headers every 20 ms,
# with ITU-T P.59's mean talk-spurt and pause durations.
UDP_DEFAULTS: dict[str, dict[str, Any]] = {
    "cbr": {},
    "onoff": {},
    "voip": {"pkt_bytes": 200, "rate_bps": 80000, "on_s": 1.004, "off_s": 1.587},
}
UDP_FIELDS = ("pkt_bytes", "rate_bps", "on_s", "off_s", "stop_s", "onoff_dist", "pareto_shape")
# The smallest UDP datagram a runner sends: IPv4 + UDP headers and the
# 12-byte sequence number and send time the sink reads.
MIN_UDP_IP_BYTES = 40
# How onoff/voip periods are distributed: exponential (a two-state Markov
# chain, the default) or Pareto (heavy-tailed talk spurts and pauses, as ns-2's
# Application/Traffic/Pareto), each with the group's mean on_s / off_s.
ONOFF_DISTS = ("exponential", "pareto")
DEFAULT_PARETO_SHAPE = 1.5
UDP_DRAIN_NS = 1_000_000_000
DEFAULT_MTU = 1500
WIRELESS_MTU = 1500  # a wireless host's datagrams: what the gateway relays onto a wired link
# IPv4 + TCP headers + the largest TCP options: a segment never needs fragmenting
TCP_HEADER_ALLOWANCE = 80
UDP_HEADER_BYTES = 28
DEFAULT_WEB_HOSTS = 8
FIRST_SRC_PORT = 10000
FIRST_DST_PORT = 5001


class PlanError(Exception):
    """Problems with a plan (or a scenario that cannot become one), one line each."""

    def __init__(self, problems: list[str]):
        super().__init__("\n".join(problems))
        self.problems = problems


# ---------------------------------------------------------------------------
# the workload: every random draw, from the seed


def drawn_count(spec: dict[str, Any], group: str, seed: int | None) -> int:
    """A group's `count: {min, max}`: uniform on min..max, drawn from the
    group's own stream "<seed>/count/<group>", so every series (and backend)
    of a seed has the same applications and runs pair. Without a seed (the
    size checks, before anything is drawn): max, the most it may draw."""
    bounds = spec["count"]
    if seed is None:
        return int(bounds["max"])
    return random.Random(f"{seed}/count/{group}").randint(int(bounds["min"]), int(bounds["max"]))


def group_counts(workload: dict[str, Any], where: str, seed: int | None = None) -> list[tuple[str, int]]:
    """The number of flows of each group: a share of workload.flows, a fixed
    count (part of workload.flows), or a count drawn per seed (`count: {min,
    max}`, drawn_count; not part of workload.flows, as web groups are not).
    Without workload.flows every group gives a count, and the total is the
    sum of the fixed ones (a sweep can then vary one group's count)."""
    total = workload.get("flows")
    if total is None:
        groups = workload["groups"].items()
        shared = [g for g, spec in groups if spec.get("app") != "web" and "count" not in spec]
        if shared:
            raise PlanError([f"{where}: workload.flows: needed to divide the shares of {', '.join(shared)}"])
        total = sum(
            spec["count"]
            for spec in workload["groups"].values()
            if spec.get("app") != "web" and not isinstance(spec["count"], dict)
        )
    counts: dict[str, int] = {}
    drawn: dict[str, int] = {}
    for g, spec in workload["groups"].items():
        if spec.get("app") == "web":  # drawn in draw_flows, not part of workload.flows
            continue
        if isinstance(spec.get("count"), dict):
            drawn[g] = drawn_count(spec, g, seed)
        elif "count" in spec:
            counts[g] = spec["count"]
        elif spec["share"] != "rest":
            raw = spec["share"] * total
            n = {"ceil": math.ceil, "floor": math.floor, "round": round}[spec.get("rounding", "ceil")](
                round(raw, 9)
            )
            counts[g] = max(int(n), spec.get("min_flows", 0))
    rest = [g for g, spec in workload["groups"].items() if spec.get("share") == "rest"]
    used = sum(counts.values())
    if rest:
        counts[rest[0]] = total - used
    if any(n < 0 for n in counts.values()) or sum(counts.values()) != total:
        raise PlanError(
            [f"{where}: workload.groups: group sizes {counts} do not add up to workload.flows = {total}"]
        )
    counts.update(drawn)
    return [(g, counts[g]) for g in workload["groups"] if g in counts]


def pareto_draw(mean: float, shape: float, rng: random.Random) -> float:
    """One Pareto draw of the given mean and shape alpha > 1: scale
    x_m = mean (alpha - 1) / alpha, x_m / U^(1/alpha) with U uniform in (0, 1]
    (inverse transform, one uniform per draw, as web_flows' sizes)."""
    scale = mean * (shape - 1.0) / shape
    return scale / (1.0 - rng.random()) ** (1.0 / shape)


def on_periods(spec: dict[str, Any], start: float, stop: float, rng: random.Random) -> list[list[float]]:
    """A UDP flow's on-periods [start_s, end_s] between start and stop.

    cbr: one period. onoff/voip: on first, then alternating on and off
    durations with means on_s and off_s, cut at stop: exponential, or with
    onoff_dist pareto Pareto of shape pareto_shape (default 1.5).
    """
    if stop <= start:
        return []
    if spec["app"] == "cbr":
        return [[start, stop]]
    if spec.get("onoff_dist", "exponential") == "pareto":
        shape = float(spec.get("pareto_shape", DEFAULT_PARETO_SHAPE))

        def draw(mean: float) -> float:
            return pareto_draw(mean, shape, rng)

    else:

        def draw(mean: float) -> float:
            return rng.expovariate(1.0 / mean)

    periods = []
    t = start
    while t < stop:
        end = min(t + draw(spec["on_s"]), stop)
        periods.append([round(t, 9), round(end, 9)])
        t = end + draw(spec["off_s"])
    return periods


def call_arrivals(group: str, spec: dict[str, Any], seed: int, n: int, where: str) -> list[list[float]]:
    """A UDP group's calls arriving as a Poisson process (its `arrivals`):
    n arrival times from start_offset_s on, exponential gaps of mean
    1 / rate_per_s, from the group's stream "<seed>/arrivals/<group>"; each
    call holds an exponential time of mean holding_mean_s, from the stream
    "<seed>/holding/<group>" (so a new mean leaves the arrival times alone),
    or, without it, until the group's stop. Returns [start_s, end_s] per
    call, end_s None for "until the stop". A call arriving at or after the
    group's stop is an error, not a silent cut (as a web group's max_flows)."""
    arrivals = spec["arrivals"]
    gaps = random.Random(f"{seed}/arrivals/{group}")
    holds = random.Random(f"{seed}/holding/{group}")
    t = float(spec.get("start_offset_s", 0.0))
    stop = float(spec["stop_s"]) if "stop_s" in spec else None
    calls: list[list[float]] = []
    for k in range(n):
        t += gaps.expovariate(float(arrivals["rate_per_s"]))
        if stop is not None and t >= stop:
            raise PlanError(
                [
                    f"{where}: workload.groups.{group}.arrivals: call {k + 1} of {n} arrives at {t:.3f} s, "
                    f"at or after the group's stop_s ({stop} s); raise rate_per_s or stop_s, or lower count"
                ]
            )
        end = None
        if "holding_mean_s" in arrivals:
            end = t + holds.expovariate(1.0 / float(arrivals["holding_mean_s"]))
        calls.append([round(t, 9), end])
    return calls


def web_flows(
    group: str, spec: dict[str, Any], seed: int, first_id: int, duration_s: float, where: str
) -> list[dict[str, Any]]:
    """Web-like traffic: TCP transfers (bulk flows) arriving as a Poisson
    process of rate arrival_rate_per_s from start_offset_s until stop_s
    (default: the run's duration), each of a Pareto size with mean
    size_mean_bytes and shape pareto_shape (scale = mean (alpha - 1) / alpha),
    at least one byte. Drawn from the seed on the group's own stream."""
    rng = random.Random(f"{seed}/web/{group}")
    alpha = float(spec.get("pareto_shape", DEFAULT_PARETO_SHAPE))
    mean = float(spec["size_mean_bytes"])
    t = float(spec.get("start_offset_s", 0.0))
    stop = float(spec.get("stop_s", duration_s))
    limit = int(spec.get("max_flows", 1000))
    flows: list[dict[str, Any]] = []
    while True:
        t += rng.expovariate(float(spec["arrival_rate_per_s"]))
        if t >= stop:
            return flows
        if len(flows) == limit:
            raise PlanError(
                [
                    f"{where}: workload.groups.{group}: more than max_flows = {limit} "
                    "arrivals before stop_s; raise max_flows or lower arrival_rate_per_s"
                ]
            )
        size = max(1, round(pareto_draw(mean, alpha, rng)))
        flows.append(
            {
                "flow_id": first_id + len(flows),
                "app": "bulk",
                "group": group,
                "cls": spec.get("cls", 0),
                "prec": spec.get("prec", 0),
                "start_s": round(t, 9),
                "seg_bytes": spec["seg_bytes"],
                "bytes": size,
            }
        )


def poisson_flow_rates(doc: dict[str, Any], where: str) -> dict[str, float]:
    """Each poisson group's mean datagrams per second per flow: from its
    rate_bps (a mean bit rate), or, with packet_share, its share of the
    packets of a Poisson stream that loads the dumbbell's bottleneck to
    workload.poisson_load (lambda = load * C / (8 * sum(share * mean IP bytes)),
    IP bytes: pkt_bytes, or size_mean_bytes for exponential sizes; the
    queueing-theory parameterisation). A group with mmpp: its mean rate."""
    return _poisson_rates(doc, where)[0]


def _poisson_rates(doc: dict[str, Any], where: str) -> tuple[dict[str, float], float | None]:
    """poisson_flow_rates, and the whole stream's rate (None without packet_share)."""
    workload = doc["workload"]
    groups = {g: s for g, s in workload["groups"].items() if s.get("app") == POISSON}
    counts = dict(group_counts(workload, where)) if groups else {}
    rates: dict[str, float] = {}
    total = None
    shared = {g: s for g, s in groups.items() if "packet_share" in s}
    if shared:
        load = workload.get("poisson_load")
        capacity = doc["topology"].get("bottleneck_rate_bps")
        if load is None or capacity is None:
            raise PlanError(
                [
                    f"{where}: workload.groups: packet_share needs workload.poisson_load and a "
                    "dumbbell topology (its bottleneck_rate_bps is the rate the load refers to)"
                ]
            )
        mean_bits = 8.0 * sum(s["packet_share"] * mean_ip_bytes(s) for s in shared.values())
        total = float(load) * float(capacity) / mean_bits
        for g, s in shared.items():
            if counts.get(g, 0) > 0:
                rates[g] = total * s["packet_share"] / counts[g]
    for g, s in groups.items():
        if g in shared:
            continue
        if "mmpp" in s:
            rates[g] = 1.0 / mmpp_mean_interval_s(s["mmpp"])
        else:
            rates[g] = float(s["rate_bps"]) / (8.0 * mean_ip_bytes(s))
    return rates, total


def mean_ip_bytes(spec: dict[str, Any]) -> float:
    """A poisson group's mean IP length: size_mean_bytes (exponential sizes), else pkt_bytes."""
    return float(spec.get("size_mean_bytes", spec["pkt_bytes"]))


def mmpp_sojourn_s(mmpp: dict[str, Any]) -> list[float]:
    """The mean time a Markov-modulated source spends in each state. The
    scenario gives each state's mean gap between datagrams and the
    probability of leaving the state after each datagram (cqaqm's bursty
    source: 460 us / 0.011 and 46 ms / 0.091): a geometric number of
    exponential gaps, whose sum is exponential with mean gap / probability,
    so the chain is drawn in time, state by state (docs/jobs.md)."""
    return [float(g) / float(p) for g, p in zip(mmpp["intervals_s"], mmpp["leave_prob"], strict=True)]


def mmpp_mean_interval_s(mmpp: dict[str, Any]) -> float:
    """The long-run mean gap of a Markov-modulated source: time over datagrams per cycle of its states."""
    sojourn = mmpp_sojourn_s(mmpp)
    datagrams = sum(1.0 / float(p) for p in mmpp["leave_prob"])
    return sum(sojourn) / datagrams


def mmpp_periods(mmpp: dict[str, Any], start: float, stop: float, rng: random.Random) -> list[list[float]]:
    """A Markov-modulated source's states from start to stop: [start_s,
    end_s, mean_gap_s] per state visit, back to back, the first state drawn
    from the chain's stationary distribution (time shares), each sojourn
    exponential (mmpp_sojourn_s)."""
    gaps = [float(g) for g in mmpp["intervals_s"]]
    sojourn = mmpp_sojourn_s(mmpp)
    state = 0 if rng.random() < sojourn[0] / sum(sojourn) else 1
    periods = []
    t = start
    while t < stop:
        end = min(t + rng.expovariate(1.0 / sojourn[state]), stop)
        if round(end, 9) > round(t, 9):
            periods.append([round(t, 9), round(end, 9), gaps[state]])
        t = end
        state = 1 - state
    return periods


def poisson_stop_s(doc: dict[str, Any], spec: dict[str, Any], start_s: float, where: str) -> float:
    """When a poisson flow stops: after workload.poisson_packets / lambda
    seconds (the stream's expected number of datagrams; the work of a
    queueing-theory run is then the same at every load), else at the
    group's stop_s (default: the run's duration)."""
    n = doc["workload"].get("poisson_packets")
    total = _poisson_rates(doc, where)[1]
    if n is not None and total and "packet_share" in spec:
        return round(start_s + float(n) / total, 9)
    return float(spec.get("stop_s", doc["duration_s"]))


def draw_flows(doc: dict[str, Any], seed: int, where: str) -> list[dict[str, Any]]:
    """The flows of a run (times in seconds, as drawn). Start times depend on
    the seed only, so every series (and backend) sees the same workload for
    a given seed: comparisons are paired by seed."""
    rng = random.Random(seed)
    jitter = float(doc["workload"]["start_jitter_s"])
    poisson_rates = poisson_flow_rates(doc, where)
    flows = []
    for group, n in group_counts(doc["workload"], where, seed):
        spec = doc["workload"]["groups"][group]
        app = spec.get("app", "bulk")
        spacing = float(spec.get("start_spacing_s", 0.0))
        calls = call_arrivals(group, spec, seed, n, where) if "arrivals" in spec else None
        for k in range(n):
            flow = {
                "flow_id": len(flows),
                "app": app,
                "group": group,
                "cls": spec.get("cls", 0),
                "prec": spec.get("prec", 0),
                # Poisson arrivals (no jitter), or a ramp: the group's k-th
                # flow k spacings after its offset
                "start_s": calls[k][0]
                if calls is not None
                else round(
                    spec.get("start_offset_s", 0.0)
                    + k * spacing
                    + (rng.uniform(0.0, jitter) if jitter > 0 else 0.0),
                    9,
                ),
            }
            if flow["start_s"] >= float(doc["duration_s"]):
                # it would never send (the plan check refuses it too)
                raise PlanError(
                    [
                        f"{where}: workload.groups.{group}: its flow {flow['flow_id']} starts at "
                        f"{flow['start_s']} s, at or after the run's end (duration_s {doc['duration_s']})"
                    ]
                )
            if app == POISSON:
                stop = min(poisson_stop_s(doc, spec, flow["start_s"], where), float(doc["duration_s"]))
                flow.update(pkt_bytes=spec["pkt_bytes"])
                if "size_mean_bytes" in spec:
                    flow["size_mean_bytes"] = spec["size_mean_bytes"]
                if "mmpp" in spec:
                    # its own stream, as the on/off draws
                    states = mmpp_periods(
                        spec["mmpp"], flow["start_s"], stop, random.Random(f"{seed}/mmpp/{flow['flow_id']}")
                    )
                    flow.update(
                        on_periods=[[a, b] for a, b, _ in states],
                        period_mean_intervals_s=[g for _, _, g in states],
                    )
                else:
                    flow.update(
                        mean_interval_s=1.0 / poisson_rates[group],
                        on_periods=[[flow["start_s"], stop]] if stop > flow["start_s"] else [],
                    )
            elif app in UDP_DEFAULTS:
                udp = {**UDP_DEFAULTS[app], **{k: spec[k] for k in UDP_FIELDS if k in spec}}
                # Each flow's on/off draws have their own stream, so adding a
                # flow or a group leaves the others' schedules unchanged.
                flow_rng = random.Random(f"{seed}/on-off/{flow['flow_id']}")
                stop = float(udp.get("stop_s", doc["duration_s"]))
                if calls is not None and calls[k][1] is not None:
                    stop = min(stop, calls[k][1])  # the call hangs up
                flow.update(
                    pkt_bytes=udp["pkt_bytes"],
                    rate_bps=udp["rate_bps"],
                    on_periods=on_periods({"app": app, **udp}, flow["start_s"], stop, flow_rng),
                )
            else:
                flow.update(seg_bytes=spec["seg_bytes"], bytes=spec["task_bytes"])
                if "stop_s" in spec:
                    if float(spec["stop_s"]) <= flow["start_s"]:
                        raise PlanError(
                            [
                                f"{where}: workload.groups.{group}.stop_s: {spec['stop_s']} s is not after "
                                f"the start of its flow {flow['flow_id']} ({flow['start_s']} s)"
                            ]
                        )
                    flow["stop_s"] = float(spec["stop_s"])
            flows.append(flow)
    for group, spec in doc["workload"]["groups"].items():
        if spec.get("app") == "web":
            flows.extend(web_flows(group, spec, seed, len(flows), float(doc["duration_s"]), where))
    return flows


def poisson_seed(seed: int, flow_id: int, stream: str = "poisson") -> int:
    """A poisson flow's generator seed: 64 bits of SHA-256 of the run's seed
    and the flow id, so each flow has its own stream (`stream` "size": the
    seed of its datagram sizes)."""
    digest = hashlib.sha256(f"{seed}/{stream}/{flow_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


_SPLITMIX_GAMMA = 0x9E3779B97F4A7C15
_MASK64 = (1 << 64) - 1


def _splitmix_uniforms(seed: int):
    """u = (x >> 11) * 2^-53 of the core's splitmix64 stream (qcore_rng) from `seed`."""
    state = seed & _MASK64
    while True:
        state = (state + _SPLITMIX_GAMMA) & _MASK64
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
        z ^= z >> 31
        yield (z >> 11) * 2.0**-53


def poisson_times(mean_interval_ns: float | list[float], seed: int, periods_ns: list[list[int]]):
    """The send times of a poisson flow (docs/jobs.md), the reference every
    runner's generator is tested against: in each on-period [s, e), at
    s + g1, s + g1 + g2, ... while before e; the gaps from one splitmix64
    stream seeded with poisson_seed, u = (x >> 11) * 2^-53, gap =
    floor(-log1p(-u) * mean + 0.5) ns, with the flow's mean_interval_ns or
    the period's own (a list: period_mean_intervals_ns, a Markov-modulated
    source); a draw that lands at or past a period's end is spent. A
    generator: a long run sends millions."""
    uniforms = _splitmix_uniforms(seed)
    means = mean_interval_ns if isinstance(mean_interval_ns, list) else [mean_interval_ns] * len(periods_ns)
    for (start, end), mean in zip(periods_ns, means, strict=True):
        t = start
        while True:
            t += math.floor(-math.log1p(-next(uniforms)) * mean + 0.5)
            if t >= end:
                break
            yield t


def exponential_sizes(size_mean_bytes: float, max_bytes: int, seed: int):
    """The IP lengths of a poisson flow with size_mean_bytes (docs/jobs.md),
    datagram by datagram, the reference every runner is tested against:
    40 + floor(-log1p(-u) * (size_mean_bytes - 40) + 0.5), at most
    max_bytes (the flow's pkt_bytes), u from the splitmix64 stream seeded
    with size_seed: an exponential length shifted by the smallest datagram,
    so its mean is size_mean_bytes (up to the cap)."""
    for u in _splitmix_uniforms(seed):
        yield min(
            max_bytes,
            MIN_UDP_IP_BYTES + math.floor(-math.log1p(-u) * (size_mean_bytes - MIN_UDP_IP_BYTES) + 0.5),
        )


def udp_interval_ns(pkt_bytes: int, rate_bps: int) -> int:
    """8e9 * pkt_bytes / rate_bps ns, rounded half up, at least 1."""
    return max(1, (16_000_000_000 * pkt_bytes + rate_bps) // (2 * rate_bps))


def udp_packets(periods_ns: list[list[int]], interval_ns: int) -> int:
    """Datagrams a schedule sends: one at start + k * interval for every k with
    start + k * interval < end, in each period."""
    return sum((e - s + interval_ns - 1) // interval_ns for s, e in periods_ns if e > s)


# ---------------------------------------------------------------------------
# building a plan


def _pairs(
    doc: dict[str, Any],
    flows: list[dict[str, Any]],
    routers: list[str],
    g_from: str | None,
    g_to: str | None,
    where: str,
) -> tuple[list[tuple[str, str, str, dict[str, Any]]], list[int]]:
    """Host pairs (group, from, to, access) and each flow's pair index."""
    topo = doc["topology"]
    by_group: dict[str, list[int]] = {}
    for i, f in enumerate(flows):
        by_group.setdefault(f["group"], []).append(i)
    pairs: list[tuple[str, str, str, dict[str, Any]]] = []
    pair_of = [0] * len(flows)
    for group, members in by_group.items():
        spec = doc["workload"]["groups"][group]
        frm, to = spec.get("from", g_from), spec.get("to", g_to)
        if frm is None or to is None:
            raise PlanError(
                [
                    f"{where}: workload.groups.{group}: a {topo['kind']} topology needs "
                    "`from` and `to` (router names) on every group"
                ]
            )
        wireless = topo["kind"] == "wireless_dumbbell" and frm == topology.WIRELESS
        for key, router in (("from", frm), ("to", to)):
            if router not in routers and not (key == "from" and wireless):
                raise PlanError(
                    [
                        f"{where}: workload.groups.{group}.{key}: no router {router!r} "
                        f"(routers: {', '.join(routers)})"
                    ]
                )
        if frm == to:
            raise PlanError([f"{where}: workload.groups.{group}: from and to are the same router {frm!r}"])
        default_hosts = DEFAULT_WEB_HOSTS if spec.get("app") == "web" else len(members)
        n_pairs = max(1, min(int(spec.get("hosts", default_hosts)), len(members)))
        access = {
            "rate_bps": int(spec.get("access_rate_bps", topo["access_rate_bps"])),
            "delay_ns": ns(spec.get("access_delay_s", topo["access_delay_s"])),
        }
        first = len(pairs)
        pairs += [(group, frm, to, access)] * n_pairs
        for k, i in enumerate(members):
            pair_of[i] = first + k % n_pairs
    return pairs, pair_of


def series_queue(disc: dict[str, Any]) -> dict[str, Any]:
    """A series' discipline as a plan queue: typed parameters, every default
    filled in (a core discipline's), or every one given (ns-3's own, ns3-*)."""
    typed = native.typed_params if native.is_native(disc["kind"]) else core.typed_params
    return {"kind": disc["kind"], "params": typed(disc["kind"], disc.get("params") or {})}


def build_workload(doc: dict[str, Any], seed: int, where: str) -> dict[str, Any]:
    """The series-independent part of a run's plan: graph, routes, flows."""
    drawn = draw_flows(doc, seed, where)
    topo = doc["topology"]
    try:
        routers, _, g_from, g_to = topology.router_graph(topo, DEFAULT_MTU)
        pairs, pair_of = _pairs(doc, drawn, routers, g_from, g_to, where)
        mtu = max(
            [DEFAULT_MTU]
            + [
                f["pkt_bytes"] if f["app"] in UDP_APPS else f["seg_bytes"] + TCP_HEADER_ALLOWANCE
                for f in drawn
            ]
        )
        graph = topology.build(doc, pairs, min(mtu, 65535))
    except topology.TopologyError as exc:
        raise PlanError([f"{where}: {exc}"]) from None
    # a graph topology's own (non-series) disciplines, typed like a series'
    for link in graph.links:
        for node, q in link["queues"].items():
            if q is not topology.SERIES and q["kind"] != core.LOSSLESS:
                try:
                    link["queues"][node] = series_queue(q)
                except core.ParamError as exc:
                    raise PlanError(
                        [f"{where}: topology.links ({link['id']}, queue at {node}): {exc}"]
                    ) from None
    flows = []
    next_port: dict[str, int] = {}
    for f in drawn:
        i = pair_of[f["flow_id"]]
        src, dst = graph.sources[i], f"d{i}"
        sport = next_port.setdefault(src, FIRST_SRC_PORT)
        dport = next_port.setdefault(dst, FIRST_DST_PORT)
        if sport > 65535 or dport > 65535:
            raise PlanError(
                [
                    f"{where}: workload.groups.{f['group']}: more flows on one host than ports; "
                    "raise the group's hosts"
                ]
            )
        next_port[src], next_port[dst] = sport + 1, dport + 1
        flow = {
            "flow_id": f["flow_id"],
            "app": f["app"],
            "group": f["group"],
            "src": src,
            "dst": dst,
            "src_port": sport,
            "dst_port": dport,
            "tos": f["cls"] << 5 | f["prec"] << 3,
            "cls": f["cls"],
            "prec": f["prec"],
            "start_ns": ns(f["start_s"]),
        }
        if f["app"] == POISSON:
            flow.update(pkt_bytes=f["pkt_bytes"], poisson_seed=poisson_seed(seed, f["flow_id"]))
            if "period_mean_intervals_s" in f:
                flow["period_mean_intervals_ns"] = [round(g * 1e9, 3) for g in f["period_mean_intervals_s"]]
            else:
                flow["mean_interval_ns"] = round(f["mean_interval_s"] * 1e9, 3)
            flow["on_periods_ns"] = [[ns(a), ns(b)] for a, b in f["on_periods"]]
            if "size_mean_bytes" in f:
                flow.update(
                    size_mean_bytes=float(f["size_mean_bytes"]),
                    size_seed=poisson_seed(seed, f["flow_id"], "size"),
                )
        elif f["app"] in UDP_APPS:
            interval = udp_interval_ns(f["pkt_bytes"], int(f["rate_bps"]))
            periods = [[ns(a), ns(b)] for a, b in f["on_periods"]]
            flow.update(
                pkt_bytes=f["pkt_bytes"],
                rate_bps=int(f["rate_bps"]),
                interval_ns=interval,
                on_periods_ns=periods,
                packets=udp_packets(periods, interval),
            )
        else:
            flow.update(seg_bytes=f["seg_bytes"], bytes=int(f["bytes"]))
            if "stop_s" in f:
                flow["stop_ns"] = ns(f["stop_s"])
        flows.append(flow)
    return {"graph": graph, "flows": flows}


def build(
    doc: dict[str, Any],
    *,
    scenario: str,
    paper: str,
    backend: str,
    series: str,
    point: str,
    point_values: dict[str, Any],
    seed: int,
    workload: dict[str, Any],
) -> dict[str, Any]:
    """The plan of one run (docs/jobs.md). `doc` is the resolved scenario at
    the point, `workload` what build_workload made for the seed."""
    spec = doc["series"][series]
    try:
        queue = series_queue(spec)
    except core.ParamError as exc:
        raise PlanError([f"series.{series}.params: {exc}"]) from None
    undeployed = None
    if doc["topology"].get("undeployed") is not None:
        try:
            undeployed = series_queue(doc["topology"]["undeployed"])
        except core.ParamError as exc:
            raise PlanError([f"topology.undeployed.params: {exc}"]) from None
    deployed_at = set(spec["routers"]) if "routers" in spec else None
    graph = workload["graph"]
    try:
        links, traced = topology.with_queues(graph, queue, seed, deployed_at, undeployed)
    except topology.TopologyError as exc:
        raise PlanError([f"series.{series}.routers: {exc}"]) from None
    tcp = doc["tcp"]
    return {
        "schema": SCHEMA_ID,
        "scenario": scenario,
        "paper": paper,
        "backend": backend,
        "series": series,
        "point": point,
        "point_values": point_values,
        "seed": seed,
        "duration_ns": ns(doc["duration_s"]),
        "stop_when_done": bool(doc["stop_when_done"]),
        "udp_drain_ns": UDP_DRAIN_NS,
        "tcp": {
            "variant": tcp["variant"],
            "sack": bool(tcp["sack"]),
            "timestamps": bool(tcp["timestamps"]),
            "window_scaling": bool(tcp["window_scaling"]),
            "initial_cwnd_segments": int(tcp["initial_cwnd_segments"]),
            "delayed_ack_count": int(tcp["delayed_ack_count"]),
            "min_rto_ns": ns(tcp["min_rto_s"]),
            "syn_timeout_ns": ns(tcp["syn_timeout_s"]),
            "rcv_buf_bytes": int(tcp["rcv_buf_bytes"]),
            "snd_buf_bytes": int(tcp["snd_buf_bytes"]),
            "handshake": bool(tcp.get("handshake", True)),
        },
        # shared by every series and backend of the seed: plans are read-only
        "nodes": graph.nodes,
        "links": links,
        "routes": graph.routes,
        "flows": workload["flows"],
        **({"wireless": graph.wireless} if graph.wireless else {}),
        "trace": {
            "queue_sample_interval_ns": ns(doc["trace"]["queue_sample_interval_s"]),
            "packets": bool(doc["trace"]["packets"]),
            "queues": traced,
            "tcp": tcp_traced(doc["trace"].get("tcp", False), workload["flows"]),
            "tcp_sample_interval_ns": ns(doc["trace"].get("tcp_sample_interval_s", 0.1)),
        },
    }


def tcp_traced(spec: bool | list[int], flows: list[dict[str, Any]]) -> list[int]:
    """The flow ids a scenario's trace.tcp asks for: every bulk flow (true),
    none (false), or the listed ids this run has as bulk flows (a sweep over
    the number of flows changes which exist)."""
    bulk = [f["flow_id"] for f in flows if f["app"] == "bulk"]
    if isinstance(spec, bool):
        return bulk if spec else []
    wanted = set(spec)
    return [i for i in bulk if i in wanted]


# ---------------------------------------------------------------------------
# checking a plan (every runner's input)


@functools.cache
def schema() -> dict[str, Any]:
    """docs/job.schema.json composed with the core's parameter tables: each
    discipline's params as $defs/disc_<name> (every parameter required); and
    a rule per ns-3 queue disc of the file's own ($defs/queue_ns3-*), whose
    kinds the rule for the core's disciplines leaves out. The rules of every
    kind but lossless are in the lossless rule's else (see its $comment)."""
    doc = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    return compose(doc, doc["$defs"]["queue"]["else"]["allOf"])


def compose(doc: dict[str, Any], rules: list[dict[str, Any]]) -> dict[str, Any]:
    """schema()'s composition of a schema file's document (changed in
    place): rules, the list of the file's queue rules to which the kinds'
    rules are added (benchmarks/plan-schema-equivalence.py composes an
    older file, which kept them elsewhere)."""
    defs = doc["$defs"]
    defs["disc_kind"] = {**defs["disc_kind"], "enum": core.names()}
    for rule in rules:
        excluded = rule["if"]["properties"]["kind"].get("not", {}).get("enum")
        if excluded is not None:
            excluded += native.kinds()
    for kind in native.kinds():
        rules.append(
            {
                "if": {"properties": {"kind": {"const": kind}}},
                "then": {"$ref": f"#/$defs/queue_{kind}"},
            }
        )
    for name, disc in core.disciplines().items():
        defs[f"disc_{name}"] = {
            "type": "object",
            "additionalProperties": False,
            "required": [p["name"] for p in disc["params"]],
            "properties": {p["name"]: core.param_schema(p) for p in disc["params"]},
        }
        rules.append(
            {
                "if": {"properties": {"kind": {"const": name}}},
                "then": {"properties": {"params": {"$ref": f"#/$defs/disc_{name}"}}},
            }
        )
    return doc


@functools.cache
def _fast_validator() -> Any:
    """The schema compiled to Python (fastjsonschema, ~10x faster): the
    check every plan takes; on a failure jsonschema says every problem.

    Generating and compiling that code costs ~0.3 s, more than the check
    itself, and every `qlab run-job` would pay it: the compiled code is kept
    in build/cache/ under the schema's and the interpreter's digest (any
    problem reading or writing it, and it is made in memory, as before)."""
    import marshal
    import sys

    text = json.dumps(schema(), sort_keys=True)
    key = f"{fastjsonschema.VERSION}|strict-integer|{sys.implementation.cache_tag}|{sys.version}|{text}"
    cached = paths.BUILD / "cache" / f"plan-validator-{hashlib.sha256(key.encode()).hexdigest()[:16]}.marshal"
    try:
        code = marshal.loads(cached.read_bytes())
    except (OSError, EOFError, ValueError, TypeError):
        source = fastjsonschema.compile_to_code(schema())
        # JSON Schema's integer takes 2.0, a runner does not: integers are ints
        source = re.sub(r" and not \(isinstance\((\w+), float\) and \1\.is_integer\(\)\)", "", source)
        # the root schema's function comes first in the generated code
        root = re.search(r"^def (\w+)\(", source, re.M)
        source += f"\n\nqlab_validate = {root.group(1) if root else 'None'}\n"
        code = compile(source, "<qlab plan validator>", "exec")
        try:
            cached.parent.mkdir(parents=True, exist_ok=True)
            tmp = cached.with_name(f".{cached.name}.{os.getpid()}")
            tmp.write_bytes(marshal.dumps(code))
            tmp.replace(cached)
        except OSError:
            pass
    namespace: dict[str, Any] = {}
    exec(code, namespace)  # noqa: S102 - fastjsonschema's code for our own schema
    return namespace["qlab_validate"]


def _where(path: list[Any]) -> str:
    """A field path as the plan's readers write it: links[3].queues.L.params."""
    out = ""
    for p in path:
        out += (
            f"[{p}]"
            if isinstance(p, int) or (isinstance(p, str) and p.isdigit())
            else (f".{p}" if out else str(p))
        )
    return out or "(top level)"


def _non_finite(doc: Any) -> bool:
    """Whether a document holds a NaN or infinite float: a number to JSON
    Schema and to fastjsonschema, not to a runner. (An integral float, 2.0,
    the fast validator refuses where an integer is due: see _fast_validator.)"""
    stack = [doc]
    while stack:
        v = stack.pop()
        if isinstance(v, float) and not math.isfinite(v):
            return True
        if isinstance(v, dict):
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)
    return False


@functools.cache
def _strict_validator() -> Any:
    # jsonschema only on the failure path: importing it is a third of a
    # small job's Python start (qlab run-job runs once per simulation)
    from qlab.scenario import StrictValidator  # integer: int only; number: finite only

    return StrictValidator(schema())


def schema_problems(plan: Any) -> list[str]:
    """Every schema problem of a plan (empty: valid). The compiled validator
    decides; only a plan it refuses, or one holding NaN or infinity, goes
    through jsonschema, which names every problem."""
    try:
        _fast_validator()(plan)
        if not _non_finite(plan):
            return []
    except fastjsonschema.JsonSchemaException:
        pass
    from qlab.scenario import describe_error  # the scenario's wording of schema errors (imports jsonschema)

    validator = _strict_validator()
    errors = sorted(validator.iter_errors(plan), key=lambda e: [str(p) for p in e.absolute_path])
    out = []
    for err in errors:
        if err.validator in ("allOf", "if", "then") and err.context:
            continue
        path, msg = describe_error(err)
        out.append(f"{_where(path)}: {msg}")
    return list(dict.fromkeys(out))


def _lpm(routes: list[tuple[ipaddress.IPv4Network, str]], addr: ipaddress.IPv4Address) -> str | None:
    best = None
    for net, link in routes:
        if addr in net and (best is None or net.prefixlen > best[0].prefixlen):
            best = (net, link)
    return best[1] if best else None


def _path_problem(
    src: str,
    dst: str,
    nodes: dict[str, Any],
    adj: dict[str, list[tuple[str, str]]],
    routes: dict[str, list[tuple[ipaddress.IPv4Network, str]]],
    links: dict[str, Any],
    wireless_gateway: str | None = None,
) -> str | None:
    """Follow the plan from host src to host dst: its one link (a wireless
    host: its gateway), then each router's longest-prefix route, until the
    router dst hangs off."""
    dst_addr = ipaddress.IPv4Address(nodes[dst]["address"])
    ((here, _),) = adj[src] if adj[src] else ((wireless_gateway, ""),)
    for _ in range(len(nodes) + 1):
        if nodes[here]["kind"] == "host":
            return f"the path from {src} reaches host {here}, not {dst}"
        if any(v == dst for v, _ in adj[here]):
            return None
        lid = _lpm(routes.get(here, []), dst_addr)
        if lid is None:
            return f"no route at {here} to {dst} ({dst_addr}); routes of {here}: " + (
                ", ".join(str(n) for n, _ in routes.get(here, [])) or "none"
            )
        link = links[lid]
        here = link["b"] if link["a"] == here else link["a"]
    return f"the routes from {src} to {dst} loop"


def semantic_problems(plan: dict[str, Any]) -> list[str]:
    """What the schema cannot say; assumes the plan passed the schema."""
    out: list[str] = []
    nodes = {n["id"]: n for n in plan["nodes"]}
    if len(nodes) != len(plan["nodes"]):
        out.append("nodes: node ids must be unique")
    addresses = [n["address"] for n in plan["nodes"]]
    if len(set(addresses)) != len(addresses):
        out.append("nodes: addresses must be unique")
    links = {}
    adj: dict[str, list[tuple[str, str]]] = {n: [] for n in nodes}
    for i, link in enumerate(plan["links"]):
        where = f"links[{i}]"
        if link["id"] in links:
            out.append(f"{where}.id: duplicate link id {link['id']!r}")
        links[link["id"]] = link
        for end in ("a", "b"):
            if link[end] not in nodes:
                out.append(f"{where}.{end}: no node {link[end]!r}")
        if link["a"] == link["b"]:
            out.append(f"{where}: a link joins two different nodes")
        if set(link["queues"]) != {link["a"], link["b"]}:
            out.append(
                f"{where}.queues: expected one queue per end, keyed {link['a']!r} and {link['b']!r}, "
                f"got {', '.join(map(repr, link['queues']))}"
            )
        for node, q in link["queues"].items():
            if q["kind"] in core.names():
                # the schema has the types and ranges; the decimals of a ppm
                # value (at most 6) only the core's rules
                table = {p["name"]: p for p in core.disciplines()[q["kind"]]["params"]}
                for name, value in q["params"].items():
                    try:
                        core.typed_value(table[name], value)
                    except core.ParamError as exc:
                        out.append(f"{where}.queues.{node}.params.{exc}")
        if link["a"] in adj and link["b"] in adj:
            adj[link["a"]].append((link["b"], link["id"]))
            adj[link["b"]].append((link["a"], link["id"]))
    wireless = plan.get("wireless")
    sensors: set[str] = set()
    if wireless:
        sensors = set(wireless["nodes"])
        if len(sensors) != len(wireless["nodes"]):
            out.append("wireless.nodes: node ids must be unique")
        if len(wireless["positions_mm"]) != len(wireless["nodes"]):
            out.append(
                f"wireless.positions_mm: expected one position per node ({len(wireless['nodes'])}), "
                f"got {len(wireless['positions_mm'])}"
            )
        if nodes.get(wireless["gateway"], {}).get("kind") != "router":
            out.append(f"wireless.gateway: no router {wireless['gateway']!r}")
        if wireless["gateway_address"] in addresses:
            out.append(f"wireless.gateway_address: {wireless['gateway_address']} is a node's address")
        for nid in wireless["nodes"]:
            if nodes.get(nid, {}).get("kind") != "host":
                out.append(f"wireless.nodes: no host {nid!r}")
            elif adj.get(nid):
                out.append(f"wireless.nodes: host {nid!r} has links (a wireless host has none)")
    for nid, n in nodes.items():
        if nid in sensors:
            continue
        if n["kind"] == "host" and len(adj.get(nid, [])) != 1:
            out.append(f"nodes: host {nid!r} has {len(adj.get(nid, []))} links (a host has exactly one)")
        if n["kind"] == "host" and "prefix" in n:
            out.append(f"nodes: host {nid!r}: only routers have a prefix")
    routes: dict[str, list[tuple[ipaddress.IPv4Network, str]]] = {}
    for i, r in enumerate(plan["routes"]):
        where = f"routes[{i}]"
        node = nodes.get(r["node"])
        if node is None or node["kind"] != "router":
            out.append(f"{where}.node: no router {r['node']!r}")
            continue
        link = links.get(r["link"])
        if link is None or r["node"] not in (link["a"], link["b"]):
            out.append(f"{where}.link: no link {r['link']!r} at {r['node']}")
            continue
        try:
            net = ipaddress.IPv4Network(r["dst"])
        except ValueError:
            out.append(f"{where}.dst: {r['dst']!r} has host bits set")
            continue
        routes.setdefault(r["node"], []).append((net, r["link"]))
    if out:
        return out

    ports: set[tuple[str, str, int]] = set()
    ids: set[int] = set()
    for i, f in enumerate(plan["flows"]):
        where = f"flows[{i}]"
        if f["flow_id"] in ids:
            out.append(f"{where}.flow_id: duplicate flow_id {f['flow_id']}")
        ids.add(f["flow_id"])
        for end in ("src", "dst"):
            if nodes.get(f[end], {}).get("kind") != "host":
                out.append(f"{where}.{end}: no host {f[end]!r}")
        if f["tos"] != (f["cls"] << 5 | f["prec"] << 3):
            want = f["cls"] << 5 | f["prec"] << 3
            out.append(f"{where}.tos: expected cls << 5 | prec << 3 = {want}, got {f['tos']}")
        proto = "tcp" if f["app"] == "bulk" else "udp"
        for end, port in ((f["src"], f["src_port"]), (f["dst"], f["dst_port"])):
            if (end, proto, port) in ports:
                out.append(f"{where}: port {port}/{proto} is used twice on host {end}")
            ports.add((end, proto, port))
        if f["start_ns"] >= plan["duration_ns"]:
            # it would never send, and its goodput has no time to be over
            out.append(
                f"{where}.start_ns: {f['start_ns']} is at or after the run's end "
                f"(duration_ns {plan['duration_ns']}): the flow would never send"
            )
        if "stop_ns" in f and f["stop_ns"] <= f["start_ns"]:
            out.append(f"{where}.stop_ns: expected after start_ns ({f['start_ns']}), got {f['stop_ns']}")
        if f["src"] in sensors and f["app"] not in UDP_APPS:
            out.append(f"{where}.app: a flow from a wireless node is UDP (its gateway relays datagrams)")
        if f["dst"] in sensors:
            out.append(f"{where}.dst: a wireless node only sends (its reports go to a wired host)")
        if f["app"] in UDP_APPS:
            mtus = [links[lid]["mtu_bytes"] for _, lid in adj.get(f["src"], [])] or [WIRELESS_MTU]
            if f["pkt_bytes"] > min(mtus):
                out.append(f"{where}.pkt_bytes: larger than the link MTU")
            if f["app"] == POISSON:
                out += _poisson_problems(f, where)
            if f["app"] in GRID_APPS and f["interval_ns"] != udp_interval_ns(f["pkt_bytes"], f["rate_bps"]):
                out.append(
                    f"{where}.interval_ns: expected {udp_interval_ns(f['pkt_bytes'], f['rate_bps'])} "
                    "(8e9 * pkt_bytes / rate_bps, rounded half up)"
                )
            last = f["start_ns"]
            for k, (s, e) in enumerate(f["on_periods_ns"]):
                if s < last or e < s:
                    out.append(
                        f"{where}.on_periods_ns[{k}]: periods start at or after start_ns, are sorted, "
                        "do not overlap and end after they start"
                    )
                    break
                last = e
            else:
                want = udp_packets(f["on_periods_ns"], f["interval_ns"]) if f["app"] in GRID_APPS else None
                if want is not None and f["packets"] != want:
                    out.append(f"{where}.packets: expected {want} (the datagrams on_periods_ns sends)")
        if not out:
            # data one way, ACKs (and nothing else) the other: both need routes
            ends = [(f["src"], f["dst"])]
            if f["src"] not in sensors:  # a wireless node's flows are one-way datagrams
                ends.append((f["dst"], f["src"]))
            for a, b in ends:
                gateway = wireless["gateway"] if a in sensors else None
                problem = _path_problem(a, b, nodes, adj, routes, links, gateway)
                if problem:
                    out.append(f"{where}: {problem}")
                    break
    bulk = {f["flow_id"] for f in plan["flows"] if f["app"] == "bulk"}
    for i, flow_id in enumerate(plan["trace"].get("tcp", [])):
        if flow_id not in bulk:
            out.append(f"trace.tcp[{i}]: no bulk (TCP) flow {flow_id}")
    for i, q in enumerate(plan["trace"]["queues"]):
        lid, _, node = q.partition(":")
        link = links.get(lid)
        if link is None or node not in link["queues"]:
            out.append(f"trace.queues[{i}]: no queue {q!r} (LINK:NODE)")
        elif link["queues"][node]["kind"] == core.LOSSLESS:
            out.append(f"trace.queues[{i}]: {q} is a lossless queue; only disciplines are traced")
    return out


def _poisson_problems(f: dict[str, Any], where: str) -> list[str]:
    """What a schema cannot say about a poisson flow: one mean gap per
    period, and a mean datagram size the cap leaves room for."""
    out = []
    if "period_mean_intervals_ns" in f and len(f["period_mean_intervals_ns"]) != len(f["on_periods_ns"]):
        out.append(
            f"{where}.period_mean_intervals_ns: expected one per on-period "
            f"({len(f['on_periods_ns'])}), got {len(f['period_mean_intervals_ns'])}"
        )
    if ("size_mean_bytes" in f) != ("size_seed" in f):
        out.append(f"{where}: size_mean_bytes and size_seed go together (exponential datagram sizes)")
    if "size_mean_bytes" in f and not MIN_UDP_IP_BYTES < f["size_mean_bytes"] <= f["pkt_bytes"]:
        out.append(
            f"{where}.size_mean_bytes: expected more than {MIN_UDP_IP_BYTES} and at most pkt_bytes "
            f"({f['pkt_bytes']}), got {f['size_mean_bytes']}"
        )
    return out


def check(plan: Any) -> list[str]:
    """Every problem with a plan, one line each naming the field (empty: valid)."""
    problems = schema_problems(plan)
    if problems:
        return problems
    return semantic_problems(plan)

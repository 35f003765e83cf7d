"""Scenario topologies as a plan's graph: nodes, links with a queue at each
end, and the routers' static routes (docs/jobs.md).

Every topology kind is routers joined by router links, with hosts hung off
the routers by access links. A traffic group's flows run between host
pairs: a source host at the group's ``from`` router and a sink host at its
``to`` router, each on its own access link (the group's access rate and
delay), one pair per flow unless the group says ``hosts: N`` (its flows
spread over N pairs, round robin).

- ``dumbbell``: routers L and R, the link ``bottleneck`` between them with
  the series' discipline at L (data direction) and a lossless queue at R;
  groups run from L to R.
- ``parking_lot``: routers r0..rN in a chain, links ``hop1``..``hopN``
  each with the series' discipline at its upstream end; groups run from r0
  to rN unless they say otherwise (cross traffic: ``from: r1, to: r2``).
- ``wireless_dumbbell``: a dumbbell whose router L is also the gateway of
  a grid of wireless sensor nodes n0..n(rows*columns-1) (``wireless``:
  spacing, radio, routing, propagation); a group with ``from: wireless``
  sends from the sensors n0, n1, ... (one per pair), through L. Sensors
  are hosts without links: the plan's ``wireless`` object places them
  (docs/jobs.md); sensor j is 10.0.(j // 250).(j % 250 + 1), L's radio
  10.0.255.254.
- ``graph``: routers and router links as given, each end's queue
  ``series`` (the series' discipline), ``lossless`` (the default) or a
  discipline of its own (``{kind, params}``); every group names ``from`` and
  ``to``. A series may deploy its discipline at some ``routers`` only: the
  ``series`` ends of the other routers run the topology's ``undeployed``
  discipline (incremental deployment).

Addresses: router k (in order) is 10.(k+1).255.254 with prefix
10.(k+1).0.0/16; its j-th host 10.(k+1).(j // 250).(j % 250 + 1). Routes:
each router routes every other router's prefix over the first link of a
shortest path (fewest hops; ties go to the link listed first). Hosts and
routers' attached hosts need no route (docs/jobs.md).
"""

from __future__ import annotations

import collections
import hashlib
from dataclasses import dataclass, field
from typing import Any

from qlab import native

SERIES = "series"  # placeholder queue: the series' discipline goes here
LOSSLESS = {"kind": "lossless"}
MAX_ROUTERS = 254
WIRELESS = "wireless"  # a group's `from` on a wireless_dumbbell: the sensor nodes
WIRELESS_GATEWAY = "L"
HOSTS_PER_ROUTER = 250 * 255


class TopologyError(Exception):
    """A topology that cannot be built (the message names the field)."""


def ns(seconds: float) -> int:
    """Seconds as integer nanoseconds, rounded half away from zero (C's llround)."""
    x = float(seconds) * 1e9
    return int(x + 0.5) if x >= 0 else -int(-x + 0.5)


@dataclass
class Graph:
    nodes: list[dict[str, Any]] = field(default_factory=list)
    links: list[dict[str, Any]] = field(default_factory=list)
    routes: list[dict[str, Any]] = field(default_factory=list)
    default_from: str | None = None
    default_to: str | None = None
    wireless: dict[str, Any] | None = None
    sources: list[str] = field(default_factory=list)  # each pair's source node


def router_graph(
    topo: dict[str, Any], mtu: int
) -> tuple[list[str], list[dict[str, Any]], str | None, str | None]:
    kind = topo["kind"]
    if kind in ("dumbbell", "wireless_dumbbell"):
        return (
            ["L", "R"],
            [
                {
                    "id": "bottleneck",
                    "a": "L",
                    "b": "R",
                    "rate_bps": int(topo["bottleneck_rate_bps"]),
                    "delay_ns": ns(topo["bottleneck_delay_s"]),
                    "mtu_bytes": mtu,
                    "queues": {"L": SERIES, "R": dict(LOSSLESS)},
                }
            ],
            "L",
            "R",
        )
    if kind == "parking_lot":
        hops = int(topo["hops"])
        routers = [f"r{i}" for i in range(hops + 1)]
        links = [
            {
                "id": f"hop{i}",
                "a": routers[i - 1],
                "b": routers[i],
                "rate_bps": int(topo["hop_rate_bps"]),
                "delay_ns": ns(topo["hop_delay_s"]),
                "mtu_bytes": mtu,
                "queues": {routers[i - 1]: SERIES, routers[i]: dict(LOSSLESS)},
            }
            for i in range(1, hops + 1)
        ]
        return routers, links, routers[0], routers[-1]
    if kind == "graph":
        routers = list(topo["routers"])
        links = []
        for i, spec in enumerate(topo["links"]):
            where = f"topology.links.{i}"
            for end in ("a", "b"):
                if spec[end] not in routers:
                    raise TopologyError(
                        f"{where}.{end}: no router {spec[end]!r} (routers: {', '.join(routers)})"
                    )
            if spec["a"] == spec["b"]:
                raise TopologyError(f"{where}: a link joins two different routers")

            def queue(end: str, spec: dict[str, Any] = spec) -> Any:
                q = spec.get(f"queue_{end}", "lossless")
                if q == "series":
                    return SERIES
                if q == "lossless":
                    return dict(LOSSLESS)
                return {"kind": q["kind"], "params": dict(q.get("params") or {})}

            links.append(
                {
                    "id": spec.get("id", f"{spec['a']}-{spec['b']}"),
                    "a": spec["a"],
                    "b": spec["b"],
                    "rate_bps": int(spec["rate_bps"]),
                    "delay_ns": ns(spec["delay_s"]),
                    "mtu_bytes": mtu,
                    "queues": {spec["a"]: queue("a"), spec["b"]: queue("b")},
                }
            )
        return routers, links, None, None
    raise TopologyError(f"topology.kind: unknown kind {kind!r}")


def _routes(
    routers: list[str], links: list[dict[str, Any]], prefixes: dict[str, str]
) -> list[dict[str, Any]]:
    """Each router's route to every other router's prefix: the first link of
    a fewest-hops path (breadth-first from the router; links in list order)."""
    adj: dict[str, list[tuple[str, str]]] = collections.defaultdict(list)
    for link in links:
        adj[link["a"]].append((link["b"], link["id"]))
        adj[link["b"]].append((link["a"], link["id"]))
    routes = []
    for r in routers:
        first: dict[str, str] = {r: ""}
        todo = collections.deque([r])
        while todo:
            u = todo.popleft()
            for v, lid in adj[u]:
                if v not in first:
                    first[v] = first[u] or lid
                    todo.append(v)
        for t in routers:
            if t == r or t not in prefixes:
                continue
            if t not in first:
                raise TopologyError(f"topology.links: router {r} cannot reach router {t}")
            routes.append({"node": r, "dst": prefixes[t], "link": first[t]})
    return routes


def build(doc: dict[str, Any], pairs: list[tuple[str, str, str, dict[str, Any]]], mtu: int) -> Graph:
    """The graph of a resolved scenario. `pairs`: (group, from, to, access)
    per host pair, in order; access = {rate_bps, delay_ns}. Returns the
    graph with the SERIES placeholder where the series' discipline goes."""
    routers, router_links, dfrom, dto = router_graph(doc["topology"], mtu)
    if len(routers) > MAX_ROUTERS:
        raise TopologyError(f"topology: at most {MAX_ROUTERS} routers, got {len(routers)}")
    if len(set(routers)) != len(routers):
        raise TopologyError("topology.routers: router names must be unique")
    index = {r: k for k, r in enumerate(routers)}
    attached: dict[str, int] = collections.Counter()
    g = Graph(default_from=dfrom, default_to=dto)
    sources, sinks, access = [], [], []

    def host(router: str, name: str) -> dict[str, Any]:
        j = attached[router]
        if j >= HOSTS_PER_ROUTER:
            raise TopologyError(f"workload: more than {HOSTS_PER_ROUTER} hosts at router {router}")
        attached[router] += 1
        k = index[router] + 1
        return {"id": name, "kind": "host", "address": f"10.{k}.{j // 250}.{j % 250 + 1}"}

    sensors = wireless_nodes(doc["topology"]) if doc["topology"]["kind"] == "wireless_dumbbell" else []
    used_sensors = 0
    for i, (_group, frm, to, acc) in enumerate(pairs):
        d = host(to, f"d{i}")
        sinks.append(d)
        if frm == WIRELESS:
            if used_sensors >= len(sensors):
                raise TopologyError(
                    f"workload.groups.{_group}: more wireless sources than sensor nodes "
                    f"(topology.wireless has {len(sensors)})"
                )
            g.sources.append(sensors[used_sensors]["id"])
            used_sensors += 1
            ends: tuple[tuple[dict[str, Any], str], ...] = ((d, to),)
        else:
            s = host(frm, f"s{i}")
            sources.append(s)
            g.sources.append(s["id"])
            ends = ((s, frm), (d, to))
        for h, r in ends:
            a, b = (r, h["id"]) if h is d else (h["id"], r)
            access.append(
                {
                    "id": f"{r}-{h['id']}" if h is d else f"{h['id']}-{r}",
                    "a": a,
                    "b": b,
                    "rate_bps": acc["rate_bps"],
                    "delay_ns": acc["delay_ns"],
                    "mtu_bytes": mtu,
                    "queues": {a: dict(LOSSLESS), b: dict(LOSSLESS)},
                }
            )
    prefixes = {}
    for r in routers:
        k = index[r] + 1
        node = {"id": r, "kind": "router", "address": f"10.{k}.255.254"}
        if attached[r]:
            node["prefix"] = prefixes[r] = f"10.{k}.0.0/16"
        g.nodes.append(node)
    g.nodes += sources + sinks
    if sensors:
        g.nodes += sensors
        g.wireless = wireless_plan(doc["topology"], sensors)
    g.links = access + router_links
    g.routes = _routes(routers, router_links, prefixes)
    return g


def wireless_nodes(topo: dict[str, Any]) -> list[dict[str, Any]]:
    """The sensor nodes of a wireless_dumbbell, n0..n(rows*columns-1) (hosts without links)."""
    w = topo["wireless"]
    return [
        {"id": f"n{j}", "kind": "host", "address": f"10.0.{j // 250}.{j % 250 + 1}"}
        for j in range(int(w["rows"]) * int(w["columns"]))
    ]


def wireless_plan(topo: dict[str, Any], sensors: list[dict[str, Any]]) -> dict[str, Any]:
    """The plan's `wireless` object (docs/jobs.md): where the sensors and the
    gateway's radio stand, the radio, routing and propagation."""
    w = topo["wireless"]
    cols, sp = int(w["columns"]), float(w["spacing_m"])
    off = float(w["gateway_distance_m"]) / 2**0.5
    return {
        "gateway": WIRELESS_GATEWAY,
        "gateway_address": "10.0.255.254",
        "gateway_position_mm": [-round(off * 1000), -round(off * 1000)],
        "nodes": [n["id"] for n in sensors],
        "positions_mm": [
            [round(j % cols * sp * 1000), round(j // cols * sp * 1000)] for j in range(len(sensors))
        ],
        "standard": w["radio"]["standard"],
        "data_mode": w["radio"]["data_mode"],
        "tx_power_mdbm": round(float(w["radio"]["tx_power_dbm"]) * 1000),
        "rx_sensitivity_mdbm": round(float(w["radio"]["rx_sensitivity_dbm"]) * 1000),
        "antenna_height_mm": round(float(w["radio"]["antenna_height_m"]) * 1000),
        "routing": w["routing"],
        "propagation": w["propagation"],
    }


def queue_seed(seed: int, n: int) -> int:
    """The seed of the core's generator in the n-th discipline queue of a
    run: the run's seed for the first (a single bottleneck's, as the papers'
    runs have), a stream of its own (SHA-256 of "seed/queue/n") for the rest."""
    if n == 0:
        return seed
    return int.from_bytes(hashlib.sha256(f"{seed}/queue/{n}".encode()).digest()[:7], "big")


def with_queues(
    g: Graph,
    series_queue: dict[str, Any],
    seed: int,
    deployed_at: set[str] | None = None,
    undeployed: dict[str, Any] | None = None,
) -> tuple[list[dict[str, Any]], list[str]]:
    """The links with the series' queue in every SERIES place (and a seed in
    every core discipline's queue), and the ids of those queues (traced).

    deployed_at: the routers that deploy the series' discipline (a graph
    series' `routers`; None: every router); a SERIES place at another
    router gets `undeployed` (the topology's) instead, and is not traced."""
    links, traced = [], []
    n = 0
    for link in g.links:
        queues = {}
        for node, q in link["queues"].items():
            if q is SERIES:
                if deployed_at is None or node in deployed_at:
                    q = dict(series_queue)
                    traced.append(f"{link['id']}:{node}")
                else:
                    if undeployed is None:
                        raise TopologyError(
                            "topology.undeployed: a series that lists its routers needs the discipline "
                            f"the others run (router {node} does not deploy it)"
                        )
                    q = dict(undeployed)
            # the core's generator's seed; ns-3's own queue discs (ns3-*) draw
            # from ns-3 streams of the run's seed, which the runner assigns
            if q["kind"] != "lossless" and not native.is_native(q["kind"]) and "seed" not in q:
                q = {**q, "seed": queue_seed(seed, n)}
                n += 1
            queues[node] = q
        links.append({**link, "queues": queues})
    return links, traced

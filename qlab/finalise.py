"""From a runner's raw facts to the trace tables: the one place that decides
what a completed flow, its completion time, its goodput and its losses are,
for every backend (docs/traces.md, "Raw facts" and "flows.csv.gz").

``check_raw`` validates what a runner wrote against its plan; ``finalise``
writes ``flows.csv.gz``, ``queues.csv.gz``, ``packets.csv.gz`` and
``tcp.csv.gz`` beside it.
Times stay integer nanoseconds until they are written, as seconds with nine
decimals.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

from qlab import plan as plan_mod
from qlab import traces

UDP_APPS = ("cbr", "onoff", "voip", "poisson")
UDP_HEADER_BYTES = 28


def fmt_s(ns: int) -> str:
    """Integer nanoseconds as seconds with exactly nine decimals."""
    if ns >= 0:
        digits = f"{ns:010d}"  # at least one digit before the point
        return f"{digits[:-9]}.{digits[-9:]}"
    whole, frac = divmod(-ns, 1_000_000_000)
    return f"-{whole}.{frac:09d}"


def _fmt_rate(bps: float) -> str:
    return f"{bps:.6f}"


def udp_stop_ns(flow: dict[str, Any]) -> int:
    """When a UDP flow's sender stops: the end of its last on-period."""
    periods = flow["on_periods_ns"]
    return periods[-1][1] if periods else flow["start_ns"]


def check_raw(workdir: Path, plan: dict[str, Any], facts: dict[str, Any]) -> tuple[list[str], dict[str, Any]]:
    """Every problem with a runner's raw facts (and the parsed tables)."""
    problems: list[str] = []
    tables: dict[str, Any] = {}
    end_ns = facts.get("end_ns")
    if not isinstance(end_ns, int) or isinstance(end_ns, bool) or end_ns < 0:
        problems.append(f"{workdir / 'runner.json'}: end_ns: expected a non-negative integer, got {end_ns!r}")
        end_ns = None
    elif end_ns > plan["duration_ns"]:
        problems.append(
            f"{workdir / 'runner.json'}: end_ns {end_ns} is after duration_ns {plan['duration_ns']}"
        )
    for table, spec in traces.RAW_TABLES.items():
        path = workdir / f"{table}.csv"
        if not path.exists():
            if (
                spec["required"]
                or (table == "packet_facts" and plan["trace"]["packets"])
                or (table == "tcp_facts" and plan["trace"].get("tcp"))
            ):
                problems.append(f"{path}: missing")
            continue
        if table == "packet_facts":  # the largest table: checked and written a chunk at a time
            flow_ids = {f["flow_id"] for f in plan["flows"]}
            p = _check_packet_facts(path, set(plan["trace"]["queues"]), flow_ids, _packets_part(workdir))
            problems += p
            tables[table] = _packets_part(workdir) if not p else None
            continue
        p, rows = traces.check_table(path, table, raw=True)
        problems += p
        tables[table] = rows if not p else []
    if problems:
        return problems, tables
    flows = {f["flow_id"]: f for f in plan["flows"]}
    path = workdir / "flow_facts.csv"
    ids = [r["flow_id"] for r in tables["flow_facts"]]
    if sorted(ids) != sorted(flows) or len(set(ids)) != len(ids):
        unknown = sorted(set(ids) - set(flows))
        problems.append(
            f"{path}: expected one row per flow of the plan ({len(flows)}), got {len(ids)} rows"
            + (f"; unknown flow {unknown[0]}" if unknown else "")
        )
        return problems, tables
    for r in tables["flow_facts"]:
        f = flows[r["flow_id"]]
        where = f"{path}: flow {r['flow_id']}"
        udp = f["app"] in UDP_APPS
        if r["retx_packets"] > r["tx_packets"]:
            problems.append(f"{where}: retx_packets exceeds tx_packets")
        if (r["first_rx_ns"] is None) != (r["last_rx_ns"] is None) or (
            r["first_rx_ns"] is not None and r["first_rx_ns"] > r["last_rx_ns"]
        ):
            problems.append(f"{where}: first_rx_ns and last_rx_ns are given together, first <= last")
        if r["last_rx_ns"] is not None and end_ns is not None and r["last_rx_ns"] > end_ns:
            problems.append(f"{where}: last_rx_ns after the run's end ({end_ns})")
        if (r["rx_bytes"] > 0) != (r["last_rx_ns"] is not None):
            problems.append(f"{where}: first_rx_ns/last_rx_ns are given exactly when rx_bytes > 0")
        if udp:
            payload = f["pkt_bytes"] - UDP_HEADER_BYTES
            if r["rx_packets"] is None or r["delay_sum_ns"] is None and r["rx_packets"]:
                problems.append(f"{where}: a UDP flow needs rx_packets (and the delays when it is > 0)")
            elif "packets" in f and r["tx_packets"] > f["packets"]:
                problems.append(
                    f"{where}: tx_packets {r['tx_packets']} exceeds the {f['packets']} "
                    "datagrams the schedule sends"
                )
            elif r["rx_packets"] > r["tx_packets"]:
                problems.append(f"{where}: rx_packets exceeds tx_packets")
            elif "size_mean_bytes" not in f and r["rx_bytes"] != r["rx_packets"] * payload:
                problems.append(f"{where}: rx_bytes != rx_packets * {payload} (the payload)")
            elif "size_mean_bytes" in f and not (
                r["rx_packets"] * (plan_mod.MIN_UDP_IP_BYTES - UDP_HEADER_BYTES)
                <= r["rx_bytes"]
                <= r["rx_packets"] * payload
            ):
                smallest = plan_mod.MIN_UDP_IP_BYTES - UDP_HEADER_BYTES
                problems.append(
                    f"{where}: rx_bytes is not rx_packets payloads of {smallest} to {payload} bytes "
                    "(exponential sizes)"
                )
            elif (r["rx_packets"] > 0) != (r["delay_max_ns"] is not None) or (r["delay_sum_ns"] is None) != (
                r["delay_max_ns"] is None
            ):
                problems.append(
                    f"{where}: delay_sum_ns and delay_max_ns are given exactly when rx_packets > 0"
                )
            elif r["rx_packets"] and r["delay_max_ns"] * r["rx_packets"] < r["delay_sum_ns"]:
                problems.append(f"{where}: delay_sum_ns exceeds rx_packets * delay_max_ns")
            if r["retx_packets"]:
                problems.append(f"{where}: a UDP flow has no retransmissions")
        else:
            if any(r[k] is not None for k in ("rx_packets", "delay_sum_ns", "delay_max_ns")):
                problems.append(f"{where}: rx_packets and the delays are NA for TCP flows")
            if r["rx_bytes"] > f["bytes"]:
                problems.append(f"{where}: rx_bytes {r['rx_bytes']} exceeds the flow's {f['bytes']} bytes")
        if len(problems) >= traces.MAX_PROBLEMS_PER_TABLE:
            break
    traced = set(plan["trace"]["queues"])
    queues = [r["queue"] for r in tables["queue_facts"]]
    if not set(queues) <= traced:
        first = next(q for q in queues if q not in traced)
        problems.append(f"{workdir / 'queue_facts.csv'}: queue {first!r} is not in the plan's trace.queues")
    if tables.get("queue_facts") is not None:
        problems += traces.check_queue_rows(workdir / "queue_facts.csv", tables["queue_facts"], "time_ns")
    if "tcp_facts" in tables:
        problems += _check_tcp_facts(workdir / "tcp_facts.csv", tables["tcp_facts"], plan, end_ns)
    return problems, tables


def _packets_part(workdir: Path) -> Path:
    return workdir / ".packets.csv.gz.part"


def _check_packet_facts(path: Path, traced: set[str], flows: set[int], out: Path) -> list[str]:
    """The packet facts against their columns, each packet's queue one the
    plan traces and its flow one of the plan's; a chunk at a time, each
    chunk written to out as packets.csv.gz's rows once checked (the largest
    table is read once, and never held whole). out is removed when a
    problem is found."""
    names = [c.name for c in traces.TABLES["packets"]["columns"]]
    every = [c.name for c in traces.RAW_TABLES["packet_facts"]["columns"]]
    known = {str(f) for f in flows} | {traces.NA}
    try:
        with out.open("wb") as f, traces.gzip_writer(f) as gz:
            gz.write((",".join(names) + "\n").encode("utf-8"))
            # every column as text (parsed only to check the order): the
            # packet's facts are written as they were checked
            for chunk in traces.iter_table(path, "packet_facts", raw=True, as_text=every):
                if not set(chunk["queue"]) <= traced:
                    first = next(q for q in chunk["queue"] if q not in traced)
                    raise traces.TableProblems([f"{path}: queue {first!r} is not in the plan's trace.queues"])
                unknown = set(chunk["flow_id"]) - known
                if unknown:
                    first = next(f for f in chunk["flow_id"] if f in unknown)
                    raise traces.TableProblems([f"{path}: unknown flow {first}"])
                gz.write(_packet_lines(chunk))
    except traces.TableProblems as exc:
        out.unlink(missing_ok=True)
        return exc.problems
    return []


def _check_tcp_facts(
    path: Path, rows: list[dict[str, Any]], plan: dict[str, Any], end_ns: int | None
) -> list[str]:
    """Rows only of the flows trace.tcp names, between each one's start and
    the run's end, with counters that never decrease."""
    traced = set(plan["trace"].get("tcp", []))
    start = {f["flow_id"]: f["start_ns"] for f in plan["flows"]}
    for r in rows:
        if r["flow_id"] not in traced:
            return [f"{path}: flow {r['flow_id']} is not in the plan's trace.tcp"]
        if r["time_ns"] < start[r["flow_id"]] or (end_ns is not None and r["time_ns"] > end_ns):
            return [
                f"{path}: flow {r['flow_id']}: a row at {r['time_ns']} ns, outside its start "
                f"({start[r['flow_id']]}) and the run's end ({end_ns})"
            ]
    return traces.check_tcp_rows(path, rows)


def flow_rows(plan: dict[str, Any], facts: list[dict[str, Any]], end_ns: int) -> tuple[list[list[str]], bool]:
    """flows.csv's rows (docs/traces.md) and whether every flow completed."""
    raw = {r["flow_id"]: r for r in facts}
    rows = []
    all_done = True
    drain = plan["udp_drain_ns"]
    for f in sorted(plan["flows"], key=lambda f: f["flow_id"]):
        r = raw[f["flow_id"]]
        start = f["start_ns"]
        udp = f["app"] in UDP_APPS
        if udp:
            seg = f["pkt_bytes"] - UDP_HEADER_BYTES
            # a poisson flow's schedule is the runner's draw from the plan's
            # generator (its tests check it against qlab.plan.poisson_times):
            # its goal is what it sent
            goal = f["packets"] * seg if "packets" in f else r["tx_packets"] * seg
            if "size_mean_bytes" in f:
                # exponential sizes: the payload of the first tx_packets
                # lengths of its size stream (qlab.plan.exponential_sizes,
                # which the runners' tests check); its segment the mean
                # payload of what arrived (the datagrams whose one-way
                # delays were summed), else of the distribution
                sizes = plan_mod.exponential_sizes(f["size_mean_bytes"], f["pkt_bytes"], f["size_seed"])
                goal = sum(next(sizes) - UDP_HEADER_BYTES for _ in range(r["tx_packets"]))
                rx = r["rx_packets"]
                seg = round(r["rx_bytes"] / rx) if rx else round(f["size_mean_bytes"]) - UDP_HEADER_BYTES
            stop = udp_stop_ns(f)
            # the sender stopped at `stop`; the flow is done once what was in
            # flight had udp_drain_ns to arrive
            done = end_ns >= stop + drain
            end = stop if done else end_ns
        else:
            seg = f["seg_bytes"]
            goal = f["bytes"]
            if goal == 0:  # nothing to deliver: done as it starts
                done, end = start <= end_ns, start
            else:
                done = r["rx_bytes"] == goal
                end = r["last_rx_ns"] if done else end_ns
        all_done &= done
        delivered = r["rx_bytes"]
        # a bulk sender stopped mid-transfer (stop_ns) sent nothing after its
        # stop: its goodput is over its life, not diluted to the run's end
        until = min(end_ns, f["stop_ns"]) if not done and "stop_ns" in f else end_ns
        elapsed = (end if done else until) - start
        goodput = 8.0 * delivered / (elapsed / 1e9) if elapsed > 0 else 0.0
        row = [
            str(f["flow_id"]),
            f["app"],
            f["group"],
            str(f["cls"]),
            str(f["prec"]),
            str(seg),
            str(goal),
            str(delivered),
            fmt_s(start),
            fmt_s(end) if done else traces.NA,
            "1" if done else "0",
            fmt_s(end - start) if done and not udp else traces.NA,
            _fmt_rate(goodput),
            str(r["tx_packets"]),
            str(r["retx_packets"]),
        ]
        if udp:
            rx = r["rx_packets"]
            row += [str(rx), str(r["tx_packets"] - rx)]
            # the mean delay, rounded to the nearest nanosecond
            row += (
                [fmt_s((r["delay_sum_ns"] + rx // 2) // rx), fmt_s(r["delay_max_ns"])]
                if rx
                else [traces.NA, traces.NA]
            )
        else:
            row += [traces.NA] * 4
        rows.append(row)
    return rows, all_done


def _csv_bytes(header: list[str], rows: list[list[str]]) -> bytes:
    out = io.StringIO(newline="")
    w = csv.writer(out, lineterminator="\n")
    w.writerow(header)
    w.writerows(rows)
    return out.getvalue().encode("utf-8")


def _s_text(ns: str) -> str:
    """fmt_s of a non-negative integer written as iter_table's as_text
    writes it (digits, no leading zero), without parsing it."""
    digits = ns.zfill(10)
    return f"{digits[:-9]}.{digits[-9:]}"


def _packet_lines(facts: dict[str, list[str]]) -> bytes:
    """Rows of packets.csv from checked packet facts as text (iter_table's
    as_text), a column at a time. The check admits only canonical
    non-negative integers, events and reasons from fixed lists and the
    plan's queue names (docs/job.schema.json: no comma, quote or line
    break), fields csv writes unquoted, so joining with commas is what
    csv.writer writes; a test compares the two."""
    na = traces.NA
    columns = [
        facts["seq"],
        map(_s_text, facts["time_ns"]),
        facts["queue"],
        facts["event"],
        facts["band"],
        facts["len_bytes"],
        facts["flow_id"],
        [na if v == na else _s_text(v) for v in facts["sojourn_ns"]],
        facts["reason"],
    ]
    return "".join(f"{line}\n" for line in map(",".join, zip(*columns, strict=True))).encode("utf-8")


def _na(v: Any, fmt: Any = str) -> str:
    return traces.NA if v is None else fmt(v)


def finalise(workdir: Path, plan: dict[str, Any], facts: dict[str, Any], tables: dict[str, Any]) -> bool:
    """Write the trace tables from checked raw facts; returns all_completed."""
    end_ns = facts["end_ns"]
    rows, all_done = flow_rows(plan, tables["flow_facts"], end_ns)
    names = [c.name for c in traces.TABLES["flows"]["columns"]]
    traces.atomic_write_bytes(workdir / "flows.csv.gz", traces.gzip_bytes(_csv_bytes(names, rows)))
    names = [c.name for c in traces.TABLES["queues"]["columns"]]
    rows = [
        [
            fmt_s(r["time_ns"]),
            r["queue"],
            str(r["band"]),
            str(r["backlog_pkts"]),
            str(r["backlog_bytes"]),
            str(r["enqueued_pkts"]),
            str(r["dequeued_pkts"]),
            str(r["dropped_pkts"]),
            traces.NA,
        ]
        for r in tables["queue_facts"]
    ]
    traces.atomic_write_bytes(workdir / "queues.csv.gz", traces.gzip_bytes(_csv_bytes(names, rows)))
    if "packet_facts" in tables:  # written by check_raw as it checked them
        tables["packet_facts"].replace(workdir / "packets.csv.gz")
    if "tcp_facts" in tables:
        names = [c.name for c in traces.TABLES["tcp"]["columns"]]
        rows = [
            [
                fmt_s(r["time_ns"]),
                str(r["flow_id"]),
                str(r["cwnd_bytes"]),
                str(r["ssthresh_bytes"]),
                _na(r["srtt_ns"], fmt_s),
                fmt_s(r["rto_ns"]),
                str(r["retx_packets"]),
                str(r["syn_retx_packets"]),
                r["state"],
                r["ca_state"],
            ]
            for r in tables["tcp_facts"]
        ]
        traces.atomic_write_bytes(workdir / "tcp.csv.gz", traces.gzip_bytes(_csv_bytes(names, rows)))
    return all_done

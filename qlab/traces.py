"""Trace tables: reproducible writing and the validator every backend passes.

The schema is written down in docs/traces.md; ``TABLES`` and ``RUN_REQUIRED``
below are its machine-readable form. Change both together.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

NA = "NA"


@dataclass(frozen=True)
class Column:
    name: str
    kind: str  # int | float | str | bool01
    na: bool = False  # NA allowed
    lo: float | None = None
    hi: float | None = None
    choices: tuple[str, ...] = ()


def _c(name: str, kind: str, na: bool = False, lo: float | None = None, hi: float | None = None,
       choices: tuple[str, ...] = ()) -> Column:
    return Column(name, kind, na, lo, hi, choices)


APPS = ("bulk", "cbr", "onoff", "voip")  # bulk is TCP; the others UDP (docs/jobs.md)
UDP_APPS = APPS[1:]
REASONS = ("overflow", "aqm", "precedence_local", "precedence_cross", "delay")
# tcp: a connection's state (RFC 793's names) and its congestion state (Linux's tcpi_ca_state)
TCP_STATES = ("CLOSED", "LISTEN", "SYN_SENT", "SYN_RCVD", "ESTABLISHED", "CLOSE_WAIT", "LAST_ACK",
              "FIN_WAIT_1", "FIN_WAIT_2", "CLOSING", "TIME_WAIT")
CA_STATES = ("open", "disorder", "cwr", "recovery", "loss")

TABLES: dict[str, dict[str, Any]] = {
    "flows": {
        "required": True,
        "sort": ("flow_id",),
        "columns": (
            _c("flow_id", "int", lo=0), _c("app", "str", choices=APPS), _c("group", "str"),
            _c("cls", "int", lo=0), _c("prec", "int", lo=0), _c("seg_bytes", "int", lo=1),
            _c("bytes_goal", "int", lo=0), _c("bytes_delivered", "int", lo=0),
            _c("start_s", "float", lo=0), _c("end_s", "float", na=True, lo=0),
            _c("completed", "bool01"), _c("fct_s", "float", na=True, lo=0),
            _c("goodput_bps", "float", lo=0), _c("tx_packets", "int", lo=0),
            _c("retx_packets", "int", lo=0), _c("rx_packets", "int", na=True, lo=0),
            _c("lost_packets", "int", na=True, lo=0), _c("delay_mean_s", "float", na=True, lo=0),
            _c("delay_max_s", "float", na=True, lo=0),
        ),
    },
    "queues": {
        "required": True,
        "sort": ("time_s", "queue", "band"),
        "columns": (
            _c("time_s", "float", lo=0), _c("queue", "str"), _c("band", "int", lo=0),
            _c("backlog_pkts", "int", lo=0),
            _c("backlog_bytes", "int", lo=0), _c("enqueued_pkts", "int", lo=0),
            _c("dequeued_pkts", "int", lo=0), _c("dropped_pkts", "int", lo=0),
            _c("drop_prob", "float", na=True, lo=0, hi=1),
        ),
    },
    "packets": {
        "required": False,
        "sort": ("time_s", "seq"),
        "columns": (
            _c("seq", "int", lo=0), _c("time_s", "float", lo=0), _c("queue", "str"),
            _c("event", "str", choices=("enq", "deq", "drop", "mark")), _c("band", "int", lo=0),
            _c("len_bytes", "int", lo=1), _c("flow_id", "int", na=True, lo=0),
            _c("sojourn_s", "float", na=True, lo=0), _c("reason", "str", na=True, choices=REASONS),
        ),
    },
    "tcp": {
        "required": False,
        "sort": ("time_s", "flow_id"),
        "columns": (
            _c("time_s", "float", lo=0), _c("flow_id", "int", lo=0), _c("cwnd_bytes", "int", lo=0),
            _c("ssthresh_bytes", "int", lo=0), _c("srtt_s", "float", na=True, lo=0),
            _c("rto_s", "float", lo=0), _c("retx_packets", "int", lo=0),
            _c("syn_retx_packets", "int", lo=0), _c("state", "str", choices=TCP_STATES),
            _c("ca_state", "str", choices=CA_STATES),
        ),
    },
}

# What a runner writes (docs/traces.md, "Raw facts"); qlab.finalise turns
# them into TABLES. Times are integer nanoseconds since the run's start.
RAW_TABLES: dict[str, dict[str, Any]] = {
    "flow_facts": {
        "required": True,
        "sort": ("flow_id",),
        "columns": (
            _c("flow_id", "int", lo=0), _c("tx_packets", "int", lo=0), _c("retx_packets", "int", lo=0),
            _c("rx_packets", "int", na=True, lo=0), _c("rx_bytes", "int", lo=0),
            _c("first_rx_ns", "int", na=True, lo=0), _c("last_rx_ns", "int", na=True, lo=0),
            _c("delay_sum_ns", "int", na=True, lo=0), _c("delay_max_ns", "int", na=True, lo=0),
        ),
    },
    "queue_facts": {
        "required": True,
        "sort": ("time_ns", "queue", "band"),
        "columns": (
            _c("time_ns", "int", lo=0), _c("queue", "str"), _c("band", "int", lo=0),
            _c("backlog_pkts", "int", lo=0), _c("backlog_bytes", "int", lo=0),
            _c("enqueued_pkts", "int", lo=0), _c("dequeued_pkts", "int", lo=0),
            _c("dropped_pkts", "int", lo=0),
        ),
    },
    "packet_facts": {
        "required": False,
        "sort": ("time_ns", "seq"),
        "columns": (
            _c("seq", "int", lo=0), _c("time_ns", "int", lo=0), _c("queue", "str"),
            _c("event", "str", choices=("enq", "deq", "drop", "mark")), _c("band", "int", lo=0),
            _c("len_bytes", "int", lo=1), _c("flow_id", "int", na=True, lo=0),
            _c("sojourn_ns", "int", na=True, lo=0), _c("reason", "str", na=True, choices=REASONS),
        ),
    },
    "tcp_facts": {
        "required": False,
        "sort": ("time_ns", "flow_id"),
        "columns": (
            _c("time_ns", "int", lo=0), _c("flow_id", "int", lo=0), _c("cwnd_bytes", "int", lo=0),
            _c("ssthresh_bytes", "int", lo=0), _c("srtt_ns", "int", na=True, lo=0),
            _c("rto_ns", "int", lo=0), _c("retx_packets", "int", lo=0),
            _c("syn_retx_packets", "int", lo=0), _c("state", "str", choices=TCP_STATES),
            _c("ca_state", "str", choices=CA_STATES),
        ),
    },
}

RUN_REQUIRED: dict[str, type | tuple[type, ...]] = {
    "schema": str, "scenario": str, "paper": str, "backend": str, "series": str, "point": str,
    "point_values": dict, "seed": int, "discipline": dict, "job_sha256": str,
    "sim_end_s": (int, float), "all_completed": bool, "versions": dict,
    "wall_time_s": (int, float), "valid": bool, "invalid_reasons": list,
}
RUN_SCHEMA = "qlab-trace/1"


# ---------------------------------------------------------------------------
# writing


def gzip_bytes(data: bytes) -> bytes:
    """gzip with no file name and mtime 0: the same input always gives the same bytes."""
    buf = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buf, mtime=0, compresslevel=6) as gz:
        gz.write(data)
    return buf.getvalue()


def write_csv_gz(path: Path, header: Sequence[str], rows: Iterable[Sequence[Any]]) -> None:
    out = io.StringIO(newline="")
    w = csv.writer(out, lineterminator="\n")
    w.writerow(header)
    for row in rows:
        w.writerow([NA if v is None else v for v in row])
    atomic_write_bytes(path, gzip_bytes(out.getvalue().encode("utf-8")))


def atomic_write_bytes(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_bytes(data)
    tmp.replace(path)


def read_csv_gz(path: Path) -> tuple[list[str], list[list[str]]]:
    with gzip.open(path, "rt", encoding="utf-8", newline="") as f:
        reader = csv.reader(f)
        header = next(reader, [])
        return header, list(reader)


# ---------------------------------------------------------------------------
# validation


def _parse(col: Column, text: str) -> tuple[Any, str | None]:
    if text == NA:
        return None, None if col.na else "NA not allowed"
    try:
        if col.kind == "int":
            value: Any = int(text)
        elif col.kind == "float":
            value = float(text)
            if not math.isfinite(value):
                return None, f"expected a finite number, got {text!r}"
        elif col.kind == "bool01":
            if text not in ("0", "1"):
                return None, f"expected 0 or 1, got {text!r}"
            value = int(text)
        else:
            value = text
    except ValueError:
        return None, f"expected {col.kind}, got {text!r}"
    if col.choices and value not in col.choices:
        return None, f"expected one of {', '.join(col.choices)}, got {text!r}"
    if col.lo is not None and isinstance(value, (int, float)) and value < col.lo:
        return None, f"expected >= {col.lo:g}, got {text}"
    if col.hi is not None and isinstance(value, (int, float)) and value > col.hi:
        return None, f"expected <= {col.hi:g}, got {text}"
    return value, None


MAX_PROBLEMS_PER_TABLE = 10


def read_csv(path: Path) -> tuple[list[str], list[list[str]]]:
    with open(path, encoding="utf-8", newline="") as f:
        reader = csv.reader(f)
        header = next(reader, [])
        return header, list(reader)


def check_table(path: Path, table: str, raw: bool = False) -> tuple[list[str], list[dict[str, Any]]]:
    """Check one table against its columns (TABLES, gzip CSV; raw: RAW_TABLES,
    the plain CSV a runner writes); the problems and the parsed rows."""
    spec = (RAW_TABLES if raw else TABLES)[table]
    problems: list[str] = []
    try:
        header, rows = read_csv(path) if raw else read_csv_gz(path)
    except (OSError, EOFError, gzip.BadGzipFile, UnicodeDecodeError, csv.Error) as exc:
        return [f"{path}: not a readable {'CSV' if raw else 'gzip CSV'}: {exc}"], []
    names = [c.name for c in spec["columns"]]
    if header != names:
        missing = [n for n in names if n not in header]
        extra = [h for h in header if h not in names]
        detail = []
        if missing:
            detail.append(f"missing {', '.join(missing)}")
        if extra:
            detail.append(f"unexpected {', '.join(extra)}")
        if not detail:
            detail.append("columns out of order")
        return [f"{path}: header: expected {','.join(names)} ({'; '.join(detail)})"], []
    parsed: list[dict[str, Any]] = []
    for i, row in enumerate(rows, start=2):
        if len(row) != len(names):
            problems.append(f"{path}: line {i}: expected {len(names)} fields, got {len(row)}")
            continue
        rec: dict[str, Any] = {}
        for col, text in zip(spec["columns"], row, strict=True):
            value, err = _parse(col, text)
            if err:
                problems.append(f"{path}: line {i}: {col.name}: {err}")
            rec[col.name] = value
        parsed.append(rec)
        if len(problems) >= MAX_PROBLEMS_PER_TABLE:
            problems.append(f"{path}: (stopping after {MAX_PROBLEMS_PER_TABLE} problems)")
            return problems, parsed
    keys = [tuple(-1 if r[k] is None else r[k] for k in spec["sort"]) for r in parsed]
    if problems:
        return problems, parsed
    if keys != sorted(keys):
        problems.append(f"{path}: rows are not sorted by {', '.join(spec['sort'])}")
    return problems, parsed


def _check_flows(path: Path, rows: list[dict[str, Any]], sim_end_s: float | None) -> list[str]:
    out = []
    ids = [r["flow_id"] for r in rows]
    if len(set(ids)) != len(ids):
        out.append(f"{path}: flow_id: duplicate flow ids")
    for r in rows:
        where = f"{path}: flow {r['flow_id']}"
        if r["bytes_delivered"] is not None and r["bytes_goal"] is not None \
                and r["bytes_delivered"] > r["bytes_goal"]:
            out.append(f"{where}: bytes_delivered exceeds bytes_goal")
        done = r["completed"] == 1
        udp = r["app"] in UDP_APPS
        udp_cols = ("rx_packets", "lost_packets")
        if udp:
            if done != (r["end_s"] is not None) or r["fct_s"] is not None:
                out.append(f"{where}: a UDP flow has end_s exactly when completed, and no fct_s")
            if any(r[k] is None for k in udp_cols):
                out.append(f"{where}: a UDP flow needs rx_packets and lost_packets")
            elif r["tx_packets"] is not None and r["rx_packets"] + r["lost_packets"] != r["tx_packets"]:
                out.append(f"{where}: rx_packets + lost_packets != tx_packets")
            elif (r["rx_packets"] > 0) != (r["delay_mean_s"] is not None) \
                    or (r["delay_mean_s"] is None) != (r["delay_max_s"] is None):
                out.append(f"{where}: delay_mean_s and delay_max_s are given exactly when rx_packets > 0")
            elif r["delay_mean_s"] is not None and r["delay_mean_s"] > r["delay_max_s"] + 1e-9:
                out.append(f"{where}: delay_mean_s exceeds delay_max_s")
        else:
            if done != (r["end_s"] is not None) or done != (r["fct_s"] is not None):
                out.append(f"{where}: completed must be 1 exactly when end_s and fct_s are given")
            if done and r["bytes_delivered"] != r["bytes_goal"]:
                out.append(f"{where}: completed but bytes_delivered != bytes_goal")
            if any(r[k] is not None for k in (*udp_cols, "delay_mean_s", "delay_max_s")):
                out.append(f"{where}: rx_packets, lost_packets and delays are NA for TCP flows")
        if done and not udp and r["end_s"] is not None and r["start_s"] is not None:
            if abs((r["end_s"] - r["start_s"]) - r["fct_s"]) > 1e-6:
                out.append(f"{where}: fct_s != end_s - start_s")
            if r["end_s"] < r["start_s"]:
                out.append(f"{where}: end_s before start_s")
            if sim_end_s is not None and r["end_s"] > sim_end_s + 1e-9:
                out.append(f"{where}: end_s after the run's end ({sim_end_s})")
        if r["retx_packets"] is not None and r["tx_packets"] is not None \
                and r["retx_packets"] > r["tx_packets"]:
            out.append(f"{where}: retx_packets exceeds tx_packets")
    return out


def check_queue_rows(path: Path, rows: list[dict[str, Any]], time_col: str = "time_s") -> list[str]:
    """Per queue and band: counters never decrease, and what was enqueued is
    at least what left plus what is queued."""
    out = []
    last: dict[tuple[str, int], dict[str, Any]] = {}
    for r in rows:
        key = (r["queue"], r["band"])
        where = f"{path}: queue {r['queue']} band {r['band']}"
        prev = last.get(key)
        if prev is not None:
            for k in ("enqueued_pkts", "dequeued_pkts", "dropped_pkts"):
                if r[k] < prev[k]:
                    out.append(f"{where}: {k} decreases at time {r[time_col]}")
                    break
        last[key] = r
        if r["enqueued_pkts"] < r["dequeued_pkts"] + r["backlog_pkts"]:
            out.append(f"{where} at {r[time_col]}: enqueued < dequeued + backlog")
            break
    if not rows:
        out.append(f"{path}: no samples")
    return out


def check_tcp_rows(path: Path, rows: list[dict[str, Any]]) -> list[str]:
    """Per flow: the retransmission counters never decrease."""
    last: dict[int, dict[str, Any]] = {}
    for r in rows:
        prev = last.get(r["flow_id"])
        if prev is not None:
            for k in ("retx_packets", "syn_retx_packets"):
                if r[k] < prev[k]:
                    when = r.get("time_s", r.get("time_ns"))
                    return [f"{path}: flow {r['flow_id']}: {k} decreases at {when}"]
        last[r["flow_id"]] = r
    return []


def check_run_json(path: Path) -> tuple[list[str], dict[str, Any]]:
    try:
        run = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        return [f"{path}: not readable JSON: {exc}"], {}
    if not isinstance(run, dict):
        return [f"{path}: expected a JSON object"], {}
    out = []
    for key, typ in RUN_REQUIRED.items():
        if key not in run:
            out.append(f"{path}: {key}: missing")
        elif not isinstance(run[key], typ) or (typ is int and isinstance(run[key], bool)):
            out.append(f"{path}: {key}: wrong type {type(run[key]).__name__}")
    if run.get("schema") not in (None, RUN_SCHEMA):
        out.append(f"{path}: schema: expected {RUN_SCHEMA!r}, got {run.get('schema')!r}")
    return out, run


def check_dir(directory: Path) -> list[str]:
    """Every problem with one job's trace directory (empty when it passes)."""
    directory = Path(directory)
    if not directory.is_dir():
        return [f"{directory}: not a directory"]
    problems, run = check_run_json(directory / "run.json")
    tables: dict[str, list[dict[str, Any]]] = {}
    for table, spec in TABLES.items():
        path = directory / f"{table}.csv.gz"
        if not path.exists():
            if spec["required"]:
                problems.append(f"{path}: missing")
            continue
        p, rows = check_table(path, table)
        problems.extend(p)
        tables[table] = rows if not p else []
    if tables.get("flows"):
        problems.extend(_check_flows(directory / "flows.csv.gz", tables["flows"], run.get("sim_end_s")))
        if run.get("all_completed") is True and not all(r["completed"] for r in tables["flows"]):
            problems.append(f"{directory / 'run.json'}: all_completed is true "
                            "but some flows did not complete")
    if tables.get("queues"):
        problems.extend(check_queue_rows(directory / "queues.csv.gz", tables["queues"]))
    if tables.get("tcp"):
        problems.extend(check_tcp_rows(directory / "tcp.csv.gz", tables["tcp"]))
    return problems

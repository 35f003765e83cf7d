"""Trace tables: reproducible writing and the validator every backend passes.

The schema is written down in docs/traces.md; ``TABLES`` and ``RUN_REQUIRED``
below are its machine-readable form. Change both together.
"""

from __future__ import annotations

import codecs
import csv
import gzip
import hashlib
import io
import itertools
import json
import math
import operator
import re
import zlib
from collections.abc import Iterable, Iterator, Sequence
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


def _c(
    name: str,
    kind: str,
    na: bool = False,
    lo: float | None = None,
    hi: float | None = None,
    choices: tuple[str, ...] = (),
) -> Column:
    return Column(name, kind, na, lo, hi, choices)


APPS = ("bulk", "cbr", "onoff", "voip", "poisson")  # bulk is TCP; the others UDP (docs/jobs.md)
UDP_APPS = APPS[1:]
REASONS = ("overflow", "aqm", "precedence_local", "precedence_cross", "delay")
# tcp: a connection's state (RFC 793's names) and its congestion state (Linux's tcpi_ca_state)
TCP_STATES = (
    "CLOSED",
    "LISTEN",
    "SYN_SENT",
    "SYN_RCVD",
    "ESTABLISHED",
    "CLOSE_WAIT",
    "LAST_ACK",
    "FIN_WAIT_1",
    "FIN_WAIT_2",
    "CLOSING",
    "TIME_WAIT",
)
CA_STATES = ("open", "disorder", "cwr", "recovery", "loss")

TABLES: dict[str, dict[str, Any]] = {
    "flows": {
        "required": True,
        "sort": ("flow_id",),
        "columns": (
            _c("flow_id", "int", lo=0),
            _c("app", "str", choices=APPS),
            _c("group", "str"),
            _c("cls", "int", lo=0),
            _c("prec", "int", lo=0),
            _c("seg_bytes", "int", lo=1),
            _c("bytes_goal", "int", lo=0),
            _c("bytes_delivered", "int", lo=0),
            _c("start_s", "float", lo=0),
            _c("end_s", "float", na=True, lo=0),
            _c("completed", "bool01"),
            _c("fct_s", "float", na=True, lo=0),
            _c("goodput_bps", "float", lo=0),
            _c("tx_packets", "int", lo=0),
            _c("retx_packets", "int", lo=0),
            _c("rx_packets", "int", na=True, lo=0),
            _c("lost_packets", "int", na=True, lo=0),
            _c("delay_mean_s", "float", na=True, lo=0),
            _c("delay_max_s", "float", na=True, lo=0),
        ),
    },
    "queues": {
        "required": True,
        "sort": ("time_s", "queue", "band"),
        "columns": (
            _c("time_s", "float", lo=0),
            _c("queue", "str"),
            _c("band", "int", lo=0),
            _c("backlog_pkts", "int", lo=0),
            _c("backlog_bytes", "int", lo=0),
            _c("enqueued_pkts", "int", lo=0),
            _c("dequeued_pkts", "int", lo=0),
            _c("dropped_pkts", "int", lo=0),
            _c("drop_prob", "float", na=True, lo=0, hi=1),
        ),
    },
    "packets": {
        "required": False,
        "sort": ("time_s", "seq"),
        "columns": (
            _c("seq", "int", lo=0),
            _c("time_s", "float", lo=0),
            _c("queue", "str"),
            _c("event", "str", choices=("enq", "deq", "drop", "mark")),
            _c("band", "int", lo=0),
            _c("len_bytes", "int", lo=1),
            _c("flow_id", "int", na=True, lo=0),
            _c("sojourn_s", "float", na=True, lo=0),
            _c("reason", "str", na=True, choices=REASONS),
        ),
    },
    "tcp": {
        "required": False,
        "sort": ("time_s", "flow_id"),
        "columns": (
            _c("time_s", "float", lo=0),
            _c("flow_id", "int", lo=0),
            _c("cwnd_bytes", "int", lo=0),
            _c("ssthresh_bytes", "int", lo=0),
            _c("srtt_s", "float", na=True, lo=0),
            _c("rto_s", "float", lo=0),
            _c("retx_packets", "int", lo=0),
            _c("syn_retx_packets", "int", lo=0),
            _c("state", "str", choices=TCP_STATES),
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
            _c("flow_id", "int", lo=0),
            _c("tx_packets", "int", lo=0),
            _c("retx_packets", "int", lo=0),
            _c("rx_packets", "int", na=True, lo=0),
            _c("rx_bytes", "int", lo=0),
            _c("first_rx_ns", "int", na=True, lo=0),
            _c("last_rx_ns", "int", na=True, lo=0),
            _c("delay_sum_ns", "int", na=True, lo=0),
            _c("delay_max_ns", "int", na=True, lo=0),
        ),
    },
    "queue_facts": {
        "required": True,
        "sort": ("time_ns", "queue", "band"),
        "columns": (
            _c("time_ns", "int", lo=0),
            _c("queue", "str"),
            _c("band", "int", lo=0),
            _c("backlog_pkts", "int", lo=0),
            _c("backlog_bytes", "int", lo=0),
            _c("enqueued_pkts", "int", lo=0),
            _c("dequeued_pkts", "int", lo=0),
            _c("dropped_pkts", "int", lo=0),
        ),
    },
    "packet_facts": {
        "required": False,
        "sort": ("time_ns", "seq"),
        "columns": (
            _c("seq", "int", lo=0),
            _c("time_ns", "int", lo=0),
            _c("queue", "str"),
            _c("event", "str", choices=("enq", "deq", "drop", "mark")),
            _c("band", "int", lo=0),
            _c("len_bytes", "int", lo=1),
            _c("flow_id", "int", na=True, lo=0),
            _c("sojourn_ns", "int", na=True, lo=0),
            _c("reason", "str", na=True, choices=REASONS),
        ),
    },
    "tcp_facts": {
        "required": False,
        "sort": ("time_ns", "flow_id"),
        "columns": (
            _c("time_ns", "int", lo=0),
            _c("flow_id", "int", lo=0),
            _c("cwnd_bytes", "int", lo=0),
            _c("ssthresh_bytes", "int", lo=0),
            _c("srtt_ns", "int", na=True, lo=0),
            _c("rto_ns", "int", lo=0),
            _c("retx_packets", "int", lo=0),
            _c("syn_retx_packets", "int", lo=0),
            _c("state", "str", choices=TCP_STATES),
            _c("ca_state", "str", choices=CA_STATES),
        ),
    },
}

RUN_REQUIRED: dict[str, type | tuple[type, ...]] = {
    "schema": str,
    "scenario": str,
    "paper": str,
    "backend": str,
    "series": str,
    "point": str,
    "point_values": dict,
    "seed": int,
    "discipline": dict,
    "job_sha256": str,
    "sim_end_s": (int, float),
    "all_completed": bool,
    "versions": dict,
    "wall_time_s": (int, float),
    "valid": bool,
    "invalid_reasons": list,
    "tables": dict,
}
# 2: run.json records each trace table's size, SHA-256 and row count ("tables")
RUN_SCHEMA = "qlab-trace/2"
# The files run.json's "tables" describes, when present (flows, queues and
# flow_facts always are; packets and tcp with trace.packets / trace.tcp).
TABLE_FILES = tuple(f"{t}.csv.gz" for t in TABLES) + ("flow_facts.csv.gz",)
REQUIRED_FILES = ("flows.csv.gz", "queues.csv.gz")


# ---------------------------------------------------------------------------
# writing


GZIP_LEVEL = 1


def gzip_writer(f: Any) -> gzip.GzipFile:
    """A gzip stream onto an open binary file, as gzip_bytes writes."""
    return gzip.GzipFile(filename="", mode="wb", fileobj=f, mtime=0, compresslevel=GZIP_LEVEL)


def gzip_bytes(data: bytes) -> bytes:
    """gzip with no file name and mtime 0: the same input always gives the same bytes.
    Level 1: a packet trace compresses in a fifth of level 6's time, about a
    fifth larger (measured in docs/benchmarks.md, "Orchestration")."""
    buf = io.BytesIO()
    with gzip_writer(buf) as gz:
        gz.write(data)
    return buf.getvalue()


def write_csv_gz(path: Path, header: Sequence[str], rows: Iterable[Sequence[Any]]) -> None:
    out = io.StringIO(newline="")
    w = csv.writer(out, lineterminator="\n")
    w.writerow(header)
    for row in rows:
        w.writerow([NA if v is None else v for v in row])
    atomic_write_bytes(path, gzip_bytes(out.getvalue().encode("utf-8")))


def csv_line(values: Sequence[Any]) -> str:
    """One row as write_csv_gz writes it, its newline included."""
    out = io.StringIO(newline="")
    csv.writer(out, lineterminator="\n").writerow([NA if v is None else v for v in values])
    return out.getvalue()


def atomic_write_bytes(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_bytes(data)
    tmp.replace(path)


def read_csv_gz(path: Path) -> tuple[list[str], list[list[str]]]:
    """A gzip CSV's header and rows; TableError (one line, naming the file)
    when it is not readable as one."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise TableError(f"{path}: cannot read: {exc.strerror}") from None
    return parse_csv_gz(path, data)


class TableError(ValueError):
    """A table that cannot be read as gzip CSV in the encoding above."""


# What decompressing and decoding damaged bytes raises.
DECODE_ERRORS = (OSError, EOFError, zlib.error, UnicodeDecodeError, csv.Error, ValueError)


def parse_csv_gz(path: Path, data: bytes) -> tuple[list[str], list[list[str]]]:
    """Header and rows of gzip CSV bytes (docs/traces.md, "Encoding": UTF-8,
    LF line endings); TableError naming the file otherwise."""
    try:
        text = gzip.decompress(data).decode("utf-8")
    except DECODE_ERRORS as exc:
        raise TableError(f"{path}: not a readable gzip CSV: {type(exc).__name__}: {exc}") from None
    return parse_csv_text(path, text)


def parse_csv_text(path: Path, text: str) -> tuple[list[str], list[list[str]]]:
    if "\r" in text:
        line = text.count("\n", 0, text.index("\r")) + 1
        raise TableError(f"{path}: line {line}: a carriage return (the encoding is LF line endings)")
    try:
        rows = list(csv.reader(io.StringIO(text, newline="")))
    except csv.Error as exc:
        raise TableError(f"{path}: not a readable CSV: {exc}") from None
    return (rows[0] if rows else []), rows[1:]


def file_record(path: Path, data: bytes | None = None) -> dict[str, Any]:
    """What run.json records of a trace table: its size in bytes, its
    SHA-256 and its number of rows (the header not counted). Without data,
    the file is read a block at a time: a packet trace of a long run may not
    fit in memory whole."""
    if data is not None:
        return {
            "bytes": len(data),
            "sha256": hashlib.sha256(data).hexdigest(),
            "rows": count_rows(path, data),
        }
    size, digest = _size_and_digest(path)
    return {"bytes": size, "sha256": digest, "rows": _count_rows_stream(path)}


READ_BYTES = 1 << 20


def _size_and_digest(path: Path) -> tuple[int, str]:
    digest, size = hashlib.sha256(), 0
    with path.open("rb") as f:
        for block in iter(lambda: f.read(READ_BYTES), b""):
            digest.update(block)
            size += len(block)
    return size, digest.hexdigest()


def _count_rows_stream(path: Path) -> int:
    """count_rows of a gzip CSV file, decompressed a block at a time."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    newlines, last = 0, ""
    try:
        with gzip.open(path, "rb") as gz:
            for block in iter(lambda: gz.read(READ_BYTES), b""):
                text = decoder.decode(block)
                if '"' in text or "\r" in text or "\x00" in text:  # as csv reads it (the writers never quote)
                    return count_rows(path, path.read_bytes())
                newlines += text.count("\n")
                last = text[-1:] or last
            decoder.decode(b"", final=True)
    except DECODE_ERRORS as exc:
        raise TableError(f"{path}: not a readable gzip CSV: {type(exc).__name__}: {exc}") from None
    return max(newlines + (1 if last and last != "\n" else 0) - 1, 0)


def count_rows(path: Path, data: bytes) -> int:
    """The rows of gzip CSV bytes, the header not counted: its lines where
    no field is quoted (what the writers write), else as csv reads them."""
    try:
        text = gzip.decompress(data).decode("utf-8")
    except DECODE_ERRORS as exc:
        raise TableError(f"{path}: not a readable gzip CSV: {type(exc).__name__}: {exc}") from None
    if '"' in text or "\r" in text or "\x00" in text:
        return len(parse_csv_text(path, text)[1])
    lines = text.count("\n") + (1 if text and not text.endswith("\n") else 0)
    return max(lines - 1, 0)


def _read_table_bytes(path: Path) -> tuple[str | None, bytes]:
    """A table's bytes, or the problem (named by the file) that stopped reading them."""
    try:
        return None, path.read_bytes()
    except FileNotFoundError:
        return f"{path.name}: missing (run.json records it)", b""
    except OSError as exc:
        return f"{path.name}: cannot read: {exc.strerror}", b""


def verify_file(
    path: Path, record: Any, data: bytes | None = None, parse: bool = True
) -> tuple[str | None, list[str], list[list[str]]]:
    """Check a table against what run.json recorded of it: the problem (or
    None), and its header and rows when it could be read (parse: False,
    only counted)."""
    if not isinstance(record, dict) or not all(
        isinstance(record.get(k), t) and not isinstance(record.get(k), bool)
        for k, t in (("bytes", int), ("sha256", str), ("rows", int))
    ):
        return f"{path.name}: run.json's record of it is not {{bytes, sha256, rows}}", [], []
    if data is None and not parse:  # read a block at a time
        try:
            size, digest = _size_and_digest(path)
        except FileNotFoundError:
            return f"{path.name}: missing (run.json records it)", [], []
        except OSError as exc:
            return f"{path.name}: cannot read: {exc.strerror}", [], []
        if size != record["bytes"]:
            return f"{path.name}: {size} bytes, run.json recorded {record['bytes']}", [], []
        if digest != record["sha256"]:
            return f"{path.name}: SHA-256 differs from run.json's", [], []
        try:
            n = _count_rows_stream(path)
        except TableError as exc:
            return str(exc).replace(f"{path}: ", f"{path.name}: ", 1), [], []
        if n != record["rows"]:
            return f"{path.name}: {n} rows, run.json recorded {record['rows']}", [], []
        return None, [], []
    if data is None:
        problem, data = _read_table_bytes(path)
        if problem:
            return problem, [], []
    if len(data) != record["bytes"]:
        return f"{path.name}: {len(data)} bytes, run.json recorded {record['bytes']}", [], []
    if hashlib.sha256(data).hexdigest() != record["sha256"]:
        return f"{path.name}: SHA-256 differs from run.json's", [], []
    try:
        header, rows = parse_csv_gz(path, data) if parse else ([], [])
        n = len(rows) if parse else count_rows(path, data)
    except TableError as exc:
        return str(exc).replace(f"{path}: ", f"{path.name}: ", 1), [], []
    if n != record["rows"]:
        return f"{path.name}: {n} rows, run.json recorded {record['rows']}", [], []
    return None, header, rows


def verify_lines(path: Path, record: Any) -> tuple[str | None, list[str], str | list[list[str]]]:
    """verify_file for a table to be copied rather than read: the problem
    (or None), its header, and its body as the file's own lines (text, each
    ending in a newline) when no field is quoted (what the writers write:
    the lines are then exactly the rows), else as rows."""
    problem, data = _read_table_bytes(path)
    if problem:
        return problem, [], []
    problem, _, _ = verify_file(path, record, data=data, parse=False)
    if problem:
        return problem, [], []
    text = gzip.decompress(data).decode("utf-8")  # verify_file read it so
    if '"' in text or "\r" in text or "\x00" in text or "\n\n" in text:
        header, rows = parse_csv_text(path, text)
        return None, header, rows
    first, _, body = text.partition("\n")
    if body and not body.endswith("\n"):
        body += "\n"
    return None, (first.split(",") if first else []), body


def check_integrity(directory: Path, run: dict[str, Any]) -> list[str]:
    """Every table of a run directory against run.json's "tables" (size,
    SHA-256, rows), and no table run.json does not record; one line each."""
    recorded = run.get("tables")
    if not isinstance(recorded, dict):
        return [
            f"{directory / 'run.json'}: tables: missing (no sizes, hashes or row counts to check "
            "the traces against; run.json of an older qlab?)"
        ]
    out = []
    for name in REQUIRED_FILES:
        if name not in recorded:
            out.append(f"{directory / 'run.json'}: tables: no record of {name}")
    for name in sorted(recorded):
        if name not in TABLE_FILES:
            out.append(f"{directory / 'run.json'}: tables: unknown table {name!r}")
            continue
        problem, _, _ = verify_file(directory / name, recorded[name], parse=False)
        if problem:
            out.append(f"{directory}: {problem}")
    for name in TABLE_FILES:
        if name not in recorded and (directory / name).exists():
            out.append(f"{directory / name}: not recorded in run.json's tables")
    return out


# ---------------------------------------------------------------------------
# validation


# Numbers as the writers write them: Python's int() and float() also take
# "1_0", "+12", " 7", "nan" and "inf", which R reads otherwise or not at all.
INT_RE = re.compile(r"-?[0-9]+")
FLOAT_RE = re.compile(r"-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?")


def _parse(col: Column, text: str) -> tuple[Any, str | None]:
    if text == NA:
        return None, None if col.na else "NA not allowed"
    try:
        if col.kind == "int":
            if not INT_RE.fullmatch(text):
                return None, f"expected an integer (digits), got {text!r}"
            value: Any = int(text)
        elif col.kind == "float":
            if not FLOAT_RE.fullmatch(text):
                return None, f"expected a decimal number, got {text!r}"
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
    """A plain CSV's header and rows; TableError when it is not readable as one."""
    try:
        text = path.read_bytes().decode("utf-8")
    except OSError as exc:
        raise TableError(f"{path}: cannot read: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise TableError(f"{path}: not a readable CSV: {exc}") from None
    return parse_csv_text(path, text)


# Tables whose sort key identifies a row (tcp may hold several rows of a
# flow at one instant, in the order they happened, but never the same row
# twice; flows' duplicate ids are named by the flows check).
UNIQUE_KEYS = ("queues", "packets", "flow_facts", "queue_facts", "packet_facts")


def _read_text(path: Path, raw: bool) -> str:
    """A table's text: a runner's plain CSV (raw) or a gzip CSV; TableError
    as read_csv and read_csv_gz give it."""
    if raw:
        try:
            return path.read_bytes().decode("utf-8")
        except OSError as exc:
            raise TableError(f"{path}: cannot read: {exc.strerror}") from None
        except UnicodeDecodeError as exc:
            raise TableError(f"{path}: not a readable CSV: {exc}") from None
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise TableError(f"{path}: cannot read: {exc.strerror}") from None
    try:
        return gzip.decompress(data).decode("utf-8")
    except DECODE_ERRORS as exc:
        raise TableError(f"{path}: not a readable gzip CSV: {type(exc).__name__}: {exc}") from None


# A number that float() reads as a finite value: at most 20 integer digits
# and a two-digit exponent stay far below 1.8e308.
_FAST_FLOAT = r"[0-9]{1,20}(?:\.[0-9]+)?(?:[eE][-+]?[0-9]{1,2})?"


def _fast_field(col: Column) -> str | None:
    """A regular expression for col's field whose every match _parse
    accepts (a subset of what it accepts: anything else goes the slow way,
    which names the problem); None where no simple one is exact enough."""
    if col.choices:
        if col.kind != "str":
            return None
        field = "|".join(re.escape(c) for c in col.choices)
    elif col.kind == "int" and col.hi is None and col.lo in (0, 1):
        # canonical integers only (no leading zero), so that a matched field
        # is the text str() gives its value: iter_table's `text` columns
        field = "0|[1-9][0-9]*" if col.lo == 0 else "[1-9][0-9]*"
    elif col.kind == "float" and col.hi is None and col.lo == 0:
        field = _FAST_FLOAT
    elif col.kind == "float" and col.hi == 1 and col.lo == 0:  # a probability
        field = r"0(?:\.[0-9]+)?|1(?:\.0+)?"
    elif col.kind == "bool01":
        field = "[01]"
    elif col.kind == "str" and not col.lo and not col.hi:
        # unquoted text, which csv reads as it is; "NA" is the missing value
        field = '[^,"\n\x00]*' if col.na else '(?!NA(?:,|$))[^,"\n\x00]*'
    else:
        return None
    return f"(?:NA|{field})" if col.na else f"(?:{field})"


_FAST: dict[tuple[str, bool], tuple[re.Pattern[str], list[Any]] | None] = {}


def _fast_spec(table: str, raw: bool) -> tuple[re.Pattern[str], list[Any]] | None:
    """One pattern for a whole row of the table and a converter per column."""
    key = (table, raw)
    if key not in _FAST:
        cols = (RAW_TABLES if raw else TABLES)[table]["columns"]
        fields = [_fast_field(c) for c in cols]
        if any(f is None for f in fields):
            _FAST[key] = None
        else:
            conv = [{"int": int, "bool01": int, "float": float}.get(c.kind) for c in cols]
            _FAST[key] = (re.compile(",".join(fields)), conv)  # type: ignore[arg-type]
    return _FAST[key]


def _check_fast(
    text: str,
    table: str,
    raw: bool,
    spec: dict[str, Any],
    need: Sequence[str] | None = None,
    as_text: Sequence[str] = (),
) -> tuple[list[Any], list[str], dict[str, list[str]]] | None:
    """The columns of a table every line of which matches its row pattern,
    parsed a column at a time, its lines, and the columns named in as_text
    as written (which the row pattern admits only in the form _text_column
    gives a parsed value); None when any line does not match (or the header
    is not the expected one, or the text has what csv reads otherwise), so
    that the field-by-field path names the problem."""
    fast = _fast_spec(table, raw)
    if fast is None or "\r" in text:
        return None
    pattern, conv = fast
    names = [c.name for c in spec["columns"]]
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if not lines or lines[0] != ",".join(names):
        return None
    header, lines = lines[0], lines[1:]
    match = pattern.fullmatch
    if not all(map(match, lines)):
        return None
    # every line has exactly one field per column (no field holds a comma or
    # a line break): column k is every n-th field of the body from the k-th
    body = text[len(header) + 1 :]
    flat = body.replace("\n", ",").split(",") if body else []
    if body.endswith("\n"):
        flat.pop()
    texts = [flat[k :: len(names)] for k in range(len(names))]
    columns: list[Any] = []
    as_written = {}
    for col, f, column in zip(spec["columns"], conv, texts, strict=True):
        if col.name in as_text:
            as_written[col.name] = column
        if need is not None and col.name not in need:
            columns.append(None)  # checked, not parsed: nobody reads it
        elif col.na:
            columns.append([None if t == NA else (t if f is None else f(t)) for t in column])
        else:
            columns.append(list(column) if f is None else list(map(f, column)))
    return columns, lines, as_written


def check_table(path: Path, table: str, raw: bool = False, form: str = "rows") -> tuple[list[str], Any]:
    """Check one table against its columns (TABLES, gzip CSV; raw: RAW_TABLES,
    the plain CSV a runner writes); the problems and the parsed table:
    form "rows", a dict per row (also when there are problems: the rows
    that were read); "columns", a list per column by name; "none", [].

    A table whose every row matches its row pattern (_fast_spec: each field
    in a form the parser accepts) is checked and parsed a column at a time;
    any other takes the field-by-field path, which names each problem."""
    spec = (RAW_TABLES if raw else TABLES)[table]
    names = [c.name for c in spec["columns"]]
    if form == "none":  # a chunk at a time
        try:
            for _ in iter_table(path, table, raw):
                pass
        except TableProblems as exc:
            return exc.problems, []
        return [], []
    try:
        text = _read_text(path, raw)
    except TableError as exc:
        return [str(exc)], []
    fast = _check_fast(text, table, raw, spec)
    if fast is not None:
        columns, lines, _ = fast
    else:
        problems, parsed, rows = _check_slow(path, text, spec)
        if problems:
            return problems, parsed if form == "rows" else []
        columns = [[r[n] for r in parsed] for n in names]
        lines = rows
    by_name = dict(zip(names, columns, strict=True))
    problems, _ = _check_order(path, table, spec, by_name, lines)
    if form == "columns":
        return problems, by_name
    if form == "rows":
        return problems, [dict(zip(names, row, strict=True)) for row in zip(*columns, strict=True)]
    return problems, []


def _check_slow(
    path: Path, text: str, spec: dict[str, Any], first_line: int = 2
) -> tuple[list[str], list[dict[str, Any]], list[Any]]:
    """Field by field: the problems (each named), the rows parsed and the
    rows as read (the first row is line first_line of the file)."""
    problems: list[str] = []
    try:
        header, rows = parse_csv_text(path, text)
    except TableError as exc:
        return [str(exc)], [], []
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
        return [f"{path}: header: expected {','.join(names)} ({'; '.join(detail)})"], [], rows
    parsed: list[dict[str, Any]] = []
    for i, row in enumerate(rows, start=first_line):
        if len(row) != len(names):
            problems.append(f"{path}: line {i}: expected {len(names)} fields, got {len(row)}")
            continue
        rec: dict[str, Any] = {}
        for col, field in zip(spec["columns"], row, strict=True):
            value, err = _parse(col, field)
            if err:
                problems.append(f"{path}: line {i}: {col.name}: {err}")
            rec[col.name] = value
        parsed.append(rec)
        if len(problems) >= MAX_PROBLEMS_PER_TABLE:
            problems.append(f"{path}: (stopping after {MAX_PROBLEMS_PER_TABLE} problems)")
            break
    return problems, parsed, rows


def _check_order(
    path: Path,
    table: str,
    spec: dict[str, Any],
    columns: dict[str, list[Any]],
    rows: Sequence[Any],
    prev: tuple[Any, Any] | None = None,
    first_line: int = 2,
) -> tuple[list[str], tuple[Any, Any] | None]:
    """Rows sorted by the table's key, and no row twice (rows: each row as
    read, compared where the key does not identify a row); prev, the last
    key and row before these (a chunk's predecessor), first_line the line
    of the first of rows. The problems, and the last key and row."""
    problems = []
    keys = list(
        zip(
            *(
                [-1 if v is None else v for v in columns[k]] if None in columns[k] else columns[k]
                for k in spec["sort"]
            ),
            strict=True,
        )
    )
    rows = list(rows)
    if prev is not None:
        keys.insert(0, prev[0])
        rows.insert(0, prev[1])
        first_line -= 1
    if all(map(operator.lt, keys, itertools.islice(keys, 1, None))):  # one pass in C, the usual case
        return problems, ((keys[-1], rows[-1]) if keys else prev)
    if keys != sorted(keys):
        problems.append(f"{path}: rows are not sorted by {', '.join(spec['sort'])}")
    unique = table in UNIQUE_KEYS
    # the rows whose key is the one before's
    same = itertools.compress(range(1, len(keys)), map(operator.eq, keys[1:], keys))
    for i in same if table != "flows" else ():
        if unique or rows[i] == rows[i - 1]:
            problems.append(
                f"{path}: line {i + first_line}: a duplicate row "
                f"({', '.join(f'{k}={v}' for k, v in zip(spec['sort'], keys[i], strict=True))})"
            )
            break
    return problems, ((keys[-1], rows[-1]) if keys else prev)


class TableProblems(Exception):
    """What iter_table found wrong with a table, one line each."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = problems


# What iter_table reads at a time, in characters (whole lines: about 100,000 packet rows).
CHUNK_CHARS = 4 << 20


def iter_table(
    path: Path,
    table: str,
    raw: bool = False,
    need: Sequence[str] = (),
    chunk_chars: int | None = None,
    as_text: Sequence[str] = (),
) -> Iterator[dict[str, Any]]:
    """Check a table as check_table does, about chunk_chars characters of
    whole rows at a time, and yield each chunk's columns by name: those in
    need and the sort key parsed, those in as_text as text (each value as
    _text_column writes it: NA, or str of the value, which is the field as
    written whenever the row pattern matched), the others None.
    TableProblems at the first chunk with any (named as check_table names
    them, with the file's line numbers). It holds one chunk, however long
    the table: a packet trace of a long run need not fit in memory."""
    spec = (RAW_TABLES if raw else TABLES)[table]
    names = [c.name for c in spec["columns"]]
    header = ",".join(names)
    wanted = sorted(set(need) | set(spec["sort"]))
    size = chunk_chars or CHUNK_CHARS
    try:
        f = path.open("rb")
    except OSError as exc:
        raise TableProblems([f"{path}: cannot read: {exc.strerror}"]) from None
    unreadable = f"{path}: not a readable CSV" if raw else f"{path}: not a readable gzip CSV"
    with f:
        binary: Any = f if raw else gzip.GzipFile(fileobj=f, mode="rb")
        stream = io.TextIOWrapper(binary, encoding="utf-8", newline="")
        line, prev, rest = 2, None, ""
        try:
            first = stream.readline()
            if first.rstrip("\n") != header:
                if "\r" in first:
                    raise TableProblems(
                        [f"{path}: line 1: a carriage return (the encoding is LF line endings)"]
                    )
                problems, _, _ = _check_slow(path, first, spec)
                if problems:  # else a header csv reads as the expected one (quoted, say)
                    raise TableProblems(problems)
            while True:
                block = stream.read(size)
                text = rest + block
                cut = len(text) if not block else text.rfind("\n") + 1  # whole lines; the last at the end
                body, rest = text[:cut], text[cut:]
                if body:
                    columns, lines, prev = _check_chunk(
                        path, table, raw, spec, body, wanted, line, prev, as_text
                    )
                    line += len(lines)
                    yield columns
                if not block:
                    break
        except DECODE_ERRORS as exc:
            raise TableProblems([f"{unreadable}: {type(exc).__name__}: {exc}"]) from None


def _check_chunk(
    path: Path,
    table: str,
    raw: bool,
    spec: dict[str, Any],
    body: str,
    wanted: list[str],
    line: int,
    prev: tuple[Any, Any] | None,
    as_text: Sequence[str] = (),
) -> tuple[dict[str, Any], list[Any], tuple[Any, Any] | None]:
    """iter_table's check of whole rows beginning at the file's line `line`."""
    names = [c.name for c in spec["columns"]]
    if "\r" in body:
        at = line + body.count("\n", 0, body.index("\r"))
        raise TableProblems([f"{path}: line {at}: a carriage return (the encoding is LF line endings)"])
    text = ",".join(names) + "\n" + body
    fast = _check_fast(text, table, raw, spec, need=wanted, as_text=as_text)
    if fast is not None:
        columns, lines, texts = fast
        by_name = dict(zip(names, columns, strict=True))
    else:
        problems, parsed, lines = _check_slow(path, text, spec, first_line=line)
        if problems:
            raise TableProblems(problems)
        columns = [[r[n] for r in parsed] if n in wanted else None for n in names]
        by_name = dict(zip(names, columns, strict=True))
        texts = {n: _text_column([r[n] for r in parsed]) for n in as_text}
    problems, prev = _check_order(path, table, spec, by_name, lines, prev, line)
    if problems:
        raise TableProblems(problems)
    by_name.update(texts)
    return by_name, lines, prev


def _text_column(values: list[Any]) -> list[str]:
    """Parsed values as a table writes them: NA, or str of the value."""
    return [NA if v is None else str(v) for v in values]


def _check_flows(path: Path, rows: list[dict[str, Any]], sim_end_s: float | None) -> list[str]:
    out = []
    ids = [r["flow_id"] for r in rows]
    if len(set(ids)) != len(ids):
        out.append(f"{path}: flow_id: duplicate flow ids")
    for r in rows:
        where = f"{path}: flow {r['flow_id']}"
        if (
            r["bytes_delivered"] is not None
            and r["bytes_goal"] is not None
            and r["bytes_delivered"] > r["bytes_goal"]
        ):
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
            elif (r["rx_packets"] > 0) != (r["delay_mean_s"] is not None) or (r["delay_mean_s"] is None) != (
                r["delay_max_s"] is None
            ):
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
        if (
            r["retx_packets"] is not None
            and r["tx_packets"] is not None
            and r["retx_packets"] > r["tx_packets"]
        ):
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


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def load_run_json(path: Path) -> dict[str, Any]:
    """run.json as an object; ValueError (one line, naming the file) when it
    is missing, not UTF-8, not JSON (NaN and Infinity are not) or not an object."""
    try:
        run = json.loads(path.read_bytes().decode("utf-8"), parse_constant=_no_constant)
    except FileNotFoundError:
        raise ValueError(f"{path}: missing") from None
    except OSError as exc:
        raise ValueError(f"{path}: cannot read: {exc.strerror}") from None
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise ValueError(f"{path}: not readable JSON: {type(exc).__name__}: {exc}") from None
    if not isinstance(run, dict):
        raise ValueError(f"{path}: expected a JSON object")
    return run


def _finite(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and v >= 0


def check_run_json(path: Path) -> tuple[list[str], dict[str, Any]]:
    try:
        run = load_run_json(path)
    except ValueError as exc:
        return [str(exc)], {}
    out = []
    if run.get("schema") != RUN_SCHEMA:  # first: it explains the rest (an older qlab's run.json)
        out.append(f"{path}: schema: expected {RUN_SCHEMA!r}, got {run.get('schema')!r}")
    for key, typ in RUN_REQUIRED.items():
        if key == "schema" and "schema" in run:
            continue
        if key not in run:
            out.append(f"{path}: {key}: missing")
        elif not isinstance(run[key], typ) or (typ is int and isinstance(run[key], bool)):
            out.append(f"{path}: {key}: wrong type {type(run[key]).__name__}")
    for key in ("sim_end_s", "wall_time_s"):
        if isinstance(run.get(key), (int, float)) and not _finite(run[key]):
            out.append(f"{path}: {key}: expected a finite number >= 0, got {run[key]!r}")
    return out, run


def plan_of(directory: Path) -> Path | None:
    """The plan a run directory of a results tree ran:
    <results>/<paper>/<name>/<backend>/<point>/seed-<n> ran
    <results>/jobs/<paper>/<name>/<backend>/<point>/seed-<n>.json."""
    parts = Path(directory).parts
    if len(parts) < 5:
        return None
    root = Path(*parts[:-5]) if len(parts) > 5 else Path(".")
    return root / "jobs" / Path(*parts[-5:-1]) / f"{parts[-1]}.json"


def check_against_plan(
    directory: Path, run: dict[str, Any], job: Path, flows: list[dict[str, Any]] | None
) -> list[str]:
    """The run against the plan it ran: the same plan (job_sha256), every
    flow of the plan present exactly once, nothing else."""
    try:
        raw = job.read_bytes()
        plan = json.loads(raw)
        plan_flows = [f["flow_id"] for f in plan["flows"]]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        return [f"{job}: the plan this run ran is not readable ({type(exc).__name__}: {exc})"]
    if hashlib.sha256(raw).hexdigest() != run.get("job_sha256"):
        return [
            f"{directory / 'run.json'}: job_sha256 is not the SHA-256 of {job} (the run is of another plan)"
        ]
    if flows is None:
        return []
    ids = [r["flow_id"] for r in flows]
    missing = sorted(set(plan_flows) - set(ids))
    extra = sorted(set(ids) - set(plan_flows))
    seen: set[int] = set()
    twice = sorted({i for i in ids if i in seen or seen.add(i)})
    if missing or extra or twice:
        what = (
            [f"{len(missing)} missing (flow {missing[0]}{', ...' if len(missing) > 1 else ''})"]
            if missing
            else []
        )
        what += [f"unknown flow {extra[0]}"] if extra else []
        what += [f"flow {twice[0]} more than once"] if twice else []
        return [
            f"{directory / 'flows.csv.gz'}: expected each of the plan's {len(plan_flows)} flows "
            f"exactly once, got {len(ids)} rows: {'; '.join(what)}"
        ]
    return []


def check_dir(directory: Path, job: Path | None = None, rows_checked: Sequence[str] = ()) -> list[str]:
    """Every problem with one job's trace directory (empty when it passes):
    run.json, each table against what run.json recorded of it and against
    docs/traces.md, and, when the plan it ran is found (job, or the
    results tree's jobs/), the flows against the plan. rows_checked: tables
    whose every row the caller has just checked and written (qlab.runjob:
    the packet trace, from facts checked a chunk at a time); their size,
    SHA-256 and row count are checked against run.json, their rows not
    parsed again (the largest table: a third of a packet-traced run's
    finalising)."""
    directory = Path(directory)
    if not directory.is_dir():
        return [f"{directory}: not a directory"]
    problems, run = check_run_json(directory / "run.json")
    if run:
        problems += check_integrity(directory, run)
    tables: dict[str, list[dict[str, Any]]] = {}
    for table, spec in TABLES.items():
        path = directory / f"{table}.csv.gz"
        if not path.exists():
            if spec["required"]:
                problems.append(f"{path}: missing")
            continue
        if table in rows_checked:
            continue
        # packets: checked, not kept (nothing below reads them)
        p, rows = check_table(path, table, form="none" if table == "packets" else "rows")
        problems.extend(p)
        if not p:  # the row checks below read only tables that parsed cleanly
            tables[table] = rows
    sim_end_s = run.get("sim_end_s") if _finite(run.get("sim_end_s")) else None
    if tables.get("flows"):
        problems.extend(_check_flows(directory / "flows.csv.gz", tables["flows"], sim_end_s))
        if run.get("all_completed") is True and not all(r["completed"] for r in tables["flows"]):
            problems.append(
                f"{directory / 'run.json'}: all_completed is true but some flows did not complete"
            )
    # A run that traced a queue (its discipline is that queue's) has samples
    # of it: at least the one at the run's end.
    traced = isinstance(run.get("discipline"), dict) and run["discipline"].get("kind") != "none"
    if "queues" in tables and (tables["queues"] or traced):
        problems.extend(check_queue_rows(directory / "queues.csv.gz", tables["queues"]))
    if tables.get("tcp"):
        problems.extend(check_tcp_rows(directory / "tcp.csv.gz", tables["tcp"]))
    job = job if job is not None else plan_of(directory)
    if run and job is not None and job.exists():
        problems.extend(check_against_plan(directory, run, job, tables.get("flows")))
    return problems

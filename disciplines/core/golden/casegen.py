"""Plumbing shared by the golden-vector generators (stdlib only).

Each `make_cases.py` builds its rows with enq()/deq(), keeps its own cases
(and, for --check, its own independent model) and hands them to
write_cases(), which writes `<case>.events.csv`, `<case>.args` and, with
--decide, `<case>.decisions.csv` from qcore-replay. The scripts import this
module after putting the golden directory on sys.path:

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    import casegen
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
REPLAY = Path(os.environ.get("QCORE_REPLAY", REPO / "build" / "core" / "qcore-replay"))
HEADER = "t_ns,op,len,cls,prec,flow"


def enq(t, length, cls="", prec="", flow=0):
    """An arrival row; empty cls/prec/flow fields are written as given
    (pass flow="" for an empty flow field)."""
    return f"{t},enq,{length},{cls},{prec},{flow}"


def deq(t):
    return f"{t},deq,,,,"


def events_text(rows):
    return "\n".join([HEADER, *rows]) + "\n"


def replay(disc, args, events):
    """qcore-replay's decisions for the events text under args."""
    return subprocess.run(
        [str(REPLAY), disc, *args.split()], input=events, text=True, capture_output=True, check=True
    ).stdout


def write_cases(directory, cases, decide, check=None):
    """cases: {name: (args, rows)} of the discipline named after directory.
    Writes events and args (and decisions if decide); if check is given,
    calls check(name, args, events) after each case and returns the sum of
    its results (mismatches), else 0."""
    directory = Path(directory)
    directory.mkdir(exist_ok=True)
    bad = 0
    for name, (args, rows) in cases.items():
        events = events_text(rows)
        (directory / f"{name}.events.csv").write_text(events)
        (directory / f"{name}.args").write_text(args + "\n")
        if decide:
            (directory / f"{name}.decisions.csv").write_text(replay(directory.name, args, events))
        if check is not None:
            bad += check(name, args, events)
    return bad


# ---- for --check modes ---------------------------------------------------


def parse_args(args, defaults):
    """The `--param key=value` / `--seed n` pairs of args over defaults
    (values stay strings)."""
    d = dict(defaults)
    a = args.split()
    for flag, value in zip(a[::2], a[1::2], strict=False):
        if flag == "--seed":
            d["seed"] = value
        else:
            k, v = value.split("=")
            d[k] = v
    return d


def event_fields(events):
    """The events text's rows (header skipped) as lists of fields."""
    return [r.split(",") for r in events.split("\n")[1:] if r]


def compare(directory, name, want):
    """Compare the committed decisions of case name with the model's rows
    want; prints a summary line and returns the number of mismatches."""
    got = (Path(directory) / f"{name}.decisions.csv").read_text().split("\n")[1:-1]
    bad = sum(x != y for x, y in zip(want, got, strict=False)) + abs(len(want) - len(got))
    print(f"{name}: {len(got)} rows, {bad} differ from the model")
    return bad

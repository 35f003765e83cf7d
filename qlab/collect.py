"""Gather one scenario's per-run traces into the tidy tables R reads.

    qlab collect --out results/<paper>/<name>/<backend> --sweep flows --tables queues RUN_DIR...

results/<paper>/<name>/<backend>/flows.csv.gz   every flow of every run, with
    scenario, backend, series, point, seed and the sweep variables first
results/<paper>/<name>/<backend>/runs.csv.gz    one row per run
results/<paper>/<name>/<backend>/{queues,packets}.csv.gz
    every run's queue samples / packet events, with the same leading
    columns, for scenarios whose trace.collect names them

The runs are the directories the workflow ran (their run.json says what
each is); nothing is expanded again. This only concatenates and labels;
every metric is computed in analysis/R. Before that, every run is checked:
each table it reads against the size, SHA-256 and row count run.json
recorded, and its flows against its plan (<results>/jobs/..., the one
run.json's job_sha256 names: every flow exactly once). A run that fails is
refused, one line naming it and the command that runs it again.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from qlab import traces

RUN_COLUMNS = ("sim_end_s", "all_completed", "wall_time_s", "valid", "job_sha256", "invalid_reasons")


def _fmt(v: Any) -> Any:
    if isinstance(v, bool):
        return "TRUE" if v else "FALSE"
    if isinstance(v, list):  # invalid_reasons: one field, NA when there are none
        return "; ".join(map(str, v)) or None
    return v


class Damaged(ValueError):
    """Runs collect will not read: one line per run, naming it and how to
    run it again."""

    def __init__(self, lines: list[str]) -> None:
        super().__init__("\n".join(lines))
        self.lines = lines


def rerun_hint(d: Path) -> str:
    job = traces.plan_of(d)
    return (
        f"qlab run-job {job} --out {d}" if job is not None else "qlab run-job <its plan> --out " + str(d)
    ) + " (make reproduce reruns damaged runs itself)"


def _run(d: Path) -> dict[str, Any]:
    """run.json, checked as check-traces checks it (keys, types, finite
    times, schema); ValueError with the first problem."""
    problems, run = traces.check_run_json(d / "run.json")
    if problems:
        raise ValueError(problems[0] + (f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""))
    for key in ("scenario", "backend", "series", "point"):
        if not isinstance(run[key], str):
            raise ValueError(f"{d / 'run.json'}: {key}: wrong type {type(run[key]).__name__}")
    return run


def _table(d: Path, run: dict[str, Any], table: str, lines: bool = False) -> str | list[list[str]]:
    """A run's table, checked against run.json's record of it (size,
    SHA-256, rows) and its header; its rows, or (lines) its body as text
    when no field is quoted (traces.verify_lines), for copying."""
    name = f"{table}.csv.gz"
    record = run.get("tables", {}).get(name) if isinstance(run.get("tables"), dict) else None
    if record is None:
        raise ValueError(f"{d / 'run.json'}: tables: no record of {name}")
    if lines:
        problem, header, rows = traces.verify_lines(d / name, record)
    else:
        problem, header, rows = traces.verify_file(d / name, record)
    if problem:
        raise ValueError(f"{d}: {problem}")
    if header != [c.name for c in traces.TABLES[table]["columns"]]:
        raise ValueError(f"{d / name}: unexpected header {header}")
    return rows


def _read(d: Path, tables: list[str]) -> tuple[dict[str, Any], dict[str, Any]]:
    """One run's run.json and tables, every one verified, and its flows
    against its plan (each flow of the plan exactly once). The tables
    besides flows (packet and queue traces, millions of rows) are kept as
    the runs' own lines, which the collection copies behind each run's
    labels: parsing and writing them again row by row took most of a
    reproduction's collection time (docs/benchmarks.md)."""
    run = _run(d)
    rows = {"flows": _table(d, run, "flows"), **{t: _table(d, run, t, lines=True) for t in tables}}
    job = traces.plan_of(d)
    if job is None or not job.exists():
        raise ValueError(
            f"{d}: the plan it ran is not at {job} (a run directory of a results tree, "
            "<results>/<paper>/<name>/<backend>/<point>/seed-<n>, ran "
            "<results>/jobs/<paper>/<name>/<backend>/<point>/seed-<n>.json)"
        )
    ids = []
    for r in rows["flows"]:
        if not r or not traces.INT_RE.fullmatch(r[0]):
            raise ValueError(f"{d / 'flows.csv.gz'}: flow_id {r[0] if r else ''!r} is not an integer")
        ids.append({"flow_id": int(r[0])})
    problems = traces.check_against_plan(d, run, job, ids)
    if problems:
        raise ValueError(problems[0])
    return run, rows


def listed_runs(done: Path) -> list[Path]:
    """The runs a done file of `qlab run-job --done` lists (a point's
    point.json or a batch's batch-<k>.json), as directories beside it."""
    try:
        doc = json.loads(done.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ValueError(f"{done}: cannot read the runs it lists: {exc}") from None
    runs = doc.get("runs") if isinstance(doc, dict) else None
    if not isinstance(runs, dict) or doc.get("schema") != "qlab-point/1":
        raise ValueError(f"{done}: not a done file of qlab run-job (schema qlab-point/1 with `runs`)")
    return [done.parent / name for name in sorted(doc["runs"])]


def collect(out: Path, run_dirs: list[Path], sweep_vars: list[str], tables: list[str]) -> Path:
    if not run_dirs:
        raise ValueError(f"{out}: no runs to collect")
    # Every run is read and verified before anything is written: a damaged
    # run stops the collection (never averaged in, never a traceback).
    read, damaged = [], []
    for d in run_dirs:
        try:
            read.append((*_read(d, tables), d))
        except ValueError as exc:
            why = str(exc).replace(f"{d}: ", "", 1).replace(f"{d}/", "", 1)
            damaged.append(f"qlab collect: damaged run {d}: {why}; rerun it: {rerun_hint(d)}")
    if damaged:
        raise Damaged(damaged)
    runs = sorted(read, key=lambda rd: (rd[0]["series"], rd[0]["point"], rd[0]["seed"]))
    ids = {(r["scenario"], r["backend"]) for r, _, _ in runs}
    if len(ids) != 1:
        raise ValueError(f"{out}: the runs are of several scenarios or backends: {sorted(ids)}")
    prefix = ["scenario", "backend", "series", "point", "seed", *sweep_vars]
    flow_cols = [c.name for c in traces.TABLES["flows"]["columns"]]
    flow_rows: list[list[Any]] = []
    run_rows: list[list[Any]] = []
    extra_parts: dict[str, list[str]] = {t: [] for t in tables}
    for run, rows, d in runs:
        missing = [v for v in sweep_vars if v not in run["point_values"]]
        if missing:
            raise ValueError(f"{d / 'run.json'}: point_values: no {', '.join(missing)}")
        lead = [
            run["scenario"],
            run["backend"],
            run["series"],
            run["point"],
            run["seed"],
            *(run["point_values"][v] for v in sweep_vars),
        ]
        flow_rows.extend(lead + r for r in rows["flows"])
        for table in tables:
            body = rows[table]
            if isinstance(body, str):  # lines: each one behind the run's labels
                if body:
                    label = traces.csv_line(lead)[:-1] + ","
                    extra_parts[table].append(label + body[:-1].replace("\n", "\n" + label) + "\n")
            else:
                extra_parts[table].extend(traces.csv_line(lead + r) for r in body)
        run_rows.append(lead + [_fmt(run.get(k)) for k in RUN_COLUMNS])
    traces.write_csv_gz(out / "flows.csv.gz", prefix + flow_cols, flow_rows)
    traces.write_csv_gz(out / "runs.csv.gz", prefix + list(RUN_COLUMNS), run_rows)
    for table in tables:
        columns = [c.name for c in traces.TABLES[table]["columns"]]
        text = traces.csv_line(prefix + columns) + "".join(extra_parts[table])
        traces.atomic_write_bytes(out / f"{table}.csv.gz", traces.gzip_bytes(text.encode("utf-8")))
    return out

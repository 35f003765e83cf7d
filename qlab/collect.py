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
every metric is computed in analysis/R.
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


def _run(d: Path) -> dict[str, Any]:
    path = d / "run.json"
    try:
        run = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path}: not a readable run.json: {exc}") from None
    for key in ("scenario", "backend", "series", "point", "seed", "point_values", "job_sha256"):
        if key not in run:
            raise ValueError(f"{path}: {key}: missing")
    return run


def collect(out: Path, run_dirs: list[Path], sweep_vars: list[str], tables: list[str]) -> Path:
    if not run_dirs:
        raise ValueError(f"{out}: no runs to collect")
    runs = sorted(((_run(d), d) for d in run_dirs),
                  key=lambda rd: (rd[0]["series"], rd[0]["point"], rd[0]["seed"]))
    ids = {(r["scenario"], r["backend"]) for r, _ in runs}
    if len(ids) != 1:
        raise ValueError(f"{out}: the runs are of several scenarios or backends: {sorted(ids)}")
    prefix = ["scenario", "backend", "series", "point", "seed", *sweep_vars]
    flow_cols = [c.name for c in traces.TABLES["flows"]["columns"]]
    flow_rows: list[list[Any]] = []
    run_rows: list[list[Any]] = []
    extra_rows: dict[str, list[list[Any]]] = {t: [] for t in tables}
    for run, d in runs:
        missing = [v for v in sweep_vars if v not in run["point_values"]]
        if missing:
            raise ValueError(f"{d / 'run.json'}: point_values: no {', '.join(missing)}")
        lead = [run["scenario"], run["backend"], run["series"], run["point"], run["seed"],
                *(run["point_values"][v] for v in sweep_vars)]
        header, rows = traces.read_csv_gz(d / "flows.csv.gz")
        if header != flow_cols:
            raise ValueError(f"{d / 'flows.csv.gz'}: unexpected header {header}")
        flow_rows.extend(lead + r for r in rows)
        for table in tables:
            path = d / f"{table}.csv.gz"
            header, rows = traces.read_csv_gz(path)
            if header != [c.name for c in traces.TABLES[table]["columns"]]:
                raise ValueError(f"{path}: unexpected header {header}")
            extra_rows[table].extend(lead + r for r in rows)
        run_rows.append(lead + [_fmt(run.get(k)) for k in RUN_COLUMNS])
    traces.write_csv_gz(out / "flows.csv.gz", prefix + flow_cols, flow_rows)
    traces.write_csv_gz(out / "runs.csv.gz", prefix + list(RUN_COLUMNS), run_rows)
    for table in tables:
        columns = [c.name for c in traces.TABLES[table]["columns"]]
        traces.write_csv_gz(out / f"{table}.csv.gz", prefix + columns, extra_rows[table])
    return out

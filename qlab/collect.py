"""Gather one scenario's per-job traces into the tidy tables R reads.

results/<paper>/<name>/<backend>/flows.csv.gz   every flow of every run, with
    scenario, backend, series, point, seed and the sweep variables first
results/<paper>/<name>/<backend>/runs.csv.gz    one row per run
results/<paper>/<name>/<backend>/scenario.json  the resolved scenario (for the report)
results/<paper>/<name>/<backend>/{queues,packets}.csv.gz
    every run's queue samples / packet events, with the same leading
    columns, for scenarios whose trace.collect names them

This only concatenates and labels; every metric is computed in analysis/R.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from qlab import scenario as sc
from qlab import traces

RUN_COLUMNS = ("sim_end_s", "all_completed", "wall_time_s", "valid", "job_sha256", "invalid_reasons")


def _fmt(v: Any) -> Any:
    if isinstance(v, bool):
        return "TRUE" if v else "FALSE"
    if isinstance(v, list):  # invalid_reasons: one field, NA when there are none
        return "; ".join(map(str, v)) or None
    return v


def collect(scen: sc.Scenario, profile: str, backend: str, results: Path) -> Path:
    jobs = [j for j in sc.expand(scen, profile, [backend])]
    if not jobs:
        raise ValueError(f"{sc.display_path(scen.file)}: no jobs on backend {backend!r} "
                         f"(the scenario lists {', '.join(scen.doc.get('backends', ['ns3']))})")
    doc = sc.resolve(scen, profile)
    sweep_vars = list(doc["sweep"])
    prefix = ["scenario", "backend", "series", "point", "seed", *sweep_vars]
    flow_cols = [c.name for c in traces.TABLES["flows"]["columns"]]
    extra = list(doc["trace"].get("collect", []))
    flow_rows: list[list[Any]] = []
    run_rows: list[list[Any]] = []
    extra_rows: dict[str, list[list[Any]]] = {t: [] for t in extra}
    for job in sorted(jobs, key=lambda j: (j.series, j.point, j.seed)):
        d = results / job.rel_dir
        run = json.loads((d / "run.json").read_text(encoding="utf-8"))
        if run.get("job_sha256") is None:
            raise ValueError(f"{d / 'run.json'}: no job_sha256")
        values = [job.spec["point_values"][v] for v in sweep_vars]
        lead = [scen.id, backend, job.series, job.point, job.seed, *values]
        header, rows = traces.read_csv_gz(d / "flows.csv.gz")
        if header != flow_cols:
            raise ValueError(f"{d / 'flows.csv.gz'}: unexpected header {header}")
        flow_rows.extend(lead + r for r in rows)
        for table in extra:
            path = d / f"{table}.csv.gz"
            header, rows = traces.read_csv_gz(path)
            if header != [c.name for c in traces.TABLES[table]["columns"]]:
                raise ValueError(f"{path}: unexpected header {header}")
            extra_rows[table].extend(lead + r for r in rows)
        run_rows.append(lead + [_fmt(run.get(k)) for k in RUN_COLUMNS])
    out = results / scen.id / backend
    traces.write_csv_gz(out / "flows.csv.gz", prefix + flow_cols, flow_rows)
    traces.write_csv_gz(out / "runs.csv.gz", prefix + list(RUN_COLUMNS), run_rows)
    for table in extra:
        columns = [c.name for c in traces.TABLES[table]["columns"]]
        traces.write_csv_gz(out / f"{table}.csv.gz", prefix + columns, extra_rows[table])
    # always written, so the output is never older than the rule's inputs
    traces.atomic_write_bytes(out / "scenario.json", sc.canonical_json(doc).encode("utf-8"))
    return out

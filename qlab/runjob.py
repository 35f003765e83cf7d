"""Run one job on its backend and place validated trace tables atomically."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path
from typing import Any

from qlab import __version__, backends, traces


class JobError(Exception):
    pass


def run_job(job_file: Path, out_dir: Path, log: Path | None = None) -> dict[str, Any]:
    raw = job_file.read_bytes()
    try:
        job = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise JobError(f"{job_file}: not a job description: {exc}") from None
    backend = backends.get(job.get("backend", ""))
    work = out_dir.parent / f".{out_dir.name}.work-{os.getpid()}"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    facts = backend.run(job_file, work, log)

    for table in traces.TABLES:
        plain = work / f"{table}.csv"
        if plain.exists():
            traces.atomic_write_bytes(work / f"{table}.csv.gz", traces.gzip_bytes(plain.read_bytes()))
            plain.unlink()
    run = {
        "schema": traces.RUN_SCHEMA,
        "scenario": job["scenario"],
        "paper": job["paper"],
        "backend": job["backend"],
        "series": job["series"],
        "point": job["point"],
        "point_values": job["point_values"],
        "seed": job["seed"],
        "discipline": job["discipline"],
        "job_sha256": hashlib.sha256(raw).hexdigest(),
        "sim_end_s": facts.get("sim_end_s"),
        "all_completed": facts.get("all_completed"),
        "versions": {"qlab": __version__, **facts.get("versions", {})},
        "wall_time_s": facts.get("wall_time_s"),
        "runner_cpu_s": facts.get("runner_cpu_s"),
        "valid": facts.get("valid", True),
        "invalid_reasons": facts.get("invalid_reasons", []),
    }
    if facts.get("fidelity"):  # emulation backends: what the validity checks measured
        run["fidelity"] = facts["fidelity"]
    if os.environ.get("QLAB_IMAGE"):  # ran in one of qlab's images (scripts/in-image)
        from qlab import containers

        run["image"] = containers.current_image()
    (work / "run.json").write_text(json.dumps(run, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    (work / "runner.json").unlink(missing_ok=True)
    problems = traces.check_dir(work)
    if problems:
        failed = out_dir.parent / f".{out_dir.name}.failed"
        shutil.rmtree(failed, ignore_errors=True)
        work.rename(failed)
        raise JobError(f"traces failed validation (kept in {failed}):\n  "
                       + "\n  ".join(problems))
    out_dir.mkdir(parents=True, exist_ok=True)
    # run.json last: its presence marks a complete result.
    for name in sorted(p.name for p in work.iterdir() if p.name != "run.json") + ["run.json"]:
        (work / name).replace(out_dir / name)
    shutil.rmtree(work, ignore_errors=True)
    return run

"""Run one plan on its backend: check the plan, run it, check the raw facts,
finalise the trace tables and place them atomically.

The same for every backend: nothing starts unless the plan passes the
validator (docs/job.schema.json plus qlab.plan's rules) and the backend
can build it; nothing lands unless the raw facts pass too. A run that
fails leaves its work directory as ``.<dir>.failed`` and nothing in the
results directory itself.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path
from typing import Any

from qlab import __version__, backends, finalise, traces


class JobError(Exception):
    pass


def load_plan(job_file: Path) -> tuple[bytes, dict[str, Any]]:
    """The plan's bytes and document, checked; JobError naming the field."""
    from qlab import plan as plans

    try:
        raw = job_file.read_bytes()
    except OSError as exc:
        raise JobError(f"{job_file}: cannot read: {exc.strerror}") from None
    try:
        doc = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise JobError(f"{job_file}: not a plan (invalid JSON: {exc})") from None
    problems = plans.check(doc)
    if not problems:
        try:
            problems = backends.get(doc["backend"]).refuse(doc)
            problems = [f"backend {doc['backend']} cannot run it: {p}" for p in problems]
        except backends.BackendError as exc:
            problems = [f"backend: {exc}"]
    if problems:
        raise JobError(f"{job_file}: not a valid plan:\n  " + "\n  ".join(problems[:20]))
    return raw, doc


def run_job(job_file: Path, out_dir: Path, log: Path | None = None) -> dict[str, Any]:
    raw, plan = load_plan(job_file)
    backend = backends.get(plan["backend"])
    work = out_dir.parent / f".{out_dir.name}.work-{os.getpid()}"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    facts = backend.run(job_file, work, log)

    def fail(problems: list[str]) -> JobError:
        failed = out_dir.parent / f".{out_dir.name}.failed"
        shutil.rmtree(failed, ignore_errors=True)
        work.rename(failed)
        return JobError(f"{job_file}: the {plan['backend']} run's traces failed validation "
                        f"(kept in {failed}):\n  " + "\n  ".join(problems))

    problems, tables = finalise.check_raw(work, plan, facts)
    if problems:
        raise fail(problems)
    all_completed = finalise.finalise(work, plan, facts, tables)
    run = {
        "schema": traces.RUN_SCHEMA,
        "scenario": plan["scenario"],
        "paper": plan["paper"],
        "backend": plan["backend"],
        "series": plan["series"],
        "point": plan["point"],
        "point_values": plan["point_values"],
        "seed": plan["seed"],
        "discipline": _discipline(plan),
        "job_sha256": hashlib.sha256(raw).hexdigest(),
        "sim_end_s": facts["end_ns"] / 1e9,
        "all_completed": all_completed,
        "versions": {"qlab": __version__, **facts.get("versions", {})},
        "wall_time_s": facts.get("wall_time_s"),
        "runner_cpu_s": facts.get("runner_cpu_s"),
        "valid": facts.get("valid", True),
        "invalid_reasons": facts.get("invalid_reasons", []),
    }
    for key in ("fidelity", "launch_wall_s"):  # emulation backends
        if facts.get(key) is not None:
            run[key] = facts[key]
    if os.environ.get("QLAB_IMAGE"):  # ran in one of qlab's images (scripts/in-image)
        from qlab import containers

        run["image"] = containers.current_image()
    (work / "run.json").write_text(json.dumps(run, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    # The flows' raw facts stay (small; the tables can be derived again from
    # them and the plan); queue, packet and tcp facts are in the tables.
    traces.atomic_write_bytes(work / "flow_facts.csv.gz",
                              traces.gzip_bytes((work / "flow_facts.csv").read_bytes()))
    for name in ("flow_facts.csv", "queue_facts.csv", "packet_facts.csv", "tcp_facts.csv", "runner.json"):
        (work / name).unlink(missing_ok=True)
    problems = traces.check_dir(work)
    if problems:
        raise fail(problems)
    out_dir.mkdir(parents=True, exist_ok=True)
    # run.json last: its presence marks a complete result.
    for name in sorted(p.name for p in work.iterdir() if p.name != "run.json") + ["run.json"]:
        (work / name).replace(out_dir / name)
    shutil.rmtree(work, ignore_errors=True)
    return run


def _discipline(plan: dict[str, Any]) -> dict[str, Any]:
    """The discipline of the run's (first) traced queue, for run.json."""
    for q in plan["trace"]["queues"]:
        link_id, _, node = q.partition(":")
        for link in plan["links"]:
            if link["id"] == link_id:
                queue = link["queues"][node]
                return {"kind": queue["kind"], "params": queue.get("params", {})}
    return {"kind": "none", "params": {}}

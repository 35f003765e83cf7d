"""Run one plan on its backend: check the plan, run it, check the raw facts,
finalise the trace tables and place them atomically.

The same for every backend: nothing starts unless the plan passes the
validator (docs/job.schema.json plus qlab.plan's rules) and the backend
can build it; nothing lands unless the raw facts pass too. The run works
in ``.<dir>.work-<pid>`` beside its results directory: a run that fails
leaves it as ``.<dir>.failed`` (replacing an older one; removed when the job
next succeeds) and nothing in the results directory itself; an interrupted
run (SIGINT, SIGTERM, SIGHUP) removes it; a killed one's is swept by the
next run of the job or of the workflow (qlab.resume).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import socket
from pathlib import Path
from typing import Any

from qlab import __version__, backends, finalise, resume, traces


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


def load_host(host_file: Path, backend: str) -> dict[str, Any]:
    """What `qlab prepare-host` recorded of the prepared hosts; JobError naming the file."""
    try:
        doc = json.loads(host_file.read_text(encoding="utf-8"))
    except OSError as exc:
        raise JobError(f"{host_file}: cannot read the host facts: {exc.strerror}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise JobError(f"{host_file}: not host facts (invalid JSON: {exc})") from None
    if not isinstance(doc, dict) or doc.get("backend") != backend or not isinstance(doc.get("host"), dict):
        raise JobError(
            f"{host_file}: not the host facts of backend {backend} (`qlab prepare-host {backend}`)"
        )
    return doc["host"]


def run_job(
    job_file: Path, out_dir: Path, log: Path | None = None, host_file: Path | None = None
) -> dict[str, Any]:
    raw, plan = load_plan(job_file)
    backend = backends.get(plan["backend"])
    host = load_host(host_file, plan["backend"]) if host_file else None
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    # work directories of killed runs of this job (nobody holds them)
    resume.sweep(out_dir.parent, f".{out_dir.name}.work-*")
    work = out_dir.parent / f".{out_dir.name}.work-{os.getpid()}"
    shutil.rmtree(work, ignore_errors=True)
    failed = out_dir.parent / f".{out_dir.name}.failed"
    lock = resume.work_dir(work)
    kept = False

    def keep() -> Path:
        nonlocal kept
        shutil.rmtree(failed, ignore_errors=True)
        work.rename(failed)
        kept = True
        return failed

    # The work directory goes on every path: kept as .failed when the run
    # failed (to look at), removed otherwise, SIGTERM and SIGHUP included;
    # after a SIGKILL the next run of the job (or of the workflow) sweeps it.
    try:
        with resume.signals_raise():
            try:
                facts = backend.run(job_file, work, log, host=host)
            except backends.BackendError as exc:
                if any(work.iterdir()):
                    raise backends.BackendError(f"{exc} (its work directory is kept in {keep()})") from None
                raise
            run = _finish(job_file, raw, plan, facts, work, keep)
            _place(work, out_dir)
    finally:
        os.close(lock)
        if not kept:
            shutil.rmtree(work, ignore_errors=True)
    for older in (failed, out_dir.parent / f".{out_dir.name}.damaged"):
        shutil.rmtree(older, ignore_errors=True)
    return run


def reusable(job_file: Path, out_dir: Path) -> bool:
    """Whether out_dir already holds this plan's run, intact: its run.json
    names the plan's digest and its tables match their records (a batch of
    adaptive repetition run again after its decision's input changed)."""
    if not (out_dir / "run.json").exists():
        return False
    try:
        digest = hashlib.sha256(job_file.read_bytes()).hexdigest()
        recorded = traces.load_run_json(out_dir / "run.json").get("job_sha256")
    except (OSError, ValueError):
        return False
    return recorded == digest and resume.run_problem(out_dir) is None


def continues(decision: Path, point: str) -> bool:
    """Whether an adaptive-repetition decision (qlab-adaptive/1, written by
    analysis/scripts/bench-adapt.R) lets a point run another batch."""
    try:
        doc = json.loads(decision.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise JobError(f"{decision}: cannot read the adaptive-repetition decision: {exc}") from None
    if (
        not isinstance(doc, dict)
        or doc.get("schema") != "qlab-adaptive/1"
        or not isinstance(doc.get("continue"), list)
    ):
        raise JobError(f"{decision}: not an adaptive-repetition decision (qlab-adaptive/1 with `continue`)")
    return point in doc["continue"]


def run_point(
    runs: list[tuple[Path, Path, Path | None]],
    host_file: Path | None = None,
    done: Path | None = None,
    reuse: bool = False,
    only_if: Path | None = None,
) -> list[dict[str, Any]]:
    """Run several plans one after another in this process (a sweep point's
    seeds: one Snakemake job and one interpreter for all of them, instead
    of one each; docs/benchmarks.md, "Orchestration"). Each is a
    (plan, trace directory, log) and runs exactly as `run_job` runs it,
    its results placed as soon as it finishes, its log replaced. The first that fails stops
    the rest: the runs before it stay in place and the error names its
    plan. When every run finished, `done` (the point's resume.POINT_FILE, the
    workflow's mark that the point is complete) records each run's plan
    digest, written last and atomically.

    With `reuse`, a run whose trace directory already holds it intact
    (`reusable`) is not run again. With `only_if` (a batch of adaptive
    repetition: the decision after the previous batch), nothing runs unless
    the decision lets the point (the trace directories' parent) continue;
    `done` then records no runs and the batch's `stopped`."""
    if only_if is not None and runs and not continues(only_if, runs[0][1].parent.name):
        if done is not None:
            doc = {"schema": "qlab-point/1", "runs": {}, "stopped": str(only_if.name)}
            traces.atomic_write_bytes(done, (json.dumps(doc, indent=1, sort_keys=True) + "\n").encode())
        return []
    lock = None
    if done is not None:
        done.unlink(missing_ok=True)
        # held for the whole point, between its runs too: a reproduction
        # started after this one's Snakemake was killed waits for it
        # (resume.wait_for_runs) instead of running the point beside it
        resume.sweep(done.parent, ".point.work-*")
        try:
            lock = resume.work_dir(done.parent / f".point.work-{os.getpid()}")
        except OSError as exc:
            raise JobError(f"{done.parent}: cannot hold the point's work directory: {exc.strerror}") from None
    out = []
    try:
        for job_file, out_dir, log in runs:
            if log is not None:  # this run's log, not an earlier run's with it
                try:
                    log.parent.mkdir(parents=True, exist_ok=True)
                    log.unlink(missing_ok=True)
                except OSError as exc:
                    raise JobError(f"{log}: cannot write the run's log: {exc.strerror}") from None
            if reuse and reusable(job_file, out_dir):
                out.append(traces.load_run_json(out_dir / "run.json"))
                continue
            out.append(run_job(job_file, out_dir, log, host_file))
    finally:
        if lock is not None:
            os.close(lock)
            shutil.rmtree(done.parent / f".point.work-{os.getpid()}", ignore_errors=True)
    if done is not None:
        doc = {
            "schema": "qlab-point/1",
            "runs": {
                str(out_dir.name): run["job_sha256"] for (_, out_dir, _), run in zip(runs, out, strict=True)
            },
        }
        traces.atomic_write_bytes(done, (json.dumps(doc, indent=1, sort_keys=True) + "\n").encode())
    return out


def _finish(
    job_file: Path, raw: bytes, plan: dict[str, Any], facts: dict[str, Any], work: Path, keep: Any
) -> dict[str, Any]:
    """Check the raw facts, finalise the tables and write run.json in work."""

    def fail(problems: list[str]) -> JobError:
        return JobError(
            f"{job_file}: the {plan['backend']} run's traces failed validation "
            f"(kept in {keep()}):\n  " + "\n  ".join(problems)
        )

    problems, tables = finalise.check_raw(work, plan, facts)
    if problems:
        raise fail(problems)
    all_completed = finalise.finalise(work, plan, facts, tables)
    # The flows' raw facts stay (small; the tables can be derived again from
    # them and the plan); queue, packet and tcp facts are in the tables.
    traces.atomic_write_bytes(
        work / "flow_facts.csv.gz", traces.gzip_bytes((work / "flow_facts.csv").read_bytes())
    )
    for name in ("flow_facts.csv", "queue_facts.csv", "packet_facts.csv", "tcp_facts.csv", "runner.json"):
        (work / name).unlink(missing_ok=True)
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
        "runner_max_rss_mb": facts.get("runner_max_rss_mb"),
        "ran_on": ran_on(),
        "valid": facts.get("valid", True),
        "invalid_reasons": facts.get("invalid_reasons", []),
        # each table's size, SHA-256 and rows: qlab collect and the workflow
        # check the tables against them before trusting a run
        "tables": {
            name: traces.file_record(work / name) for name in traces.TABLE_FILES if (work / name).exists()
        },
    }
    for key in ("fidelity", "launch_wall_s", "phases_s"):  # emulation backends
        if facts.get(key) is not None:
            run[key] = facts[key]
    if os.environ.get("QLAB_IMAGE"):  # ran in one of qlab's images (scripts/in-image)
        from qlab import containers

        run["image"] = containers.current_image()
    (work / "run.json").write_text(json.dumps(run, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    # the packet trace's rows were checked as they were written (finalise._check_packet_facts)
    problems = traces.check_dir(work, job=job_file, rows_checked=("packets",))
    if problems:
        raise fail(problems)
    return run


def ran_on(env: dict[str, str] | None = None) -> dict[str, Any]:
    """Where this job ran, for run.json and the provenance page: the host,
    the executor that started it (a SLURM job's environment names its job
    id; a Kubernetes pod has the service host set and is named by its host
    name), and the image when one of qlab's images ran it (scripts/in-image)."""
    env = os.environ if env is None else env
    host = socket.gethostname()
    out: dict[str, Any] = {"host": env.get("SLURMD_NODENAME") or host, "executor": "local"}
    if env.get("SLURM_JOB_ID"):
        out["executor"] = "slurm"
        out["slurm_job_id"] = env["SLURM_JOB_ID"]
        if env.get("SLURM_CLUSTER_NAME"):
            out["slurm_cluster"] = env["SLURM_CLUSTER_NAME"]
    elif env.get("KUBERNETES_SERVICE_HOST"):
        out["executor"] = "kubernetes"
        out["pod"] = env.get("HOSTNAME") or host
    if env.get("QLAB_IMAGE_ID"):
        out["image_id"] = env["QLAB_IMAGE_ID"]
    return out


def _place(work: Path, out_dir: Path) -> None:
    """Move the run's files into out_dir; run.json last: its presence marks
    a complete result. Tables of an earlier run the new one has not go."""
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "run.json").unlink(missing_ok=True)
    names = sorted(p.name for p in work.iterdir() if p.name != "run.json")
    for name in names:
        (work / name).replace(out_dir / name)
    for name in traces.TABLE_FILES:
        if name not in names:
            (out_dir / name).unlink(missing_ok=True)
    (work / "run.json").replace(out_dir / "run.json")


def _discipline(plan: dict[str, Any]) -> dict[str, Any]:
    """The discipline of the run's (first) traced queue, for run.json."""
    for q in plan["trace"]["queues"]:
        link_id, _, node = q.partition(":")
        for link in plan["links"]:
            if link["id"] == link_id:
                queue = link["queues"][node]
                return {"kind": queue["kind"], "params": queue.get("params", {})}
    return {"kind": "none", "params": {}}

"""A reproduction killed with SIGKILL resumes by itself (issue 12): the next
invocation clears Snakemake's stale lock, sweeps the killed runs' work
directories and finishes with figure data byte-identical to an uninterrupted
run's; a second reproduction at the same time exits 2 naming the first;
run-job leaves no work directory behind on any path.
"""

from __future__ import annotations

import fcntl
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from qlab import paths, resume

from .conftest import REPO, needs

pytestmark = [needs(paths.NS3_RUNNER), needs(paths.QCORE_REPLAY)]
SNAKEMAKE = Path(sys.executable).parent / "snakemake"
LOCK = REPO / ".snakemake" / resume.LOCK_NAME
# the figure data of ncq-conf (R's tables) when R is here, else the collected tables
R = shutil.which("Rscript") is not None
TARGET = "analysis/ncq-conf/claims.csv" if R else "ncq-conf/flows/ns3/flows.csv.gz"


def command(tmp: Path) -> list[str]:
    """`make reproduce`'s Snakemake command, on a small copy of ncq-conf/flows
    (4 runs of 10 or 50 flows, and the analysis)."""
    return [
        str(SNAKEMAKE),
        "--workflow-profile",
        "workflows/profiles/local",
        "--cores",
        "1",
        "--quiet",
        "rules",
        "reason",
        "host",
        "--config",
        "profile=test",
        f"results={tmp / 'results'}",
        f"site={tmp / 'site'}",
        f"scenarios={json.dumps([str(tmp / 'scen' / 'ncq-conf' / 'flows.yaml')])}",
        "--",
        str(tmp / "results" / TARGET),
    ]


def setup(tmp: Path) -> Path:
    """ncq-conf/flows with one seed (test profile: 2 series x 2 points)."""
    d = tmp / "scen" / "ncq-conf"
    d.mkdir(parents=True)
    shutil.copy(REPO / "scenarios" / "ncq-conf" / "defaults.yaml", d / "defaults.yaml")
    text = (REPO / "scenarios" / "ncq-conf" / "flows.yaml").read_text()
    assert "  test:\n    override:\n" in text
    (d / "flows.yaml").write_text(
        text.replace("  test:\n    override:\n", "  test:\n    seeds: 1\n    override:\n")
    )
    return tmp


def run(tmp: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        command(tmp), cwd=REPO, capture_output=True, text=True, timeout=600, env=dict(os.environ, TZ="UTC")
    )


def start(tmp: Path, log: Path) -> subprocess.Popen:
    with open(log, "wb") as out:
        return subprocess.Popen(
            command(tmp),
            cwd=REPO,
            stdout=out,
            stderr=subprocess.STDOUT,
            env=dict(os.environ, TZ="UTC"),
            start_new_session=True,
        )


def figure_data(tmp: Path) -> dict[str, bytes]:
    results = tmp / "results"
    files = [results / "ncq-conf/flows/ns3/flows.csv.gz"]
    if R:
        files += sorted((results / "analysis" / "ncq-conf").glob("*.csv"))
    return {str(f.relative_to(results)): f.read_bytes() for f in files}


def held(path: Path) -> bool:
    """Whether some process holds an flock on path."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return False
    except OSError:
        return True
    finally:
        os.close(fd)


def leftovers(tmp: Path) -> list[str]:
    results = tmp / "results"
    return sorted(str(p.relative_to(results)) for p in results.rglob(".seed-*"))


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> tuple[dict[str, bytes], float]:
    tmp = setup(tmp_path_factory.mktemp("reference"))
    t0 = time.monotonic()
    out = run(tmp)
    assert out.returncode == 0, out.stderr[-3000:]
    return figure_data(tmp), time.monotonic() - t0


def test_killed_reproduction_resumes_unaided_with_identical_figure_data(reference, tmp_path):
    """kill -9 twice at random points (the whole process group, then only
    Snakemake, whose jobs then outlive it), then one plain invocation."""
    want, seconds = reference
    seed = int(os.environ.get("QLAB_KILL_SEED", time.time_ns() % 100_000))
    rng = random.Random(seed)
    tmp = setup(tmp_path)
    killed = []
    for i, whole_group in enumerate((True, False)):
        p = start(tmp, tmp / f"killed-{i}.log")
        at = rng.uniform(1.0, max(1.5, 0.7 * seconds))
        time.sleep(at)
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL) if whole_group else p.kill()
            killed.append(round(at, 1))
        p.wait()
    print(f"seed {seed}: killed at {killed} s (an uninterrupted run takes {seconds:.1f} s)")
    assert killed, f"seed {seed}: finished before the kill"
    out = run(tmp)
    assert out.returncode == 0, f"seed {seed}:\n{out.stderr[-4000:]}"
    assert "LockException" not in out.stderr
    assert figure_data(tmp) == want, f"seed {seed}"
    assert leftovers(tmp) == [], f"seed {seed}"
    assert not any((REPO / ".snakemake" / "locks").glob("*")), "Snakemake's lock outlived the run"
    again = run(tmp)
    assert again.returncode == 0 and "Nothing to be done" in again.stderr, again.stderr[-2000:]


def test_stale_snakemake_lock_is_cleared(tmp_path):
    """What a SIGKILL leaves: Snakemake's lock files, naming our outputs
    (here one point's plans, to be quick)."""
    tmp = setup(tmp_path)
    plan = tmp / "results" / "jobs" / "ncq-conf/flows/ns3/ncq_flows-10/plans.json"
    locks = REPO / ".snakemake" / "locks"
    locks.mkdir(parents=True, exist_ok=True)
    (locks / "0.output.lock").write_text(f"{plan}\n")
    (locks / "0.input.lock").write_text("")
    out = subprocess.run(
        [*command(tmp)[:-1], str(plan)], cwd=REPO, capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr[-3000:]
    assert "removed Snakemake's stale lock" in out.stderr
    assert plan.exists() and not any(locks.glob("*"))


def test_a_second_reproduction_exits_2_naming_the_first(tmp_path):
    tmp = setup(tmp_path)
    first = start(tmp, tmp / "first.log")
    try:
        deadline = time.monotonic() + 60
        while not held(LOCK) and first.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        assert held(LOCK), (tmp / "first.log").read_text()[-2000:]
        second = run(tmp)
        assert second.returncode == 2, second.stderr[-2000:]
        assert f"qlab: another reproduction is running (pid {first.pid})" in second.stderr
        assert "LockException" not in second.stderr
        # a dry run only looks: it is not refused
        dry = subprocess.run(
            [*command(tmp)[:-2], "-n", *command(tmp)[-2:]],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert dry.returncode == 0, dry.stderr[-2000:]
    finally:
        os.killpg(first.pid, signal.SIGKILL)
        first.wait()


def _job(tmp: Path) -> Path:
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "qlab",
            "expand",
            "--profile",
            "test",
            "--results",
            str(tmp / "results"),
            "scenarios/ncq-conf/flows.yaml",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stderr
    return tmp / "results" / "jobs" / "ncq-conf/flows/ns3/ncq_flows-50/seed-1.json"


def test_run_job_leaves_no_work_directory_when_terminated(tmp_path):
    """SIGTERM mid-run: the work directory goes (and the runner with it)."""
    job = _job(tmp_path)
    out = tmp_path / "results" / "ncq-conf/flows/ns3/ncq_flows-50/seed-1"
    slow = tmp_path / "slow-runner"
    slow.write_text(f'#!/bin/sh\nsleep 30 & wait\nexec {paths.NS3_RUNNER} "$@"\n')
    slow.chmod(0o755)
    p = subprocess.Popen(
        [sys.executable, "-m", "qlab", "run-job", str(job), "--out", str(out)],
        cwd=REPO,
        env=dict(os.environ, QLAB_NS3_RUNNER=str(slow)),
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 30
    while not list(out.parent.glob(".seed-1.work-*")) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert list(out.parent.glob(".seed-1.work-*"))
    p.send_signal(signal.SIGTERM)
    assert p.wait(timeout=30) == 128 + signal.SIGTERM
    assert sorted(q.name for q in out.parent.iterdir()) == []


def test_stale_work_directories_are_swept_and_failures_kept_once(tmp_path):
    job = _job(tmp_path)
    out = tmp_path / "results" / "ncq-conf/flows/ns3/ncq_flows-50/seed-1"
    out.parent.mkdir(parents=True)
    dead = subprocess.Popen(["true"])
    dead.wait()
    (out.parent / f".seed-1.work-{dead.pid}").mkdir()  # a SIGKILLed run's
    (out.parent / f".seed-1.work-{dead.pid}" / "flow_facts.csv").write_text("x")
    live = out.parent / f".seed-2.work-{dead.pid}"  # another job's run, alive while it holds it
    fd = resume.work_dir(live)
    try:
        # a runner that fails: its work directory is kept as .seed-1.failed
        bad = tmp_path / "bad-runner"
        bad.write_text('#!/bin/sh\necho partial > "$2/flow_facts.csv"; echo boom >&2; exit 3\n')
        bad.chmod(0o755)
        env = dict(os.environ, QLAB_NS3_RUNNER=str(bad))
        r = subprocess.run(
            [sys.executable, "-m", "qlab", "run-job", str(job), "--out", str(out)],
            cwd=REPO,
            env=env,
            capture_output=True,
            text=True,
        )
        assert r.returncode == 2 and "boom" in r.stderr and ".seed-1.failed" in r.stderr, r.stderr
        assert sorted(q.name for q in out.parent.iterdir()) == [".seed-1.failed", live.name]
        r = subprocess.run(
            [sys.executable, "-m", "qlab", "run-job", str(job), "--out", str(out)],
            cwd=REPO,
            capture_output=True,
            text=True,
        )
        assert r.returncode == 0, r.stderr
        assert sorted(q.name for q in out.parent.iterdir()) == [live.name, "seed-1"]
        # the workflow's sweep at start leaves the held one alone too
        assert resume.sweep(tmp_path / "results", ".seed-*.work-*", recursive=True) == []
    finally:
        os.close(fd)
    assert resume.sweep(tmp_path / "results", ".seed-*.work-*", recursive=True) == [live]


def test_dry_runs_and_lint_only_look():
    assert resume.non_executing(["snakemake", "-n"])
    assert resume.non_executing(["snakemake", "--cores", "1", "-np"])
    assert resume.non_executing(["snakemake", "--dry-run", "all"])
    assert resume.non_executing(["snakemake", "--lint"])
    assert not resume.non_executing(["snakemake", "--cores", "2", "--quiet", "rules"])
    assert not resume.non_executing(["snakemake", "--config", "profile=quick", "--", "-n"])


def test_a_points_seeds_run_in_one_run_job_and_the_first_failure_stops_it(tmp_path):
    """The workflow's simulate job: a point's plans in one `qlab run-job`,
    point.json (each run's plan digest) written only when all finished, the
    point's work directory held throughout and gone after; a run that
    fails stops the rest, keeps the runs before it and leaves no point.json."""
    job = _job(tmp_path)
    plans = [job, job.with_name("seed-2.json")]
    point = tmp_path / "results" / "ncq-conf/flows/ns3/ncq_flows-50"
    outs = [point / "seed-1", point / "seed-2"]
    logs = [tmp_path / "logs" / "seed-1.log", tmp_path / "logs" / "seed-2.log"]
    done = point / "point.json"

    def run_job(*extra: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
        args = [str(p) for p in plans]
        for o in outs:
            args += ["--out", str(o)]
        for g in logs:
            args += ["--log", str(g)]
        return subprocess.run(
            [sys.executable, "-m", "qlab", "run-job", *args, "--done", str(done), *extra],
            cwd=REPO,
            capture_output=True,
            text=True,
            env=env,
            timeout=300,
        )

    r = run_job()
    assert r.returncode == 0, r.stderr
    doc = json.loads(done.read_text())
    for plan, out in zip(plans, outs, strict=True):
        run = json.loads((out / "run.json").read_text())
        assert run["job_sha256"] == doc["runs"][out.name]
        assert run["job_sha256"] == __import__("hashlib").sha256(plan.read_bytes()).hexdigest()
    assert all(g.exists() for g in logs)
    assert sorted(q.name for q in point.iterdir()) == ["point.json", "seed-1", "seed-2"]
    # seed 2's runner fails: seed 1 is placed again, seed 2 keeps the earlier run, no point.json
    bad = tmp_path / "bad-runner"
    bad.write_text(
        f'#!/bin/sh\ncase "$1" in *seed-2.json) echo boom >&2; exit 3;; esac\nexec {paths.NS3_RUNNER} "$@"\n'
    )
    bad.chmod(0o755)
    before = [(o / "run.json").stat().st_mtime_ns for o in outs]
    r = run_job(env=dict(os.environ, QLAB_NS3_RUNNER=str(bad)))
    assert r.returncode == 2 and "boom" in r.stderr and "seed-2.json" in r.stderr, r.stderr
    after = [(o / "run.json").stat().st_mtime_ns for o in outs]
    assert after[0] != before[0] and after[1] == before[1]
    assert sorted(q.name for q in point.iterdir()) == ["seed-1", "seed-2"]
    # as many --out (and --log) as plans, or nothing runs
    r = subprocess.run(
        [sys.executable, "-m", "qlab", "run-job", *map(str, plans), "--out", str(outs[0])],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert r.returncode == 2 and "2 plans need as many --out (got 1)" in r.stderr, r.stderr

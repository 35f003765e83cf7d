"""The workflow on SLURM through snakemake-executor-plugin-slurm and
workflows/profiles/slurm, on a single-node cluster started here by
scripts/slurm-node.sh (and stopped, by the PIDs it recorded, afterwards).

A small sweep (ncq-conf/flows at the test profile: 8 ns-3 runs) runs once
locally and once through SLURM, its simulations grouped into SLURM jobs:
every trace table must be byte-identical, and run.json must say where each
run ran (executor, host, SLURM job). Waits are bounded: a SLURM job pending
longer than PENDING_LIMIT_S fails the test with the reason SLURM gives, as
a group asking for more memory than the node has does (tested).

Needs root and Debian's slurm-wlm and munge (`make setup` installs them for
`make test`); skipped, saying which, where SLURM cannot run. The tests of
where a run ran (run.json, provenance) need no cluster.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from qlab import paths, provenance, runjob, traces

from .conftest import REPO, needs

SNAKEMAKE = Path(sys.executable).parent / "snakemake"
SCRIPT = REPO / "scripts" / "slurm-node.sh"
PENDING_LIMIT_S = 60
TOTAL_LIMIT_S = 240
SCENARIO = "ncq-conf/flows"
TARGET = f"{SCENARIO}/ns3/flows.csv.gz"


def slurm_missing() -> str | None:
    """Why SLURM cannot run here (None when it can)."""
    proc = subprocess.run([str(SCRIPT), "check"], capture_output=True, text=True, check=False)
    return (
        None
        if proc.returncode == 0
        else (proc.stderr.strip() or f"slurm-node.sh check: exit {proc.returncode}")
    )


def squeue(*args: str) -> list[list[str]]:
    out = subprocess.run(
        ["squeue", "-h", "-p", "qlab", *args], capture_output=True, text=True, check=False, timeout=20
    )
    return [line.split(None, 2) for line in out.stdout.splitlines() if line.strip()]


def run_bounded(
    cmd: list[str], log: Path, pending_limit_s: float = PENDING_LIMIT_S
) -> tuple[int, str | None]:
    """Run a Snakemake on the cluster; (exit status, None) when it ends, or
    (-1, why) when one of the partition's jobs stayed pending longer than
    pending_limit_s (why: the job, its SLURM reason) or the whole run took
    longer than TOTAL_LIMIT_S. Snakemake is stopped then, and the jobs
    cancelled (the executor ignores SIGTERM while it waits)."""
    env = dict(os.environ, TZ="UTC")
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            cmd, cwd=REPO, stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True
        )
    start = time.monotonic()
    pending_since: dict[str, float] = {}
    why = None
    while proc.poll() is None:
        now = time.monotonic()
        for job, _state, reason in squeue("-t", "PENDING", "-o", "%i %T %r"):
            pending_since.setdefault(job, now)
            if now - pending_since[job] > pending_limit_s:
                why = f"SLURM job {job} pending for {pending_limit_s:.0f} s, reason: {reason}"
        if why is None and now - start > TOTAL_LIMIT_S:
            jobs = "; ".join(" ".join(j) for j in squeue("-o", "%i %T %r")) or "none"
            why = f"not done after {TOTAL_LIMIT_S} s (the partition's jobs: {jobs})"
        if why:
            subprocess.run(["scancel", "--partition", "qlab"], check=False, timeout=20)
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
            return -1, why
        time.sleep(1)
    return proc.returncode, None


def workflow_cmd(results: Path, scenario: Path, *profile: str) -> list[str]:
    return [
        str(SNAKEMAKE),
        *profile,
        "--quiet",
        "rules",
        "host",
        "--config",
        "profile=test",
        f"results={results}",
        f"scenarios={json.dumps([str(scenario)])}",
        "--",
        str(results / TARGET),
    ]


def slurm_profile(tmp: Path, *extra: str) -> tuple[str, ...]:
    """workflows/profiles/slurm as the single-node cluster needs it: no
    account and no accounting (status from squeue), a 2-CPU node, quick
    status checks; four simulations per SLURM job."""
    return (
        "--workflow-profile",
        "workflows/profiles/slurm",
        "--slurm-no-account",
        "--slurm-status-command",
        "squeue",
        "--slurm-init-seconds-before-status-checks",
        "1",
        "--seconds-between-status-checks",
        "2",
        "--slurm-logdir",
        str(tmp / "slurm-logs"),
        "--cores",
        str(os.cpu_count() or 1),
        "--resources",
        "mem_mb=2000",
        "--group-components",
        "simulate=4",
        "--latency-wait",
        "5",
        *extra,
    )


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    why = slurm_missing()
    if why:
        pytest.skip(f"SLURM cannot run here: {why}")
    state = tmp_path_factory.mktemp("slurm-state")
    proc = subprocess.run(
        [str(SCRIPT), "start", str(state)], capture_output=True, text=True, check=False, timeout=90
    )
    if proc.returncode != 0:
        pytest.fail(f"slurm-node.sh start failed (exit {proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    pids = [int(line.split()[1]) for line in (state / "pids").read_text().splitlines()]
    try:
        yield state
    finally:
        stop = subprocess.run(
            [str(SCRIPT), "stop", str(state)], capture_output=True, text=True, check=False, timeout=90
        )
        assert stop.returncode == 0, stop.stderr
        # every daemon the script started is gone, and its config with them
        assert [p for p in pids if Path(f"/proc/{p}").exists()] == []
        assert not Path("/etc/slurm/slurm.conf").exists()


@pytest.fixture(scope="module")
def scenario(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("scenarios") / "ncq-conf"
    d.mkdir()
    for name in ("defaults.yaml", "flows.yaml"):
        shutil.copy(REPO / "scenarios" / "ncq-conf" / name, d / name)
    return d / "flows.yaml"


def run_dirs(results: Path) -> dict[str, Path]:
    return {
        str(p.parent.relative_to(results)): p.parent
        for p in sorted((results / SCENARIO).rglob("seed-*/run.json"))
    }


@needs(paths.NS3_RUNNER)
@needs(paths.QCORE_REPLAY)
def test_a_sweep_on_slurm_has_the_local_runs_traces_and_says_where_it_ran(cluster, scenario, tmp_path):
    local, slurm = tmp_path / "local", tmp_path / "slurm"
    proc = subprocess.run(
        workflow_cmd(local, scenario, "--workflow-profile", "workflows/profiles/local", "--cores", "2"),
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    log = tmp_path / "slurm.log"
    status, why = run_bounded(workflow_cmd(slurm, scenario, *slurm_profile(tmp_path)), log)
    assert why is None, f"{why}\n{log.read_text(errors='replace')[-3000:]}"
    assert status == 0, log.read_text(errors="replace")[-5000:]

    local_runs, slurm_runs = run_dirs(local), run_dirs(slurm)
    assert len(local_runs) == 8
    assert sorted(slurm_runs) == sorted(local_runs)
    job_ids = set()
    for rel, d in slurm_runs.items():
        assert traces.check_dir(d) == [], d
        names = sorted(p.name for p in d.iterdir() if p.name != "run.json")
        assert names == sorted(p.name for p in local_runs[rel].iterdir() if p.name != "run.json")
        for name in names:  # every trace table, byte for byte
            assert (d / name).read_bytes() == (local_runs[rel] / name).read_bytes(), f"{rel}/{name}"
        run, local_run = (json.loads((x / "run.json").read_text()) for x in (d, local_runs[rel]))
        assert run["tables"] == local_run["tables"]
        assert run["ran_on"]["executor"] == "slurm" and run["ran_on"]["slurm_cluster"] == "qlab"
        assert local_run["ran_on"]["executor"] == "local" and "slurm_job_id" not in local_run["ran_on"]
        job_ids.add(run["ran_on"]["slurm_job_id"])
    # the collected table too; the simulations ran grouped, fewer SLURM jobs than runs
    assert (slurm / TARGET).read_bytes() == (local / TARGET).read_bytes()
    assert 1 <= len(job_ids) < len(slurm_runs), job_ids
    rows = provenance.where_ran([json.loads((d / "run.json").read_text()) for d in slurm_runs.values()])
    assert [(r["executor"], r["runs"], r["jobs"]) for r in rows] == [("slurm", 8, len(job_ids))]


@needs(paths.NS3_RUNNER)
@needs(paths.QCORE_REPLAY)
def test_a_job_stuck_pending_fails_with_its_slurm_reason(cluster, scenario, tmp_path):
    """The node drained (as a failed node is): the group's SLURM job stays
    pending while Snakemake prints nothing; the bounded wait ends the run,
    naming SLURM's reason, and cancels the job."""
    node = ["scontrol", "update", "nodename=localhost"]
    subprocess.run([*node, "state=drain", "reason=qlab-test"], check=True, timeout=20)
    try:
        results = tmp_path / "results"
        log = tmp_path / "slurm.log"
        status, why = run_bounded(
            workflow_cmd(results, scenario, *slurm_profile(tmp_path)), log, pending_limit_s=10
        )
    finally:
        subprocess.run([*node, "state=resume"], check=True, timeout=20)
    assert status == -1 and why is not None, log.read_text(errors="replace")[-3000:]
    assert "pending for 10 s, reason: " in why, why
    assert why.split("reason: ")[1].strip() not in ("", "None"), why
    assert squeue("-o", "%i") == []  # cancelled
    assert run_dirs(results) == {}


def test_run_json_says_where_a_run_ran():
    assert runjob.ran_on({})["executor"] == "local"
    slurm = runjob.ran_on({"SLURM_JOB_ID": "17", "SLURMD_NODENAME": "node3", "SLURM_CLUSTER_NAME": "c"})
    assert slurm == {"host": "node3", "executor": "slurm", "slurm_job_id": "17", "slurm_cluster": "c"}
    pod = runjob.ran_on(
        {"KUBERNETES_SERVICE_HOST": "10.0.0.1", "HOSTNAME": "snakejob-1-abc", "QLAB_IMAGE_ID": "sha256:f"}
    )
    assert (pod["executor"], pod["pod"], pod["image_id"]) == ("kubernetes", "snakejob-1-abc", "sha256:f")


def test_provenance_counts_runs_and_jobs_per_executor_and_host():
    runs = [
        {"ran_on": {"executor": "slurm", "host": "n1", "slurm_job_id": "5"}},
        {"ran_on": {"executor": "slurm", "host": "n1", "slurm_job_id": "5"}},
        {"ran_on": {"executor": "slurm", "host": "n1", "slurm_job_id": "6"}},
        {"ran_on": {"executor": "slurm", "host": "n2", "slurm_job_id": "7"}},
        {"ran_on": {"executor": "kubernetes", "host": "p", "pod": "p", "image_id": "sha256:a"}},
        {"ran_on": {"executor": "local", "host": "h"}},
        {},  # a run of a qlab before ran_on
    ]
    rows = [(r["executor"], r["host"], r["runs"], r["jobs"], r["images"]) for r in provenance.where_ran(runs)]
    assert rows == [
        (None, None, 1, 0, []),
        ("kubernetes", "p", 1, 1, ["sha256:a"]),
        ("local", "h", 1, 0, []),
        ("slurm", "n1", 3, 2, []),
        ("slurm", "n2", 1, 1, []),
    ]


def test_a_cluster_gets_no_real_time_backend():
    from qlab import backends

    proc = subprocess.run(
        [sys.executable, "-m", "qlab", "backends", "--available", "--no-realtime"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    )
    listed = proc.stdout.strip().strip("[]").split(",")
    assert listed and all(name in backends.names() and not backends.get(name).realtime for name in listed)
    ok, _ = backends.available()
    assert set(listed) == {n for n in ok if not backends.get(n).realtime}
    for name in set(ok) - set(listed):
        assert f"{name} left out: runs in real time" in proc.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["EXECUTOR=pbs"], "EXECUTOR=pbs is not available (local, slurm or kubernetes)"),
        (["EXECUTOR=slurm", "RUNTIME=docker"], "EXECUTOR=slurm takes its software from the cluster"),
    ],
)
def test_make_reproduce_refuses_what_it_cannot_run_on_a_cluster(args, message, tmp_path):
    proc = subprocess.run(
        ["make", "-s", "reproduce", *args, f"RESULTS={tmp_path}"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert proc.returncode == 2 and message in proc.stderr, proc.stderr[-2000:]
    assert not (tmp_path / "logs" / "reproduce.log").exists()

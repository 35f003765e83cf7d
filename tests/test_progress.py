"""What `make reproduce` prints: progress and a summary; Snakemake's log in a file."""

from __future__ import annotations

import csv
import gzip
import subprocess
import sys
from pathlib import Path

from .conftest import REPO


def fake_snakemake(tmp_path: Path, jobs: int, fail: bool = False) -> Path:
    """A script printing what Snakemake 9 prints for a run of `jobs` simulations."""
    lines = [
        "Building DAG of jobs...",
        "Job stats:",
        "job          count",
        "---------  -------",
        f"plan          {jobs}",
        f"simulate      {jobs}",
        "collect           2",
        "analyze           1",
        "report            1",
        f"total         {2 * jobs + 4}",
        "",
        "Select jobs to execute...",
    ]
    total = 2 * jobs + 4
    step = 0
    for rule, n in (("plan", jobs), ("simulate", jobs), ("collect", 2), ("analyze", 1), ("report", 1)):
        for i in range(n):
            step += 1
            lines += [
                "Execute 1 jobs...",
                f"[Mon Nov 23 20:24:{i % 60:02d} 2026]",
                f"localrule {rule}:",
                f"    output: x/{i}",
                f"Finished jobid: {step} (Rule: {rule})",
                f"{step} of {total} steps ({100 * step // total}%) done",
            ]
            if fail and rule == "simulate" and i == 3:
                lines += ["Error in rule simulate:", "    jobid: 9", "RuleException: exit status 1"]
                script = tmp_path / "fake.sh"
                script.write_text("cat <<'EOF'\n" + "\n".join(lines) + "\nEOF\nexit 1\n")
                return script
    script = tmp_path / "fake.sh"
    script.write_text("cat <<'EOF'\n" + "\n".join(lines) + "\nEOF\n")
    return script


def results_tree(tmp_path: Path) -> Path:
    results = tmp_path / "results"
    a = results / "analysis" / "ncq-conf"
    a.mkdir(parents=True)
    (a / "claims.csv").write_text("claim_id,verdict\na,reproduced\nb,reproduced\nc,not reproduced\n")
    (a / "fig2.csv").write_text("x\n1\n")
    runs = results / "ncq-conf" / "flows" / "ns3"
    runs.mkdir(parents=True)
    with gzip.open(runs / "runs.csv.gz", "wt", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["scenario", "seed", "valid"])
        w.writerows([["ncq-conf/flows", 1, "TRUE"], ["ncq-conf/flows", 2, "FALSE"]])
    return results


def watch(
    tmp_path: Path, script: Path, results: Path, *extra: str, args: tuple[str, ...] = ()
) -> subprocess.CompletedProcess:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "qlab.progress",
            "--log",
            str(tmp_path / "logs" / "r.log"),
            "--results",
            str(results),
            "--site",
            str(tmp_path / "site"),
            *extra,
            "--",
            "bash",
            str(script),
            *args,
        ],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=60,
    )


def test_a_reproduction_prints_progress_and_a_summary_and_logs_everything(tmp_path):
    results = results_tree(tmp_path)
    proc = watch(tmp_path, fake_snakemake(tmp_path, 300), results)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout.splitlines()
    assert len(out) < 60, proc.stdout
    assert any(line.startswith("[100%] 604/604 steps · points 300/300 · collect 2/2") for line in out), out
    assert "reproduced in" in proc.stdout and "2 runs (1 invalid, excluded from the analysis)" in proc.stdout
    assert "ncq-conf: 0 items" in proc.stdout or "ncq-conf:" in proc.stdout
    assert "3 claims: 2 reproduced, 1 not reproduced" in proc.stdout
    assert out[-1] == f"report: {(tmp_path / 'site' / 'index.html').resolve()}"
    log = (tmp_path / "logs" / "r.log").read_text()
    assert log.count("Finished jobid") == 604  # the whole log is kept


def test_a_failed_reproduction_says_why_and_where_the_log_is(tmp_path):
    proc = watch(tmp_path, fake_snakemake(tmp_path, 20, fail=True), results_tree(tmp_path))
    assert proc.returncode == 1
    assert "the reproduction failed:" in proc.stderr and "Error in rule simulate:" in proc.stderr
    assert f"whole log: {tmp_path / 'logs' / 'r.log'}" in proc.stderr
    assert "reproduced in" not in proc.stdout


def test_with_nothing_changed_a_second_reproduction_starts_nothing(tmp_path):
    results = results_tree(tmp_path)
    stamp = results / ".qlab-reproduced"
    script = fake_snakemake(tmp_path, 3)
    marker = tmp_path / "started"
    script.write_text(f"echo x >> {marker}\n" + script.read_text())

    def reproduce(*args: str) -> subprocess.CompletedProcess:
        proc = watch(tmp_path, script, results, "--stamp", str(stamp), args=args)
        assert proc.returncode == 0, proc.stderr
        return proc

    reproduce()
    assert stamp.is_file() and marker.read_text().count("x") == 1
    second = reproduce()
    assert marker.read_text().count("x") == 1, "the command ran although nothing changed"
    assert "nothing to do" in second.stdout and "up to date: 2 runs (1 invalid" in second.stdout
    assert second.stdout.splitlines()[-1] == f"report: {(tmp_path / 'site' / 'index.html').resolve()}"
    # any file of the results touched, added or removed: the command runs again
    for change in (
        lambda: (results / "analysis" / "ncq-conf" / "fig2.csv").write_text("x\n2\n"),
        lambda: (results / "ncq-conf" / "flows" / "ns3" / "extra.csv").write_text(""),
        lambda: (results / "ncq-conf" / "flows" / "ns3" / "extra.csv").unlink(),
    ):
        runs = marker.read_text().count("x")
        change()
        reproduce()
        assert marker.read_text().count("x") == runs + 1
        reproduce()
        assert marker.read_text().count("x") == runs + 1
    # the number of cores alone changes nothing; another command (a profile, a backend) runs
    reproduce("--cores", "4")
    assert marker.read_text().count("x") == 4
    reproduce("--cores", "4", "--config", "profile=paper")
    assert marker.read_text().count("x") == 5


def test_a_failed_reproduction_leaves_no_stamp(tmp_path):
    results = results_tree(tmp_path)
    stamp = results / ".qlab-reproduced"
    stamp.write_text("stale\n")
    proc = watch(tmp_path, fake_snakemake(tmp_path, 20, fail=True), results, "--stamp", str(stamp))
    assert proc.returncode == 1 and not stamp.exists()


def test_the_state_covers_the_checkout_the_tools_and_the_command(tmp_path):
    from qlab import uptodate

    root, results, site = tmp_path / "root", tmp_path / "results", tmp_path / "site"
    for d in (root / "scenarios", root / "build" / "ns3", root / ".git", results / "logs", site):
        d.mkdir(parents=True)
    (root / "scenarios" / "a.yaml").write_text("a: 1\n")
    (root / "build" / "ns3" / "runner").write_text("v1")
    stamp = results / ".stamp"

    def digest(cmd=("snakemake", "--config", "profile=quick")) -> str:
        return uptodate.state_digest(results, site, list(cmd), stamp, root=root)

    first = digest()
    (results / "logs" / "reproduce.log").write_text("log")  # this command's own log: ignored
    (root / ".git" / "index").write_text("x")  # git's state: ignored
    stamp.write_text(first)
    assert digest() == first
    (root / "scenarios" / "a.yaml").write_text("a: 2\n")
    assert digest() != first
    second = digest()
    (root / "build" / "ns3" / "runner").write_text("v2")  # a rebuilt runner
    assert digest() != second
    assert digest(("snakemake", "--config", "profile=paper")) != digest()

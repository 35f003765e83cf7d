"""Hosts prepared once per reproduction (`qlab prepare-host`, `qlab run-job
--host`): the facts file is checked before anything runs, and a backend that
needs no preparation says so. (The mininet preparation itself runs in
tests/test_mininet.py's end-to-end test.)"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from .conftest import REPO
from .small_plans import small_dumbbell, write_plan

S = 1_000_000_000


def qlab(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "qlab", *args], cwd=REPO, capture_output=True, text=True, timeout=120
    )


def test_a_backend_without_preparation_records_that_nothing_was_needed(tmp_path):
    out = tmp_path / "hosts" / "ns3.json"
    proc = qlab("prepare-host", "ns3", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(out.read_text())
    assert doc["backend"] == "ns3" and doc["host"] == {}


def test_an_unknown_backend_is_named(tmp_path):
    proc = qlab("prepare-host", "ns9", "--out", str(tmp_path / "h.json"))
    assert proc.returncode == 2 and "ns9" in proc.stderr and "Traceback" not in proc.stderr
    assert not (tmp_path / "h.json").exists()


def bad_host_files(tmp_path: Path) -> dict[str, Path]:
    files = {
        "missing": tmp_path / "absent.json",
        "not json": tmp_path / "garbled.json",
        "another backend": tmp_path / "ns2.json",
        "no host": tmp_path / "nohost.json",
    }
    files["not json"].write_text('{"backend": "ns3", ')
    files["another backend"].write_text(json.dumps({"backend": "ns2", "host": {}}))
    files["no host"].write_text(json.dumps({"backend": "ns3"}))
    return files


def test_run_job_refuses_bad_host_facts_naming_the_file_before_running(tmp_path):
    plan = write_plan(tmp_path, small_dumbbell("ns3", duration_ns=1 * S, bulk_bytes=10_000))
    for why, host in bad_host_files(tmp_path).items():
        out = tmp_path / "out"
        proc = qlab("run-job", str(plan), "--out", str(out), "--host", str(host))
        assert proc.returncode == 2, (why, proc.stderr)
        assert str(host) in proc.stderr and "Traceback" not in proc.stderr, (why, proc.stderr)
        assert not out.exists(), why

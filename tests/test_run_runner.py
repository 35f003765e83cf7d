"""qlab.backends.base.run_runner: how the simulator backends (ns3, ns2) run
their runner program and read its facts."""

from __future__ import annotations

import sys

import pytest

from qlab.backends.base import BackendError, run_runner


def runner(code: str) -> list[str]:
    return [sys.executable, "-c", code]


def test_the_runners_facts_come_back_with_its_cpu_time(tmp_path):
    write = f"import pathlib; pathlib.Path({str(tmp_path / 'runner.json')!r}).write_text('{{\"end_ns\": 5}}')"
    log = tmp_path / "log"
    facts = run_runner("fake-run", runner(write + "; print('hello')"), tmp_path / "plan.json", tmp_path, log)
    assert facts["end_ns"] == 5 and facts["runner_cpu_s"] >= 0
    assert "hello" in log.read_text()


def test_a_failing_runner_is_named_with_its_last_message(tmp_path):
    message = "reading the plan\\nlinks[3].rate_bps: must be positive\\n"
    code = f"import sys; sys.stderr.write('{message}'); sys.exit(2)"
    with pytest.raises(BackendError, match=r"fake-run failed on .*plan.json \(exit 2\): links\[3\].rate_bps"):
        run_runner("fake-run", runner(code), tmp_path / "plan.json", tmp_path, None)


def test_a_runner_that_writes_no_facts_is_an_error_naming_the_directory(tmp_path):
    with pytest.raises(BackendError, match=f"fake-run wrote no readable runner.json in {tmp_path}"):
        run_runner("fake-run", runner("pass"), tmp_path / "plan.json", tmp_path, None)
    (tmp_path / "runner.json").write_text("{truncated")
    with pytest.raises(BackendError, match="no readable runner.json"):
        run_runner("fake-run", runner("pass"), tmp_path / "plan.json", tmp_path, None)

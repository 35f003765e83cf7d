"""Trace integrity end to end (issue 12): run.json records each table's size,
SHA-256 and rows; `qlab check-traces` and `qlab collect` catch every
corruption of the issue's list (one line, no traceback); the workflow runs a
damaged run again by itself, and the collected tables come out identical.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from qlab import paths, resume, traces

from .conftest import REPO, needs

pytestmark = [needs(paths.NS3_RUNNER), needs(paths.QCORE_REPLAY)]
SNAKEMAKE = Path(sys.executable).parent / "snakemake"
POINT = "ncq-conf/flows/ns3/ncq_flows-50/seed-1"  # 50 flows, queue tracing on


def qlab(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "qlab", *args], capture_output=True, text=True, cwd=cwd or REPO, timeout=300
    )


@pytest.fixture(scope="module")
def good(tmp_path_factory) -> Path:
    """A results tree with the plans of ncq-conf/flows (test profile) and one
    finished run of 50 flows."""
    results = tmp_path_factory.mktemp("integrity") / "results"
    out = qlab("expand", "--profile", "test", "--results", str(results), "scenarios/ncq-conf/flows.yaml")
    assert out.returncode == 0, out.stderr
    out = qlab("run-job", str(results / "jobs" / f"{POINT}.json"), "--out", str(results / POINT))
    assert out.returncode == 0, out.stderr
    return results


@pytest.fixture
def run_dir(good, tmp_path) -> Path:
    """A copy of the good results tree to damage."""
    shutil.copytree(good, tmp_path / "results")
    return tmp_path / "results" / POINT


# ---------------------------------------------------------------------------
# the corruptions of the list


def _rewrite_gz(path: Path, edit: Callable[[bytes], bytes]) -> None:
    path.write_bytes(traces.gzip_bytes(edit(gzip.decompress(path.read_bytes()))))


def _lines(edit: Callable[[list[bytes]], list[bytes]]) -> Callable[[bytes], bytes]:
    return lambda data: b"".join(edit(data.splitlines(keepends=True)))


def _run_json(key: str, value: object) -> Callable[[Path], None]:
    def edit(d: Path) -> None:
        text = (d / "run.json").read_text()
        run = json.loads(text)
        run[key] = value
        (d / "run.json").write_text(json.dumps(run, indent=1, sort_keys=True))

    return edit


def _flip_gzip_byte(d: Path) -> None:
    p = d / "flows.csv.gz"
    b = bytearray(p.read_bytes())
    b[len(b) // 2] ^= 0x55  # inside the deflate stream
    p.write_bytes(bytes(b))


def _truncate_gzip(d: Path) -> None:
    p = d / "flows.csv.gz"
    p.write_bytes(p.read_bytes()[: p.stat().st_size // 2])


def _ff_in_run_json(d: Path) -> None:
    p = d / "run.json"
    b = bytearray(p.read_bytes())
    b[20] = 0xFF
    p.write_bytes(bytes(b))


def _field(col: str, value: bytes) -> Callable[[Path], None]:
    """flows.csv.gz with one field of the first row replaced."""
    i = [c.name for c in traces.TABLES["flows"]["columns"]].index(col)

    def edit(lines: list[bytes]) -> list[bytes]:
        row = lines[1].rstrip(b"\n").split(b",")
        row[i] = value
        return [lines[0], b",".join(row) + b"\n", *lines[2:]]

    return lambda d: _rewrite_gz(d / "flows.csv.gz", _lines(edit))


CORRUPTIONS: dict[str, Callable[[Path], None]] = {
    "flipped gzip byte": _flip_gzip_byte,
    "truncated gzip": _truncate_gzip,
    "0xff in run.json": _ff_in_run_json,
    "string sim_end_s": _run_json("sim_end_s", "12.5"),
    "NaN sim_end_s": lambda d: (d / "run.json").write_text(
        (d / "run.json").read_text().replace('"sim_end_s": ', '"sim_end_s": NaN, "x": ')
    ),
    "negative sim_end_s": _run_json("sim_end_s", -1.0),
    "header-only queues table": lambda d: _rewrite_gz(d / "queues.csv.gz", _lines(lambda ls: ls[:1])),
    "CRLF": lambda d: _rewrite_gz(d / "flows.csv.gz", lambda b: b.replace(b"\n", b"\r\n")),
    "duplicate rows": lambda d: _rewrite_gz(d / "queues.csv.gz", _lines(lambda ls: ls[:3] + ls[2:])),
    "1_0 integer": _field("tx_packets", b"1_0"),
    "+12 integer": _field("tx_packets", b"+12"),
    "3 of 50 flows rows removed": lambda d: _rewrite_gz(
        d / "flows.csv.gz", _lines(lambda ls: ls[:10] + ls[13:])
    ),
}


def rerecord(d: Path) -> None:
    """run.json's record of every table made to match the (damaged) tables,
    as a careless tool (or a forger) would: only the content checks remain."""
    p = d / "run.json"
    run = json.loads(p.read_bytes().decode("utf-8", "replace").replace("NaN", "1"))
    run["tables"] = {
        name: {
            "bytes": (d / name).stat().st_size,
            "sha256": hashlib.sha256((d / name).read_bytes()).hexdigest(),
            "rows": max(0, len(gzip.decompress((d / name).read_bytes()).splitlines()) - 1),
        }
        for name in run["tables"]
    }
    p.write_text(json.dumps(run))


def test_run_json_records_every_table(good):
    d = good / POINT
    run = json.loads((d / "run.json").read_text())
    assert run["schema"] == traces.RUN_SCHEMA == "qlab-trace/2"
    assert sorted(run["tables"]) == ["flow_facts.csv.gz", "flows.csv.gz", "queues.csv.gz"]
    for name, rec in run["tables"].items():
        data = (d / name).read_bytes()
        assert rec == {
            "bytes": len(data),
            "sha256": hashlib.sha256(data).hexdigest(),
            "rows": len(gzip.decompress(data).splitlines()) - 1,
        }
    assert run["tables"]["flows.csv.gz"]["rows"] == 50
    assert traces.check_dir(d) == []
    assert not [p for p in d.parent.iterdir() if p.name.startswith(".")]  # no work directory left


@pytest.mark.parametrize("name", sorted(CORRUPTIONS))
def test_check_traces_catches_each_corruption(run_dir, name):
    CORRUPTIONS[name](run_dir)
    out = qlab("check-traces", str(run_dir))
    assert out.returncode == 2, out
    assert "Traceback" not in out.stderr and out.stderr.strip()
    assert all(line.startswith(str(run_dir)) for line in out.stderr.splitlines()), out.stderr


# What each corruption breaks besides the recorded sizes and hashes.
CONTENT = {
    "flipped gzip byte": "not a readable gzip CSV",
    "truncated gzip": "not a readable gzip CSV",
    "string sim_end_s": "sim_end_s: wrong type str",
    "negative sim_end_s": "sim_end_s: expected a finite number >= 0",
    "header-only queues table": "queues.csv.gz: no samples",
    "CRLF": "a carriage return",
    "duplicate rows": "a duplicate row",
    "1_0 integer": "tx_packets: expected an integer (digits), got '1_0'",
    "+12 integer": "tx_packets: expected an integer (digits), got '+12'",
    "3 of 50 flows rows removed": "expected each of the plan's 50 flows exactly once, got 47 rows",
}


@pytest.mark.parametrize("name", sorted(CONTENT))
def test_content_checks_hold_without_the_hashes(run_dir, name):
    """With run.json's records forged to match, each corruption is still caught."""
    CORRUPTIONS[name](run_dir)
    if name not in ("flipped gzip byte", "truncated gzip"):
        rerecord(run_dir)
    problems = traces.check_dir(run_dir)
    assert any(CONTENT[name] in p for p in problems), problems


def test_nan_and_0xff_in_run_json_are_named(run_dir):
    CORRUPTIONS["NaN sim_end_s"](run_dir)
    assert any("not readable JSON" in p and "NaN" in p for p in traces.check_dir(run_dir))
    CORRUPTIONS["0xff in run.json"](run_dir)
    assert any("UnicodeDecodeError" in p for p in traces.check_dir(run_dir))


@pytest.mark.parametrize("name", sorted(CORRUPTIONS))
def test_collect_refuses_a_damaged_run_in_one_line(run_dir, name, tmp_path):
    results = run_dir.parents[4]
    others = qlab(
        "run-job",
        str(results / "jobs" / "ncq-conf/flows/ns3/droptail_flows-50/seed-1.json"),
        "--out",
        str(results / "ncq-conf/flows/ns3/droptail_flows-50/seed-1"),
    )
    assert others.returncode == 0, others.stderr
    runs = [str(run_dir), str(results / "ncq-conf/flows/ns3/droptail_flows-50/seed-1")]
    out = qlab("collect", "--out", str(tmp_path / "col"), "--sweep", "flows", "--tables", "queues", *runs)
    assert out.returncode == 0, out.stderr
    CORRUPTIONS[name](run_dir)
    out = qlab("collect", "--out", str(tmp_path / "col2"), "--sweep", "flows", "--tables", "queues", *runs)
    assert out.returncode == 2 and "Traceback" not in out.stderr, out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith(f"qlab collect: damaged run {run_dir}: ")
    assert f"rerun it: qlab run-job {results / 'jobs' / POINT}.json --out {run_dir}" in lines[0]
    assert not (tmp_path / "col2").exists()  # nothing written


def test_collect_puts_each_trace_row_behind_its_runs_labels(run_dir, tmp_path):
    """The queue trace is copied line by line (not parsed and written again):
    every row of the run's table, in order, behind the run's labels."""
    out = qlab("collect", "--out", f"{tmp_path}/c", "--sweep", "flows", "--tables", "queues", f"{run_dir}")
    assert out.returncode == 0, out.stderr
    run = json.loads((run_dir / "run.json").read_text())
    own_header, own_rows = traces.read_csv_gz(run_dir / "queues.csv.gz")
    header, rows = traces.read_csv_gz(tmp_path / "c" / "queues.csv.gz")
    assert header == ["scenario", "backend", "series", "point", "seed", "flows", *own_header]
    labels = [run["scenario"], run["backend"], run["series"], run["point"], str(run["seed"]), "50"]
    assert len(own_rows) > 10 and rows == [labels + r for r in own_rows]


def test_collect_checks_the_flows_against_the_plan(run_dir, tmp_path):
    """A run of another plan (job_sha256), and a flows table forged to match
    run.json but missing flows, are refused."""
    CORRUPTIONS["3 of 50 flows rows removed"](run_dir)
    rerecord(run_dir)
    out = qlab("collect", "--out", str(tmp_path / "c"), "--sweep", "flows", str(run_dir))
    assert (
        out.returncode == 2
        and "expected each of the plan's 50 flows exactly once, got 47 rows: 3 missing (flow 9, ...)"
        in out.stderr
    ), out.stderr
    run = json.loads((run_dir / "run.json").read_text())
    run["job_sha256"] = "0" * 64
    (run_dir / "run.json").write_text(json.dumps(run))
    out = qlab("collect", "--out", str(tmp_path / "c"), "--sweep", "flows", str(run_dir))
    assert out.returncode == 2 and "the run is of another plan" in out.stderr, out.stderr


def test_collect_refuses_runs_of_an_older_qlab(run_dir, tmp_path):
    run = json.loads((run_dir / "run.json").read_text())
    run["schema"] = "qlab-trace/1"
    del run["tables"]
    (run_dir / "run.json").write_text(json.dumps(run))
    out = qlab("collect", "--out", str(tmp_path / "c"), "--sweep", "flows", str(run_dir))
    assert out.returncode == 2 and "schema: expected 'qlab-trace/2', got 'qlab-trace/1'" in out.stderr


def test_damaged_runs_are_found_by_size_and_hash_even_with_mtime_kept(run_dir, tmp_path):
    cache = tmp_path / "verified.json"
    assert resume.damaged_runs([run_dir], cache) == []
    assert resume.damaged_runs([run_dir], cache) == []  # from the cache
    p = run_dir / "queues.csv.gz"
    st = p.stat()
    b = bytearray(p.read_bytes())
    b[12] ^= 1  # same size
    p.write_bytes(bytes(b))
    os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns))  # same mtime
    assert resume.damaged_runs([run_dir], cache) == [
        (run_dir, "queues.csv.gz: SHA-256 differs from run.json's")
    ]


# ---------------------------------------------------------------------------
# the workflow runs a damaged run again by itself


def snakemake(tmp: Path, target: str, *extra: str) -> subprocess.CompletedProcess:
    cmd = [
        str(SNAKEMAKE),
        "--workflow-profile",
        "workflows/profiles/local",
        "--cores",
        "1",
        "--quiet",
        "rules",
        "--config",
        "profile=test",
        f"results={tmp / 'results'}",
        f"site={tmp / 'site'}",
        f"scenarios={json.dumps([str(tmp / 'scen' / 'ncq-conf' / 'flows.yaml')])}",
        *extra,
        "--",
        str(tmp / "results" / target),
    ]
    return subprocess.run(
        cmd, cwd=REPO, capture_output=True, text=True, env=dict(os.environ, TZ="UTC"), timeout=600
    )


def scenario_copy(tmp: Path) -> None:
    d = tmp / "scen" / "ncq-conf"
    d.mkdir(parents=True)
    for name in ("defaults.yaml", "flows.yaml"):
        shutil.copy(REPO / "scenarios" / "ncq-conf" / name, d / name)


def test_workflow_reruns_a_truncated_flows_table(tmp_path):
    scenario_copy(tmp_path)
    target = "ncq-conf/flows/ns3/flows.csv.gz"
    first = snakemake(tmp_path, target)
    assert first.returncode == 0, first.stderr[-3000:]
    collected = tmp_path / "results" / target
    good = collected.read_bytes()
    victim = tmp_path / "results" / POINT
    before = {p: p.stat().st_mtime_ns for p in (tmp_path / "results" / "ncq-conf").rglob("run.json")}
    _truncate_gzip(victim)
    # `collect` on its own refuses it, naming the run and the command
    out = qlab("collect", "--out", str(tmp_path / "by-hand"), "--sweep", "flows", str(victim))
    assert out.returncode == 2 and f"damaged run {victim}: flows.csv.gz: " in out.stderr
    second = snakemake(tmp_path, target)
    assert second.returncode == 0, second.stderr[-3000:]
    assert f"qlab: damaged run {victim}: flows.csv.gz: " in second.stderr
    assert "set aside as .seed-1.damaged, running it again" in second.stderr
    after = {p: p.stat().st_mtime_ns for p in (tmp_path / "results" / "ncq-conf").rglob("run.json")}
    # only its sweep point ran again (the point's seeds are one workflow job)
    point_runs = sorted(victim.parent.glob("seed-*/run.json"))
    assert len(point_runs) == 2 and victim / "run.json" in point_runs
    assert sorted(p for p in after if after[p] != before[p]) == point_runs
    assert collected.read_bytes() == good
    assert traces.check_dir(victim) == []
    assert not list(victim.parent.glob(".seed-*"))  # the damaged copy goes once the run is redone
    third = snakemake(tmp_path, target)
    assert third.returncode == 0 and "Nothing to be done" in third.stderr, third.stderr[-2000:]

"""`qlab figure ID`: regenerate one report item (the command each figure of
the report shows under it)."""

from __future__ import annotations

import csv
import json
import shlex
import shutil
import subprocess
import sys

import pytest

from .conftest import REPO


def qlab(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "qlab", *args], cwd=REPO, capture_output=True, text=True, check=False
    )


def test_a_scenario_item_runs_its_scenario_then_its_papers_analysis():
    proc = qlab("figure", "ncq-conf/fig2", "--dry-run", "--results", "out")
    assert proc.returncode == 0, proc.stderr
    command, table = proc.stdout.splitlines()
    words = shlex.split(command)
    out = REPO / "out"  # the CLI runs in REPO here: --results resolved against it
    assert words[0].endswith("snakemake") and words[-1] == f"{out}/analysis/ncq-conf/claims.csv"
    scenarios = json.loads(next(w for w in words if w.startswith("scenarios="))[len("scenarios=") :])
    assert scenarios == [str(REPO / "scenarios" / "ncq-conf" / "flows.yaml")]
    assert "profile=quick" in words and not any(w.startswith("backends=") for w in words)
    assert table == f"{out}/analysis/ncq-conf/fig2.csv"


def test_an_item_drawn_with_another_scenario_or_backend_runs_both():
    words = shlex.split(qlab("figure", "qlab/ncq-conf/ns2-ratio", "--dry-run").stdout.splitlines()[0])
    assert 'backends=["ns2", "ns3"]' in words
    words = shlex.split(qlab("figure", "ncq-conf/fig6", "--dry-run").stdout.splitlines()[0])
    scenarios = json.loads(next(w for w in words if w.startswith("scenarios="))[len("scenarios=") :])
    assert str(REPO / "scenarios" / "ncq-conf" / "no-handshake.yaml") in scenarios


def test_an_unknown_id_is_a_user_error_naming_it():
    proc = qlab("figure", "ncq-conf/fig99")
    assert proc.returncode == 2
    assert "ncq-conf/fig99: no item of analysis/papers/*.yaml has this id" in proc.stderr
    assert "Traceback" not in proc.stderr


@pytest.mark.skipif(shutil.which("Rscript") is None, reason="no Rscript: the analysis is R")
def test_a_model_item_is_computed_without_runs(tmp_path):
    proc = qlab("figure", "ncq-journal/fig1a", "--results", str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    table = tmp_path / "analysis" / "ncq-journal" / "fig1a.csv"
    assert proc.stdout.strip().splitlines()[-1] == str(table)
    with open(table, newline="") as f:
        rows = list(csv.DictReader(f))
    assert {r["figure"] for r in rows} == {"ncq-journal/fig1a"} and {r["backend"] for r in rows} == {"model"}

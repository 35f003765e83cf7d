"""End to end for the `validation` page: the M/G/1 scenarios (Poisson
packet streams) at their `test` profile through Snakemake, ns-3, R and the
renderer; the figure data holds the simulated points and the closed forms
side by side, and every claim gets a computed verdict."""

from __future__ import annotations

import csv
import shutil

import pytest
import yaml

from qlab import paths, traces

from .conftest import REPO, needs
from .test_e2e import parse, snakemake

pytestmark = [needs(paths.NS3_RUNNER), needs(paths.QCORE_REPLAY)]


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("e2e-validation")
    scen_dir = tmp / "scenarios" / "validation"
    shutil.copytree(REPO / "scenarios" / "validation", scen_dir)
    snakemake(tmp, scen_dir)
    return tmp


def test_every_validation_job_passes_the_validator(run):
    dirs = sorted(p.parent for p in (run / "results" / "validation").rglob("seed-*/run.json"))
    # 3 seeds (the claims' control variate needs three) x 2 series x mg1 at u = 0.5 and 0.9
    assert len([d for d in dirs if "/validation/mg1/" in str(d)]) == 12
    for d in dirs:
        assert traces.check_dir(d) == [], d
        header, rows = traces.read_csv_gz(d / "flows.csv.gz")
        flows = [dict(zip(header, r, strict=True)) for r in rows]
        assert {f["app"] for f in flows} == {"poisson"}
        assert all(int(f["rx_packets"]) > 0 for f in flows)
        if "/mm1k/" not in str(d):  # the finite buffer (M/M/1/K) loses packets by design
            assert all(f["lost_packets"] == "0" for f in flows), d


def test_figure_data_holds_simulation_and_closed_forms(run):
    path = run / "results" / "analysis" / "validation" / "mg1.csv"
    with path.open() as f:
        rows = list(csv.DictReader(f))
    theory = [r for r in rows if r["method"].startswith("closed form")]
    simulated = [r for r in rows if not r["method"].startswith("closed form")]
    assert {(r["series"], r["x"]) for r in simulated} == {
        (s, x) for s in ("fifo", "priority") for x in ("0.5", "0.9")
    }
    labels = {r["method"] for r in theory}
    assert any("Pollaczek" in m for m in labels) and any("Cobham" in m for m in labels)
    assert any("eq. (9)" in m for m in labels)
    # the closed form is of the same magnitude as the simulation at every point
    for t in theory:
        if "Pollaczek" in t["method"] or "Cobham" in t["method"]:
            sim = next(
                r for r in simulated if (r["series"], r["x"], r["group"]) == (t["series"], t["x"], t["group"])
            )
            assert 0.5 < float(sim["mean"]) / float(t["mean"]) < 2, (t, sim)


def test_validation_page_shows_the_figure_and_every_verdict(run):
    """Every item is a figure, but the emulation's (validation/emu-md1 runs
    in Mininet only, which this ns-3 run leaves out): the page says so, and
    its claim is not comparable rather than missing."""
    page = parse(run / "site" / "validation.html")
    text = " ".join(page.text)
    assert "M/G/1" in text
    assert "Not drawn: no results for validation/emu-md1" in text
    assert text.count("Not drawn") == 1
    assert "No results for scenario validation/emu-md1: this reproduction" in text
    items = yaml.safe_load((REPO / "analysis/papers/validation.yaml").read_text())["items"]
    assert len(page.imgs) == len(items) - 1
    claims = [t for t in page.tables if t and any(c.lower() == "verdict" for c in t[0])]
    rows = [row for t in claims for row in t[1:]]
    listed = yaml.safe_load((REPO / "analysis/claims/validation.yaml").read_text())["claims"]
    assert len(rows) == len(listed), rows  # every claim of analysis/claims/validation.yaml
    col = [c.lower() for c in claims[0][0]].index("verdict")
    emu = [row for row in rows if "qlab-emu" in " ".join(row)]
    assert len(emu) == 1 and emu[0][col] == "not comparable", emu
    verdicts = {"reproduced", "partly", "inconclusive", "not reproduced"}
    assert {row[col] for row in rows if row not in emu} <= verdicts

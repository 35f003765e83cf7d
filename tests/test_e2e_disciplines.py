"""End to end for the `disciplines` page: the demonstration scenarios at
their `test` profile through Snakemake, ns-3, R and the renderer.

The run holds only these scenarios, so the ncq-conf page must say it has no
results instead of failing.
"""

from __future__ import annotations

import shutil

import pytest

from qlab import paths, traces

from .conftest import REPO, needs
from .test_e2e import parse, snakemake

pytestmark = [needs(paths.NS3_RUNNER), needs(paths.QCORE_REPLAY)]


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("e2e-disciplines")
    scen_dir = tmp / "scenarios" / "disciplines"
    shutil.copytree(REPO / "scenarios" / "disciplines", scen_dir)
    snakemake(tmp, scen_dir)
    return tmp


def test_every_demonstration_job_passes_the_validator(run):
    dirs = sorted(p.parent for p in (run / "results" / "disciplines").rglob("seed-*/run.json"))
    # 2 seeds x (ncq 2 + rbaqm 3 + cqaqm 2 + srd 3 series)
    assert len(dirs) == 2 * (2 + 3 + 2 + 3)
    for d in dirs:
        assert traces.check_dir(d) == [], d


def test_queue_and_packet_tables_are_collected_where_asked(run):
    results = run / "results" / "disciplines"
    assert (results / "rbaqm/ns3/queues.csv.gz").exists()
    assert not (results / "rbaqm/ns3/packets.csv.gz").exists()
    header, rows = traces.read_csv_gz(results / "srd/ns3/packets.csv.gz")
    assert header[:5] == ["scenario", "backend", "series", "point", "seed"]
    assert {r[2] for r in rows} == {"rd", "srd", "srd-est"}
    assert not (results / "ncq/ns3/queues.csv.gz").exists()
    # CQ-AQM's drops by reason come from its packet events
    header, rows = traces.read_csv_gz(results / "cqaqm/ns3/packets.csv.gz")
    reasons = {r[header.index("reason")] for r in rows if r[header.index("event")] == "drop"}
    assert "precedence_cross" in reasons, reasons


def test_disciplines_page_shows_every_demonstration_with_verdicts(run):
    page = parse(run / "site" / "disciplines.html")
    text = " ".join(page.text)
    for heading in ("NCQ", "RB-AQM vs WRED", "CQ-AQM", "RD vs S-RD"):
        assert heading in text
    assert len(page.imgs) == 9, len(page.imgs)
    assert "No results" not in text
    claims = [t for t in page.tables if t and any(c.lower() == "verdict" for c in t[0])]
    rows = [row for t in claims for row in t[1:]]
    assert len(rows) == 18, rows  # every claim of analysis/claims/disciplines.yaml
    col = [c.lower() for c in claims[0][0]].index("verdict")
    assert {row[col] for row in rows} <= {
        "reproduced",
        "partly",
        "inconclusive",
        "not reproduced",
        "qualitative",
    }


def test_pages_of_papers_without_results_say_so(run):
    text = " ".join(parse(run / "site" / "ncq-conf.html").text)
    assert "No results for ncq-conf" in text

"""End to end: scenario files -> Snakemake -> ns-3 -> traces -> R -> HTML report.

Runs the three ncq-conf scenarios at their `test` profile (two sweep points
or fewer, two seeds, a few simulated seconds), then checks the report, that a
second run simulates nothing, and that changing one value reruns only its jobs.
"""

from __future__ import annotations

import csv
import html.parser
import io
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from qlab import paths, traces

from .conftest import REPO, needs

pytestmark = [needs(paths.NS3_RUNNER), needs(paths.QCORE_REPLAY)]
SNAKEMAKE = Path(sys.executable).parent / "snakemake"


def snakemake(
    tmp: Path,
    scen_dir: Path,
    *extra: str,
    launcher: tuple[str, ...] = (str(SNAKEMAKE),),
    root: Path = REPO,
) -> subprocess.CompletedProcess:
    """The workflow on the scenarios of `scen_dir`, in the checkout `root`
    (conftest's own_checkout, or this one)."""
    files = sorted(str(p) for p in scen_dir.glob("*.yaml"))
    cmd = [
        *launcher,
        "--workflow-profile",
        "workflows/profiles/local",
        "--cores",
        "2",
        "--quiet",
        "rules",
        "host",
        "--config",
        "profile=test",
        f"results={tmp / 'results'}",
        f"site={tmp / 'site'}",
        f"scenarios={json.dumps(files)}",
        *extra,
    ]
    env = dict(os.environ, TZ="UTC", QLAB_ROOT=str(root))
    proc = subprocess.run(cmd, cwd=root, capture_output=True, text=True, env=env, timeout=1200)
    if proc.returncode != 0:
        logs = "\n".join(
            p.read_text(errors="replace")[-3000:] for p in (tmp / "results" / "logs").rglob("*.log")
        )
        pytest.fail(f"snakemake failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-5000:]}\n{logs}")
    return proc


class Page(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.imgs: list[str] = []
        self.tables: list[list[list[str]]] = []
        self._cell: list[str] | None = None
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "img":
            self.imgs.append(a.get("src", ""))
        elif tag == "table":
            self.tables.append([])
        elif tag == "tr" and self.tables:
            self.tables[-1].append([])
        elif tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None and self.tables and self.tables[-1]:
            self.tables[-1][-1].append("".join(self._cell).strip())
            self._cell = None

    def handle_data(self, data):
        self.text.append(data)
        if self._cell is not None:
            self._cell.append(data)


def parse(path: Path) -> Page:
    p = Page()
    p.feed(path.read_text(encoding="utf-8"))
    return p


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("e2e")
    scen_dir = tmp / "scenarios" / "ncq-conf"
    # the paper's scenarios; ncq-conf/emu (ns-3 vs Mininet) is tests/test_mininet.py's
    shutil.copytree(REPO / "scenarios" / "ncq-conf", scen_dir, ignore=shutil.ignore_patterns("emu.yaml"))
    snakemake(tmp, scen_dir)
    return tmp, scen_dir


def run_dirs(tmp: Path) -> list[Path]:
    return sorted(p.parent for p in (tmp / "results" / "ncq-conf").rglob("seed-*/run.json"))


def test_every_job_ran_and_passes_the_trace_validator(run):
    tmp, _ = run
    dirs = run_dirs(tmp)
    # flows + thresh + size-reading + no-handshake (one point) + task-size (two sizes)
    # + worst-flow (one point)
    assert len(dirs) == 2 * 2 * 2 + 4 * 2 + 4 * 2 + 2 * 2 + 2 * 2 * 2 + 2 * 2
    for d in dirs:
        assert traces.check_dir(d) == [], d


def test_same_seed_gives_byte_identical_tables(run, tmp_path):
    tmp, _ = run
    d = next(p for p in run_dirs(tmp) if "ncq_flows-10" in str(p))
    job = tmp / "results" / "jobs" / d.relative_to(tmp / "results").with_suffix(".json")
    out = tmp_path / "again"
    subprocess.run(
        [sys.executable, "-m", "qlab", "run-job", str(job), "--out", str(out)], check=True, cwd=REPO
    )
    for table in ("flows.csv.gz", "queues.csv.gz"):
        assert (out / table).read_bytes() == (d / table).read_bytes(), table


def test_report_holds_figures_and_claims(run):
    tmp, _ = run
    site = tmp / "site"
    index = site / "index.html"
    assert index.exists()
    page = parse(site / "ncq-conf.html")
    text = " ".join(page.text)
    for i in range(1, 10):
        assert f"Fig. {i}" in text or f"Figure {i}" in text, f"figure {i} missing"
    assert len(page.imgs) >= 13, page.imgs  # Figs 1-9, three sensitivity figures, the worst flow's TCP state
    claims = [t for t in page.tables if t and any(c.lower() == "verdict" for c in t[0])]
    assert len(claims) >= 9, "a claims table per figure and the listing"
    verdicts = set()
    for t in claims:
        col = [c.lower() for c in t[0]].index("verdict")
        verdicts |= {row[col] for row in t[1:] if len(row) > col}
    assert verdicts <= {
        "reproduced",
        "partly",
        "not reproduced",
        "qualitative",
        "not comparable",
        "inconclusive",
    }, verdicts
    assert (site / "provenance.html").exists()
    check_explorable(site / "ncq-conf.html")
    # the paper's page rendered by a job of its own once its analysis was done,
    # its colophon from software.json (written before the runs: no runs' facts)
    assert (tmp / "results" / "logs" / "report" / "ncq-conf.log").exists()
    software = json.loads((tmp / "results" / "software.json").read_text())
    prov = json.loads((tmp / "results" / "provenance.json").read_text())
    assert "ran_on" not in software and prov["ran_on"]
    assert {k: software[k] for k in ("git_commit", "profile", "scenarios", "packages")} == {
        k: prov[k] for k in ("git_commit", "profile", "scenarios", "packages")
    }
    assert re.search(r"git commit\s+" + re.escape(software["git_commit"]), text)
    # the NCQ journal paper's analytic model: every item with its id, one
    # figure per model item, the stated percentages with a verdict each
    journal = parse(site / "ncq-journal.html")
    journal_text = " ".join(journal.text)
    spec = yaml.safe_load((REPO / "analysis/papers/ncq-journal.yaml").read_text())
    for item in spec["items"]:
        assert item["id"] in journal_text, item["id"]
    assert len(journal.imgs) == sum(item["kind"] == "model_vs_x" for item in spec["items"]) == 12
    assert all(pending in journal_text for pending in spec.get("pending", []))
    with open(tmp / "results" / "analysis" / "ncq-journal" / "claims.csv") as f:
        stated = [r for r in csv.DictReader(f) if "%" in r["paper_value"] and "u = 0.60" in r["paper_value"]]
    assert len(stated) == 6
    assert {r["verdict"] for r in stated} <= {"reproduced", "partly", "not reproduced"}
    # ns-2 did not run here: the cross-simulator page renders and says so
    cross = " ".join(parse(site / "ns2-vs-ns3.html").text)
    assert "ns-2 vs ns-3" in cross and "No ns2 results" in cross, cross[:2000]
    rules = " ".join(parse(site / "verdicts.html").text)
    assert "Holm" in rules and "inconclusive" in rules and "TOST" in rules


def check_explorable(path: Path) -> None:
    """A paper page's figures are interactive with the PNG kept for print,
    its claims tables sortable, and a parameter that differs from the
    paper's value marked."""
    html_text = path.read_text(encoding="utf-8")
    page = parse(path)
    figures = html_text.count('<div class="qlab-figure">')
    static_only = html_text.count('<div class="qlab-figure">\n<div class="figure">')  # the topology diagram
    widgets = html_text.count('class="plotly html-widget')
    assert static_only == 1 and widgets == figures - 1 >= 12, (figures, static_only, widgets)
    assert len(page.imgs) >= figures  # every figure's PNG kept (for print, and without JavaScript)
    assert "plotly.js v2" in html_text  # python3-plotly's, not r-cran-plotly's 1.31
    assert html_text.count('class="datatables html-widget') >= 9
    # the parameter tables: size_bytes 141 (the intended reading) against the paper's "packetLength<100"
    differing = [row for t in page.tables for row in t if row and row[0].startswith("\u2260 series.ncq")]
    assert any(row[0].endswith("params.size_bytes") and row[1] == "141" for row in differing), differing
    assert "differ from the paper" in html_text


def test_worst_time_figures_show_processor_sharing_and_no_handshake(run):
    tmp, _ = run
    table = (tmp / "results" / "analysis" / "ncq-conf" / "fig6.csv").read_text()
    series = {row["series"] for row in csv.DictReader(io.StringIO(table))}
    assert {
        "droptail",
        "ncq",
        "processor sharing (bound)",
        "droptail (no handshake)",
        "ncq (no handshake)",
    } <= series, series


def test_worst_flow_figure_draws_each_series_tcp_state(run):
    tmp, _ = run
    table = (tmp / "results" / "analysis" / "ncq-conf" / "worst-flow-tcp.csv").read_text()
    rows = list(csv.DictReader(io.StringIO(table)))
    assert {r["series"] for r in rows} == {"droptail", "ncq"}
    assert {r["metric"] for r in rows} == {"cwnd_segments", "rto_s", "retransmissions"}
    # one flow per series, named in the caption's method
    methods = {r["method"] for r in rows}
    assert len(methods) == 2 and all("the worst of the traced flows" in m for m in methods), methods


def test_second_run_simulates_nothing_one_change_reruns_only_its_jobs_and_then_nothing(run):
    """A second run does nothing; a changed value reruns only its jobs (and
    so their collect, analysis and report); after that rerun, the next run
    does nothing again (one test: each rerun costs a report render)."""
    tmp, scen_dir = run
    before = {d: (d / "run.json").stat().st_mtime_ns for d in run_dirs(tmp)}
    snakemake(tmp, scen_dir)
    assert {d: (d / "run.json").stat().st_mtime_ns for d in run_dirs(tmp)} == before
    f = scen_dir / "thresh.yaml"
    f.write_text(f.read_text().replace("thresh: 0.01,", "thresh: 0.02,"))
    snakemake(tmp, scen_dir)
    after = {d: (d / "run.json").stat().st_mtime_ns for d in run_dirs(tmp)}
    changed = sorted(str(d.relative_to(tmp / "results")) for d in after if after[d] != before.get(d))
    assert changed == [f"ncq-conf/thresh/ns3/ncq-0.01_flows-50/seed-{s}" for s in (1, 2)]
    # collect and provenance read the files the workflow ran, not scenarios/ of the checkout
    collected = json.loads((tmp / "results/ncq-conf/thresh/ns3/scenario.json").read_text())
    assert collected["series"]["ncq-0.01"]["params"]["thresh"] == 0.02
    prov = json.loads((tmp / "results/provenance.json").read_text())
    assert {s["file"] for s in prov["scenarios"]} == {
        str(p) for p in scen_dir.glob("*.yaml") if p.name != "defaults.yaml"
    }
    # after the rerun, the next run touches nothing
    watched = [
        tmp / "site" / "index.html",
        tmp / "site" / "ncq-conf.html",
        tmp / "results" / "provenance.json",
        tmp / "results" / "software.json",
        *sorted((tmp / "results" / "ncq-conf").glob("*/ns3/*.csv.gz")),
        *sorted((tmp / "results" / "ncq-conf").glob("*/ns3/scenario.json")),
        *(d / "run.json" for d in run_dirs(tmp)),
    ]
    stamps = {p: p.stat().st_mtime_ns for p in watched}
    snakemake(tmp, scen_dir)
    assert {p: p.stat().st_mtime_ns for p in watched} == stamps


def test_snakemake_through_another_path_to_python_reruns_nothing(run):
    """The interpreter is no rule parameter: Snakemake started as `python -m
    snakemake` (sys.executable .venv/bin/python) instead of through its
    script (.venv/bin/python3) must not rerun a single job."""
    tmp, scen_dir = run
    before = {d: (d / "run.json").stat().st_mtime_ns for d in run_dirs(tmp)}
    collected = sorted((tmp / "results" / "ncq-conf").glob("*/ns3/*.csv.gz"))
    collected_before = {p: p.stat().st_mtime_ns for p in collected}
    python = Path(sys.executable).parent / "python"
    assert python.exists()
    snakemake(tmp, scen_dir, launcher=(str(python), "-m", "snakemake"))
    assert {d: (d / "run.json").stat().st_mtime_ns for d in run_dirs(tmp)} == before
    assert {p: p.stat().st_mtime_ns for p in collected} == collected_before


CHROMIUM = shutil.which("chromium")


def png_is_blank(png: bytes) -> bool:
    """True when a PNG screenshot holds (almost) one colour: fewer than 16
    distinct byte values in its decompressed image data."""
    import zlib

    assert png[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    data, pos = b"", 8
    while pos < len(png):
        length = int.from_bytes(png[pos : pos + 4], "big")
        kind = png[pos + 4 : pos + 8]
        if kind == b"IDAT":
            data += png[pos + 8 : pos + 8 + length]
        pos += 12 + length
    return len(set(zlib.decompress(data))) < 16


def test_png_is_blank_tells_a_blank_page_from_content(tmp_path):
    if CHROMIUM is None:
        pytest.skip("no chromium (scripts/setup.sh installs it)")
    shots = {}
    for name, body in (("blank", ""), ("text", "<h1>qlab</h1>" + "<p>figure data</p>" * 40)):
        page = tmp_path / f"{name}.html"
        page.write_text(f"<html><body>{body}</body></html>")
        shots[name] = headless(page, tmp_path / f"{name}.png")[0]
    assert png_is_blank(shots["blank"]) and not png_is_blank(shots["text"])


def headless(page: Path, shot: Path) -> tuple[bytes, list[str]]:
    """A screenshot of `page` in headless Chromium, and what its console printed."""
    proc = subprocess.run(
        [
            str(CHROMIUM),
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--window-size=1280,1600",
            "--enable-logging=stderr",
            "--log-level=0",
            f"--screenshot={shot}",
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert shot.exists(), proc.stderr[-2000:]
    return shot.read_bytes(), [line for line in proc.stderr.splitlines() if ":CONSOLE" in line]


class Links(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.hrefs: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if a.get("id"):
            self.ids.add(a["id"])
        if tag == "a" and a.get("href"):
            self.hrefs.append(a["href"])


def test_every_page_renders_in_a_browser_and_every_internal_link_resolves(run, tmp_path):
    """The site in headless Chromium: each page draws something (not a blank
    screenshot) and logs nothing to the console (no script error, no missing
    resource); every link between pages, and to an anchor, finds its target."""
    if CHROMIUM is None:
        pytest.skip("no chromium (scripts/setup.sh installs it)")
    tmp, _ = run
    site = tmp / "site"
    pages = sorted(site.glob("*.html"))
    assert len(pages) >= 8
    parsed = {}
    for page in pages:
        png, console = headless(page, tmp_path / f"{page.stem}.png")
        assert not png_is_blank(png), f"{page.name}: blank in the browser"
        assert console == [], f"{page.name}: {console}"
        parsed[page.name] = Links()
        parsed[page.name].feed(page.read_text(encoding="utf-8"))
    broken = []
    for name, links in parsed.items():
        for href in links.hrefs:
            if href.startswith(("http:", "https:", "data:", "mailto:")):
                continue
            target, _, anchor = href.partition("#")
            target = target or name
            if target not in parsed:
                broken.append(f"{name}: {href} (no page {target})")
            elif anchor and anchor not in parsed[target].ids:
                broken.append(f"{name}: {href} (no #{anchor} in {target})")
    assert broken == [], broken

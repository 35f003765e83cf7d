"""analysis/papers/<paper>.yaml is the one list of a paper's items: checked
against the scenarios that produce them, the claims about them, the metric
registry (analysis/R/metrics.R), the report pages and, where it is present,
the figure catalogue (design/catalogue.yaml).

Special claim targets: a claim's `figure:` may name, besides an item, an id of
its paper's `claim_sections` (ncq-conf: `abstract`, the claims of the
abstract); the page shows those sections after the items.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from functools import cache
from pathlib import Path

import pytest
import yaml

from qlab.paths import ROOT

PAPERS = ROOT / "analysis" / "papers"
CLAIMS = ROOT / "analysis" / "claims"
SCENARIOS = ROOT / "scenarios"
REPORTS = ROOT / "reports"
# Not in the repository (CI has only the repository): the design documents
# beside the checkout, or where QLAB_CATALOGUE points.
CATALOGUE = Path(os.environ.get("QLAB_CATALOGUE", ROOT.parent / "shared" / "design" / "catalogue.yaml"))
METRIC_KEYS = ("group", "cls", "queue", "band", "reason")
# catalogue item kind -> the paper spec's kinds, where they must agree (a
# diagram of a schedule, srd's Figs. 1-2, is computed without runs: model_vs_x)
CATALOGUE_KINDS = {"diagram": ("diagram", "model_vs_x"), "pseudo-code": ("listing",)}


def load(path: Path) -> dict:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


@cache
def specs() -> dict[str, dict]:
    return {p.stem: load(p) for p in sorted(PAPERS.glob("*.yaml"))}


@cache
def claims() -> dict[str, list[dict]]:
    return {p.stem: load(p)["claims"] for p in sorted(CLAIMS.glob("*.yaml"))}


def items() -> list[tuple[str, dict]]:
    return [(paper, item) for paper, spec in specs().items() for item in spec["items"]]


def metric_uses() -> list[tuple[str, dict]]:
    """(where, {metric, keys...}) for every metric an item or a claim names."""
    uses = []
    for paper, item in items():
        for i, entry in enumerate(item.get("metrics", [])):
            uses.append((f"papers/{paper}.yaml {item['id']} metrics[{i}]", entry))
        if "metric" in item:
            uses.append((f"papers/{paper}.yaml {item['id']}", item))
    for paper, entries in claims().items():
        for claim in entries:
            if "metric" in claim:
                uses.append((f"claims/{paper}.yaml {claim['id']}", claim))
    return uses


@cache
def registry() -> dict[str, list[str]]:
    """Registered metric name -> the keys its rows carry, read by R itself."""
    rscript = shutil.which("Rscript")
    if rscript is None:
        pytest.skip("Rscript is not on PATH: the metric registry is R code (analysis/R/metrics.R)")
    code = (
        'source("analysis/R/metrics.R"); '
        'cat(jsonlite::toJSON(metric_registry[c("name", "keys")], dataframe = "rows"))'
    )
    proc = subprocess.run([rscript, "-e", code], cwd=ROOT, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    return {row["name"]: row["keys"].split() for row in json.loads(proc.stdout)}


def test_every_paper_has_a_spec_and_a_claims_file_with_its_key():
    assert specs(), f"no paper spec in {PAPERS}"
    assert set(specs()) == set(claims()), "analysis/papers and analysis/claims must hold the same papers"
    for paper, spec in specs().items():
        assert spec["key"] == paper, f"papers/{paper}.yaml: key must be {paper!r}"
        claims_paper = load(CLAIMS / f"{paper}.yaml")["paper"]
        assert claims_paper == paper, f"claims/{paper}.yaml: paper must be {paper!r}"


def test_item_ids_are_unique_across_papers():
    seen: dict[str, str] = {}
    for paper, item in items():
        assert item["id"] not in seen, (
            f"item {item['id']} is in papers/{seen.get(item['id'])}.yaml and papers/{paper}.yaml"
        )
        seen[item["id"]] = paper


def test_item_ids_have_one_form():
    """The catalogue's <paper>/<fig|table|listing...>, or qlab/<paper>/<name> for qlab's own."""
    for paper, item in items():
        own = re.fullmatch(rf"qlab/{re.escape(paper)}/[a-z0-9]+(-[a-z0-9]+)*", item["id"])
        catalogued = re.fullmatch(
            rf"{re.escape(paper)}/(fig\d+[a-z]?|table\d+|listing-[a-z0-9-]+)", item["id"]
        )
        assert own or catalogued, (
            f"papers/{paper}.yaml: item id {item['id']!r} must be {paper}/<fig|table|listing...> "
            f"(the catalogue's) or qlab/{paper}/<name> (qlab's own)"
        )


def test_the_figure_tables_are_named_apart():
    # analyze.R writes each figure's table as <last part of the id>.csv
    for paper, spec in specs().items():
        names = [item["id"].rsplit("/", 1)[1] for item in spec["items"]]
        assert len(names) == len(set(names)), (
            f"papers/{paper}.yaml: ids must differ in their last part: {names}"
        )


def test_every_item_has_one_producer():
    """A scenario, except a listing (the paper's text beside the
    implementation's source), a model figure (the paper's analytic model,
    analysis/R/model-*.R) and a table (the paper's notation, or a table
    computed by a function of analytic_tables())."""
    for paper, item in items():
        if item["kind"] == "listing":
            assert "scenario" not in item, f"papers/{paper}.yaml {item['id']}: a listing runs no scenario"
        elif item["kind"] == "table_notation":
            assert "scenario" not in item and isinstance(item.get("notation"), list), (
                f"papers/{paper}.yaml {item['id']}: a notation table gives its `notation` and no scenario"
            )
        elif item["kind"] == "table_model":
            assert "scenario" not in item and isinstance(item.get("table"), str), (
                f"papers/{paper}.yaml {item['id']}: a model table names its `table` and no scenario"
            )
        elif item["kind"] == "model_vs_x":
            assert "scenario" not in item and isinstance(item.get("model"), str), (
                f"papers/{paper}.yaml {item['id']}: a model figure names its `model` and no scenario"
            )
        else:
            assert isinstance(item.get("scenario"), str), (
                f"papers/{paper}.yaml {item['id']}: an item of kind {item['kind']} must name its `scenario`"
            )


def test_every_scenario_named_exists_and_is_concrete():
    named = [
        (f"papers/{paper}.yaml {item['id']}", item["scenario"])
        for paper, item in items()
        if "scenario" in item
    ]
    named += [
        (f"claims/{paper}.yaml {c['id']}", c["scenario"])
        for paper, cs in claims().items()
        for c in cs
        if "scenario" in c
    ]
    assert named
    for where, scenario in named:
        path = SCENARIOS / f"{scenario}.yaml"
        assert path.is_file(), f"{where}: scenario {scenario} must be a file {path.relative_to(ROOT)}"
        assert not load(path).get("abstract", False), (
            f"{where}: scenario {scenario} is abstract (it runs no job)"
        )


def test_every_claim_is_about_an_item_or_a_claim_section():
    for paper, entries in claims().items():
        spec = specs()[paper]
        known = {item["id"] for item in spec["items"]} | {s["id"] for s in spec.get("claim_sections", [])}
        for claim in entries:
            assert claim["figure"] in known, (
                f"claims/{paper}.yaml {claim['id']}: figure {claim['figure']!r} must be an item id of "
                f"papers/{paper}.yaml or one of its claim_sections ({', '.join(sorted(known))})"
            )


def test_every_metric_named_is_registered_with_its_keys():
    uses = metric_uses()
    assert uses
    registered = registry()
    for where, use in uses:
        name = use["metric"]
        assert name in registered, f"{where}: metric {name!r} must be registered in analysis/R/metrics.R"
        keys = [k for k in METRIC_KEYS if k in use]
        extra = set(keys) - set(registered[name])
        assert not extra, f"{where}: metric {name} has no {sorted(extra)} (its keys: {registered[name]})"


def test_the_registry_grep_finds_every_metric_a_spec_names():
    text = (ROOT / "analysis" / "R" / "metrics.R").read_text(encoding="utf-8")
    for where, use in metric_uses():
        assert f'"{use["metric"]}"' in text, f"{where}: {use['metric']} is not written literally in metrics.R"


def test_every_page_an_item_names_is_rendered():
    site = load(REPORTS / "_quarto.yml")
    rendered = {Path(p).stem for p in site["project"]["render"]}
    for paper, item in items():
        page = item.get("page", specs()[paper]["page"])
        assert page in rendered, (
            f"papers/{paper}.yaml {item['id']}: page {page!r} must be a page of reports/_quarto.yml"
        )


def test_assumptions_name_existing_items():
    ids = {item["id"] for _, item in items()}
    for path in sorted(SCENARIOS.glob("*/*.yaml")):
        for assumption in load(path).get("assumptions", []):
            for figure in assumption.get("figures", []):
                assert figure in ids, (
                    f"{path.relative_to(ROOT)}: assumption {assumption.get('id')} names "
                    f"{figure!r}, which is no item of analysis/papers"
                )


@pytest.mark.skipif(
    not CATALOGUE.is_file(),
    reason=f"the figure catalogue {CATALOGUE} is not here (it is not in the repository; "
    "set QLAB_CATALOGUE to check against it)",
)
def test_every_catalogue_item_of_a_paper_is_listed_once():
    catalogue = {p["key"]: p for p in load(CATALOGUE)["papers"]}
    checked = [paper for paper in specs() if paper in catalogue]
    assert checked, f"no paper of analysis/papers is in {CATALOGUE}"
    for paper in checked:
        ours = [item for item in specs()[paper]["items"] if not item["id"].startswith("qlab/")]
        # an item nothing produces yet is listed under `pending` (the page names it)
        listed = [item["id"] for item in ours] + list(specs()[paper].get("pending", []))
        theirs = {entry["id"]: entry for entry in catalogue[paper]["items"]}
        for cid in theirs:
            assert listed.count(cid) == 1, (
                f"papers/{paper}.yaml must list {cid} once, as an item or under pending "
                f"(found {listed.count(cid)})"
            )
        assert set(listed) <= set(theirs), (
            f"papers/{paper}.yaml: not in the catalogue: {set(listed) - set(theirs)}"
        )
        for item in ours:
            entry = theirs[item["id"]]
            if str(entry.get("caption_source", "")).startswith("verbatim"):
                assert item["caption"] == entry["caption"], (
                    f"{item['id']}: caption must be the paper's, verbatim"
                )
            if entry.get("kind") in CATALOGUE_KINDS:
                assert item["kind"] in CATALOGUE_KINDS[entry["kind"]], (
                    f"{item['id']}: kind must be one of {CATALOGUE_KINDS[entry['kind']]} (the catalogue's "
                    f"{entry['kind']})"
                )


@pytest.mark.skipif(not CATALOGUE.is_file(), reason=f"the figure catalogue {CATALOGUE} is not here")
def test_every_catalogue_item_appears_on_its_page():
    """Every catalogued item of a paper with a spec is on a rendered page: an
    item on the page that prints its items (print_items shows each id under
    its heading), a pending one on the paper's page, which lists them
    (print_pending_items); a produced item names exactly one producer."""
    catalogue = {p["key"]: p for p in load(CATALOGUE)["papers"]}
    rendered = {Path(p).stem for p in load(REPORTS / "_quarto.yml")["project"]["render"]}
    for paper, spec in specs().items():
        if paper not in catalogue:
            continue
        ours = {item["id"]: item for item in spec["items"]}
        for entry in catalogue[paper]["items"]:
            cid = entry["id"]
            if cid in ours:
                item = ours[cid]
                page = item.get("page", spec["page"])
                producers = [k for k in ("scenario", "model", "table", "notation") if k in item]
                assert len(producers) == 1 or (item["kind"] == "listing" and not producers), (
                    f"papers/{paper}.yaml {cid}: exactly one producer (scenario, model, table or notation), "
                    f"found {producers}"
                )
                wanted = f'print_items(ctx, "{page}")'
            else:
                page = spec["page"]
                wanted = "print_pending_items(ctx)"
            assert page in rendered, f"{cid}: page {page} is not rendered (reports/_quarto.yml)"
            text = (REPORTS / f"{page}.qmd").read_text(encoding="utf-8")
            assert wanted in text, f"{cid}: reports/{page}.qmd must call {wanted}"


def catalogue_tables() -> dict[str, dict]:
    """The catalogue's table items, by id (empty without the catalogue)."""
    if not CATALOGUE.is_file():
        return {}
    return {
        entry["id"]: entry
        for paper in load(CATALOGUE)["papers"]
        for entry in paper["items"]
        if entry.get("kind") == "table"
    }


@pytest.mark.skipif(not CATALOGUE.is_file(), reason=f"the figure catalogue {CATALOGUE} is not here")
def test_notation_tables_are_the_papers():
    tables = catalogue_tables()
    checked = 0
    for paper, item in items():
        if item["kind"] != "table_notation":
            continue
        rows = [[row["symbol"], row["description"]] for row in item["notation"]]
        assert rows == tables[item["id"]]["content"]["rows"], (
            f"papers/{paper}.yaml {item['id']}: `notation` must be the catalogue's rows, in order"
        )
        checked += 1
    assert checked > 0


@pytest.mark.skipif(not CATALOGUE.is_file(), reason=f"the figure catalogue {CATALOGUE} is not here")
def test_model_tables_print_the_papers_rows():
    """A model table's `paper_rows` are the paper's printed values: the R band
    ("90 < R < 100" or "90 - 100"), the rating and the MOS range "4.34 - 4.5"
    of each row, found by the catalogue's column names (ncq-journal's Table 2
    and srd's Table 1 order them differently)."""
    tables = catalogue_tables()
    checked = 0
    for paper, item in items():
        if item["kind"] != "table_model":
            continue
        content = tables[item["id"]]["content"]
        columns = [c.lower() for c in content["columns"]]
        col = {
            "r": next(i for i, c in enumerate(columns) if c.startswith("r-factor")),
            "rating": next(i for i, c in enumerate(columns) if "rating" in c or "category" in c),
            "mos": columns.index("mos"),
        }
        theirs = [(row[col["r"]], row[col["rating"]], row[col["mos"]]) for row in content["rows"]]
        for ours, (r_band, rating, mos) in zip(item["paper_rows"], theirs, strict=True):
            r_low, r_high = (float(x) for x in re.fullmatch(r"(\S+) (?:< R <|-) (\S+)", r_band).groups())
            mos_low, mos_high = (float(x) for x in mos.split(" - "))
            assert (ours["r_low"], ours["r_high"], ours["rating"], ours["mos_low"], ours["mos_high"]) == (
                r_low,
                r_high,
                rating,
                mos_low,
                mos_high,
            ), f"papers/{paper}.yaml {item['id']}: {ours} must be the catalogue's {r_band} | {rating} | {mos}"
        checked += 1
    assert checked > 0

"""The benchmark suite (scenarios/bench/, issue 23): its workloads agree
with the leaderboard's list of metrics (analysis/bench.yaml), every
discipline of the core's registry runs in every workload, a newly
registered one with no other edit, and `qlab compare` refuses what it
cannot compare before running anything."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
import yaml

from qlab import cli, core, native, progress
from qlab import scenario as sc

from .conftest import REPO

BENCH = REPO / "scenarios" / "bench"


def workloads() -> list[Path]:
    return [p for p in sorted(BENCH.glob("*.yaml")) if not sc.load(p).doc.get("abstract")]


def test_every_workload_has_its_leaderboard_metrics_and_a_description():
    spec = yaml.safe_load((REPO / "analysis" / "bench.yaml").read_text(encoding="utf-8"))
    names = [p.stem for p in workloads()]
    assert len(names) >= 5
    assert sorted(spec["workloads"]) == sorted(names), (
        "analysis/bench.yaml's workloads must be the concrete scenarios of scenarios/bench/"
    )
    for path in workloads():
        doc = sc.load(path).doc
        assert doc.get("description", "").strip(), f"{path.name}: a workload says what it stresses"
        assert doc["series"]["droptail"]["kind"] == "droptail", "DropTail is the leaderboard's baseline"


def test_every_registered_discipline_runs_in_every_workload():
    for path in workloads():
        jobs = sc.expand(sc.load(path), "quick")
        assert {j.spec["series"] for j in jobs} >= set(core.names()), path.name
        # every discipline at the same seeds (paired by seed)
        seeds = {(j.series, j.seed) for j in jobs}
        assert seeds == {(s, n) for s in {j.series for j in jobs} for n in {j.seed for j in jobs}}


def test_the_native_baselines_run_in_every_workload_with_the_same_buffer():
    """CoDel, FQ-CoDel and PIE as ns-3's own queue discs (qlab.native), with
    DropTail's 100-packet buffer, and no seed (their draws are ns-3 streams)."""
    for path in workloads():
        jobs = sc.expand(sc.load(path), "quick")
        queues = {
            j.series: next(lk for lk in j.spec["links"] if lk["id"] == "bottleneck")["queues"]["L"]
            for j in jobs
            if j.seed == 1
        }
        kinds = {s: queues[s]["kind"] for s in ("codel", "fq-codel", "pie")}
        assert kinds == {"codel": "ns3-codel", "fq-codel": "ns3-fq-codel", "pie": "ns3-pie"}, path.name
        for series in kinds:
            assert native.is_native(queues[series]["kind"]) and "seed" not in queues[series]
            assert queues[series]["params"]["limit_pkts"] == queues["droptail"]["params"]["limit_pkts"] == 100


def test_the_bulk_workload_runs_with_each_tcp_variant():
    variants = {}
    for name in ("bulk", "bulk-cubic", "bulk-bbr"):
        jobs = sc.expand(sc.load(BENCH / f"{name}.yaml"), "quick")
        variants[name] = {(j.spec["tcp"]["variant"], j.spec["tcp"]["sack"]) for j in jobs}
        # the same flows as bulk: only the TCP differs
        assert [len(j.spec["flows"]) for j in jobs[:1]] == [8]
    assert variants == {
        "bulk": {("NewReno", False)},
        "bulk-cubic": {("Cubic", True)},
        "bulk-bbr": {("Bbr", True)},
    }


@pytest.fixture
def copied_discipline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """The registry with a copy of droptail under a new name, as
    tests/test_recipe.py registers one (it builds it; this only describes it)."""
    registry = copy.deepcopy(core.registry())
    entry = copy.deepcopy(next(d for d in registry["disciplines"] if d["name"] == "droptail"))
    entry["name"] = "mydisc"
    registry["disciplines"].append(entry)
    path = tmp_path / "registry.json"
    path.write_text(json.dumps(registry), encoding="utf-8")
    monkeypatch.setattr(core, "REGISTRY", path)
    core.registry.cache_clear()
    # the scenario schema's discipline names are the registry's, cached
    monkeypatch.setattr(sc, "_SCHEMA", None)
    monkeypatch.setattr(sc, "_VALIDATOR", None)
    yield "mydisc"
    core.registry.cache_clear()
    sc._SCHEMA = sc._VALIDATOR = None


def test_a_newly_registered_discipline_joins_the_suite_with_its_defaults(copied_discipline: str):
    for path in workloads():
        jobs = [j for j in sc.expand(sc.load(path), "test") if j.series == copied_discipline]
        assert jobs, f"{path.name}: {copied_discipline} must run with no edit of the suite"
        queue = next(lk for lk in jobs[0].spec["links"] if lk["id"] == "bottleneck")["queues"]["L"]
        assert queue["kind"] == copied_discipline
        assert queue["params"] == {"limit_pkts": 100}  # the registry's default


def test_a_stated_configuration_wins_over_the_defaults(copied_discipline: str):
    stated = {"kind": "droptail", "params": {"limit_pkts": 7}}
    doc = sc.with_every_discipline({"every_discipline": True, "series": {copied_discipline: stated}})
    assert doc["series"][copied_discipline] == stated
    assert sc.with_every_discipline({"series": {}}) == {"series": {}}


def compare(*argv: str) -> tuple[int, str]:
    args = cli.build_parser().parse_args(["compare", *argv, "--dry-run"])
    return args.func(args), ""


def test_compare_refuses_an_unknown_workload_or_discipline(capsys: pytest.CaptureFixture[str]):
    assert compare("ncq", "droptail", "--workload", "nope")[0] == 2
    err = capsys.readouterr().err
    assert "--workload nope: no such workload" in err and "small-flows" in err
    assert compare("nosuch", "droptail", "--workload", "small-flows")[0] == 2
    err = capsys.readouterr().err
    assert "nosuch: not a discipline of scenarios/bench/small-flows.yaml" in err and "ncq" in err
    assert compare("ncq", "droptail", "--workload", "small-flows", "--backend", "mininet")[0] == 2
    assert "runs on ns3" in capsys.readouterr().err


def test_compare_runs_the_workload_through_the_workflow(capsys: pytest.CaptureFixture[str], tmp_path: Path):
    assert compare("ncq", "droptail", "--workload", "small-flows", "--results", str(tmp_path))[0] == 0
    run, show = capsys.readouterr().out.splitlines()
    assert "snakemake" in run and "scenarios/bench/small-flows.yaml" in run
    assert run.endswith(f"{tmp_path}/bench/small-flows/ns3/flows.csv.gz")
    assert "compare.R" in show and "--a ncq --b droptail" in show and "--html" not in show
    assert compare("ncq", "droptail", "--workload", "bulk", "--html", str(tmp_path / "c.html"))[0] == 0
    assert capsys.readouterr().out.splitlines()[1].endswith(f"--html {tmp_path / 'c.html'}")


def test_the_reproduction_summary_counts_the_leaderboard(tmp_path: Path):
    bench = tmp_path / "results" / "analysis" / "bench"
    bench.mkdir(parents=True)
    rows = [f"{w},{s}" for w in ("bulk", "web") for s in ("droptail", "ncq", "red")]
    (bench / "ranking.csv").write_text("workload,series\n" + "\n".join(rows) + "\n", encoding="utf-8")
    lines = progress.summary(tmp_path / "results", tmp_path / "site", None)
    assert any("benchmark: 3 disciplines ranked on 2 workloads" in line for line in lines), lines

"""The benchmark suite (scenarios/bench/, issue 23): its workloads agree
with the leaderboard's list of metrics (analysis/bench.yaml), every
discipline of the core's registry runs in every workload, a newly
registered one with no other edit, and `qlab compare` refuses what it
cannot compare before running anything."""

from __future__ import annotations

import copy
import gzip
import json
import os
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest
import yaml

from qlab import cli, core, native, paths, progress
from qlab import scenario as sc

from .conftest import REPO, needs

BENCH = REPO / "scenarios" / "bench"


def workloads() -> list[Path]:
    return [p for p in sorted(BENCH.glob("*.yaml")) if not sc.load(p).doc.get("abstract")]


def runs_of(path: Path) -> list[sc.Job]:
    """A workload's runs in the quick profile, or in the paper profile for one
    that only it runs (the faster links)."""
    return sc.expand(sc.load(path), "quick") or sc.expand(sc.load(path), "paper")


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


def test_the_readme_names_every_workload():
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text.split("## Benchmarking disciplines", 1)[1].split("\n## ", 1)[0]
    missing = [p.stem for p in workloads() if f"`{p.stem}`" not in section]
    assert missing == [], f"README.md, 'Benchmarking disciplines', must name every workload: {missing}"


def test_every_registered_discipline_runs_in_every_workload():
    for path in workloads():
        jobs = runs_of(path)
        assert {j.spec["series"] for j in jobs} >= set(core.names()), path.name
        # every discipline at the same seeds (paired by seed)
        seeds = {(j.series, j.seed) for j in jobs}
        assert seeds == {(s, n) for s in {j.series for j in jobs} for n in {j.seed for j in jobs}}


def test_the_native_baselines_run_in_every_workload_with_the_same_buffer():
    """CoDel, FQ-CoDel and PIE as ns-3's own queue discs (qlab.native), with
    DropTail's 100-packet buffer, and no seed (their draws are ns-3 streams)."""
    for path in workloads():
        jobs = runs_of(path)
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


def bottleneck(job: sc.Job) -> dict:
    return next(lk for lk in job.spec["links"] if lk["id"] == "bottleneck")


def test_the_suite_covers_10_mbps_to_1_gbps_and_a_spread_of_round_trip_times():
    rates = {}
    for path in workloads():
        job = runs_of(path)[0]
        rates[path.stem] = bottleneck(job)["rate_bps"]
        # the rate-based disciplines are given the bottleneck's rate
        for job in runs_of(path)[:: len(runs_of(path)) // 12 or 1]:
            queue = bottleneck(job)["queues"]["L"]
            if queue["kind"] in ("rd", "srd", "rbaqm"):
                assert queue["params"]["rate_bps"] == rates[path.stem], (path.name, queue["kind"])
    assert min(rates.values()) == 10_000_000 and max(rates.values()) == 1_000_000_000
    assert rates["bulk-100m"] == 100_000_000
    # the faster links in the paper profile only: the quick reproduction is at its budget
    for name in ("bulk-100m", "bulk-1g"):
        assert sc.expand(sc.load(BENCH / f"{name}.yaml"), "quick") == []
    # four round-trip times in bulk-rtt, two flows each
    doc = sc.resolve(sc.load(BENCH / "bulk-rtt.yaml"), "quick")
    delays = sorted(g["access_delay_s"] for g in doc["workload"]["groups"].values())
    assert len(set(delays)) == 4 and delays[-1] / delays[0] >= 10
    assert sum(g["count"] for g in doc["workload"]["groups"].values()) == 8


def test_voip_amr_is_voip_under_web_with_amr_calls():
    """The same flows at the same seed as voip-under-web, the calls' datagrams
    AMR 12.2's (72 bytes every 20 ms while talking) instead of G.711's."""
    for profile in ("quick", "paper"):
        g711, amr = (
            {(j.series, j.seed): j.spec["flows"] for j in sc.expand(sc.load(BENCH / f"{name}.yaml"), profile)}
            for name in ("voip-under-web", "voip-amr")
        )
        assert g711.keys() == amr.keys()
        for key, flows in amr.items():
            calls = [f for f in flows if f["group"] == "voip"]
            assert len(calls) == 8
            assert {(f["pkt_bytes"], f["interval_ns"]) for f in calls} == {(72, 20_000_000)}
            assert {(f["pkt_bytes"], f["interval_ns"]) for f in g711[key] if f["group"] == "voip"} == {
                (200, 20_000_000)
            }
            unchanged = ("pkt_bytes", "rate_bps", "packets")
            assert [{k: v for k, v in f.items() if k not in unchanged} for f in flows] == [
                {k: v for k, v in f.items() if k not in unchanged} for f in g711[key]
            ], "only the codec differs"
    spec = yaml.safe_load((REPO / "analysis" / "bench.yaml").read_text(encoding="utf-8"))
    assert spec["workloads"]["voip-amr"]["metrics"][0] == {
        "metric": "voip_mos_amr",
        "group": "voip",
        "better": "higher",
        "label": "VoIP MOS (AMR 12.2)",
    }


def test_sensors_report_periodically_beside_bulk_tcp_and_trace_the_packets_their_metrics_need():
    doc = sc.resolve(sc.load(BENCH / "sensors.yaml"), "quick")
    assert doc["trace"]["packets"] and "packets" in doc["trace"]["collect"]
    job = sc.expand(sc.load(BENCH / "sensors.yaml"), "quick")[0]
    sensors = [f for f in job.spec["flows"] if f["group"] == "sensors"]
    bulk = [f for f in job.spec["flows"] if f["group"] == "bulk"]
    assert len(sensors) == 100 and len(bulk) == 4
    # small periodic reports: one 64-byte datagram every 0.5 s, random phases, about 1% of the link
    assert {(f["app"], f["pkt_bytes"], f["interval_ns"], f["cls"]) for f in sensors} == {
        ("cbr", 64, 500_000_000, 0)
    }
    assert len({f["start_ns"] % 500_000_000 for f in sensors}) == 100
    load = sum(8 * f["pkt_bytes"] * 1e9 / f["interval_ns"] for f in sensors) / bottleneck(job)["rate_bps"]
    assert 0.005 < load < 0.02
    # the delay percentiles are computed from the bottleneck's packet events: the queue they name is traced
    spec = yaml.safe_load((REPO / "analysis" / "bench.yaml").read_text(encoding="utf-8"))
    percentiles = [
        m for m in spec["workloads"]["sensors"]["metrics"] if m["metric"].startswith("queue_delay_p")
    ]
    assert [m["metric"] for m in percentiles] == [
        "queue_delay_p50_s",
        "queue_delay_p95_s",
        "queue_delay_p99_s",
    ]
    assert {m["queue"] for m in percentiles} <= set(job.spec["trace"]["queues"])


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
    assert (
        "--backend mininet: scenarios/bench/small-flows.yaml runs on ns3 "
        "(on mininet in profile paper: --profile paper)"
    ) in capsys.readouterr().err
    # a native baseline runs on ns3 only, beside the core's disciplines in emulation
    paper = ("--workload", "small-flows", "--backend", "mininet", "--profile", "paper")
    assert compare("codel", "droptail", *paper)[0] == 2
    err = capsys.readouterr().err
    assert "codel: runs on ns3 only (series.codel.backends of scenarios/bench/small-flows.yaml)" in err
    assert compare("ncq", "droptail", *paper)[0] == 0
    assert capsys.readouterr().out.splitlines()[0].endswith("/bench/small-flows/mininet/flows.csv.gz")


def test_emulation_runs_the_core_disciplines_of_five_workloads_in_the_paper_profile_only():
    """Assumption `emulation` (scenarios/bench/defaults.yaml): the paper
    profile runs five workloads on mininet too, every discipline of the
    core with its ns3 configuration and seeds, the native baselines on ns3
    only; the quick profile runs ns3 alone (its budget); the test profile
    unresponsive-udp in emulation, for the tests."""
    emulated = {"small-flows", "unresponsive-udp", "voip-under-web", "voip-amr", "precedence-mix"}
    for path in workloads():
        scen = sc.load(path)
        assert sc.resolve(scen, "quick")["backends"] in ([], ["ns3"]), path.stem
        paper = sc.expand(scen, "paper")
        on = {
            b: {j.series for j in paper if j.backend == b} for b in ("ns3", "mininet", "testbed", "mnkernel")
        }
        assert bool(on["mininet"]) == (path.stem in emulated), path.stem
        if on["mininet"]:
            series = sc.resolve(scen, "paper")["series"]
            assert on["mininet"] == {s for s in on["ns3"] if not native.is_native(series[s]["kind"])}
            # and the kernel qdisc, where a testbed is up
            assert on["testbed"] == on["mnkernel"] == on["mininet"], path.stem
            mininet = {(j.series, j.seed): j.spec for j in paper if j.backend == "mininet"}
            ns3 = {(j.series, j.seed): j.spec for j in paper if j.backend == "ns3"}
            for key, spec in mininet.items():
                assert spec["flows"] == ns3[key]["flows"], key
        test = {j.backend for j in sc.expand(scen, "test")}
        assert test <= {"ns3", "mininet"} and ("mininet" in test) == (path.stem == "unresponsive-udp"), (
            path.stem
        )


NUMBER_WORDS = {2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven", 8: "eight", 9: "nine"}


def test_the_prose_names_the_workloads_the_scenarios_run_in_emulation():
    """The README, the benchmark page and assumption `emulation` name the
    workloads that run in emulation in the paper profile: a list kept by hand
    in three places, checked here against the scenario files."""
    emulated = {
        p.stem for p in workloads() if any(j.backend == "mininet" for j in sc.expand(sc.load(p), "paper"))
    }
    names = {p.stem for p in workloads()}

    def flat(text: str) -> str:
        return " ".join(text.split())

    def named(region: str) -> set[str]:
        return set(re.findall(r"[a-z0-9]+(?:-[a-z0-9]+)*", region)) & names

    readme = flat((REPO / "README.md").read_text(encoding="utf-8"))
    page = flat((REPO / "reports" / "benchmark.qmd").read_text(encoding="utf-8"))
    defaults = yaml.safe_load((BENCH / "defaults.yaml").read_text(encoding="utf-8"))
    assumption = flat(next(a["text"] for a in defaults["assumptions"] if a["id"] == "emulation"))
    row = re.search(r"In the paper profile, (\w+) workloads also in emulation", readme)
    assert row and row[1] == NUMBER_WORDS[len(emulated)], "README's benchmark row"
    prose = re.search(r"In the paper profile, (\w+) workloads \(([^)]*)\) also run in emulation", readme)
    assert prose and prose[1] == NUMBER_WORDS[len(emulated)] and named(prose[2]) == emulated, "README"
    listed = re.search(r"Not in the benchmark yet.*?workloads other than (.*?), and in the quick", page)
    assert listed and named(listed[1]) == emulated, "reports/benchmark.qmd"
    stated = re.match(r"(\w+) workloads \(([^:]*):", assumption)
    assert stated and stated[1] == NUMBER_WORDS[len(emulated)].capitalize(), "assumption emulation"
    assert named(stated[2]) == emulated, "assumption emulation"


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


class _Anchors(HTMLParser):
    """Every element id of a page, and the links of its heat map's cells."""

    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.heat_links: list[str] = []
        self._heat_depth = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attr = dict(attrs)
        if attr.get("id"):
            self.ids.add(attr["id"])
        if tag == "table" and "qlab-heat-map" in (attr.get("class") or ""):
            self._heat_depth += 1
        if tag == "a" and self._heat_depth and (attr.get("href") or "").startswith("#"):
            self.heat_links.append(attr["href"][1:])

    def handle_endtag(self, tag: str) -> None:
        if tag == "table" and self._heat_depth:
            self._heat_depth -= 1


def test_every_heat_map_cell_links_to_a_section_of_the_rendered_page(tmp_path: Path):
    """The benchmark page rendered (reports/render.R) from leaderboard tables
    of two workloads whose metrics share a label, as bulk's variants do:
    every link of the heat map lands on an element of the page."""
    bench = tmp_path / "results" / "analysis" / "bench"
    bench.mkdir(parents=True)
    metrics = [
        ("fairness_jain", "Jain fairness", "higher"),
        ("avg_fct_s[group=small]", "small FCT (s)", "lower"),
    ]
    ranking = ["workload,selector,label,better,series,n,mean,sd,ci_lo,ci_hi,rank,n_own,ranked_seeds,backend"]
    effects = [
        "workload,selector,label,series,better,baseline_mean,p,n,mean,sd,ci_lo,ci_hi,d_z,change,improves,"
        "p_holm,significant,method,backend"
    ]
    # ns3 in full; mininet (emulation) for bulk alone, after it, where red's verdict differs
    for backend, workload in (("ns3", "bulk"), ("ns3", "bulk-cubic"), ("mininet", "bulk")):
        for selector, label, better in metrics:
            for rank, series in enumerate(("ncq", "droptail", "red"), start=1):
                ranking.append(
                    f'{workload},"{selector}",{label},{better},{series},3,{rank},0.1,{rank - 0.2},'
                    f"{rank + 0.2},{rank},3,1 2 3,{backend}"
                )
                if series != "droptail":
                    change = 0.3 if series == "ncq" else -0.2
                    significant = "FALSE" if backend == "mininet" and series == "red" else "TRUE"
                    effects.append(
                        f'{workload},"{selector}",{label},{series},{better},2,0.01,3,{change * 2},0.1,'
                        f"0,1,2,{change},{str(change > 0).upper()},0.02,{significant},paired,{backend}"
                    )
    (bench / "ranking.csv").write_text("\n".join(ranking) + "\n", encoding="utf-8")
    (bench / "effects.csv").write_text("\n".join(effects) + "\n", encoding="utf-8")
    software = {"git_commit": "test", "profile": "test", "scenarios": [], "packages": {}}
    (tmp_path / "results" / "software.json").write_text(json.dumps(software), encoding="utf-8")
    env = dict(
        os.environ,
        TZ="UTC",
        QLAB_RESULTS=str(tmp_path / "results"),
        QLAB_SITE=str(tmp_path / "site"),
        QLAB_RENDER_PAGES="benchmark.qmd",
    )
    proc = subprocess.run(
        ["Rscript", str(REPO / "reports" / "render.R")], cwd=REPO, env=env, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    page = _Anchors()
    page.feed((tmp_path / "site" / "benchmark.html").read_text(encoding="utf-8"))
    # a cell per discipline but the baseline (2) and a row heading, per workload and metric:
    # 4 on ns3, 2 on mininet
    assert len(page.heat_links) == (4 + 2) * 3
    assert set(page.heat_links) <= page.ids, sorted(set(page.heat_links) - page.ids)
    assert len(set(page.heat_links)) == 4 + 2, "each backend's workload's metric has a table of its own"
    assert {"bench-on-mininet", "mininet--bench-bulk"} <= page.ids
    text = (tmp_path / "site" / "benchmark.html").read_text(encoding="utf-8")
    # red's two metrics: worse on ns3, no significant difference on mininet
    assert "2 of 4 verdicts agree" in text


# ---- adaptive repetition: the workflow's pieces --------------------------------


def test_the_paper_profile_runs_batches_and_quick_one_batch():
    for path in workloads():
        scen = sc.load(path)
        assert sc.resolve(scen, "paper").get("repetition") == {"batch": 5}, path.name
        # up to 20 seeds; 10 at 1 Gb/s, whose runs cost fifty times a 10 Mb/s run's
        assert len(sc.resolve(scen, "paper")["seeds"]) == (10 if path.stem == "bulk-1g" else 20)
        assert "repetition" not in sc.resolve(scen, "quick"), "a second quick batch would double its cost"
        assert sc.resolve(scen, "test")["repetition"] == {"batch": 2}


def decision(tmp_path: Path, going: list[str]) -> Path:
    path = tmp_path / "batch-1.json"
    path.write_text(
        json.dumps({"schema": "qlab-adaptive/1", "batch": 1, "continue": going}), encoding="utf-8"
    )
    return path


def test_a_batch_the_decision_stopped_runs_nothing_and_says_so(tmp_path: Path):
    from qlab import runjob

    point = tmp_path / "bench" / "bulk" / "ns3" / "prio"
    done = point / "batch-2.json"
    point.mkdir(parents=True)
    # the plans do not exist: a stopped batch must not even read them
    runs = [(tmp_path / f"seed-{n}.json", point / f"seed-{n}", None) for n in (3, 4)]
    assert runjob.run_point(runs, done=done, only_if=decision(tmp_path, ["droptail", "ncq"])) == []
    doc = json.loads(done.read_text(encoding="utf-8"))
    assert doc == {"schema": "qlab-point/1", "runs": {}, "stopped": "batch-1.json"}
    assert not (point / "seed-3").exists()
    # a decision that lets the point go on runs its plans (here: missing, so it fails naming one)
    with pytest.raises(runjob.JobError, match="seed-3.json"):
        runjob.run_point(runs, done=done, only_if=decision(tmp_path, ["prio"]))


def test_a_decision_that_is_not_one_is_refused_by_name(tmp_path: Path):
    from qlab import runjob

    bad = tmp_path / "batch-1.json"
    bad.write_text('{"schema": "qlab-point/1", "runs": {}}', encoding="utf-8")
    with pytest.raises(runjob.JobError, match=r"batch-1.json: not an adaptive-repetition decision"):
        runjob.continues(bad, "prio")
    with pytest.raises(runjob.JobError, match="cannot read"):
        runjob.continues(tmp_path / "nope.json", "prio")


def test_collect_reads_the_runs_a_done_file_lists(tmp_path: Path):
    from qlab import collect

    done = tmp_path / "batch-2.json"
    done.write_text(
        json.dumps({"schema": "qlab-point/1", "runs": {"seed-4": "b", "seed-3": "a"}}), encoding="utf-8"
    )
    assert collect.listed_runs(done) == [tmp_path / "seed-3", tmp_path / "seed-4"]
    done.write_text('{"schema": "qlab-adaptive/1"}', encoding="utf-8")
    with pytest.raises(ValueError, match="not a done file of qlab run-job"):
        collect.listed_runs(done)


def test_resume_takes_a_point_of_batches_for_complete_only_when_their_runs_are_there(tmp_path: Path):
    from qlab import resume

    point = tmp_path / "bench" / "bulk" / "ns3" / "ncq"
    runs = [point / f"seed-{n}" for n in (1, 2, 3, 4)]
    for d in runs[:2]:
        d.mkdir(parents=True)
        (d / "run.json").write_text("{}", encoding="utf-8")
    (point.parent / "flows.csv.gz").write_bytes(b"")
    (point / "batch-1.json").write_text(
        json.dumps({"schema": "qlab-point/1", "runs": {"seed-1": "a", "seed-2": "b"}})
    )
    # batch 2 stopped by its decision: seeds 3 and 4 never ran, and need not
    (point / "batch-2.json").write_text(
        json.dumps({"schema": "qlab-point/1", "runs": {}, "stopped": "batch-1.json"})
    )
    assert resume.incomplete_points(runs) == []
    (runs[1] / "run.json").unlink()
    assert resume.incomplete_points(runs) == [point]
    resume.rerun_point(point)
    assert not list(point.glob("batch-*.json")) and not (point.parent / "flows.csv.gz").exists()


# ---- qlab bench --discipline X ----------------------------------------------------


def bench(*argv: str) -> int:
    args = cli.build_parser().parse_args(["bench", *argv, "--dry-run"])
    return args.func(args)


def test_bench_refuses_an_unknown_discipline_workload_or_backend(capsys: pytest.CaptureFixture[str]):
    assert bench("--discipline", "nosuch") == 2
    err = capsys.readouterr().err
    assert "--discipline nosuch: not a discipline of scenarios/bench/" in err and "ncq" in err
    assert "Traceback" not in err
    assert bench("--discipline", "ncq", "--workload", "bulk", "--workload", "nope") == 2
    err = capsys.readouterr().err
    assert "--workload nope: no such workload" in err and "small-flows" in err
    assert bench("--discipline", "droptail") == 2
    assert "the baseline" in capsys.readouterr().err
    assert bench("--discipline", "ncq", "--backend", "mininet") == 2
    assert "runs on ns3" in capsys.readouterr().err
    assert bench("--discipline", "ncq", "--workload", "bulk-1g") == 2
    assert "bulk-1g.yaml runs on no backend in the quick profile" in capsys.readouterr().err


def test_bench_runs_only_the_discipline_and_the_baseline(capsys: pytest.CaptureFixture[str], tmp_path: Path):
    assert bench("--discipline", "ncq", "--results", str(tmp_path)) == 0
    run, place = capsys.readouterr().out.splitlines()
    assert """bench_series=["ncq"]""" in run
    # every workload the quick profile runs, each collected apart as the set only-ncq
    for path in workloads():
        target = f"{tmp_path}/bench/{path.stem}/ns3/sets/only-ncq/all/flows.csv.gz"
        assert (target in run) == (path.stem not in ("bulk-100m", "bulk-1g")), path.stem
    assert "bench-place.R" in place and "--discipline ncq" in place and "--set only-ncq" in place


@needs(paths.NS3_RUNNER)
def test_bench_places_a_discipline_with_adaptive_repetition(tmp_path: Path):
    """The test profile (batches of 2 up to 4 seeds) on bulk, where prio
    has one class and so behaves as DropTail: every paired difference is 0,
    so prio stops after its first batch while DropTail runs both."""
    env = dict(os.environ, TZ="UTC")
    cmd = [sys.executable, "-m", "qlab", "bench", "--discipline", "prio", "--workload", "bulk"]
    cmd += ["--profile", "test", "--results", str(tmp_path), "--cores", "2"]
    proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "prio on the benchmark leaderboard" in proc.stdout
    assert "bulk (2 seeds; stopped: every interval narrow enough)" in proc.stdout
    point = tmp_path / "bench" / "bulk" / "ns3"
    listed = {
        (series, k): sorted(json.loads((point / series / f"batch-{k}.json").read_text())["runs"])
        for series in ("prio", "droptail")
        for k in (1, 2)
    }
    assert listed == {
        ("prio", 1): ["seed-1", "seed-2"],
        ("prio", 2): [],
        ("droptail", 1): ["seed-1", "seed-2"],
        ("droptail", 2): ["seed-3", "seed-4"],
    }
    assert not (point / "ncq").exists(), "qlab bench runs only the discipline and the baseline"
    decided = json.loads((point / "sets" / "only-prio" / "batch-1.json").read_text())
    assert decided["continue"] == ["droptail"]
    placement = (tmp_path / "analysis" / "bench-prio" / "placement.csv").read_text()
    assert placement.count("\nbulk,") == 3  # one row per metric of bulk


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root (Mininet)")
@pytest.mark.skipif(
    subprocess.run(["/usr/bin/python3", "-c", "import mininet.net"], capture_output=True).returncode != 0,
    reason="Debian's Mininet is not installed",
)
def test_bench_places_a_discipline_in_emulation(tmp_path: Path, own_checkout: Path):
    """`qlab bench --backend mininet` (the test profile's unresponsive-udp):
    the discipline's and DropTail's runs in Mininet, the stopping rule after
    each batch, and the placement, or, where this machine broke every
    pair's timing invariants, a message naming the invalid runs (the rule
    and the leaderboard's handling of them: analysis/tests/testthat)."""
    env = dict(os.environ, TZ="UTC", QLAB_ROOT=str(own_checkout))
    cmd = [sys.executable, "-m", "qlab", "bench", "--discipline", "ncq", "--workload", "unresponsive-udp"]
    cmd += ["--backend", "mininet", "--profile", "test", "--results", str(tmp_path), "--cores", "2"]
    proc = subprocess.run(cmd, cwd=own_checkout, capture_output=True, text=True, env=env, timeout=900)
    point = tmp_path / "bench" / "unresponsive-udp" / "mininet"
    decided = json.loads((point / "sets" / "only-ncq" / "batch-1.json").read_text())
    assert {s["series"] for s in decided["series"]} == {"ncq", "droptail"}
    assert all(s["n"] == 2 and 0 <= s["valid"] <= 2 for s in decided["series"])
    runs = (point / "sets" / "only-ncq" / "all" / "runs.csv.gz").read_bytes()
    lines = gzip.decompress(runs).decode().splitlines()[1:]
    assert lines and all(",mininet,ncq," in line or ",mininet,droptail," in line for line in lines)
    assert "Traceback" not in proc.stderr
    if proc.returncode == 0:
        assert "ncq on the benchmark leaderboard (mininet" in proc.stdout
        assert "unresponsive-udp (" in proc.stdout
    else:
        assert proc.returncode == 2, proc.stderr[-3000:]
        assert "ncq and droptail have no valid pair of runs on mininet in unresponsive-udp" in proc.stderr
        assert "invalid by the backend's fidelity checks" in proc.stderr


def test_bench_of_an_unrun_workload_names_the_missing_runs(tmp_path: Path):
    proc = subprocess.run(
        [
            "Rscript",
            str(REPO / "analysis" / "scripts" / "bench-place.R"),
            "--results",
            str(tmp_path),
            "--set",
            "only-ncq",
            "--discipline",
            "ncq",
            "--backend",
            "ns3",
            "--workloads",
            "bulk",
            "--out",
            str(tmp_path / "o"),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 2
    assert f"{tmp_path}/bench/bulk/ns3/sets/only-ncq/all: no collected runs" in proc.stderr

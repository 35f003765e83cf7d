from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from qlab import native, paths
from qlab import scenario as sc
from qlab.cli import main

from .conftest import REPO, needs


def write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def test_every_repo_scenario_is_valid_and_expands():
    scenarios = sc.load_all()
    concrete = [s for s in scenarios if not s.abstract]
    assert {s.id for s in concrete} >= {"ncq-conf/flows", "ncq-conf/thresh", "ncq-conf/size-reading"}
    for s in concrete:
        for profile in sc.PROFILES:
            # a profile that lists no backends runs nothing of the scenario, on purpose
            if sc.resolve(s, profile)["backends"]:
                assert sc.expand(s, profile), f"{s.id} {profile} has no jobs"
            else:
                assert sc.expand(s, profile) == [] and profile != "test", f"{s.id} {profile}"
    # the emulation validation: the paper profile's only (real time), not quick's
    emu = next(s for s in concrete if s.id == "validation/emu-md1")
    assert sc.resolve(emu, "quick")["backends"] == [] and len(sc.expand(emu, "paper")) == 30


def test_four_mistakes_give_four_precise_lines(paper_dir, capsys):
    bad = write(
        paper_dir / "bad.yaml",
        """\
extends: defaults.yaml
sweep:
  flows: {path: workload.flows, values: [10, 20]}
duration_s: "long"
colour: blue
workload:
  flows: -1
tcp:
  variant: null
""",
    )
    # `variant: null` removes the inherited required field
    rc = main(["validate", str(bad)])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2
    assert len(err) == 4, err
    text = "\n".join(err)
    assert f'{bad}: duration_s: expected number, got string "long"' in text
    assert f"{bad}: colour: unknown field (allowed:" in text
    assert f"{bad}: tcp.variant: missing required field" in text
    assert f"{bad}: workload.flows: expected a value >= 0, got -1" in text


def test_error_names_the_file_that_set_the_value(paper_dir):
    defaults = paper_dir / "defaults.yaml"
    defaults.write_text(defaults.read_text().replace("bottleneck_delay_s: 0.010", "bottleneck_delay_s: -1"))
    with pytest.raises(sc.ScenarioError) as exc:
        sc.load(paper_dir / "flows.yaml")
    assert exc.value.problems == [f"{defaults}: topology.bottleneck_delay_s: expected a value >= 0, got -1"]


@pytest.mark.parametrize(
    "name, value",
    [
        ("series", "{'../etc': {kind: droptail}}"),
        ("series", "{'a;rm -rf x': {kind: droptail}}"),
    ],
)
def test_names_used_in_paths_are_refused(paper_dir, name, value):
    f = write(paper_dir / "inj.yaml", f"extends: defaults.yaml\n{name}: {value}\n")
    with pytest.raises(sc.ScenarioError) as exc:
        sc.load(f)
    assert len(exc.value.problems) == 1
    assert exc.value.problems[0].endswith(
        "series: expected a name used in result paths: lower-case letters, digits, '.', '-'; "
        f"got {value.split(':')[0][1:]}"
    )


def test_sweep_value_with_path_characters_is_refused(paper_dir):
    f = write(
        paper_dir / "inj.yaml",
        "extends: defaults.yaml\nsweep:\n  x: {path: workload.flows, values: ['../../x']}\n",
    )
    with pytest.raises(sc.ScenarioError) as exc:
        sc.load(f)
    assert any("sweep.x.values.0" in p and "usable in a path" in p for p in exc.value.problems)


def test_sweep_path_must_exist(paper_dir):
    f = write(
        paper_dir / "p.yaml", "extends: defaults.yaml\nsweep:\n  x: {path: workload.nothing, values: [1]}\n"
    )
    with pytest.raises(sc.ScenarioError, match="sweep.x.path: no field 'workload.nothing'"):
        sc.load(f)


def test_sweep_with_sets_a_value_alongside_each_point(paper_dir):
    f = write(
        paper_dir / "w.yaml",
        "extends: defaults.yaml\nsweep:\n  flows:\n    path: workload.flows\n    values: [10, 20]\n"
        "    with: {duration_s: [30, 45]}\n",
    )
    jobs = sc.expand(sc.load(f), "quick")
    by_point = {(j.spec["point"], j.spec["duration_ns"]) for j in jobs}
    series = {j.series for j in jobs}
    assert by_point == {
        (f"{s}_flows-{n}", d) for s in series for n, d in [(10, 30 * 10**9), (20, 45 * 10**9)]
    }
    assert all(j.spec["point_values"].keys() == {"flows"} for j in jobs)


@pytest.mark.parametrize(
    "with_, message",
    [
        (
            "{duration_s: [30]}",
            "sweep.flows.with.duration_s: 1 values for the sweep's 2: one per sweep value",
        ),
        ("{workload.nothing: [1, 2]}", "sweep.flows.with.workload.nothing: no field 'workload.nothing'"),
        ("{seeds: [1, 2]}", "sweep.flows.with.seeds: seeds cannot be set by a sweep"),
    ],
)
def test_sweep_with_is_checked(paper_dir, with_, message):
    f = write(
        paper_dir / "w.yaml",
        "extends: defaults.yaml\nsweep:\n  flows: {path: workload.flows, values: [10, 20], "
        f"with: {with_}}}\n",
    )
    with pytest.raises(sc.ScenarioError) as exc:
        sc.load(f)
    assert any(message in p for p in exc.value.problems), exc.value.problems


def test_a_bad_value_set_with_a_sweep_is_named(paper_dir):
    f = write(
        paper_dir / "w.yaml",
        "extends: defaults.yaml\nsweep:\n  flows: {path: workload.flows, values: [10, 20], "
        "with: {duration_s: [30, -5]}}\n",
    )
    with pytest.raises(sc.ScenarioError) as exc:
        sc.expand(sc.load(f), "quick")
    assert any("sweep.flows.with.duration_s.1 (sets duration_s)" in p for p in exc.value.problems), (
        exc.value.problems
    )


def test_sweep_also_sets_every_path_and_each_must_exist(paper_dir):
    """`also` sets further paths to the swept value (srd: a link's rate and
    the discipline's rate_bps); a missing one is named by its index."""
    s = sc.load(REPO / "scenarios/srd/capacity.yaml")
    jobs = sc.expand(s, "quick", ["ns3"])
    for job in jobs:
        capacity = job.spec["point_values"]["capacity_bps"]
        bottleneck = next(link for link in job.spec["links"] if link["id"] == "bottleneck")
        assert bottleneck["rate_bps"] == capacity
        assert bottleneck["queues"]["L"]["params"]["rate_bps"] == capacity
    assert {j.spec["point_values"]["capacity_bps"] for j in jobs} == {10_000_000, 30_000_000, 100_000_000}
    f = write(
        paper_dir / "a.yaml",
        "extends: defaults.yaml\nsweep:\n"
        "  x: {path: workload.flows, also: [workload.nothing], values: [10]}\n",
    )
    with pytest.raises(sc.ScenarioError, match="sweep.x.also.0: no field 'workload.nothing'"):
        sc.load(f)


def test_malformed_yaml_names_the_line(paper_dir):
    f = write(paper_dir / "broken.yaml", "extends: defaults.yaml\nseeds: [a\n")
    with pytest.raises(sc.ScenarioError, match=r"broken.yaml: line \d+, column \d+: not valid YAML"):
        sc.load(f)


def test_circular_extends(paper_dir):
    write(paper_dir / "a.yaml", "extends: b.yaml\n")
    write(paper_dir / "b.yaml", "extends: a.yaml\n")
    with pytest.raises(sc.ScenarioError, match="circular inheritance"):
        sc.load(paper_dir / "a.yaml")


def test_cli_validate_has_no_traceback_for_user_mistakes(paper_dir):
    f = write(paper_dir / "x.yaml", "extends: defaults.yaml\nduration_s: [3]\n")
    proc = subprocess.run(
        [sys.executable, "-m", "qlab", "validate", str(f)], capture_output=True, text=True, cwd=REPO
    )
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert proc.stderr.strip() == f"{f}: duration_s: expected number, got list [3]"


def test_a_series_runs_only_on_the_backends_it_names(paper_dir, capsys):
    """series.<name>.backends: ns-3's own queue discs beside the core's
    disciplines in a scenario that also runs elsewhere (the benchmark's
    native baselines on ns3 while the rest also runs in emulation)."""
    f = write(
        paper_dir / "mixed.yaml",
        """\
extends: flows.yaml
series:
  fifo: {kind: ns3-fifo, params: {limit_pkts: 100}, backends: [ns3]}
""",
    )
    s = sc.load(f)
    jobs = sc.expand(s, "test")
    assert {(j.series, j.backend) for j in jobs} == {
        ("droptail", "ns3"),
        ("droptail", "ns2"),
        ("ncq", "ns3"),
        ("ncq", "ns2"),
        ("fifo", "ns3"),
    }
    # the same series without `backends` cannot run: ns-2 refuses ns-3's queue discs by name
    write(f, f.read_text().replace(", backends: [ns3]", ""))
    with pytest.raises(sc.ScenarioError) as exc:
        sc.expand(sc.load(f), "test")
    assert any("backend ns2 cannot run fifo" in p for p in exc.value.problems)
    # a series that would run on none of the scenario's backends, and a backend that does not exist
    write(f, f.read_text().replace("limit_pkts: 100}", "limit_pkts: 100}, backends: [mininet]"))
    assert main(["validate", str(f)]) == 2
    err = capsys.readouterr().err
    assert "series.fifo.backends: none of mininet is among the scenario's backends (ns3, ns2)" in err
    write(f, f.read_text().replace("backends: [mininet]", "backends: [ns33]"))
    assert main(["validate", str(f)]) == 2
    err = capsys.readouterr().err
    assert "series.fifo.backends" in err and "ns33" in err and "Traceback" not in err


def test_expansion_counts_and_pairing():
    s = sc.load(REPO / "scenarios/ncq-conf/flows.yaml")
    assert sc.resolve(s, "quick")["backends"] == ["ns3", "ns2"]
    assert len(sc.expand(s, "quick")) == 10 * 2 * 5 * 2  # flows points x series x seeds x backends
    jobs = sc.expand(s, "quick", ["ns3"])
    assert len(jobs) == 10 * 2 * 5  # flows points x series x seeds
    by = {(j.series, json.dumps(j.spec["point_values"]), j.seed): j for j in jobs}
    a = by[("droptail", json.dumps({"flows": 50}), 3)].spec
    b = by[("ncq", json.dumps({"flows": 50}), 3)].spec
    # same seed, same point: the same workload for both disciplines (paired comparison)
    assert a["flows"] == b["flows"]
    assert len(a["flows"]) == 50
    assert sum(f["group"] == "noncongestive" for f in a["flows"]) == 3  # ceil(2.5)
    # a different seed moves the start times
    c = by[("droptail", json.dumps({"flows": 50}), 4)].spec
    assert [f["start_ns"] for f in c["flows"]] != [f["start_ns"] for f in a["flows"]]
    # the discipline at the bottleneck's sending end, every parameter typed
    # (the core's defaults for those the scenario leaves out), seeded by the run
    bottleneck = next(link for link in b["links"] if link["id"] == "bottleneck")
    assert bottleneck["queues"]["L"] == {
        "kind": "ncq",
        "seed": 3,
        "params": {
            "size_bytes": 141,
            "thresh": 0.05,
            "limit_pkts": 100,
            "variant": "journal",
            "mode": "deterministic",
            "favor_acks": False,
            "ramp": 0.5,
        },
    }
    assert bottleneck["queues"]["R"] == {"kind": "lossless"} and b["trace"]["queues"] == ["bottleneck:L"]


def test_noncongestive_rounding_at_small_counts():
    s = sc.load(REPO / "scenarios/ncq-conf/flows.yaml")
    counts = {}
    for j in sc.expand(s, "quick"):
        counts[j.spec["point_values"]["flows"]] = sum(f["group"] == "noncongestive" for f in j.spec["flows"])
    assert counts[10] == 1 and counts[20] == 1 and counts[30] == 2 and counts[100] == 5


def test_profiles_change_seeds_and_values():
    s = sc.load(REPO / "scenarios/ncq-conf/flows.yaml")
    quick, paper, test = (sc.expand(s, p) for p in ("quick", "paper", "test"))
    assert len(paper) == 4 * len(quick)
    assert {j.spec["point_values"]["flows"] for j in test} == {10, 50}
    assert {j.seed for j in test} == {1, 2}


def test_write_jobs_only_rewrites_changed(tmp_path, paper_dir):
    s = sc.load(paper_dir / "thresh.yaml")
    jobs = sc.expand(s, "quick")
    assert sc.write_jobs(jobs, tmp_path) == len(jobs)
    assert sc.write_jobs(jobs, tmp_path) == 0
    f = paper_dir / "thresh.yaml"
    f.write_text(f.read_text().replace("thresh: 0.01,", "thresh: 0.02,"))
    changed = sc.expand(sc.load(f), "quick")
    assert sc.write_jobs(changed, tmp_path) == 5  # only ncq-0.01's five seeds


@needs(paths.QCORE_REPLAY)
def test_discipline_parameters_are_checked_by_the_core(paper_dir, capsys):
    f = paper_dir / "thresh.yaml"
    text = f.read_text()
    f.write_text(text.replace("thresh: 0.01,", "thresh: 1.5,"))
    assert main(["validate", str(f)]) == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        f"{f}: series.ncq-0.01.params: thresh: expected a decimal with at most 6 places "
        "between 0 and 1 (fraction), got 1.5"
    ]
    f.write_text(text.replace("thresh: 0.01,", "thresh: 0.01, colour: 1,"))
    assert main(["validate", str(f)]) == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        f"{f}: series.ncq-0.01.params: unknown parameter 'colour' for ncq "
        "(valid: size_bytes, thresh, limit_pkts, variant, mode, favor_acks, ramp)"
    ]


def test_assumptions_accumulate_down_the_inheritance_chain(paper_dir):
    flows = sc.load(paper_dir / "flows.yaml")
    ids = [a["id"] for a in flows.doc["assumptions"]]
    assert "task-sizes" in ids and "flows-step" in ids  # from defaults.yaml and flows.yaml
    f = paper_dir / "flows.yaml"
    f.write_text(f.read_text() + "  - id: task-sizes\n    text: Overridden here for a test.\n")
    again = sc.load(f).doc["assumptions"]
    assert [a["id"] for a in again] == ids  # replaced in place, not duplicated
    assert next(a for a in again if a["id"] == "task-sizes")["text"] == "Overridden here for a test."


@needs(paths.QCORE_REPLAY)
def test_schema_names_every_discipline_of_the_core():
    listed = subprocess.run(
        [str(paths.QCORE_REPLAY), "--list"], capture_output=True, text=True, check=True
    ).stdout.split()
    kinds = sc.schema()["$defs"]["discipline"]["properties"]["kind"]["enum"]
    # and ns-3's own queue discs (the ns3 backend only), which the core does not have
    assert sorted(kinds) == sorted(listed + native.kinds())


VOIP_GROUP = "voice: {count: 1, app: voip, onoff_dist: pareto, pareto_shape: 1.5}"


@pytest.mark.parametrize(
    "group, expect",
    [
        (VOIP_GROUP.replace("pareto, ", "weibull, "), "workload.groups.voice.onoff_dist: expected one of"),
        (VOIP_GROUP.replace("1.5", "1"), "workload.groups.voice.pareto_shape: expected a value > 1, got 1"),
        (
            VOIP_GROUP.replace("onoff_dist: pareto, ", ""),
            "workload.groups.voice.pareto_shape: shapes Pareto on/off periods: needs onoff_dist: pareto",
        ),
        (
            "voice: {count: 1, app: cbr, pkt_bytes: 120, rate_bps: 96000, onoff_dist: pareto}",
            "workload.groups.voice.onoff_dist: not a field of app cbr",
        ),
        (
            "voice: {count: 1, app: cbr, pkt_bytes: 120, rate_bps: 96000, pareto_shape: 2}",
            "workload.groups.voice.pareto_shape: not a field of app cbr",
        ),
    ],
)
def test_pareto_on_off_mistakes_name_the_field(paper_dir, capsys, group, expect):
    bad = write(
        paper_dir / "voice.yaml",
        f"extends: defaults.yaml\nworkload:\n  groups:\n    {group}\n",
    )
    assert main(["validate", str(bad)]) == 2
    assert f"{bad}: {expect}" in capsys.readouterr().err


def test_pareto_on_off_group_is_valid(paper_dir):
    good = write(
        paper_dir / "voice.yaml", f"extends: defaults.yaml\nworkload:\n  groups:\n    {VOIP_GROUP}\n"
    )
    assert sc.expand(sc.load(good), "test")


def test_workload_flows_may_be_left_out_when_every_group_counts(paper_dir, capsys):
    counted = (
        "extends: defaults.yaml\nworkload:\n  flows: null\n  groups:\n"
        "    noncongestive: {share: null, rounding: null, min_flows: null, count: 2}\n"
        "    congestive: {share: null, count: 5}\n"
        "sweep:\n  ftp: {path: workload.groups.congestive.count, values: [5, 7]}\n"
    )
    good = write(paper_dir / "counted.yaml", counted)
    jobs = sc.expand(sc.load(good), "test")
    assert {len(j.spec["flows"]) for j in jobs} == {7, 9}
    # the share is inherited: the error names the file that set it
    shared = write(
        paper_dir / "shared.yaml", counted.replace("{share: null, count: 5}", "{}").split("sweep:")[0]
    )
    assert main(["validate", str(shared)]) == 2
    assert capsys.readouterr().err.strip() == (
        f"{paper_dir / 'defaults.yaml'}: workload.groups.congestive.share: a share of workload.flows: "
        "give workload.flows"
    )

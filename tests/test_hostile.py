"""Hostile and clumsy input: every reproducer of issue 12's scenario and
runner findings, and the fuzz suite (tests/fuzz_scenarios.py).

Each scenario case must exit 2 with the file and the field named, within a
time bound, and never write outside the results directory.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import pytest

from qlab import scenario as sc
from qlab.cli import main

from .conftest import REPO

CANARY = Path("/tmp/qlab-hostile-canary")


def write(path: Path, text: str | bytes) -> Path:
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def refused(capsys, file: Path, *expected: str, argv: tuple[str, ...] = ()) -> str:
    """`qlab validate FILE` exits 2 in a few seconds, every line naming a
    file of FILE's directory (FILE or one it extends), and the expected text
    appears."""
    t0 = time.monotonic()
    rc = main(["validate", *argv, str(file)])
    elapsed = time.monotonic() - t0
    err = capsys.readouterr().err
    assert rc == 2, err
    assert elapsed < 10, f"{elapsed:.1f} s"
    lines = err.strip().splitlines()
    assert lines and all(line.startswith(f"{file.parent}/") and ".yaml: " in line for line in lines), err
    for e in expected:
        assert e in err, err
    return err


# ---------------------------------------------------------------------------
# writes outside --results and shell strings


def test_a_sweep_from_an_override_cannot_escape_the_results(paper_dir, tmp_path, capsys):
    target = CANARY / "escape"
    f = write(
        paper_dir / "esc.yaml",
        f"""\
extends: defaults.yaml
profiles: {{test: {{seeds: 1, override: {{sweep: {{x: {{path: description,
  values: ["/../../../../../../../..{target}"]}}}}}}}}}}
""",
    )
    refused(capsys, f, "profiles.test.override.sweep.x.values.0: expected a value usable in a path")
    results = tmp_path / "results"
    rc = main(["expand", "--profile", "test", "--results", str(results), str(f)])
    assert rc == 2
    assert not CANARY.exists()


def test_write_jobs_refuses_a_path_outside_the_results(tmp_path):
    job = sc.Job("ncq-conf/x", "ns3", "a", "../../../../escape", 1, {})
    with pytest.raises(sc.ScenarioError, match="not a safe results path"):
        sc.write_jobs([job], tmp_path / "results")
    assert not (tmp_path / "escape").exists()


def test_a_shell_payload_in_an_override_is_refused(paper_dir, capsys):
    f = write(
        paper_dir / "inj.yaml",
        """\
extends: defaults.yaml
profiles: {test: {seeds: 1, override: {tcp: {
  initial_cwnd_segments: "2;touch${IFS}/tmp/qlab-hostile-canary;true"}}}}
""",
    )
    refused(capsys, f, "profiles.test.override.tcp.initial_cwnd_segments: expected integer, got string")


def test_run_job_refuses_a_hand_made_plan_with_a_shell_payload(tmp_path):
    scen = sc.load(REPO / "scenarios" / "ncq-conf" / "emu.yaml")
    job = next(j for j in sc.expand(scen, "test") if j.backend == "mininet")
    plan = dict(job.spec, tcp={**job.spec["tcp"], "initial_cwnd_segments": f"2;touch {CANARY};true"})
    f = write(tmp_path / "job.json", json.dumps(plan))
    out = tmp_path / "out"
    proc = subprocess.run(
        [sys.executable, "-m", "qlab", "run-job", str(f), "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=REPO,
    )
    assert proc.returncode == 2, proc.stderr
    assert "tcp.initial_cwnd_segments: expected integer, got string" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not out.exists() and not CANARY.exists()


def test_the_mininet_runner_quotes_every_argument_and_checks_types():
    sys.path.insert(0, str(REPO / "disciplines" / "emu"))
    try:
        import qlab_mn_run as mn
    finally:
        sys.path.pop(0)
    import ipaddress
    import shlex

    class Host:
        """Records the shell commands; answers `sysctl -n` with what was set."""

        name = "h"

        def __init__(self):
            self.cmds: list[str] = []
            self.set: dict[str, str] = {}

        def IP(self):  # noqa: N802 (Mininet's name)
            return "10.0.0.1"

        def cmd(self, text):
            self.cmds.append(text)
            argv = shlex.split(text.split(";")[0])
            if argv[:2] == ["sysctl", "-qw"]:
                self.set.update(a.split("=", 1) for a in argv[2:])
            if argv[:2] == ["sysctl", "-n"]:
                return " ".join(self.set[k] for k in argv[2:])
            return ""

    tcp = {
        "variant": "NewReno",
        "sack": False,
        "timestamps": False,
        "window_scaling": False,
        "initial_cwnd_segments": 2,
        "min_rto_ns": 200_000_000,
    }
    net = ipaddress.ip_network("10.0.0.0/24")
    h = Host()
    mn.configure_host(h, {"tcp": tcp}, "qs0-0", net, 1500)
    assert shlex.split(h.cmds[-1]) == [
        "ip",
        "route",
        "change",
        "10.0.0.0/24",
        "dev",
        "qs0-0",
        "proto",
        "kernel",
        "scope",
        "link",
        "src",
        "10.0.0.1",
        "initcwnd",
        "2",
        "rto_min",
        "200ms",
    ]
    for field, bad in (
        ("initial_cwnd_segments", "2;touch /tmp/x"),
        ("min_rto_ns", "1$(touch /tmp/x)"),
        ("sack", "1;touch /tmp/x"),
    ):
        h = Host()
        with pytest.raises(mn.BadJob, match=f"tcp.{field}: expected"):
            mn.configure_host(h, {"tcp": dict(tcp, **{field: bad})}, "qs0-0", net, 1500)
        assert not any("touch" in c for c in h.cmds)


# ---------------------------------------------------------------------------
# what used to be a traceback


@pytest.mark.parametrize(
    "name,text,expected",
    [
        (
            "sweep-type",
            "sweep: {f: {path: workload.flows, values: [abc, 5]}}\n",
            "sweep.f.values.0 (sets workload.flows): expected integer, got string",
        ),
        (
            "sweep-share",
            "sweep: {f: {path: workload.groups.congestive.task_bytes, values: [[1]]}}\n",
            "sweep.f.values.0: expected integer or number or string",
        ),
        ("int-key", "1: x\n", "keys must be text; got integer 1"),
        ("bool-key", "yes: x\n", "keys must be text; got boolean True"),
        ("null-key", "~: x\n", "keys must be text"),
        ("date", "description: 2024-01-01\nx: !!timestamp 2024-01-01\n", "unsupported YAML type"),
        ("set", "description: !!set {a, b}\n", "unsupported YAML type tag:yaml.org,2002:set"),
        ("binary", "description: !!binary aGVsbG8=\n", "unsupported YAML type"),
        ("python", "description: !!python/object/apply:os.system [true]\n", "unsupported YAML type"),
        ("deep", "description: " + "[" * 5000 + "]" * 5000 + "\n", "nested more than 32 levels deep"),
        ("bigint", "seeds: " + "9" * 5000 + "\n", "integer too large"),
        ("nan", "duration_s: .nan\n", "duration_s: expected a finite number, got nan"),
        ("inf", "duration_s: .inf\n", "duration_s: expected a finite number, got inf"),
        ("huge-float", "duration_s: 1.0e+308\n", "duration_s: expected a value <= 1000000.0"),
        ("float-int", "workload: {flows: 10.0}\n", "workload.flows: expected integer, got number 10.0"),
        ("dup-key", "duration_s: 20\nduration_s: 30\n", "duplicate key 'duration_s'"),
        ("dup-seeds", "seeds: [1, 1]\n", "seeds: invalid value [1, 1]"),
        ("abstract-string", 'abstract: "false"\n', "abstract: expected true or false, got string 'false'"),
        (
            "tiny-rate",
            "topology: {bottleneck_rate_bps: 1.0e-300}\n",
            "topology.bottleneck_rate_bps: expected a value >= 1",
        ),
    ],
)
def test_bad_yaml_and_values_give_one_clear_line(paper_dir, capsys, name, text, expected):
    f = write(paper_dir / f"{name}.yaml", "extends: defaults.yaml\n" + text)
    refused(capsys, f, expected)


def test_non_utf8_names_the_line(paper_dir, capsys):
    f = write(paper_dir / "utf.yaml", b'extends: defaults.yaml\ndescription: "\xff\xfe"\n')
    refused(capsys, f, "line 2: not UTF-8 text (byte 0xff)")


def test_a_long_extends_chain_and_a_cycle_are_reported(paper_dir, capsys):
    prev = "defaults.yaml"
    for i in range(20):
        write(paper_dir / f"chain{i}.yaml", f"extends: {prev}\nabstract: true\n")
        prev = f"chain{i}.yaml"
    f = write(paper_dir / "chain-end.yaml", f"extends: {prev}\n")
    refused(capsys, f, "more than 16 files deep")
    write(paper_dir / "cyc-a.yaml", "extends: cyc-b.yaml\n")
    f = write(paper_dir / "cyc-b.yaml", "extends: cyc-a.yaml\n")
    refused(capsys, f, "circular inheritance")


def test_extends_through_a_symbolic_link_out_of_the_directory(paper_dir, tmp_path, capsys):
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "defaults.yaml").write_text((paper_dir / "defaults.yaml").read_text())
    (paper_dir / "link.yaml").symlink_to(outside / "defaults.yaml")
    f = write(paper_dir / "sym.yaml", "extends: link.yaml\n")
    refused(capsys, f, "extends: link.yaml leads outside")


def test_a_file_too_large_is_refused(paper_dir, capsys):
    f = write(paper_dir / "big.yaml", "extends: defaults.yaml\ndescription: " + "x" * (2 << 20) + "\n")
    refused(capsys, f, "larger than 1024 KiB")


# ---------------------------------------------------------------------------
# what used to hang


def test_a_yaml_bomb_is_refused_quickly(paper_dir, capsys):
    lines = ['a0: &a0 ["x","x","x","x","x","x","x","x","x"]']
    lines += [f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, 10)]
    f = write(paper_dir / "bomb.yaml", "extends: defaults.yaml\n" + "\n".join(lines) + "\n")
    refused(capsys, f, "once aliases are expanded (a YAML bomb?)")


HUNDRED = ", ".join(map(str, range(1, 101)))
SEEDS = ", ".join(map(str, range(1000)))


@pytest.mark.parametrize(
    "name,text,expected",
    [
        (
            "cartesian",
            f"sweep: {{a: {{path: workload.flows, values: [{HUNDRED}]}}, b: {{path: "
            f"workload.start_jitter_s, values: [{HUNDRED}]}}, "
            f"c: {{path: duration_s, values: [{HUNDRED}]}}}}\n",
            "expands to 10,000,000 runs",
        ),
        (
            "seeds",
            f"profiles: null\nseeds: [{SEEDS}]\n"
            "sweep: {a: {path: workload.flows, values: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]}}\n",
            "above the limit of 10,000",
        ),
        ("duration", "duration_s: 1.0e+9\n", "duration_s: expected a value <= 1000000.0"),
        (
            "onoff",
            "workload: {groups: {u: {app: onoff, count: 1, pkt_bytes: 100, rate_bps: 1000, "
            "on_s: 1.0e-9, off_s: 1.0e-9}}}\n",
            "on/off periods per flow",
        ),
        (
            "packets",
            "duration_s: 1000000\nworkload: {flows: 1000, groups: {noncongestive: null, "
            "congestive: null, u: {app: cbr, share: rest, pkt_bytes: 40, rate_bps: 1.0e+12}}}\n",
            "the limit (offered load x duration / packet size",
        ),
    ],
)
def test_huge_expansions_are_refused_before_anything_is_built(paper_dir, capsys, name, text, expected):
    f = write(paper_dir / f"{name}.yaml", "extends: defaults.yaml\n" + text)
    refused(capsys, f, expected)


def test_the_limits_can_be_raised_for_a_real_study(paper_dir, capsys, monkeypatch):
    f = write(
        paper_dir / "many.yaml",
        "extends: defaults.yaml\nprofiles: null\nseeds: 1000\n"
        "sweep: {a: {path: workload.flows, values: [10, 20, 30, 40, 50, 60]}}\n",
    )
    refused(capsys, f, "expands to 12,000 runs", "above the limit of 10,000")
    monkeypatch.setenv("QLAB_MAX_JOBS", "10000")  # restored after the test; --max-jobs sets it
    assert main(["validate", "--max-jobs", "20000", str(f)]) == 0
    refused(capsys, f, "above the limit of 1,000", argv=("--max-jobs", "1000"))


# ---------------------------------------------------------------------------
# what used to be accepted


@pytest.mark.parametrize(
    "name,text,expected",
    [
        (
            "neg-duration",
            "profiles: {test: {override: {duration_s: -5}}}\n",
            "profiles.test.override.duration_s: expected a value >= 1e-09, got -5",
        ),
        (
            "zero-rate",
            "profiles: {test: {override: {topology: {bottleneck_rate_bps: 0}}}}\n",
            "profiles.test.override.topology.bottleneck_rate_bps: expected a value >= 1, got 0",
        ),
        (
            "two-rest",
            "profiles: {test: {override: {workload: {groups: {noncongestive: {share: rest}}}}}}\n",
            "at most one group may have share: rest",
        ),
        (
            "nan-override",
            "profiles: {test: {override: {duration_s: .nan}}}\n",
            "profiles.test.override.duration_s: expected a finite number, got nan",
        ),
        (
            "float-override",
            "profiles: {test: {override: {workload: {flows: 2.5}}}}\n",
            "profiles.test.override.workload.flows: expected integer, got number 2.5",
        ),
        ("dup-profile-seeds", "profiles: {test: {seeds: [3, 3]}}\n", "profiles.test.seeds"),
        (
            "long-value",
            "profiles: {test: {override: {sweep: {x: {path: description, values: [%s]}}}}}\n" % ("a" * 300),
            "expected a value usable in a path",
        ),
        ("sweep-seeds", "sweep: {x: {path: seeds, values: [1, 2]}}\n", "sweep.x.path: seeds cannot be swept"),
        (
            "sweep-mapping",
            "sweep: {x: {path: workload, values: [1, 2]}}\n",
            "sweep.x.path: workload is a mapping; a sweep sets one value",
        ),
    ],
)
def test_overrides_and_sweeps_pass_the_same_checks(paper_dir, capsys, name, text, expected):
    f = write(paper_dir / f"{name}.yaml", "extends: defaults.yaml\n" + text)
    refused(capsys, f, expected)


# ---------------------------------------------------------------------------
# the fuzz suite


def test_fuzz_scenarios(tmp_path):
    """1,500 generated malformed scenarios: 0 tracebacks, 0 hangs, 0 writes
    outside the results, 0 accepted scenarios whose plans the job schema
    rejects, under a 2 GiB address-space limit. `make fuzz` runs more."""
    out = tmp_path / "fuzz.json"

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))

    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "tests.fuzz_scenarios",
            "--cases",
            "1500",
            "--seed",
            os.environ.get("QLAB_FUZZ_SEED", "1"),
            "--out",
            str(out),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
        preexec_fn=limit,
    )
    summary = json.loads(out.read_text())
    assert summary["cases"] == 1500
    assert summary["n_failures"] == 0, json.dumps(summary["failures"][:5], indent=1)
    assert proc.returncode == 0, proc.stderr[-2000:]
    # both outcomes are exercised: the generator is not trivially refused
    assert summary["counts"].get("accepted", 0) >= 50 and summary["counts"]["refused"] >= 1000


def test_validate_profile_checks_that_profile_only(paper_dir, capsys):
    """make reproduce checks the profile it runs (`--profile`); a problem of
    another profile is still found without it."""
    f = write(
        paper_dir / "other-profile.yaml",
        "extends: flows.yaml\nprofiles:\n  paper:\n    override:\n      tcp: {initial_cwnd_segments: -1}\n",
    )
    refused(capsys, f, "profiles.paper.override.tcp.initial_cwnd_segments")
    assert main(["validate", "--profile", "quick", str(f)]) == 0, capsys.readouterr().err
    refused(capsys, f, "profiles.paper.override.tcp.initial_cwnd_segments", argv=("--profile", "paper"))


def test_validate_stamp_skips_only_what_did_not_change(paper_dir, tmp_path, capsys):
    """make reproduce validates with --stamp: a second validation of the same
    inputs checks nothing again; changing a scenario checks it again, and a
    refused scenario leaves the stamp as it was (a later run still checks)."""
    f = write(paper_dir / "stamped.yaml", "extends: flows.yaml\n")
    stamp = tmp_path / "res" / ".qlab-validated"
    assert main(["validate", "--profile", "quick", "--stamp", str(stamp), str(f)]) == 0
    assert "scenarios valid" in capsys.readouterr().out
    recorded = stamp.read_text()
    assert main(["validate", "--profile", "quick", "--stamp", str(stamp), str(f)]) == 0
    assert "nothing changed since the last validation" in capsys.readouterr().out
    # another profile is another validation
    assert main(["validate", "--profile", "test", "--stamp", str(stamp), str(f)]) == 0
    assert "scenarios valid" in capsys.readouterr().out
    write(f, "extends: flows.yaml\ntcp: {initial_cwnd_segments: -1}\n")
    refused(capsys, f, "tcp.initial_cwnd_segments", argv=("--profile", "test", "--stamp", str(stamp)))
    assert stamp.read_text() != recorded  # the 'test' validation's, not overwritten by the refusal
    refused(capsys, f, "tcp.initial_cwnd_segments", argv=("--profile", "test", "--stamp", str(stamp)))

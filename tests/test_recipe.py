"""The README's "Adding a discipline", followed in a copy of the tree: a copy
of droptail under a new name, registered, with its registry regenerated and
its golden vectors, touches at most six files and then appears in every
backend: qcore-replay, the ns-3 runner (a scenario runs it), qlab-emu (and
its replay), the generic kernel qdisc and its tc plugin.

Minutes: it builds the core, the ns-3 runner, qlab-emu, the kernel modules
and the tc plugins from scratch, as a new discipline's author would."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from qlab import traces

from .conftest import REPO, copy_checkout

NAME = "mydisc"
IPROUTE2 = sorted((REPO / "build/linux/src").glob("iproute2-*/"))
KVER = subprocess.run(
    [str(REPO / "disciplines/linux/vm/kver.sh")], capture_output=True, text=True, check=False
).stdout.strip()
pytestmark = [
    pytest.mark.skipif(shutil.which("cmake") is None, reason="cmake is not installed (scripts/setup.sh)"),
    pytest.mark.skipif(
        not IPROUTE2,
        reason="no iproute2 source in build/linux/src "
        "(disciplines/linux/vm/fetch-deps.sh fetches it; make test runs it first)",
    ),
    pytest.mark.skipif(
        not KVER or not Path(f"/lib/modules/{KVER}/build").exists(),
        reason="no kernel headers (scripts/setup.sh installs linux-headers-amd64)",
    ),
]


def sh(
    *cmd: str | Path,
    cwd: Path | None = None,
    env: dict | None = None,
    ok: bool = True,
    stdin: str | None = None,
) -> subprocess.CompletedProcess:
    proc = subprocess.run(
        [str(c) for c in cmd], cwd=cwd, env=env, capture_output=True, text=True, input=stdin, check=False
    )
    if ok and proc.returncode != 0:
        pytest.fail(
            f"{' '.join(map(str, cmd))} failed ({proc.returncode}):\n"
            f"{proc.stdout[-2000:]}\n{proc.stderr[-3000:]}"
        )
    return proc


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> Path:
    """A git copy of the checkout (tracked and new files), committed, so that
    what the recipe touches is `git status`."""
    root = tmp_path_factory.mktemp("recipe")
    tree = copy_checkout(root / "tree")
    sh("git", "init", "-q", cwd=tree)
    sh("git", "add", "-A", cwd=tree)
    sh("git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "copy", cwd=tree)
    return tree


def test_a_new_discipline_touches_six_files_and_runs_everywhere(tree):
    build = tree.parent / "build"
    core = tree / "disciplines/core"
    # 1. the discipline: droptail under a new name
    for ext in ("h", "c"):
        text = (core / f"droptail.{ext}").read_text()
        (core / f"{NAME}.{ext}").write_text(text.replace("droptail", NAME).replace("DROPTAIL", NAME.upper()))
    # 2. its registry entry
    qcore_c = core / "qcore.c"
    text = qcore_c.read_text()
    assert '#include "droptail.h"\n' in text and "\t&droptail_ops,\n" in text
    text = text.replace('#include "droptail.h"\n', f'#include "droptail.h"\n#include "{NAME}.h"\n')
    qcore_c.write_text(text.replace("\t&droptail_ops,\n", f"\t&droptail_ops,\n\t&{NAME}_ops,\n"))
    # 3. its golden vectors (droptail's decisions are its decisions)
    golden = core / "golden" / NAME
    golden.mkdir()
    for f in (core / "golden/droptail").glob("*"):
        if f.suffix in (".csv", ".args"):
            shutil.copy2(f, golden / f.name)
    # 4. the registry's description for Python, regenerated
    sh("make", "-s", "-C", core, f"BUILD={build / 'core'}", "registry")
    touched = sh("git", "status", "--porcelain", cwd=tree).stdout.splitlines()
    assert len(touched) <= 6, touched
    assert {line[3:] for line in touched} == {
        "disciplines/core/qcore.c",
        "disciplines/core/registry.json",
        f"disciplines/core/{NAME}.h",
        f"disciplines/core/{NAME}.c",
        f"disciplines/core/golden/{NAME}/",
    }

    # the core: its tests (the golden vectors of every discipline) and the replay
    sh("make", "-s", "-C", core, f"BUILD={build / 'core'}", "test")
    replay = build / "core/qcore-replay"
    assert NAME in sh(replay, "--list").stdout.split()
    case = sorted(golden.glob("*.events.csv"))[0]
    args = case.with_name(case.name.replace(".events.csv", ".args")).read_text().split()
    want = case.with_name(case.name.replace(".events.csv", ".decisions.csv")).read_text()
    assert sh(replay, NAME, *args, stdin=case.read_text()).stdout == want

    # ns-3: the typed queue disc exists, and a scenario with the new kind runs
    sh("cmake", "-S", tree / "disciplines/ns3", "-B", build / "ns3", "-DCMAKE_BUILD_TYPE=Release")
    sh("cmake", "--build", build / "ns3", "--target", "qlab-ns3-run", "-j2")
    scen = tree / "scenarios/disciplines" / f"{NAME}-demo.yaml"
    scen.write_text(
        f"extends: defaults.yaml\nduration_s: 10\nworkload:\n  flows: 4\n  groups:\n"
        f"    bulk: {{count: 4, seg_bytes: 1000, task_bytes: 200000}}\n"
        f"series:\n  new: {{kind: {NAME}, params: {{limit_pkts: 20}}}}\n"
    )
    env = dict(
        os.environ,
        QLAB_ROOT=str(tree),
        QLAB_NS3_RUNNER=str(build / "ns3/qlab-ns3-run"),
        QLAB_QCORE_REPLAY=str(replay),
    )
    qlab = [sys.executable, "-m", "qlab"]
    sh(*qlab, "validate", scen, env=env, cwd=tree)
    sh(*qlab, "expand", "--profile", "test", "--results", build / "results", scen, env=env, cwd=tree)
    plan_file = next((build / "results/jobs").rglob("*.json"))
    plan = json.loads(plan_file.read_text())
    assert next(lk for lk in plan["links"] if lk["id"] == "bottleneck")["queues"]["L"]["kind"] == NAME
    out = build / "results/run"
    sh(*qlab, "run-job", plan_file, "--out", out, env=env, cwd=tree)
    assert traces.check_dir(out) == []
    _, rows = traces.read_csv_gz(out / "flows.csv.gz")
    assert all(r[10] == "1" for r in rows), rows  # every transfer completed

    # the benchmark suite takes it with no edit (every_discipline: true), at
    # its registry defaults, in every workload (tests/test_bench.py checks the
    # leaderboard side without a build)
    bench = tree / "scenarios/bench/bulk.yaml"
    sh(*qlab, "expand", "--profile", "test", "--results", build / "bench", bench, env=env, cwd=tree)
    bench_plan = json.loads((build / "bench/jobs/bench/bulk/ns3" / NAME / "seed-1.json").read_text())
    assert next(lk for lk in bench_plan["links"] if lk["id"] == "bottleneck")["queues"]["L"]["kind"] == NAME

    # qlab-emu: listed, and its own queueing code replays the golden vector
    sh("make", "-s", "-C", tree / "disciplines/emu", f"BUILD={build / 'emu'}")
    emu = build / "emu/qlab-emu"
    assert NAME in sh(emu, "--list").stdout.split()
    assert sh(emu, "--replay", NAME, *args, stdin=case.read_text()).stdout == want

    # Linux: the generic qdisc's module and tc plugin know it (no Linux file changed)
    linux = build / "linux"
    sh(
        "make",
        "-s",
        "-C",
        tree / "disciplines/linux",
        f"BUILD={linux}",
        f"IPROUTE2={IPROUTE2[0]}",
        "modules",
        "plugins",
    )
    assert NAME.encode() in (linux / "kmod/qlab_core.ko").read_bytes()
    assert (linux / "kmod/sch_qlab.ko").exists()
    tc = sh(
        "tc",
        "qdisc",
        "add",
        "dev",
        "lo",
        "root",
        "qlab",
        "disc",
        NAME,
        "help",
        env=dict(os.environ, TC_LIB_DIR=str(linux / "tc")),
        ok=False,
    )
    assert "limit_pkts" in tc.stdout + tc.stderr, tc.stderr

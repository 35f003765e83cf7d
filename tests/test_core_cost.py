"""benchmarks/core_cost.c: its --kernel-workload is the kernel benchmark's packets."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CORE_COST = ROOT / "benchmarks" / "core_cost.c"
KERNEL_BENCH = ROOT / "disciplines" / "linux" / "tests" / "kunit" / "qlab_bench.c"


def c_array(text: str, name: str) -> list[int]:
    m = re.search(rf"\b{name}\[\]\s*=\s*\{{([^}}]*)\}}", text)
    assert m, f"no array {name}[]"
    return [int(v, 0) for v in m.group(1).replace(" ", "").split(",") if v]


def test_kernel_workload_lists_are_the_kernel_benchmarks():
    """Sizes, ToS bytes and the batch: the same lists in both programs."""
    ours, kernel = CORE_COST.read_text(), KERNEL_BENCH.read_text()
    for name in ("lens", "toses"):
        assert c_array(ours, name) == c_array(kernel, name), name
    ours_batch = re.search(r"#define KERNEL_BATCH (\d+)", ours)
    kernel_batch = re.search(r"static int batch = (\d+);", kernel)
    assert ours_batch and kernel_batch
    assert ours_batch.group(1) == kernel_batch.group(1)


@pytest.fixture(scope="module")
def core_cost(tmp_path_factory) -> Path:
    lib = ROOT / "build" / "core" / "libqcore.a"
    subprocess.run(
        ["make", "-s", "-C", "disciplines/core", "../../build/core/libqcore.a"], cwd=ROOT, check=True
    )
    out = tmp_path_factory.mktemp("core_cost") / "core_cost"
    subprocess.run(
        [
            "gcc",
            "-std=c11",
            "-O2",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-Idisciplines/core",
            "-o",
            str(out),
            str(CORE_COST),
            str(lib),
        ],
        cwd=ROOT,
        check=True,
    )
    return out


def run(binary: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(binary), *args], capture_output=True, text=True, timeout=60)


def test_kernel_workload_drains_each_batch(core_cost):
    """WRED as the kernel benchmark configures it (seeded as `seed 1`): every
    packet offered, each batch drained, its random drops reported."""
    r = run(
        core_cost,
        "wred",
        "6400",
        "--kernel-workload",
        "--param",
        "classes=8",
        "--param",
        "weights_bytes=1500",
        "--param",
        "q_pkts=1000",
    )
    assert r.returncode == 0, r.stderr
    m = re.search(r"(\d+) packets, (\d+) dropped", r.stderr)
    assert m and int(m.group(1)) == 6400 and 0 < int(m.group(2)) < 6400


def test_bad_arguments_are_named(core_cost):
    r = run(core_cost, "nosuch", "10")
    assert r.returncode == 2 and "usage: core_cost" in r.stderr
    r = run(core_cost, "wred", "10", "--kernel-workload", "--param", "classes=99")
    assert r.returncode == 2 and "classes" in r.stderr

from __future__ import annotations

import ast
import functools
import re
import shutil
import subprocess
import warnings
from pathlib import Path

import pytest

from qlab import paths

REPO = paths.ROOT


@pytest.fixture
def paper_dir(tmp_path: Path) -> Path:
    """A copy of scenarios/ncq-conf to break on purpose."""
    d = tmp_path / "ncq-conf"
    shutil.copytree(REPO / "scenarios" / "ncq-conf", d)
    return d


def needs(path: Path) -> pytest.MarkDecorator:
    return pytest.mark.skipif(not path.exists(), reason=f"{path} not built (make build)")


@pytest.fixture
def demo_dir(tmp_path: Path) -> Path:
    """A scenario tree of the disciplines demonstrations' defaults, to add a
    scenario file to (test_plan.py has its own, empty one)."""
    d = tmp_path / "disciplines"
    d.mkdir()
    (d / "defaults.yaml").write_text((REPO / "scenarios/disciplines/defaults.yaml").read_text())
    return d


def copy_checkout(root: Path) -> Path:
    """Copy the checkout's tracked and new files into `root`, keeping their
    modification times."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO,
        capture_output=True,
        check=True,
    ).stdout.decode()
    for rel in filter(None, listed.split("\0")):
        src = REPO / rel
        if src.is_file():
            dst = root / rel
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dst)
    return root


@pytest.fixture
def own_checkout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the checkout's files (tracked and new, modification times
    kept, so that the build is up to date in it), with `build` and `.venv`
    linked to the checkout's. A workflow run in it (cwd and QLAB_ROOT) holds
    a reproduction lock of its own (.snakemake), so it runs beside the
    workflow tests of this checkout: the emulation's workflow tests do, in
    the host group (xdist_group below)."""
    root = copy_checkout(tmp_path_factory.mktemp("checkout"))
    for shared in ("build", ".venv"):
        if (REPO / shared).exists():
            (root / shared).symlink_to(REPO / shared)
    return root


# Fidelity is judged on real timing: on a loaded machine a run can break the
# invariants (and is marked invalid, as it should be). Tests try up to this
# many times for a faithful run; if the machine cannot hold the timing in
# any of them, the run's facts are still checked (they come from the
# emulator's virtual-time model), the timing failure is reported as a
# warning, and only a reason that is not about timing fails the test.
TIMING_ATTEMPTS = 3
TIMING_REASONS = ("achieved rate", "departure spacing", "added delay", "sender late")


def faithful(valid: bool, reasons: list[str]) -> bool:
    """True for a faithful run; False (with a warning) for one that broke
    only the timing invariants; fails for any other reason."""
    if valid:
        assert reasons == []
        return True
    assert reasons, "an invalid run must say why"
    other = [r for r in reasons if not any(words in r for words in TIMING_REASONS)]
    assert other == [], other
    warnings.warn(f"this machine did not hold the emulation's timing: {'; '.join(reasons)}", stacklevel=2)
    return False


# `pytest -n 2` (pytest-xdist; scripts/test.sh): what shares state on this
# machine runs on one worker, in order (a group); the rest is spread over
# the workers test by test.
# - "workflow": tests that run qlab's workflow in this checkout. They share
#   qlab's reproduction lock in .snakemake (a second reproduction exits 2),
#   and their module-scoped fixtures are reproductions that must run once.
#   A module is in it when its text names Snakemake; so is a test of
#   test_mininet.py or test_hostile.py whose own source does (the rest of
#   those modules runs no workflow: test_hostile's names it in docstrings,
#   and its 1,500-case fuzz test would otherwise wait for the workflow's).
# - "host": tests that change this machine: Mininet runs (one at a time,
#   the runner's lock), Ansible on localhost; and the emulation's workflow
#   tests, which run the workflow in a checkout of their own (the fixture
#   own_checkout), so that they wait neither for the workflow group's lock
#   nor, on the workflow's worker, for the Mininet runs of this group.
# xdist's own `--dist loadgroup` cannot be used: it renames the tests'
# node ids, which pytest 9 no longer allows, so the groups are found from
# the node ids by a scheduler of qlab's (pytest_xdist_make_scheduler).
WORKFLOW_WORDS = re.compile(r"snakemake|make reproduce", re.IGNORECASE)
PER_TEST_MODULES = {"test_mininet", "test_hostile"}
HOST_MODULES = {"test_mininet", "test_roles", "test_testbed", "test_mnkernel", "test_prepare_host"}


@functools.cache
def _module_text(path: str) -> str:
    return (REPO / path).read_text(encoding="utf-8")


@functools.cache
def _function_sources(path: str) -> dict[str, str]:
    text = _module_text(path)
    return {
        node.name: ast.get_source_segment(text, node) or ""
        for node in ast.parse(text).body
        if isinstance(node, ast.FunctionDef)
    }


def xdist_group(nodeid: str) -> str | None:
    """The group of a test ("tests/test_x.py::test_y[param]"), or None."""
    path, _, rest = nodeid.partition("::")
    module = Path(path).stem
    name = rest.split("[", 1)[0].split("::")[-1]
    if path.endswith(".py") and "own_checkout" in _function_sources(path).get(name, ""):
        return "host"
    if module in PER_TEST_MODULES:
        source = _function_sources(path).get(name, "")
        if WORKFLOW_WORDS.search(source):
            return "workflow"
        return "host" if module in HOST_MODULES else None
    if path.endswith(".py") and WORKFLOW_WORDS.search(_module_text(path)):
        return "workflow"
    return "host" if module in HOST_MODULES else None


try:
    from xdist.scheduler import LoadScopeScheduling
except ImportError:  # pragma: no cover (requirements.txt installs it)
    LoadScopeScheduling = None

if LoadScopeScheduling is not None:

    class GroupScheduling(LoadScopeScheduling):
        """xdist's scope scheduling, a scope being a test's group or the test."""

        def _split_scope(self, nodeid: str) -> str:
            return xdist_group(nodeid) or nodeid

    # optional: `pytest -p no:xdist` (one process) must still collect
    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_make_scheduler(config, log):
        return GroupScheduling(config, log)

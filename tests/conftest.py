from __future__ import annotations

import shutil
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

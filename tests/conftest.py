from __future__ import annotations

import shutil
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

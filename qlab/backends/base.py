"""The interface every backend runner implements."""

from __future__ import annotations

import abc
from pathlib import Path
from typing import Any


class BackendError(Exception):
    """A backend could not run a job (missing tool, runner failure)."""


class Backend(abc.ABC):
    name: str = ""

    @abc.abstractmethod
    def tools(self) -> dict[str, Path]:
        """Programs the backend needs, by name (checked before a run)."""

    def check_tools(self) -> None:
        for what, path in self.tools().items():
            if not Path(path).exists():
                raise BackendError(
                    f"backend {self.name}: {what} not found at {path} "
                    f"(build it with `make build` or set the matching QLAB_* variable)")

    @abc.abstractmethod
    def run(self, job_file: Path, workdir: Path, log: Path | None) -> dict[str, Any]:
        """Run one job, writing plain CSV tables into workdir; return runner facts
        (sim_end_s, all_completed, versions, wall_time_s)."""

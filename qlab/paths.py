"""Where things live in a qlab checkout (overridable with QLAB_ROOT)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(os.environ.get("QLAB_ROOT", Path(__file__).resolve().parent.parent))
SCENARIOS = ROOT / "scenarios"
SCHEMA = SCENARIOS / "schema.json"
BUILD = ROOT / "build"
QCORE_REPLAY = Path(os.environ.get("QLAB_QCORE_REPLAY", BUILD / "core" / "qcore-replay"))
NS3_RUNNER = Path(os.environ.get("QLAB_NS3_RUNNER", BUILD / "ns3" / "qlab-ns3-run"))
REPORTS = ROOT / "reports"


def interpreter_first_on_path() -> None:
    """Put the running interpreter's directory first on this process's PATH,
    which the workflow's local and SLURM jobs inherit (workflows/common.smk):
    their `python3 -m qlab` is then the checkout's venv. Not a variable the
    workflow passes to its jobs (`envvars:`): a Kubernetes pod must keep its
    image's PATH."""
    os.environ["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"


def site_pages() -> list[str]:
    """The report's pages, as reports/_quarto.yml lists them (project.render)."""
    import yaml

    site = yaml.safe_load((REPORTS / "_quarto.yml").read_text(encoding="utf-8"))
    return [str(p) for p in site["project"]["render"]]

"""What a reproduction ran with: commit, scenario hashes, seeds, package versions."""

from __future__ import annotations

import hashlib
import subprocess
from importlib import metadata
from pathlib import Path
from typing import Any

from qlab import __version__, paths
from qlab import scenario as sc

DEBIAN_PACKAGES = ("libns3-dev", "r-base-core", "r-cran-tidyverse", "r-cran-knitr",
                   "r-cran-rmarkdown", "pandoc", "gcc", "cmake")
PYTHON_PACKAGES = ("snakemake", "pyyaml", "jsonschema")


def _git(*args: str) -> str | None:
    try:
        out = subprocess.run(["git", "-C", str(paths.ROOT), *args], capture_output=True,
                             text=True, check=True, timeout=10)
        return out.stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None


def _dpkg_version(pkg: str) -> str | None:
    try:
        out = subprocess.run(["dpkg-query", "-W", "-f=${Version}", pkg], capture_output=True,
                             text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None


def _rel(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(paths.ROOT))
    except ValueError:
        return str(path)


def scenario_sha256(scen: sc.Scenario) -> str:
    """Hash of the files that define a scenario (the file and what it extends)."""
    h = hashlib.sha256()
    for f in sorted(scen.files):
        h.update(f.name.encode() + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()


def collect(scenarios: list[sc.Scenario], profile: str) -> dict[str, Any]:
    py = {}
    for name in PYTHON_PACKAGES:
        try:
            py[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            py[name] = None
    status = _git("status", "--porcelain", "--untracked-files=no")
    return {
        "git_commit": _git("rev-parse", "HEAD") or "unknown",
        "git_dirty": bool(status) if status is not None else None,
        "profile": profile,
        "qlab_version": __version__,
        "scenarios": [
            {"id": s.id, "file": _rel(s.file), "sha256": scenario_sha256(s),
             "seeds": sc.resolve(s, profile)["seeds"], "backends": sc.resolve(s, profile)["backends"]}
            for s in scenarios if not s.abstract
        ],
        "packages": {p: _dpkg_version(p) for p in DEBIAN_PACKAGES},
        "python_packages": py,
    }


def write(out: Path, scenarios: list[sc.Scenario], profile: str) -> None:
    # always written, so the output is never older than the rule's inputs
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.tmp")
    tmp.write_text(sc.canonical_json(collect(scenarios, profile)), encoding="utf-8")
    tmp.replace(out)

"""What a reproduction ran with: commit, scenario hashes, seeds, package versions."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

from qlab import __version__, paths
from qlab import scenario as sc

DEBIAN_PACKAGES = (
    "libns3-dev",
    "libtcmalloc-minimal4",
    "r-base-core",
    "r-cran-tidyverse",
    "r-cran-knitr",
    "r-cran-rmarkdown",
    "pandoc",
    "gcc",
    "cmake",
)
PYTHON_PACKAGES = ("snakemake", "pyyaml", "jsonschema")


def _git(*args: str) -> str | None:
    try:
        out = subprocess.run(
            ["git", "-C", str(paths.ROOT), *args], capture_output=True, text=True, check=True, timeout=10
        )
        return out.stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None


def _dpkg_version(pkg: str) -> str | None:
    try:
        out = subprocess.run(
            ["dpkg-query", "-W", "-f=${Version}", pkg], capture_output=True, text=True, timeout=10
        )
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


def _runs(results: Path | None) -> list[dict[str, Any]]:
    """The run.json of every run under `results` (unreadable ones left out)."""
    out = []
    for run_json in sorted(results.rglob("run.json")) if results and results.is_dir() else []:
        try:
            run = json.loads(run_json.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(run, dict):
            out.append(run)
    return out


def where_ran(runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Where the runs ran (run.json's ran_on): one row per executor and host,
    with its runs, the distinct SLURM jobs or pods that ran them and the
    images (by id). Runs of a qlab before ran_on count as executor None."""
    rows: dict[tuple, dict[str, Any]] = {}
    for run in runs:
        where = run.get("ran_on") if isinstance(run.get("ran_on"), dict) else {}
        key = (str(where.get("executor")), str(where.get("host")))
        row = rows.setdefault(
            key,
            {
                "executor": where.get("executor"),
                "host": where.get("host"),
                "runs": 0,
                "jobs": set(),
                "images": set(),
            },
        )
        row["runs"] += 1
        job = where.get("slurm_job_id") or where.get("pod")
        if job:
            row["jobs"].add(str(job))
        if where.get("image_id"):
            row["images"].add(str(where["image_id"]))
    return [
        {**row, "jobs": len(row["jobs"]), "images": sorted(row["images"])} for _, row in sorted(rows.items())
    ]


def _images(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Under the docker runtime (QLAB_RUNTIME, set by workflows/containers.smk):
    the images the workflow runs in, from their stamps (tag, id, manifest), and
    the images the runs recorded in their run.json."""
    from qlab import containers

    out: dict[str, Any] = {"runtime": os.environ.get("QLAB_RUNTIME", "native")}
    names = [n for n in os.environ.get("QLAB_IMAGES", "").split(",") if n]
    stamps = containers.stamps(names) if out["runtime"] == "docker" else {}
    out["images"] = [
        {
            "name": n,
            "tag": d.get("tag"),
            "id": d.get("id"),
            "base": d.get("base"),
            "built_from_commit": (d.get("labels") or {}).get("org.opencontainers.image.revision"),
            "created": d.get("created"),
            "size_bytes": d.get("size_bytes"),
            "manifest_sha256": d.get("manifest_sha256"),
            "manifest": d.get("manifest"),
        }
        for n, d in stamps.items()
    ]
    used: dict[tuple, int] = {}
    for run in runs:
        img = run.get("image")
        img = img if isinstance(img, dict) else {}  # native runs: name, tag and id None
        key = (img.get("name"), img.get("tag"), img.get("id"))
        used[key] = used.get(key, 0) + 1
    out["run_images"] = [
        {"name": k[0], "tag": k[1], "id": k[2], "runs": v}
        for k, v in sorted(used.items(), key=lambda kv: str(kv[0]))
    ]
    return out


def _from_images(images: list[dict[str, Any]], section: str, names: tuple[str, ...]) -> dict[str, Any]:
    """Versions of some packages as the images have them (first image that does)."""
    out: dict[str, Any] = {}
    for name in names:
        found = [((i.get("manifest") or {}).get(section) or {}).get(name) for i in images]
        out[name] = next((v for v in found if v), None)
    return out


def changes(previous: dict[str, Any], current: dict[str, Any]) -> list[str]:
    """Versions that differ between two provenance records (packages, Python
    packages, images and their manifests)."""

    def flat(doc: dict[str, Any]) -> dict[str, str]:
        out = {f"debian {k}": v for k, v in (doc.get("packages") or {}).items()}
        out |= {f"python {k}": v for k, v in (doc.get("python_packages") or {}).items()}
        for img in doc.get("images") or []:
            out[f"image {img.get('name')}"] = img.get("id")
            for section, pkgs in (img.get("manifest") or {}).items():
                out |= {f"image {img.get('name')}: {section} {k}": v for k, v in pkgs.items()}
        return out

    old, new = flat(previous), flat(current)
    return [
        f"{k}: {old.get(k) or 'absent'} -> {new.get(k) or 'absent'}"
        for k in sorted(old.keys() | new.keys())
        if old.get(k) != new.get(k)
    ]


def collect(scenarios: list[sc.Scenario], profile: str, results: Path | None = None) -> dict[str, Any]:
    py = {}
    for name in PYTHON_PACKAGES:
        try:
            py[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            py[name] = None
    status = _git("status", "--porcelain", "--untracked-files=no")
    runs = _runs(results)
    images = _images(runs)
    packages = {p: _dpkg_version(p) for p in DEBIAN_PACKAGES}
    if images["images"]:  # the versions the jobs ran with are the images'
        packages = _from_images(images["images"], "debian", DEBIAN_PACKAGES)
        py = _from_images(images["images"], "python", PYTHON_PACKAGES)
    return {
        "git_commit": _git("rev-parse", "HEAD") or "unknown",
        "git_dirty": bool(status) if status is not None else None,
        "profile": profile,
        "qlab_version": __version__,
        "scenarios": [
            {
                "id": s.id,
                "file": _rel(s.file),
                "sha256": scenario_sha256(s),
                "seeds": sc.resolve(s, profile)["seeds"],
                "backends": sc.resolve(s, profile)["backends"],
            }
            for s in scenarios
            if not s.abstract
        ],
        "packages": packages,
        "python_packages": py,
        **images,
        "ran_on": where_ran(runs),
    }


def write_software(out: Path, scenarios: list[sc.Scenario], profile: str) -> None:
    """What a reproduction runs with, before any run (software.json): the
    commit, the scenarios' hashes and the packages' versions, without the
    runs' facts (where they ran, which images) that provenance.json adds at
    the end. A page rendered while other papers still simulate signs its
    colophon from it."""
    out.parent.mkdir(parents=True, exist_ok=True)
    doc = collect(scenarios, profile, None)
    for key in ("ran_on", "run_images"):
        doc.pop(key, None)
    tmp = out.with_name(f".{out.name}.tmp")
    tmp.write_text(sc.canonical_json(doc), encoding="utf-8")
    tmp.replace(out)


def write(out: Path, scenarios: list[sc.Scenario], profile: str) -> None:
    # always written, so the output is never older than the rule's inputs
    out.parent.mkdir(parents=True, exist_ok=True)
    doc = collect(scenarios, profile, out.parent)
    # The previous record is kept beside it (not a workflow output, so the
    # workflow does not delete it): a rerun says which versions changed.
    last = out.with_name(f"{out.stem}.last.json")
    try:
        previous = json.loads(last.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        previous = None
    doc["changes_since_previous"] = changes(previous, doc) if previous else []
    if previous and doc["changes_since_previous"]:
        print(
            f"warning: versions differ from the previous report's ({previous.get('git_commit')}):",
            file=sys.stderr,
        )
        for line in doc["changes_since_previous"]:
            print(f"  {line}", file=sys.stderr)
    text = sc.canonical_json(doc)
    for path in (out, last):
        tmp = path.with_name(f".{path.name}.tmp")
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(path)


def warn_changes(path: Path, since: float) -> None:
    """After a workflow run that rewrote provenance.json: say on stderr when
    its versions differ from the previous report's (the page lists them)."""
    try:
        if path.stat().st_mtime < since:
            return
        changed = json.loads(path.read_text(encoding="utf-8")).get("changes_since_previous") or []
    except (OSError, ValueError):
        return
    if changed:
        print(
            f"warning: {len(changed)} package or image versions differ from the previous report's "
            f"(listed in {path} and on the provenance page), e.g. {changed[0]}",
            file=sys.stderr,
        )

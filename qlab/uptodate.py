"""Whether a reproduction has anything to do, without asking Snakemake.

Snakemake decides what to rerun by building the whole job graph: at the
quick profile's ~900 runs that alone takes several seconds, every time. A
reproduction that finished and after which nothing changed has nothing to
do, and that can be told faster: ``state_digest`` hashes the path, size and
modification time of every file the workflow reads or writes — the
checkout (scenarios, workflow, qlab, analysis and report code, the
disciplines' sources), the tools it built (the top level of ``build/``,
each backend's programs), the results tree and the site — together with
the command line and the ``QLAB_*`` environment. ``qlab.progress --stamp``
writes it after a reproduction that succeeded; the next one compares, and
runs Snakemake only when something differs. The check is conservative: any
file touched, added or removed (a scenario edited and edited back, a run
deleted, an editor's swap file) lets Snakemake decide as before. What
neither notices: packages upgraded outside the checkout (the venv, ns-3,
R), which Snakemake does not track either (provenance.json records them).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Sequence
from pathlib import Path

from qlab import paths

# Not read by the workflow, or rewritten by every run of it: left out.
SKIP_DIRS = {".git", ".venv", ".snakemake", "__pycache__", ".pytest_cache", ".ruff_cache", ".quarto", "build"}


def _walk(top: Path, skip: set[Path]) -> Iterable[tuple[str, int, int]]:
    stack = [top]
    while stack:
        d = stack.pop()
        try:
            entries = list(os.scandir(d))
        except OSError:
            continue
        for e in entries:
            p = Path(e.path)
            if e.is_dir(follow_symlinks=False):
                if e.name not in SKIP_DIRS and p not in skip:
                    stack.append(p)
                continue
            if p in skip:
                continue
            try:
                st = e.stat()
            except OSError:
                continue
            yield e.path, st.st_size, st.st_mtime_ns


def state_digest(
    results: Path,
    site: Path,
    command: Sequence[str],
    stamp: Path,
    root: Path = paths.ROOT,
    tools: Sequence[Path] = (),
) -> str:
    """The digest of everything a reproduction's outcome depends on that can
    change on disk (see the module's docstring)."""
    results, site, root, stamp = (p.resolve() for p in (results, site, root, stamp))
    # the log of this very command, and the stamp itself, change every time
    skip = {results / "logs", stamp, results, site}
    h = hashlib.sha256()
    h.update("\0".join(command).encode() + b"\1")
    for key in sorted(k for k in os.environ if k.startswith("QLAB_")):
        h.update(f"{key}={os.environ[key]}\0".encode())
    rows = list(_walk(root, skip))
    build = root / "build"
    if build.is_dir():
        for d in [build, *(p for p in build.iterdir() if p.is_dir())]:
            rows += _walk_flat(d)
    for tool in tools:
        try:
            st = tool.stat()
            rows.append((str(tool), st.st_size, st.st_mtime_ns))
        except OSError:
            rows.append((str(tool), -1, -1))
    rows += _walk(results, {results / "logs", stamp})
    rows += _walk(site, set())
    for path, size, mtime in sorted(rows):
        h.update(f"{path}\0{size}\0{mtime}\n".encode())
    return h.hexdigest()


def _walk_flat(d: Path) -> list[tuple[str, int, int]]:
    out = []
    try:
        entries = list(os.scandir(d))
    except OSError:
        return out
    for e in entries:
        if e.is_file(follow_symlinks=True):
            try:
                st = e.stat()
            except OSError:
                continue
            out.append((e.path, st.st_size, st.st_mtime_ns))
    return out


def is_current(stamp: Path, digest: str) -> bool:
    try:
        return stamp.read_text(encoding="utf-8").strip() == digest
    except OSError:
        return False


def write_stamp(stamp: Path, digest: str) -> None:
    stamp.parent.mkdir(parents=True, exist_ok=True)
    tmp = stamp.with_name(f".{stamp.name}.{os.getpid()}")
    tmp.write_text(digest + "\n", encoding="utf-8")
    tmp.replace(stamp)

"""A reproduction that survives being killed (docs/traces.md, "Integrity"
and "Failed, interrupted and killed runs"): qlab's own lock around a reproduction, work directories that
never outlive their run, and damaged runs found before the workflow trusts them.

- ``Reproduction``: an exclusive ``flock`` on ``.snakemake/qlab.lock`` held by
  the Snakemake process that runs qlab's workflow, for as long as it lives
  (the kernel drops it when the process dies, ``kill -9`` included). Whoever
  holds it knows no other reproduction runs in this checkout, so Snakemake's
  own locks (``.snakemake/locks/``, which record no process) are stale and
  are removed; a second reproduction is refused, naming the first one's pid.
- ``work_dir``: ``qlab run-job``'s ``.seed-<n>.work-<pid>`` directory, held
  with a ``flock`` on the directory itself while the run lives (and
  ``.point.work-<pid>``, held while a sweep point's job runs its seeds);
  ``sweep`` removes those nobody holds (their run was killed).
- ``damaged_runs``: every finished run (``run.json`` present) whose tables
  differ from what its ``run.json`` recorded (size, SHA-256); the workflow
  moves each aside (``.seed-<n>.damaged``, ``set_aside``) and marks its
  point so that Snakemake runs it again (``rerun_point``);
  ``incomplete_points`` finds the points taken for complete that are not
  (a run gone, or point.json gone), marked the same way.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import signal
import sys
import threading
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from qlab import traces

LOCK_NAME = "qlab.lock"
# A work directory younger than this is left alone even when nobody holds
# it: its run may be between creating and locking it.
YOUNG_S = 60.0


# ---------------------------------------------------------------------------
# work directories of qlab run-job


def work_dir(path: Path) -> int:
    """Create a run's work directory and hold it (an flock on the directory,
    released when the process ends however it ends); the lock's descriptor."""
    path.mkdir(parents=True)
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    fcntl.flock(fd, fcntl.LOCK_EX)
    return fd


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _state(path: Path) -> str:
    """ "stale" when nobody holds this work directory and its run is gone
    (its pid does not run here, or it is older than YOUNG_S: a run in a
    container has a pid of its own namespace); "held" while a run holds it;
    "young" when nobody holds it yet."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return "gone"
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return "held"
        pid = path.name.rpartition("-")[2]
        old = time.time() - os.fstat(fd).st_mtime > YOUNG_S
        return "stale" if old or not pid.isdigit() or not _pid_alive(int(pid)) else "young"
    finally:
        os.close(fd)


def _work_dirs(directory: Path, pattern: str, recursive: bool) -> list[Path]:
    if not directory.is_dir():
        return []
    found = directory.rglob(pattern) if recursive else directory.glob(pattern)
    return sorted(p for p in found if p.is_dir() and not p.is_symlink())


def sweep(directory: Path, pattern: str = ".*.work-*", recursive: bool = False) -> list[Path]:
    """Remove the stale work directories matching pattern under directory;
    the ones removed."""
    removed = []
    for path in _work_dirs(directory, pattern, recursive):
        if _state(path) == "stale":
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path)
    return removed


def wait_for_runs(directory: Path, pattern: str = ".seed-*.work-*") -> list[Path]:
    """Wait until no run holds a work directory under directory (the runs a
    killed Snakemake left running finish, or are killed, by themselves);
    the directories waited for."""
    waited = []
    for path in _work_dirs(directory, pattern, True):
        if _state(path) != "held":
            continue
        print(f"qlab: waiting for a run that a killed reproduction left running ({path})", file=sys.stderr)
        try:
            fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
        except OSError:
            continue  # it finished meanwhile
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
        finally:
            os.close(fd)
        waited.append(path)
    return waited


@contextlib.contextmanager
def signals_raise() -> Iterator[None]:
    """SIGTERM and SIGHUP raise SystemExit (128 + the signal) for as long as
    this lasts, so `finally` blocks run; SIGINT already raises KeyboardInterrupt."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, frame: Any) -> None:
        raise SystemExit(128 + signum)

    old = {s: signal.signal(s, stop) for s in (signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for s, handler in old.items():
            signal.signal(s, handler)


# ---------------------------------------------------------------------------
# the reproduction lock


class Busy(Exception):
    """Another reproduction holds the lock."""

    def __init__(self, pid: str) -> None:
        super().__init__(f"another reproduction is running (pid {pid})")
        self.pid = pid


class Reproduction:
    """qlab's lock on a Snakemake working directory (``.snakemake/qlab.lock``)."""

    def __init__(self, snakemake_dir: Path = Path(".snakemake")) -> None:
        self.dir = snakemake_dir
        self.path = snakemake_dir / LOCK_NAME
        self.fd: int | None = None

    def acquire(self) -> list[Path]:
        """Take the lock (Busy when another process holds it), then remove
        Snakemake's stale locks; the lock files removed."""
        self.dir.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            holder = os.pread(fd, 64, 0).decode("ascii", "replace").split()
            os.close(fd)
            raise Busy(holder[0] if holder else "unknown") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self.fd = fd
        removed = []
        locks = self.dir / "locks"
        for f in sorted(locks.iterdir()) if locks.is_dir() else []:
            if f.is_file():
                f.unlink(missing_ok=True)
                removed.append(f)
        return removed

    def release(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


def non_executing(argv: list[str]) -> bool:
    """Whether a Snakemake command line only looks (a dry run, lint, a
    summary or a graph): it runs nothing, so it neither takes the lock nor
    moves anything."""
    looks = {
        "--dry-run",
        "--dryrun",
        "--lint",
        "--summary",
        "--detailed-summary",
        "--dag",
        "--rulegraph",
        "--filegraph",
        "--d3dag",
        "--list-rules",
        "--list-target-rules",
        "--list-changes",
        "--list-code-changes",
        "--list-input-changes",
        "--list-params-changes",
        "--lc",
        "--li",
        "--lp",
        "--print-compilation",
        "--containerize",
        "--archive",
    }
    for a in argv[1:]:
        if a == "--":
            break
        if a in looks or a.split("=")[0] in looks or a in ("-S", "-D", "-l"):
            return True
        if len(a) > 1 and a[0] == "-" and a[1] != "-" and a[1:].isalpha() and "n" in a[1:]:
            return True  # -n, -np, -pn ...
    return False


# ---------------------------------------------------------------------------
# damaged runs


class _Verified:
    """Tables already found to match their run.json, by (size, mtime, ctime,
    inode): any change to a file, even one that keeps its size and mtime,
    changes its ctime, so an unchanged file is not hashed again."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.old: dict[str, list] = {}
        self.new: dict[str, list] = {}
        if path is not None:
            with contextlib.suppress(OSError, ValueError):
                doc = json.loads(path.read_text(encoding="utf-8"))
                self.old = doc if isinstance(doc, dict) else {}

    @staticmethod
    def key(st: os.stat_result, sha256: str) -> list:
        return [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, sha256]

    def ok(self, path: Path, record: dict[str, Any]) -> str | None:
        """None when the table matches its record, else the problem."""
        try:
            st = path.stat()
        except FileNotFoundError:
            return f"{path.name}: missing (run.json records it)"
        except OSError as exc:
            return f"{path.name}: cannot read: {exc.strerror}"
        if not isinstance(record, dict) or st.st_size != record.get("bytes"):
            return (
                f"{path.name}: {st.st_size} bytes, run.json recorded {record.get('bytes')}"
                if isinstance(record, dict)
                else f"{path.name}: run.json's record of it is not an object"
            )
        name = str(path.resolve())
        key = self.key(st, str(record.get("sha256")))
        if self.old.get(name) == key:
            self.new[name] = key
            return None
        h = hashlib.sha256()
        try:
            with open(path, "rb") as f:
                for block in iter(lambda: f.read(1 << 20), b""):
                    h.update(block)
        except OSError as exc:
            return f"{path.name}: cannot read: {exc.strerror}"
        if h.hexdigest() != record.get("sha256"):
            return f"{path.name}: SHA-256 differs from run.json's"
        self.new[name] = key
        return None

    def save(self) -> None:
        if self.path is not None:
            with contextlib.suppress(OSError):
                traces.atomic_write_bytes(self.path, json.dumps(self.new).encode())


def run_problem(directory: Path, cache: _Verified | None = None) -> str | None:
    """Why a finished run (run.json present) cannot be trusted, or None: its
    run.json unreadable, of another schema, without a record of each table,
    or a table differing from its record (size, SHA-256)."""
    cache = cache or _Verified(None)
    try:
        run = traces.load_run_json(directory / "run.json")
    except ValueError as exc:
        return str(exc).replace(f"{directory}/", "", 1)
    if run.get("schema") != traces.RUN_SCHEMA:
        return f"run.json: schema {run.get('schema')!r}, not {traces.RUN_SCHEMA!r} (recorded by another qlab)"
    recorded = run.get("tables")
    if not isinstance(recorded, dict) or not all(n in recorded for n in traces.REQUIRED_FILES):
        return "run.json: tables: no record of each table"
    for name in traces.TABLE_FILES:
        if name in recorded:
            problem = cache.ok(directory / name, recorded[name])
            if problem:
                return problem
        elif (directory / name).exists():
            return f"{name}: not recorded in run.json's tables"
    return None


def damaged_runs(run_dirs: Iterable[Path], cache_file: Path | None = None) -> list[tuple[Path, str]]:
    """The finished runs among run_dirs that cannot be trusted, with why."""
    cache = _Verified(cache_file)
    out = []
    for d in run_dirs:
        if (d / "run.json").exists():
            problem = run_problem(d, cache)
            if problem:
                out.append((d, problem))
    cache.save()
    return out


PLACEHOLDER_SCHEMA = "qlab-damaged"


# A sweep point's runs are one workflow job (workflows/simulate.smk): its
# output is this file beside them, written when all have finished. Its
# scenario's collection (collect, beside the points) reads them.
POINT_FILE = "point.json"
# A point of a scenario with adaptive repetition (scenario `repetition`)
# runs its seeds in batches, one job each; each writes batch-<k>.json, the
# runs it ran (none when the decision stopped the point), in place of point.json.
BATCH_FILES = "batch-*.json"
COLLECTED = ("flows.csv.gz", "runs.csv.gz")


def batch_files(point: Path) -> list[Path]:
    return sorted(point.glob(BATCH_FILES))


def rerun_point(point: Path) -> None:
    """Make the workflow run a point again, and collect its scenario
    again: its point.json and its scenario's collected tables (made from
    the runs again in seconds) are removed. (A missing point.json alone
    would not do: Snakemake does not make an intermediate file again for a
    job whose own outputs are there and up to date.)"""
    for path in (point / POINT_FILE, *batch_files(point), *(point.parent / name for name in COLLECTED)):
        with contextlib.suppress(OSError):
            path.unlink(missing_ok=True)


def set_aside(run_dir: Path, why: str) -> Path:
    """Move a damaged run to .<name>.damaged (replacing an older one) and
    leave in its place only a run.json that says so.

    The workflow then runs its point again (every seed of it) when its
    point is marked so (``rerun_point``). collect and check-traces refuse
    the placeholder itself."""
    aside = run_dir.parent / f".{run_dir.name}.damaged"
    shutil.rmtree(aside, ignore_errors=True)
    run_dir.rename(aside)
    run_dir.mkdir()
    doc = {"schema": PLACEHOLDER_SCHEMA, "damaged": why, "set_aside": aside.name, "at": time.time()}
    traces.atomic_write_bytes(run_dir / "run.json", (json.dumps(doc, indent=1) + "\n").encode())
    return aside


def incomplete_points(run_dirs: Iterable[Path]) -> list[Path]:
    """The points the workflow would take for complete but are not: one of
    their runs is missing (no run.json: removed by hand, or never placed)
    while point.json says all finished, or point.json is gone while their
    scenario's collection is there. Sorted."""
    by_point: dict[Path, list[Path]] = {}
    for d in run_dirs:
        by_point.setdefault(d.parent, []).append(d)
    out = []
    for point, runs in sorted(by_point.items()):
        if (point / POINT_FILE).exists():
            if not all((d / "run.json").exists() for d in runs):
                out.append(point)
        elif batch_files(point):
            # a batch's runs are those its file lists (a stopped batch lists none)
            listed = [point / name for b in batch_files(point) for name in _listed(b)]
            if not all((d / "run.json").exists() for d in listed):
                out.append(point)
        elif any((point.parent / name).exists() for name in COLLECTED):
            out.append(point)
    return out


def _listed(done: Path) -> list[str]:
    """The run directories a batch file lists; one that cannot be read lists
    a name no run has, so that its point runs again."""
    try:
        doc = json.loads(done.read_text(encoding="utf-8"))
        return sorted(doc["runs"])
    except (OSError, ValueError, KeyError, TypeError):
        return [f".unreadable-{done.name}"]


def is_placeholder(run_dir: Path) -> bool:
    try:
        return traces.load_run_json(run_dir / "run.json").get("schema") == PLACEHOLDER_SCHEMA
    except ValueError:
        return False


# ---------------------------------------------------------------------------
# the workflow's start


def start(
    results: Path,
    run_dirs: list[Path],
    argv: list[str] | None = None,
    snakemake_dir: Path = Path(".snakemake"),
) -> Reproduction | None:
    """What the workflow does when it starts (its main process, at parse
    time): take qlab's lock and clear Snakemake's stale ones, wait for the
    runs a killed Snakemake left running, sweep the work directories of
    killed runs and set damaged runs aside, saying so on stderr. Exits 2
    when another reproduction holds the lock; a dry run (or lint, a graph,
    a summary) only reports damaged runs."""
    argv = sys.argv if argv is None else argv
    if non_executing(argv):
        _say(
            [f"qlab: damaged run {d}: {why} (a real run runs it again)" for d, why in damaged_runs(run_dirs)]
        )
        return None
    lock = Reproduction(snakemake_dir)
    try:
        stale = lock.acquire()
    except Busy as exc:
        print(f"qlab: {exc}; wait for it, or stop it (kill {exc.pid})", file=sys.stderr)
        sys.exit(2)
    if stale:
        print(
            f"qlab: no reproduction is running: removed Snakemake's stale lock "
            f"({', '.join(str(f) for f in stale)})",
            file=sys.stderr,
        )
    # Runs a killed Snakemake left behind (its jobs outlive it) write into
    # these results: let them finish before running anything again.
    # (a point's job first: it holds its point from its first run to its last)
    wait_for_runs(results, ".point.work-*")
    wait_for_runs(results)
    for pattern in (".point.work-*", ".seed-*.work-*"):
        for path in sweep(results, pattern, recursive=True):
            print(f"qlab: removed {path} (the work directory of a killed run)", file=sys.stderr)
    lines = []
    for d, why in damaged_runs(run_dirs, snakemake_dir / "qlab-verified.json"):
        rerun_point(d.parent)
        if is_placeholder(d):
            lines.append(f"qlab: damaged run {d}: set aside earlier, running it again")
            continue
        aside = set_aside(d, why)
        lines.append(f"qlab: damaged run {d}: {why}; set aside as {aside.name}, running it again")
    for point in incomplete_points(run_dirs):
        rerun_point(point)
        lines.append(f"qlab: {point}: not every run of this point is in place; running the point again")
    _say(lines)
    return lock


def _say(lines: list[str], most: int = 10) -> None:
    """Lines on stderr, at most `most` of them and how many more (after an
    upgrade of the trace schema every run is run again)."""
    for line in lines[:most]:
        print(line, file=sys.stderr)
    if len(lines) > most:
        print(f"qlab: ... and {len(lines) - most} more damaged runs", file=sys.stderr)

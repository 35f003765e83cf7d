"""A reproduction's output: progress while Snakemake runs, a summary at the end.

    python -m qlab.progress --log FILE --results DIR --site DIR -- snakemake ...

Snakemake's own log (about seven lines per job) goes to FILE, whole. The
terminal gets one line of progress: steps done of the total, per stage
(the workflow's rules) and an estimate of the time left; updated in place
on a terminal, a line per tenth of the work otherwise (CI logs). When the
workflow fails, the lines of the log that say why, and the log's path. At
the end a summary read from the results: per paper, the items regenerated
of those catalogued (analysis/papers/<paper>.yaml), the verdict counts
(claims.csv), the invalid runs (runs.csv.gz), the wall time, and the report.
"""

from __future__ import annotations

import argparse
import csv
import gzip
import os
import re
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from qlab import paths, uptodate

STEPS = re.compile(r"^(\d+) of (\d+) steps \((\d+)%\) done")
FINISHED = re.compile(r"^Finished jobid: \d+ \(Rule: (\S+)\)")
STAT = re.compile(r"^(\S+)\s+(\d+)$")
# rough relative cost of one job of each rule, for the estimate of time left
COST = {
    "simulate": 10.0,
    # a batch of adaptive repetition: a few seeds, or nothing when its decision stopped the point
    "simulate_batch": 5.0,
    "bench_decide": 5.0,
    "collect": 2.0,
    "collect_batch": 2.0,
    "analyze": 10.0,
    "analyze_bench": 10.0,
    "page": 5.0,
    "report": 5.0,
    "describe_scenario": 0.5,
}
STAGE_NAMES = {
    "simulate": "points",
    "simulate_batch": "batches",
    "collect": "collect",
    "analyze": "analysis",
    "analyze_bench": "benchmark",
    "page": "pages",
    "report": "report",
}
ERROR_LINE = re.compile(r"(Error|error:|Exception|exit status|failed|refus|not valid|cannot|Traceback)")


class Progress:
    def __init__(self, out, tty: bool):
        self.out = out
        self.tty = tty
        self.totals: Counter[str] = Counter()
        self.done: Counter[str] = Counter()
        self.steps = (0, 0)
        self.start = time.monotonic()
        self.last_tenth = -1
        self.last_line = ""
        self.in_stats = False

    def feed(self, line: str) -> None:
        line = line.rstrip("\n")
        if line.startswith("Job stats:"):
            self.in_stats, self.totals = True, Counter()
            return
        if self.in_stats:
            m = STAT.match(line.strip())
            if m and m.group(1) != "total":
                self.totals[m.group(1)] += int(m.group(2))
            elif line.strip() and not line.startswith(("job", "---")):
                self.in_stats = False
            return
        m = FINISHED.match(line)
        if m:
            self.done[m.group(1)] += 1
            return
        m = STEPS.match(line)
        if m:
            self.steps = (int(m.group(1)), int(m.group(2)))
            self.show()

    def eta_s(self) -> float | None:
        weight = {r: COST.get(r, 0.2) for r in self.totals}
        done = sum(weight[r] * min(self.done[r], n) for r, n in self.totals.items())
        total = sum(weight[r] * n for r, n in self.totals.items())
        elapsed = time.monotonic() - self.start
        if done <= 0 or elapsed < 5:
            return None
        return elapsed * (total - done) / done

    def line(self) -> str:
        done, total = self.steps
        pct = 100 * done // total if total else 0
        stages = " · ".join(
            f"{STAGE_NAMES[r]} {self.done[r]}/{n}" for r, n in self.totals.items() if r in STAGE_NAMES
        )
        eta = self.eta_s()
        left = f" · about {fmt_time(eta)} left" if eta is not None and done < total else ""
        return f"[{pct:3d}%] {done}/{total} steps · {stages}{left}"

    def show(self, final: bool = False) -> None:
        done, total = self.steps
        if self.tty:
            self.out.write("\r\033[K" + self.line() + ("\n" if final else ""))
            self.out.flush()
            return
        tenth = 10 * done // total if total else 0
        text = self.line()
        if (tenth != self.last_tenth or final) and text != self.last_line:
            self.last_tenth, self.last_line = tenth, text
            self.out.write(text + "\n")
            self.out.flush()


def fmt_time(s: float) -> str:
    s = int(round(s))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60:02d} s"
    return f"{s // 3600} h {s % 3600 // 60:02d} min"


def _items(paper: str) -> list[str]:
    import yaml

    path = paths.ROOT / "analysis" / "papers" / f"{paper}.yaml"
    try:
        doc = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError):
        return []
    return [str(i.get("id")) for i in doc.get("items", []) if isinstance(i, dict)]


def summary(results: Path, site: Path, wall_s: float | None) -> list[str]:
    """The reproduction in a few lines, from what the results hold (wall_s
    None: nothing was run, the results were already up to date)."""
    lines = []
    analysis = results / "analysis"
    papers = (
        sorted(p.name for p in analysis.iterdir() if (p / "claims.csv").is_file())
        if analysis.is_dir()
        else []
    )
    for paper in papers:
        with (analysis / paper / "claims.csv").open(newline="", encoding="utf-8") as fh:
            rows = list(csv.DictReader(fh))
        items = _items(paper)
        figure_files = {p.stem for p in (analysis / paper).glob("*.csv")} - {"claims"}
        made = sum(
            1 for i in items if i.split("/")[-1] in figure_files or i.replace("/", "-") in figure_files
        )
        lines.append(f"  {paper}: {len(items)} items ({made} with figure data)")
        # a claim is checked on each backend that ran its scenario; duplicates (same_as) once
        for backend in sorted({row.get("backend") or "" for row in rows}):
            verdicts = Counter(
                row.get("verdict", "?")
                for row in rows
                if (row.get("backend") or "") == backend and row.get("same_as", "NA") in ("", "NA")
            )
            ranked = sorted(verdicts.items(), key=lambda kv: (-kv[1], kv[0]))
            counts = ", ".join(f"{n} {v}" for v, n in ranked)
            on = f" on {backend}" if backend else ""
            lines.append(f"    {sum(verdicts.values())} claims{on}: {counts}")
    ranking = analysis / "bench" / "ranking.csv"
    if ranking.is_file():
        with ranking.open(newline="", encoding="utf-8") as fh:
            rows = list(csv.DictReader(fh))
        workloads, disciplines = ({row.get(key) for row in rows} for key in ("workload", "series"))
        lines.append(
            f"  benchmark: {len(disciplines)} disciplines ranked on {len(workloads)} workloads ({ranking})"
        )
    runs = invalid = 0
    for f in results.glob("*/*/*/runs.csv.gz"):
        try:
            with gzip.open(f, "rt", newline="", encoding="utf-8") as fh:
                for row in csv.DictReader(fh):
                    runs += 1
                    invalid += row.get("valid") == "FALSE"
        except (OSError, EOFError, UnicodeDecodeError, csv.Error):
            continue
    head = f"reproduced in {fmt_time(wall_s)}" if wall_s is not None else "up to date"
    head += f": {runs} runs"
    head += f" ({invalid} invalid, excluded from the analysis)" if invalid else ""
    return [head, *lines, f"report: {(site / 'index.html').resolve()}"]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--log", required=True, type=Path, help="file for Snakemake's whole output")
    p.add_argument("--results", required=True, type=Path)
    p.add_argument("--site", required=True, type=Path)
    p.add_argument("--what", default="reproducing", help="what the first line says is happening")
    p.add_argument("--no-summary", action="store_true", help="progress only (a preparatory step)")
    p.add_argument(
        "--stamp",
        type=Path,
        help="skip the command when nothing changed since it last succeeded (qlab/uptodate.py); "
        "the file records that state",
    )
    p.add_argument("cmd", nargs=argparse.REMAINDER, help="-- and the command to run")
    a = p.parse_args(argv)
    cmd = a.cmd[1:] if a.cmd[:1] == ["--"] else a.cmd
    if not cmd:
        p.error("no command after --")
    a.log.parent.mkdir(parents=True, exist_ok=True)
    tty = sys.stdout.isatty() and os.environ.get("TERM") != "dumb"
    prog = Progress(sys.stdout, tty)
    start = time.monotonic()

    def state() -> str:
        return uptodate.state_digest(a.results, a.site, _without_cores(cmd), a.stamp)

    if a.stamp:
        if uptodate.is_current(a.stamp, state()):
            print(f"{a.what}: nothing changed since the last reproduction ({a.stamp}); nothing to do")
            if not a.no_summary:
                print("\n".join(summary(a.results, a.site, None)))
            return 0
        a.stamp.unlink(missing_ok=True)
    print(f"{a.what}; the full log is {a.log}", flush=True)
    with a.log.open("w", encoding="utf-8") as log:
        proc = subprocess.Popen(
            cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace", bufsize=1
        )
        assert proc.stdout is not None
        try:
            for line in proc.stdout:
                log.write(line)
                log.flush()
                prog.feed(line)
            rc = proc.wait()
        except KeyboardInterrupt:
            proc.terminate()
            proc.wait()
            print("\ninterrupted; `make reproduce` again resumes", file=sys.stderr)
            return 130
    if prog.steps[1]:
        prog.show(final=True)
    if rc != 0:
        text = a.log.read_text(encoding="utf-8", errors="replace").splitlines()
        why = [t for t in text if ERROR_LINE.search(t)][-15:] or text[-15:]
        print(
            "\nthe reproduction failed:",
            *(f"  {t}" for t in why),
            f"whole log: {a.log}",
            sep="\n",
            file=sys.stderr,
        )
        return rc
    if not a.no_summary:
        print("\n".join(summary(a.results, a.site, time.monotonic() - start)))
    if a.stamp:
        uptodate.write_stamp(a.stamp, state())
    return 0


def _without_cores(cmd: list[str]) -> list[str]:
    """The command as the state sees it: the number of cores changes no result."""
    out, skip = [], False
    for arg in cmd:
        if skip:
            skip = False
        elif arg in ("--cores", "-c", "--jobs", "-j"):
            skip = True
        elif not arg.startswith(("--cores=", "--jobs=")):
            out.append(arg)
    return out


if __name__ == "__main__":
    sys.exit(main())

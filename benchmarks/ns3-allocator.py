"""The ns-3 runner's CPU per run with different memory allocators (and
event schedulers), side by side, and whether its traces stay identical.

    .venv/bin/python benchmarks/ns3-allocator.py [--rounds 3] PLAN.json ...

Each plan (written by `qlab expand`) runs through the runner program itself
(qlab-ns3-run PLAN WORKDIR, not `qlab run-job`) once per variant per round,
the variants' order rotated each round so that a drift in the machine's
speed falls on all of them alike. CPU is the child's user + system time
from wait4(). A variant's traces (every file the runner writes but
runner.json, which records times) must hash the same as glibc's, or the
table says so.

Variants: `glibc`, the runner built with -DQLAB_NS3_TCMALLOC=OFF (the
script builds it in a temporary directory unless --runner-glibc names
one); `tcmalloc`, build/ns3/qlab-ns3-run as `make build` links it (with
Debian's libtcmalloc-minimal4); `jemalloc`, `mimalloc` (libjemalloc2,
libmimalloc2.0, if installed) and `tcmalloc-preload` preloaded into the
glibc build with LD_PRELOAD; `heap`, `calendar`: ns-3's HeapScheduler or
CalendarScheduler in place of its default MapScheduler
(NS_GLOBAL_VALUE=SchedulerType=...), in the glibc build.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RUNNER = ROOT / "build/ns3/qlab-ns3-run"
LIBDIR = Path("/usr/lib/x86_64-linux-gnu")
PRELOADS = {
    "tcmalloc-preload": LIBDIR / "libtcmalloc_minimal.so.4",
    "jemalloc": LIBDIR / "libjemalloc.so.2",
    "mimalloc": LIBDIR / "libmimalloc.so.2",
}
SCHEDULERS = {"heap": "ns3::HeapScheduler", "calendar": "ns3::CalendarScheduler"}


def glibc_runner() -> Path:
    """The runner built without tcmalloc, in a temporary directory."""
    build = Path(tempfile.mkdtemp(prefix="ns3-glibc-"))
    print(f"ns3-allocator: building the runner with -DQLAB_NS3_TCMALLOC=OFF in {build}", file=sys.stderr)
    for cmd in (
        [
            "cmake",
            "-S",
            str(ROOT / "disciplines/ns3"),
            "-B",
            str(build),
            "-DCMAKE_BUILD_TYPE=Release",
            "-DQLAB_NS3_TCMALLOC=OFF",
        ],
        ["cmake", "--build", str(build), "-j2", "--target", "qlab-ns3-run", "qlab-ns3-run-wireless"],
    ):
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return build / "qlab-ns3-run"


def variants(wanted: list[str], linked: Path, glibc: Path) -> dict[str, tuple[Path, dict[str, str]]]:
    """Runner and environment additions per variant, those this machine can run."""
    out: dict[str, tuple[Path, dict[str, str]]] = {"glibc": (glibc, {})}
    for name in wanted:
        if name == "tcmalloc":
            out[name] = (linked, {})
        elif name in PRELOADS:
            if PRELOADS[name].exists():
                out[name] = (glibc, {"LD_PRELOAD": str(PRELOADS[name])})
            else:
                print(f"ns3-allocator: {PRELOADS[name]} not installed: {name} skipped", file=sys.stderr)
        elif name in SCHEDULERS:
            out[name] = (glibc, {"NS_GLOBAL_VALUE": f"SchedulerType={SCHEDULERS[name]}"})
        elif name != "glibc":
            raise SystemExit(f"ns3-allocator: unknown variant {name!r}")
    return out


def run(plan: Path, env_add: dict[str, str], runner: Path) -> tuple[float, str]:
    """CPU s of one run and a digest of its traces."""
    work = Path(tempfile.mkdtemp(prefix="ns3-alloc-"))
    try:
        env = dict(os.environ, **env_add)
        proc = subprocess.Popen(
            [str(runner), str(plan), str(work)], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
        )
        _, status, usage = os.wait4(proc.pid, 0)
        if os.waitstatus_to_exitcode(status) != 0:
            err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
            raise SystemExit(f"ns3-allocator: {plan} ({env_add}): runner failed: {err.strip()[-500:]}")
        digest = hashlib.sha256()
        for f in sorted(work.iterdir()):
            if f.name != "runner.json":
                digest.update(f.name.encode() + b"\0" + f.read_bytes())
        return usage.ru_utime + usage.ru_stime, digest.hexdigest()
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("plans", nargs="+", type=Path)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--variants", default="tcmalloc,jemalloc,mimalloc")
    ap.add_argument("--runner", type=Path, default=RUNNER, help="the runner as built (with tcmalloc)")
    ap.add_argument("--runner-glibc", type=Path, help="a runner built with -DQLAB_NS3_TCMALLOC=OFF")
    args = ap.parse_args()
    glibc = args.runner_glibc or glibc_runner()
    vs = variants([v for v in args.variants.split(",") if v], args.runner, glibc)
    names = list(vs)
    cpu: dict[tuple[str, str], list[float]] = {}
    same: dict[tuple[str, str], bool] = {}
    ref: dict[str, str] = {}
    for r in range(args.rounds):
        for plan in args.plans:
            order = names[r % len(names) :] + names[: r % len(names)]
            for name in order:
                runner, env_add = vs[name]
                t, digest = run(plan, env_add, runner)
                cpu.setdefault((str(plan), name), []).append(t)
                if name == "glibc":
                    ref.setdefault(str(plan), digest)
                same.setdefault((str(plan), name), True)
                same[(str(plan), name)] &= digest == ref.get(str(plan), digest)
    header = (
        "| plan | "
        + " | ".join(f"{n} CPU s" for n in names)
        + " | "
        + " | ".join(f"glibc / {n}" for n in names[1:])
        + " | traces identical |"
    )
    print(header)
    print("|" + "---|" * (2 * len(names) + 1))
    totals = {n: 0.0 for n in names}
    for plan in args.plans:
        med = {n: statistics.median(cpu[(str(plan), n)]) for n in names}
        for n in names:
            totals[n] += med[n]
        ident = (
            "yes"
            if all(same[(str(plan), n)] for n in names)
            else "NO: " + ",".join(n for n in names if not same[(str(plan), n)])
        )
        label = "/".join(plan.parts[-5:])
        print(
            f"| {label} | "
            + " | ".join(f"{med[n]:.2f}" for n in names)
            + " | "
            + " | ".join(f"{med['glibc'] / med[n]:.2f}" for n in names[1:])
            + f" | {ident} |"
        )
    print(
        "| **all** | "
        + " | ".join(f"{totals[n]:.2f}" for n in names)
        + " | "
        + " | ".join(f"{totals['glibc'] / totals[n]:.2f}" for n in names[1:])
        + " | |"
    )


if __name__ == "__main__":
    main()

"""The interface every backend implements, and what it declares about itself.

A backend is a runner of resolved plans (docs/jobs.md): it reads one plan,
runs it, and writes the raw facts of docs/traces.md ("Raw facts") into a
work directory; ``qlab.runjob`` validates the plan before, and the facts
after, and finalises the trace tables the same way for every backend.
"""

from __future__ import annotations

import abc
import json
import os
import resource
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any


def refuse_wireless(backend: str, plan: dict[str, Any]) -> list[str]:
    """A plan with wireless hosts (topology kind wireless_dumbbell) runs on
    the ns3 backend only: the others build wired links alone."""
    if "wireless" not in plan:
        return []
    return [
        f"wireless: the {backend} backend cannot build a wireless_dumbbell topology "
        f"({len(plan['wireless']['nodes'])} wireless nodes behind gateway {plan['wireless']['gateway']}); "
        "only the ns3 backend has radios (Wi-Fi, AODV, two-ray ground)"
    ]


class BackendError(Exception):
    """A backend could not run a job (missing tool, runner failure)."""


class Backend(abc.ABC):
    name: str = ""
    # One line for `qlab backends`.
    summary: str = ""
    # Runs in real time and checks its own timing: the workflow runs its
    # jobs one at a time, with every core but one (rule simulate).
    realtime: bool = False
    # A realtime backend whose runs need every core of this machine (the
    # virtual testbed's three VMs): nothing runs beside its jobs.
    exclusive: bool = False
    # The Docker image its jobs run in under `make reproduce RUNTIME=docker`
    # (containers/<image>), or None when it cannot run in one.
    image: str | None = None
    # Extra `docker run` options its jobs need in that image (after
    # scripts/in-image's own, so they may override them, e.g. --user); a
    # realtime backend's jobs also get a real-time CPU budget there.
    docker_options: tuple[str, ...] = ()
    # How its runner is built from this tree, when it is (workflows/build.smk
    # makes a rule `build_<name>` of it): a shell command run at the
    # checkout's root, the files it reads (globs) and the files it makes
    # (repo-relative; the runner among them, and what the backend's tests need).
    build_command: str | None = None
    build_inputs: tuple[str, ...] = ()
    build_outputs: tuple[str, ...] = ()

    @abc.abstractmethod
    def tools(self) -> dict[str, Path]:
        """Programs the backend needs here, by what they are (checked before a run)."""

    def unavailable(self) -> str | None:
        """Why this machine cannot run the backend natively (None: it can)."""
        return None

    def check_tools(self) -> None:
        for what, path in self.tools().items():
            if not Path(path).exists():
                raise BackendError(
                    f"backend {self.name}: {what} not found at {path} "
                    f"(build it with `make build` or set the matching QLAB_* variable)"
                )

    def refuse(self, plan: dict[str, Any]) -> list[str]:
        """What of this (valid) plan the backend cannot build, one line per
        problem naming the field; empty when it can run it."""
        return []

    # Whether its hosts are prepared once per reproduction (`prepare`, the
    # workflow's prepare_host rule) rather than by every run.
    prepares_host: bool = False
    host_inputs: tuple[str, ...] = ()

    def prepare(self, log: Path | None) -> dict[str, Any]:
        """Check and prepare the machines the backend runs on, once for many
        runs; return what the runs need to know of them (`run(host=...)`)."""
        return {}

    @abc.abstractmethod
    def run(
        self, job_file: Path, workdir: Path, log: Path | None, host: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        """Run one plan, writing the raw facts (flow_facts.csv, queue_facts.csv,
        packet_facts.csv when trace.packets) into workdir; return the runner's
        facts (end_ns, versions, wall_time_s; emulators valid, invalid_reasons,
        fidelity). `host`: what `prepare` returned, when the hosts were
        prepared for this run (None: the run prepares what it needs)."""


def run_runner(
    what: str, cmd: Sequence[str], job_file: Path, workdir: Path, log: Path | None
) -> dict[str, Any]:
    """Run a simulator's runner program on one plan (its output appended to
    `log`) and return the facts it wrote to workdir/runner.json, with
    `runner_cpu_s`: the CPU time of the whole runner process (library
    loading, plan reading and table writing included), for the
    orchestration benchmark, and `runner_max_rss_mb`, its peak memory
    (what a cluster profile requests). `what` names the runner in errors."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    with open(log, "ab") if log else open(os.devnull, "wb") as out:
        proc = subprocess.run(list(cmd), stdout=out, stderr=subprocess.PIPE, check=False)
        out.write(proc.stderr)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        msg = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        raise BackendError(
            f"{what} failed on {job_file} (exit {proc.returncode}): " + (msg[-1] if msg else "no message")
        )
    try:
        facts = json.loads((workdir / "runner.json").read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise BackendError(f"{what} wrote no readable runner.json in {workdir}: {exc}") from None
    facts["runner_cpu_s"] = round((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), 3)
    # the largest resident set of the job's child processes (Linux: KiB), the
    # runner's in practice: what a cluster profile requests as memory
    facts["runner_max_rss_mb"] = round(after.ru_maxrss / 1024, 1)
    return facts

"""ns-2 backend: ns-2.35 (the papers' simulator, built by qlab from Debian's
source with qlab's Queue/Qlab adapter compiled in) and its runner
(disciplines/ns2/qlab_ns2_run.py, `qlab-ns2-run`).

It builds any graph of hosts and routers with one link per pair of nodes,
every core discipline at any link end, bulk TCP flows as ns-2's one-way
agents (NewReno, or Sack1 with ``tcp.sack``) and the UDP applications with
the plan's exact send times. ``tcp.handshake: true`` runs ns-2's modelled SYN
(a 40-byte first segment the sink ACKs before data: the one-way agents have
no real handshake); ``false`` starts with data. What it cannot build is
refused naming the field: ns-3's own queue discs (``ns3-*``), parallel links
between two nodes, window scaling, an ACK per more than two segments, other
TCP variants, TCP state traces (``trace.tcp``), a traced lossless queue.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from qlab import paths
from qlab.backends.base import Backend, refuse_wireless, run_runner

NS2 = Path(os.environ.get("QLAB_NS2", paths.BUILD / "ns2" / "ns"))
RUNNER = paths.ROOT / "disciplines" / "ns2" / "qlab_ns2_run.py"
# What disciplines/ns2/build.sh compiles ns-2 against (scripts/setup.sh installs them).
BUILD_HEADERS = ("/usr/include/tcl8.6/tcl.h", "/usr/include/otcl.h", "/usr/include/tclcl/tclcl.h")


def _runner_check():
    """The runner's own check (one list of what ns-2 cannot build)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("qlab_ns2_run", RUNNER)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module.check


class Ns2Backend(Backend):
    name = "ns2"
    summary = (
        "ns-2.35 (built from Debian's source), qlab's Queue/Qlab and one-way TCP; "
        "any graph with one link per node pair"
    )
    image = "ns2"
    build_command = "sh disciplines/ns2/build.sh"
    build_inputs = (
        "disciplines/ns2/build.sh",
        "disciplines/ns2/*.cc",
        "disciplines/ns2/*.h",
        "disciplines/ns2/golden.tcl",
    )
    build_outputs = ("build/ns2/ns", "build/ns2/qlab-ns2-golden", "build/ns2/golden.tcl")

    _check = None

    def tools(self) -> dict[str, Path]:
        return {"qlab's ns-2 (disciplines/ns2/build.sh)": NS2, "the ns-2 runner": RUNNER}

    def unavailable(self) -> str | None:
        if NS2.exists() or all(Path(h).exists() for h in BUILD_HEADERS):
            return None
        return "ns-2's build dependencies are not installed (scripts/setup.sh installs them)"

    def refuse(self, plan: dict[str, Any]) -> list[str]:
        wireless = refuse_wireless(self.name, plan)
        if wireless:
            return wireless
        if Ns2Backend._check is None:
            Ns2Backend._check = _runner_check()
        return Ns2Backend._check(plan)

    def run(
        self, job_file: Path, workdir: Path, log: Path | None, host: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        self.check_tools()
        cmd = [sys.executable, str(RUNNER), str(job_file), str(workdir), "--ns", str(NS2)]
        return run_runner("qlab-ns2-run", cmd, job_file, workdir, log)

"""ns-3 backend: qlab's runner program (disciplines/ns3/qlab-ns3-run).

It builds any plan: any graph of hosts and routers, every application
with every TCP variant (NewReno, CUBIC, BBR), every core discipline, and
ns-3's own queue discs (the kinds `ns3-*`: FifoQueueDisc, the reference the
droptail adapter is compared with, and the native baselines CoDel, FQ-CoDel
and PIE; qlab.native). A plan with wireless
hosts (topology kind wireless_dumbbell) runs in qlab-ns3-run-wireless, the
same runner linked with ns-3's Wi-Fi, AODV, mobility and propagation, which
qlab-ns3-run hands it to."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from qlab import paths
from qlab.backends.base import Backend, run_runner


class Ns3Backend(Backend):
    name = "ns3"
    summary = "ns-3 3.37 (Debian), qlab's queue discs and runner; any graph, any scale (the default)"
    image = "ns3"
    build_command = (
        "cmake -S disciplines/ns3 -B build/ns3 -DCMAKE_BUILD_TYPE=Release && cmake --build build/ns3 -j2"
    )
    build_inputs = (
        "disciplines/ns3/CMakeLists.txt",
        "disciplines/ns3/*.cc",
        "disciplines/ns3/*.h",
        "disciplines/ns3/tests/*.cc",
    )
    build_outputs = (
        "build/ns3/qlab-ns3-run",
        "build/ns3/qlab-ns3-run-wireless",
        "build/ns3/qlab-ns3-golden",
        "build/ns3/qlab-ns3-test-typed",
        "build/ns3/qlab-ns3-test-flow-hash",
        "build/ns3/qlab-ns3-test-tcp-handshake",
    )

    def tools(self) -> dict[str, Path]:
        return {"the ns-3 runner qlab-ns3-run": paths.NS3_RUNNER}

    def run(
        self, job_file: Path, workdir: Path, log: Path | None, host: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        self.check_tools()
        cmd = [str(paths.NS3_RUNNER), str(job_file), str(workdir)]
        return run_runner("qlab-ns3-run", cmd, job_file, workdir, log)

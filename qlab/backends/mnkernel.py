"""mnkernel backend: the mininet backend's dumbbell with qlab's kernel qdisc
as the bottleneck instead of qlab-emu, on a testbed host whose kernel loads
qlab's modules (the virtual testbed's router VM: this machine's kernel
cannot load modules and lacks netem).

``run()`` maps the plan's discipline to tc's words (the testbed backend's
``qdisc_argv``) and runs ``playbooks/mnkernel-run.yml`` on the testbed
inventory's router: roles testbed_qdisc_kmod (qlab's modules and tc plugins,
loaded and checked) and testbed_mininet, which sends the run helper
(``disciplines/emu/qlab_mn_run.py --kernel``), the traffic tool and the plan
and runs them there. The helper builds the mininet backend's dumbbell with a
Linux bridge as the middlebox and, as the testbed's router has it, HTB at
the bottleneck's rate with the discipline as its leaf on the bridge's port
towards the receivers and netem with the round trip's propagation on the
port towards the senders; the testbed's sampler reads the qdisc's counters.
Only when the run succeeded does this module write its raw facts
(docs/traces.md): flow_facts.csv from the helper, queue_facts.csv from the
samples, and runner.json with the testbed's checks of a kernel qdisc run
(every data packet through the discipline, the shaper's rate while it held
a queue) added to the helper's (the senders kept their schedules).

The same jobs with ``mininet`` and with ``mnkernel`` differ only in the
bottleneck: qlab-emu (the core's discipline in user space, its own
shaper and delay line) against the kernel's qdisc module (the same core
code, HTB and netem).
"""

from __future__ import annotations

import csv
import io
import json
import tempfile
import time
from pathlib import Path
from typing import Any

from qlab import paths
from qlab.backends.base import Backend, BackendError
from qlab.backends.mininet import HELPER, MininetBackend, _ansible_version
from qlab.backends.mininet import helper as mininet_helper
from qlab.backends.testbed import (
    DISC_HANDLE,
    KMOD_DIR,
    TC_DIR,
    TestbedBackend,
    _groups,
    inventory,
    kernel_qdisc_reasons,
    qdisc_argv,
    queue_facts,
)

PLAYBOOK = paths.ROOT / "playbooks" / "mnkernel-run.yml"


class MnKernelBackend(Backend):
    name = "mnkernel"
    summary = (
        "the mininet backend's dumbbell with qlab's kernel qdisc (HTB, netem) as the bottleneck, "
        "in Mininet on the testbed's router (the virtual testbed's VM), through Ansible"
    )
    realtime = True
    # it runs on the virtual testbed's router VM, whose TCG CPU needs the
    # machine's cores as the testbed's runs do
    exclusive = True

    def unavailable(self) -> str | None:
        return TestbedBackend().unavailable()

    def refuse(self, plan: dict[str, Any]) -> list[str]:
        """The mininet backend's dumbbell; no packet events (a kernel qdisc
        reports counters); NewReno, the one algorithm the testbed's hosts
        are checked for."""
        out = [
            line.replace("the mininet backend", "the mnkernel backend")
            for line in MininetBackend().refuse_dumbbell(plan)
        ]
        if plan["trace"]["packets"]:
            out.append(
                "trace.packets: the mnkernel backend has no per-packet events (the kernel qdisc's "
                "counters only); run the plan with trace.packets false"
            )
        if plan["tcp"]["variant"] != "NewReno":
            out.append(
                f"tcp.variant: {plan['tcp']['variant']} is not in the mnkernel backend yet "
                "(the testbed's router is checked for Linux's reno only)"
            )
        return out

    def tools(self) -> dict[str, Path]:
        # the testbed's (its host tool, traffic tool, inventory, modules and
        # plugins), with this backend's playbook and the Mininet run helper
        return {**TestbedBackend().tools(), "the playbook": PLAYBOOK, "the Mininet run helper": HELPER}

    @staticmethod
    def job(plan: dict[str, Any]) -> dict[str, Any]:
        """What the playbook needs beside the plan: the discipline's tc words."""
        mn = mininet_helper()
        q = mn.dumbbell(plan).queue
        qdisc, expect = qdisc_argv(
            q["kind"], q["seed"], [(n, mn.param_text(v)) for n, v in sorted(q["params"].items())]
        )
        return {
            "duration_ns": plan["duration_ns"],
            "kernel": {"qdisc": qdisc, "expect": expect, "handle": DISC_HANDLE},
        }

    def run(
        self, job_file: Path, workdir: Path, log: Path | None, host: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        self.check_tools()
        plan = json.loads(Path(job_file).read_text(encoding="utf-8"))
        refused = self.refuse(plan)
        if refused:
            raise BackendError("; ".join(refused))
        inv = inventory()
        router = _groups(inv)["routers"][0]
        t0 = time.monotonic()
        with tempfile.TemporaryDirectory(prefix="qlab-mnkernel-") as tmp:
            staging = Path(tmp) / "out"
            staging.mkdir()
            (Path(tmp) / "job.json").write_text(json.dumps(self.job(plan), sort_keys=True))
            extra = {
                "qlab_mk_job": str(Path(tmp) / "job.json"),
                "qlab_mk_plan": str(Path(job_file).resolve()),
                "qlab_mk_staging": str(staging),
                "qlab_tb_kmod_dir": str(KMOD_DIR),
                "qlab_tb_tc_dir": str(TC_DIR),
            }
            MininetBackend()._play(PLAYBOOK, extra, log, f"the mnkernel run of {job_file} on {router}", inv)
            try:
                got = json.loads((staging / "result.json").read_text(encoding="utf-8"))
            except (OSError, json.JSONDecodeError) as exc:
                raise BackendError(
                    f"host {router}: the mnkernel run sent no readable results: {exc}"
                ) from None
        facts = self.ingest(plan, got, workdir, router)
        facts.setdefault("versions", {})["ansible-core"] = _ansible_version()
        facts["launch_wall_s"] = round(time.monotonic() - t0, 3)
        return facts

    @staticmethod
    def ingest(plan: dict[str, Any], got: dict[str, Any], workdir: Path, router: str) -> dict[str, Any]:
        """The raw facts from what the router sent: the helper's runner.json
        and flow_facts.csv, the sampled counters as queue_facts.csv, and the
        kernel qdisc's checks added to the helper's."""
        missing = [n for n in ("runner.json", "flow_facts.csv", "queue-samples.json") if n not in got]
        if missing:
            raise BackendError(
                f"host {router}: the mnkernel run sent no {', '.join(missing)}: nothing collected"
            )
        facts = got["runner.json"]
        samples = got["queue-samples.json"]["samples"]
        mn = mininet_helper()
        d = mn.dumbbell(plan)
        rows, arrivals, sent, rate = queue_facts(samples, d.queue_id, facts["end_ns"])
        # the senders' data packets (flow_facts.csv's tx_packets, by its header)
        tx = sum(int(r["tx_packets"]) for r in csv.DictReader(io.StringIO(got["flow_facts.csv"])))
        reasons = kernel_qdisc_reasons(arrivals, tx, rate, d.link["rate_bps"], "the bridge's qdisc")
        facts["invalid_reasons"] = [*facts.get("invalid_reasons", []), *reasons]
        facts["valid"] = bool(facts.get("valid")) and not reasons
        facts.setdefault("fidelity", {}).update(
            {
                "qdisc_arrivals_pkts": arrivals,
                "qdisc_sent_pkts": sent,
                "senders_data_pkts": tx,
                **{k: round(v, 3) for k, v in rate.items()},
            }
        )
        workdir.mkdir(parents=True, exist_ok=True)
        (workdir / "flow_facts.csv").write_text(got["flow_facts.csv"], encoding="utf-8")
        traced = d.queue_id in plan["trace"]["queues"]
        (workdir / "queue_facts.csv").write_text(
            "\n".join(rows if traced else rows[:1]) + "\n", encoding="utf-8"
        )
        (workdir / "runner.json").write_text(json.dumps(facts, sort_keys=True), encoding="utf-8")
        return facts

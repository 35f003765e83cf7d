"""Testbed backend: Ansible runs the plan on real hosts (a sender, a router
with qlab's kernel qdisc, a receiver), or on the virtual testbed's QEMU VMs.

``run()`` maps the plan's dumbbell onto the inventory (``QLAB_TESTBED_INVENTORY``,
default ``inventories/vm-testbed.yml``, which ``qlab testbed up`` writes):
the hosts on the discipline's side of the bottleneck onto the ``senders``
group, the others onto ``receivers``, the bottleneck onto the ``routers``
host's egress interface. It then runs ``playbooks/testbed-run.yml``: roles
testbed_preflight (asserts before anything changes), testbed_qdisc_kmod
(qlab's modules and tc plugins on the router), testbed_tc (HTB at the
bottleneck's rate with the discipline as its leaf; netem delay on the
reverse path), testbed_capture (qdisc counters sampled on the router),
testbed_traffic (one qlab_traffic.py process per flow, the tool the mininet
backend runs) and testbed_collect (each host's facts fetched into a staging
directory). Only when every host reported a complete part does this module
write the raw facts (docs/traces.md) into the work directory: a partial run
raises BackendError naming the host and writes nothing.

Times: every host stamps with its own CLOCK_REALTIME against one epoch the
controller chose; preflight holds each host's clock offset from the
controller's to a bound (testbed_preflight_max_clock_offset_ms) and the
measured offsets go into run.json's fidelity.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from qlab import paths
from qlab.backends.base import Backend, BackendError
from qlab.backends.mininet import MininetBackend, _ansible_playbook, _ansible_version
from qlab.backends.mininet import helper as mininet_helper

PLAYBOOK = paths.ROOT / "playbooks" / "testbed-run.yml"
HOST_TOOL = paths.ROOT / "testbed" / "host" / "qlab_tb_host.py"
TRAFFIC_TOOL = paths.ROOT / "disciplines" / "emu" / "qlab_traffic.py"
KMOD_DIR = paths.ROOT / "build" / "linux" / "kmod"
TC_DIR = paths.ROOT / "build" / "linux" / "tc"
# The tc handles the testbed_tc role gives the shaper and the discipline.
DISC_HANDLE = "10:"
# The dedicated qdiscs (disciplines/linux/README.md): the core's kind ->
# the qdisc and its variant option; any other kind runs as `qlab disc KIND`.
# Both run the core's same code; the dedicated ones add their counters.
DEDICATED = {
    "ncq": ("ncq", None),
    "cqaqm": ("cqaqm", None),
    "srd": ("srd", ("variant", "srd")),
    "rd": ("srd", ("variant", "rd")),
    "rbaqm": ("rbwfq", ("aqm", "rbaqm")),
    "wred": ("rbwfq", ("aqm", "wred")),
}


def qdisc_argv(kind: str, seed: int, params: list[tuple[str, str]]) -> tuple[list[str], dict[str, Any]]:
    """tc's words after the handle for the core's kind, and what `tc -j qdisc
    show` must then say: {"kind", "options": {key: value}}."""
    if kind in DEDICATED:
        qdisc, variant = DEDICATED[kind]
        argv = [qdisc, *(variant or ()), "seed", str(seed)]
        expect = {"kind": qdisc, "options": dict([variant]) if variant else {}}
    else:
        argv = ["qlab", "disc", kind, "seed", str(seed)]
        expect = {"kind": "qlab", "options": {"disc": kind}}
    for name, value in params:
        argv += [name, value]
    return argv, expect


def inventory() -> Path:
    return Path(os.environ.get("QLAB_TESTBED_INVENTORY", paths.ROOT / "inventories" / "vm-testbed.yml"))


def _groups(inv: Path) -> dict[str, Any]:
    """The inventory resolved by ansible-inventory: hosts of senders, routers, receivers."""
    exe = _ansible_playbook().with_name("ansible-inventory")
    proc = subprocess.run([str(exe), "-i", str(inv), "--list"], capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise BackendError(f"ansible-inventory could not read {inv}: {proc.stderr.strip()[-300:]}")
    doc = json.loads(proc.stdout)
    hostvars = doc.get("_meta", {}).get("hostvars", {})
    out: dict[str, Any] = {"hostvars": hostvars}
    for g in ("senders", "routers", "receivers"):
        out[g] = doc.get(g, {}).get("hosts", [])
    if len(out["routers"]) != 1 or not out["senders"] or not out["receivers"]:
        raise BackendError(
            f"{inv}: the testbed needs one host in group routers and at least one in senders and "
            f"in receivers (got routers {out['routers']}, senders {out['senders']}, "
            f"receivers {out['receivers']})"
        )
    for g, key in (("senders", "testbed_data_addr"), ("receivers", "testbed_data_addr")):
        for h in out[g]:
            if not hostvars.get(h, {}).get(key):
                raise BackendError(f"{inv}: host {h} (group {g}) has no {key}")
    r = out["routers"][0]
    for key in ("testbed_ingress_if", "testbed_egress_if"):
        if not hostvars.get(r, {}).get(key):
            raise BackendError(f"{inv}: router {r} has no {key}")
    return out


class TestbedBackend(Backend):
    name = "testbed"
    summary = (
        "real hosts (or the virtual testbed's QEMU VMs) through Ansible: qlab's kernel qdisc on a "
        "router between a sender and a receiver, in real time (root, an inventory)"
    )
    realtime = True

    def unavailable(self) -> str | None:
        if not inventory().exists():
            return f"no testbed inventory {inventory()} (`qlab testbed up`, or QLAB_TESTBED_INVENTORY)"
        if "QLAB_TESTBED_INVENTORY" not in os.environ:
            from qlab import testbed_vm

            if not all(testbed_vm.status().values()):
                return "the virtual testbed is not running (`qlab testbed up`)"
        return None

    def refuse(self, plan: dict[str, Any]) -> list[str]:
        """The mininet backend's dumbbell rules (the same helper builds the
        dumbbell), and one socket per port on each testbed host: every
        sending-side plan host runs on the senders, so the flows' source
        ports (and destination ports) must differ."""
        out = [
            line.replace("the mininet backend", "the testbed backend")
            for line in MininetBackend().refuse_dumbbell(plan)
        ]
        if plan["tcp"]["variant"] != "NewReno":
            out.append(
                f"tcp.variant: {plan['tcp']['variant']} is not in the testbed backend yet: its traffic "
                "role sets Linux's reno (NewReno) on the hosts and checks no other algorithm"
            )
        for key in ("src_port", "dst_port"):
            seen: dict[tuple[str, int], int] = {}
            for f in plan["flows"]:
                k = ("udp" if f["app"] != "bulk" else "tcp", f[key])
                if k in seen:
                    out.append(
                        f"flows[{f['flow_id']}].{key}: {k[1]} is flow {seen[k]}'s too; the testbed runs "
                        "every plan host of a side on the same machines, so ports must differ"
                    )
                    break
                seen[k] = f["flow_id"]
        return out

    def tools(self) -> dict[str, Path]:
        return {
            "ansible-playbook (pip install -r requirements.txt)": _ansible_playbook(),
            "the playbook": PLAYBOOK,
            "the testbed host tool": HOST_TOOL,
            "the traffic tool": TRAFFIC_TOOL,
            "the inventory (qlab testbed up)": inventory(),
            "qlab's kernel modules (make -C disciplines/linux modules)": KMOD_DIR / "sch_qlab.ko",
            "qlab's tc plugins (make -C disciplines/linux plugins)": TC_DIR / "q_qlab.so",
        }

    def job(self, plan: dict[str, Any], groups: dict[str, Any]) -> dict[str, Any]:
        """What the playbook runs: each host's part of the plan."""
        mn = mininet_helper()  # the dumbbell reading, parameter text, flow_facts writer
        d = mn.dumbbell(plan)
        hv = groups["hostvars"]
        senders, receivers = groups["senders"], groups["receivers"]
        on = {h["id"]: senders[i % len(senders)] for i, h in enumerate(d.hosts_a)}
        on.update({h["id"]: receivers[i % len(receivers)] for i, h in enumerate(d.hosts_b)})
        hosts: dict[str, Any] = {h: {"role": "send", "flows": []} for h in senders}
        hosts.update({h: {"role": "sink", "flows": []} for h in receivers})
        for f in plan["flows"]:
            dst = hv[on[f["dst"]]]["testbed_data_addr"]
            item = {"flow": f, "dst_address": dst, "tcp": plan["tcp"]}
            hosts[on[f["src"]]]["flows"].append(item)
            hosts[on[f["dst"]]]["flows"].append(item)
        q = d.queue
        qdisc, expect = qdisc_argv(
            q["kind"], q["seed"], [(n, mn.param_text(v)) for n, v in sorted(q["params"].items())]
        )
        return {
            "duration_ns": plan["duration_ns"],
            "stop_when_done": plan["stop_when_done"],
            "udp_drain_ns": plan["udp_drain_ns"],
            "tcp": plan["tcp"],
            "hosts": hosts,
            "router": {
                "host": groups["routers"][0],
                "rate_bps": d.link["rate_bps"],
                # the round trip's propagation, on the reverse path (netem)
                "delay_ns": 2 * d.emu_delay_ns,
                "mtu_bytes": d.mtu_bytes,
                "qdisc": qdisc,
                "expect": expect,
                "handle": DISC_HANDLE,
                "queue": d.queue_id,
                "traced": d.queue_id in plan["trace"]["queues"],
                "interval_ns": plan["trace"]["queue_sample_interval_ns"],
            },
        }

    def run(
        self, job_file: Path, workdir: Path, log: Path | None, host: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        self.check_tools()
        plan = json.loads(Path(job_file).read_text(encoding="utf-8"))
        if plan.get("trace", {}).get("packets"):
            raise BackendError(
                "trace.packets: the testbed backend does not capture per-packet events yet "
                "(qdisc counters only); run the plan with trace.packets false"
            )
        inv = inventory()
        job = self.job(plan, _groups(inv))
        return self.play(plan, job, workdir, log, f"the testbed run of {job_file} on {inv}")

    def play(
        self,
        plan: dict[str, Any],
        job: dict[str, Any],
        workdir: Path,
        log: Path | None,
        what: str,
        kmod_dir: Path = KMOD_DIR,
    ) -> dict[str, Any]:
        """Run a mapped job through the playbook and ingest it (the fault
        tests call this with a job or modules of their own)."""
        inv = inventory()
        t0 = time.monotonic()
        with tempfile.TemporaryDirectory(prefix="qlab-testbed-") as tmp:
            staging = Path(tmp) / "hosts"
            staging.mkdir()
            (Path(tmp) / "job.json").write_text(json.dumps(job, sort_keys=True))
            extra = {
                "qlab_tb_job": str(Path(tmp) / "job.json"),
                "qlab_tb_staging": str(staging),
                "qlab_tb_kmod_dir": str(kmod_dir),
                "qlab_tb_tc_dir": str(TC_DIR),
                "qlab_tb_host_tool": str(HOST_TOOL),
                "qlab_tb_traffic_tool": str(TRAFFIC_TOOL),
            }
            MininetBackend()._play(PLAYBOOK, extra, log, what, inv)
            facts = self.ingest(plan, job, staging, workdir)
        facts.setdefault("versions", {})["ansible-core"] = _ansible_version()
        facts["launch_wall_s"] = round(time.monotonic() - t0, 3)
        return facts

    def ingest(
        self, plan: dict[str, Any], job: dict[str, Any], staging: Path, workdir: Path
    ) -> dict[str, Any]:
        """The raw facts from every host's part, written only when each host
        reported a complete one."""
        parts: dict[str, dict[str, Any]] = {}
        hosts = [*job["hosts"], job["router"]["host"]]
        for h in hosts:
            f = staging / h / "host-facts.json"
            try:
                doc = json.loads(f.read_text(encoding="utf-8"))
            except (OSError, json.JSONDecodeError):
                raise BackendError(
                    f"host {h}: reported no facts ({f.name} missing): nothing collected"
                ) from None
            if doc.get("complete") is not True:
                raise BackendError(
                    f"host {h}: its part of the run is incomplete ({doc.get('problem', 'no reason given')}): "
                    "nothing collected"
                )
            parts[h] = doc
        epoch = int((staging / "epoch_ns").read_text().strip())
        clock = json.loads((staging / "clock.json").read_text()) if (staging / "clock.json").exists() else {}
        apps: dict[int, dict[str, Any]] = {f["flow_id"]: {} for f in plan["flows"]}
        ended = []
        for h, spec in job["hosts"].items():
            ended.append(parts[h]["ended_ns"] - epoch)
            for fid, got in parts[h]["flows"].items():
                apps[int(fid)][spec["role"]] = got
        end_ns = min(plan["duration_ns"], max(ended))
        mn = mininet_helper()  # the dumbbell reading, parameter text, flow_facts writer
        flow_csv = mn.flow_facts(plan, apps, epoch)
        router = job["router"]
        rows = ["time_ns,queue,band,backlog_pkts,backlog_bytes,enqueued_pkts,dequeued_pkts,dropped_pkts"]
        arrivals = sent_pkts = 0
        if router["traced"]:
            doc = json.loads((staging / router["host"] / "queue-samples.json").read_text())
            for s in doc["samples"]:
                t = min(s["time_ns"], end_ns)
                for b in s["bands"]:
                    drops = sum(v for k, v in b.items() if k.startswith("drop_"))
                    # arrival drops: every drop_* counter but drop_delay (a
                    # head drop at dequeue); purged packets left the queue
                    # after admission, like head drops
                    enq = b["arrivals"] - (drops - b.get("drop_delay", 0))
                    rows.append(
                        f"{t},{router['queue']},{b['band']},{b['backlog_pkts']},{b['backlog_bytes']},"
                        f"{enq},{b['sent']},{drops + b.get('purged', 0)}"
                    )
            last = doc["samples"][-1]["bands"]
            arrivals = sum(b["arrivals"] for b in last)
            sent_pkts = sum(b["sent"] for b in last)
        tx = sum((a.get("send") or {}).get("tx_packets", 0) for a in apps.values())
        reasons = []
        if router["traced"] and arrivals < tx:
            reasons.append(
                f"the discipline saw {arrivals} packets but the senders sent {tx} data packets: "
                "traffic bypassed the router's qdisc"
            )
        late_reasons, late_facts = mn.sender_fidelity(plan, apps)
        reasons += late_reasons
        bound = clock.get("bound_ms")
        # preflight's probe brackets the host's clock reading between two of
        # the controller's: the offset is known to within half the bracket
        # (seconds on TCG VMs of a loaded machine, so the check is weak there)
        unc = clock.get("uncertainty_ms", {})
        for h, off in sorted(clock.get("offset_ms", {}).items()):
            if bound is not None and abs(off) - unc.get(h, 0.0) > bound:
                reasons.append(
                    f"host {h}: clock offset {off:.1f} ms (probe uncertainty {unc.get(h, 0.0):.1f} ms) "
                    f"exceeds {bound} ms"
                )
        # everything checked: now the work directory gets the raw facts
        workdir.mkdir(parents=True, exist_ok=True)
        (workdir / "flow_facts.csv").write_text(flow_csv, encoding="utf-8")
        (workdir / "queue_facts.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")
        facts: dict[str, Any] = {
            "end_ns": end_ns,
            "wall_time_s": round(end_ns / 1e9, 3),
            "versions": {"testbed-kernel": clock.get("kernel", "unknown")},
            "valid": not reasons,
            "invalid_reasons": reasons,
            "fidelity": {
                "clock_offset_ms": clock.get("offset_ms", {}),
                "clock_uncertainty_ms": clock.get("uncertainty_ms", {}),
                "clock_bound_ms": bound,
                "qdisc_arrivals_pkts": arrivals,
                "qdisc_sent_pkts": sent_pkts,
                "senders_data_pkts": tx,
                "bottleneck_rate_bps": router["rate_bps"],
                "reverse_delay_ns": router["delay_ns"],
                **late_facts,
            },
        }
        (workdir / "runner.json").write_text(json.dumps(facts, sort_keys=True), encoding="utf-8")
        return facts

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
import shutil
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
# The router's optional pcap (testbed_capture_pcap), placed beside the run's tables.
PCAP_FILE = "router-egress.pcap"
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


# The shortest time the discipline must hold a queue for its shaper's rate to be judged.
BUSY_MIN_S = 0.5


def busy_rate(samples: list[dict[str, Any]]) -> dict[str, float]:
    """The rate the shaper drew from the discipline while it held a queue:
    over each run of consecutive samples that all found a backlog, the
    bytes sent from its first sample to its last over their time apart.
    Each sample was read between its read_ns[0] and read_ns[1], so that
    time is bracketed: achieved_rate_bps at the middle, low_bps and high_bps
    at the bracket's ends; busy_s the time judged. Empty when no two
    consecutive samples were busy (or the samples have no read times)."""
    nbytes = d_lo = d_hi = 0
    first = last = None
    for s in [*samples, None]:
        busy = s is not None and "read_ns" in s and sum(x["backlog_pkts"] for x in s["bands"]) > 0
        if busy:
            first, last = first or s, s
            continue
        if first is not None and last is not first:
            nbytes += last["sent_bytes"] - first["sent_bytes"]
            d_lo += last["read_ns"][0] - first["read_ns"][1]
            d_hi += last["read_ns"][1] - first["read_ns"][0]
        first = last = None
    if d_hi <= 0 or nbytes <= 0:
        return {}
    mid = (d_lo + d_hi) / 2
    return {
        "achieved_rate_bps": nbytes * 8e9 / mid,
        "low_bps": nbytes * 8e9 / d_hi,
        "high_bps": nbytes * 8e9 / max(d_lo, 1),
        "busy_s": mid / 1e9,
    }


QUEUE_FACTS_HEADER = "time_ns,queue,band,backlog_pkts,backlog_bytes,enqueued_pkts,dequeued_pkts,dropped_pkts"


def queue_facts(
    samples: list[dict[str, Any]], queue: str, end_ns: int
) -> tuple[list[str], int, int, dict[str, float]]:
    """A kernel qdisc's sampled counters (the host tool's sampler) as the
    rows of queue_facts.csv (docs/traces.md), its header first; the
    arrivals and departures it counted in all; and busy_rate()."""
    rows = [QUEUE_FACTS_HEADER]
    # the samples before the run's end, then the last one (the final
    # counters) stamped with the end: a sampler told of the end late (a
    # slow host) kept sampling, and those samples would repeat its time
    kept = [s for s in samples[:-1] if s["time_ns"] < end_ns] + samples[-1:]
    for s in kept:
        t = min(s["time_ns"], end_ns)
        for b in s["bands"]:
            drops = sum(v for k, v in b.items() if k.startswith("drop_"))
            # arrival drops: every drop_* counter but drop_delay (a head drop
            # at dequeue); purged packets left the queue after admission,
            # like head drops
            enq = b["arrivals"] - (drops - b.get("drop_delay", 0))
            rows.append(
                f"{t},{queue},{b['band']},{b['backlog_pkts']},{b['backlog_bytes']},"
                f"{enq},{b['sent']},{drops + b.get('purged', 0)}"
            )
    last = samples[-1]["bands"]
    return (
        rows,
        sum(b["arrivals"] for b in last),
        sum(b["sent"] for b in last),
        busy_rate(samples),
    )


def kernel_qdisc_reasons(
    arrivals: int | None, tx: int, rate: dict[str, float], rate_bps: int, where: str
) -> list[str]:
    """Why a run through a kernel qdisc is not faithful: the discipline saw
    fewer packets than the senders sent (arrivals None: not sampled), or
    the shaper's rate while the discipline held a queue, judged as the
    mininet backend judges qlab-emu's, lay wholly outside the tolerance (a
    TCG router that cannot forward at the plan's rate queues elsewhere)."""
    reasons = []
    if arrivals is not None and arrivals < tx:
        reasons.append(
            f"the discipline saw {arrivals} packets but the senders sent {tx} data packets: "
            f"traffic bypassed {where}"
        )
    tol = mininet_helper().FIDELITY["rate_rel_tol"]
    if rate.get("busy_s", 0) >= BUSY_MIN_S:
        lo, hi = rate["low_bps"] / rate_bps, rate["high_bps"] / rate_bps
        if hi < 1 - tol or lo > 1 + tol:
            reasons.append(
                f"achieved rate {rate['achieved_rate_bps']:.0f} b/s (between {rate['low_bps']:.0f} and "
                f"{rate['high_bps']:.0f}) while the discipline held a queue, against the configured "
                f"{rate_bps} b/s (tolerance {100 * tol:.0f}%)"
            )
    return reasons


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
    # the virtual testbed's three TCG VMs need both cores of a 2-core machine
    # (docs/benchmarks.md, "The virtual testbed"); real hosts would not mind
    exclusive = True

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
        dumbbell). The plan hosts of a side share the testbed's machines,
        each under its own address (an alias, job()), so their ports may
        repeat as in the plan."""
        out = [
            line.replace("the mininet backend", "the testbed backend")
            for line in MininetBackend().refuse_dumbbell(plan)
        ]
        if plan["tcp"]["variant"] != "NewReno":
            out.append(
                f"tcp.variant: {plan['tcp']['variant']} is not in the testbed backend yet: its traffic "
                "role sets Linux's reno (NewReno) on the hosts and checks no other algorithm"
            )
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
        address = {h["id"]: h["address"] for h in (*d.hosts_a, *d.hosts_b)}
        hosts: dict[str, Any] = {h: {"role": "send", "flows": []} for h in senders}
        hosts.update({h: {"role": "sink", "flows": []} for h in receivers})
        for f in plan["flows"]:
            # the plan's own addresses, so every flow has the plan's 5-tuple
            # (the same flow hash as in ns-3 and Mininet) though the plan
            # hosts of a side share machines
            item = {
                "flow": f,
                "src_address": address[f["src"]],
                "dst_address": address[f["dst"]],
                "listen_address": address[f["dst"]],
                "tcp": plan["tcp"],
            }
            hosts[on[f["src"]]]["flows"].append(item)
            hosts[on[f["dst"]]]["flows"].append(item)
        rto_ms = max(1, round(plan["tcp"]["min_rto_ns"] / 1e6))
        for side, machines, others in ((d.hosts_a, senders, receivers), (d.hosts_b, receivers, senders)):
            peers = [h["address"] for h in (d.hosts_b if side is d.hosts_a else d.hosts_a)]
            for m in machines:
                hosts[m]["net"] = {
                    "aliases": [h["address"] for h in side if on[h["id"]] == m],
                    "data_addr": hv[m]["testbed_data_addr"],
                    # each peer by a /32 route with the plan's TCP route
                    # settings (as the mininet backend sets them)
                    "routes": [
                        {
                            "dst": a,
                            "gateway_to": hv[others[0]]["testbed_data_addr"],
                            "initcwnd": plan["tcp"]["initial_cwnd_segments"],
                            "rto_min_ms": rto_ms,
                        }
                        for a in peers
                    ],
                }
        router_routes = [
            {"dst": address[h], "via": hv[m]["testbed_data_addr"]}
            for h, m in sorted(on.items(), key=lambda kv: kv[1] + " " + address[kv[0]])
            if address[h] != hv[m]["testbed_data_addr"]
        ]
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
                "net": {"aliases": [], "routes": router_routes},
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
        rows, arrivals, sent_pkts, rate = [QUEUE_FACTS_HEADER], 0, 0, {}
        if router["traced"]:
            doc = json.loads((staging / router["host"] / "queue-samples.json").read_text())
            rows, arrivals, sent_pkts, rate = queue_facts(doc["samples"], router["queue"], end_ns)
        tx = sum((a.get("send") or {}).get("tx_packets", 0) for a in apps.values())
        reasons = kernel_qdisc_reasons(
            arrivals if router["traced"] else None, tx, rate, router["rate_bps"], "the router's qdisc"
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
        pcap = parts[router["host"]].get("pcap")
        # everything checked: now the work directory gets the raw facts
        workdir.mkdir(parents=True, exist_ok=True)
        if pcap is not None:
            shutil.copyfile(staging / router["host"] / PCAP_FILE, workdir / PCAP_FILE)
        (workdir / "flow_facts.csv").write_text(flow_csv, encoding="utf-8")
        (workdir / "queue_facts.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")
        facts: dict[str, Any] = {
            "end_ns": end_ns,
            "wall_time_s": round(end_ns / 1e9, 3),
            "versions": {
                "testbed-kernel": clock.get("kernel", "unknown"),
                # how the router got qlab's modules: prebuilt, or built there by DKMS
                "testbed-kmod": clock.get("kmod_method", "unknown"),
            },
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
                **({f"pcap_{k}_pkts": v for k, v in pcap.items()} if pcap else {}),
                **{k: round(v, 3) for k, v in rate.items()},
                "reverse_delay_ns": router["delay_ns"],
                **late_facts,
            },
        }
        (workdir / "runner.json").write_text(json.dumps(facts, sort_keys=True), encoding="utf-8")
        return facts

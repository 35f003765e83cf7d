"""Mininet backend: Ansible runs the job in Mininet with qlab-emu as the bottleneck.

``run()`` calls ``ansible-playbook playbooks/run-job.yml`` against an inventory
(``inventories/localhost.yml`` unless ``QLAB_MININET_INVENTORY`` names another);
the playbook checks the emulation host, builds ``qlab-emu`` there (or uses
the one ``QLAB_EMU`` names on it: qlab's emu image has one built in), runs
``disciplines/emu/qlab_mn_run.py`` on the plan (Debian's ``/usr/bin/python3``,
which can import Mininet) and fetches its raw facts (docs/traces.md) and
``runner.json`` into the work directory; ``qlab.runjob`` checks and finalises
them. The runner's facts carry ``valid``/``invalid_reasons``/``fidelity`` from
the emulator's fidelity checks.

If this process dies, ansible-playbook gets SIGTERM (PR_SET_PDEATHSIG)
and the helper's reaper (its own session on the emulation host) stops the
helper and removes what the run created. SIGTERM/SIGINT to this process
terminates ansible-playbook and its descendants first (the helper cleans up
on SIGTERM).
"""

from __future__ import annotations

import functools
import importlib.util
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from qlab import native, paths
from qlab.backends.base import Backend, BackendError, refuse_wireless

PLAYBOOK = paths.ROOT / "playbooks" / "run-job.yml"
PREPARE_PLAYBOOK = paths.ROOT / "playbooks" / "prepare-host.yml"
LOCALHOST_INVENTORY = paths.ROOT / "inventories" / "localhost.yml"
INVENTORY = Path(os.environ.get("QLAB_MININET_INVENTORY", LOCALHOST_INVENTORY))
HELPER = paths.ROOT / "disciplines" / "emu" / "qlab_mn_run.py"
EMU_SOURCES = paths.ROOT / "disciplines" / "emu" / "qlab-emu.c"
# Where the run helper keeps its lock (qlab_mn_run.STATE_DIR).
LOCK_DIR = "/run/qlab-mn"


def _ansible_playbook() -> Path:
    """ansible-playbook beside this interpreter (the venv), else on PATH."""
    here = Path(sys.executable).parent / "ansible-playbook"
    if here.exists():
        return here
    for d in os.environ.get("PATH", "").split(os.pathsep):
        if (Path(d) / "ansible-playbook").exists():
            return Path(d) / "ansible-playbook"
    return here


def _die_with_parent() -> None:
    """In the child before exec: SIGTERM when the parent (this process) dies."""
    import ctypes

    pr_set_pdeathsig = 1
    ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, int(signal.SIGTERM), 0, 0, 0)


def _ansible_version() -> str:
    from importlib import metadata

    try:
        return metadata.version("ansible-core")
    except metadata.PackageNotFoundError:
        return "unknown"


class _Interrupted(Exception):
    pass


@functools.cache
def helper() -> Any:
    """disciplines/emu/qlab_mn_run.py as a module (stdlib only): what the run
    helper decides on the emulation host, for checks made here first."""
    spec = importlib.util.spec_from_file_location("qlab_mn_run", HELPER)
    module = importlib.util.module_from_spec(spec)
    assert spec.loader
    spec.loader.exec_module(module)
    return module


def _variant_problems(plan: dict[str, Any]) -> list[str]:
    """The plan's tcp.variant as each host's Linux congestion control: refused
    when the emulation host's kernel does not offer it. With the localhost
    inventory that host is this machine, so it is checked here, when the
    plan is expanded; on another emulation host the run helper checks it
    there before anything is built (exit 2, the same message)."""
    if INVENTORY != LOCALHOST_INVENTORY:
        return []
    problem = helper().congestion_control_problem(plan["tcp"]["variant"])
    return [problem] if problem else []


MAX_FLOWS = 2000


def _ns3_only_tcp(plan: dict[str, Any]) -> list[str]:
    """The plan's TCP options that only the ns3 backend models."""
    out = []
    if plan["tcp"].get("handshake", True) is False:
        out.append(
            "tcp.handshake: false (connections that start established, as ns-2's one-way "
            "TCP) exists only in the ns3 backend: Linux TCP always opens with a handshake"
        )
    if plan["trace"].get("tcp"):
        out.append("trace.tcp: per-flow TCP state traces exist only in the ns3 backend")
    return out


class MininetBackend(Backend):
    name = "mininet"
    summary = (
        "Mininet with Linux hosts and qlab-emu as the bottleneck, launched by Ansible; "
        "a dumbbell, in real time (root)"
    )
    realtime = True
    image = "emu"
    # In the emu image (containers/README.md): root, and the capabilities a
    # run uses rather than --privileged (which asks for every capability;
    # hosts whose bounding set lacks one, as these VMs lack SYS_RESOURCE,
    # refuse it): NET_ADMIN (links, bridges, offloads), NET_RAW (qlab-emu's
    # packet sockets), SYS_ADMIN (Mininet's namespaces mount their own
    # sysfs), SYS_NICE and IPC_LOCK (qlab-emu's SCHED_FIFO and mlockall);
    # no AppArmor profile (Docker's default one, where AppArmor is on,
    # forbids those mounts). /proc/sys writable (systempaths=unconfined):
    # each host's TCP sysctls are per network namespace, but Docker mounts
    # /proc/sys read-only.
    # Mininet builds its namespaces inside the container's own network
    # namespace, so `--network none` stays: a killed container takes every
    # interface of its run with it. The host's /run/qlab-mn holds the
    # emulation lock (one run at a time per machine, native or not).
    docker_options = (
        "--user",
        "0:0",
        "--cap-add",
        "NET_ADMIN",
        "--cap-add",
        "NET_RAW",
        "--cap-add",
        "SYS_ADMIN",
        "--cap-add",
        "SYS_NICE",
        "--cap-add",
        "IPC_LOCK",
        "--security-opt",
        "systempaths=unconfined",
        "--security-opt",
        "apparmor=unconfined",
        "--volume",
        f"{LOCK_DIR}:{LOCK_DIR}-host",
    )

    def unavailable(self) -> str | None:
        import os

        if os.geteuid() != 0:
            return "the mininet backend needs root"
        if (
            subprocess.run(
                ["/usr/bin/python3", "-c", "import mininet"], capture_output=True, check=False
            ).returncode
            != 0
        ):
            return "Mininet is not installed (scripts/setup.sh installs it)"
        return None

    def refuse(self, plan: dict[str, Any]) -> list[str]:
        """refuse_dumbbell(), and a TCP variant the emulation host's kernel
        does not offer."""
        return self.refuse_dumbbell(plan) + _variant_problems(plan)

    def refuse_dumbbell(self, plan: dict[str, Any]) -> list[str]:
        """A dumbbell: two routers, one link between them with a discipline at
        one end (qlab-emu's forward link) and a lossless queue at the other,
        hosts on access links of one delay (folded into the emulator: this
        kernel has no netem), data from the discipline's side only; Linux
        TCP (no connection without a handshake, no per-flow TCP traces)."""
        ns3_only = refuse_wireless(self.name, plan) or _ns3_only_tcp(plan)
        if ns3_only:
            return ns3_only
        nodes = {n["id"]: n for n in plan["nodes"]}
        routers = [n["id"] for n in plan["nodes"] if n["kind"] == "router"]
        between = [
            (i, lk)
            for i, lk in enumerate(plan["links"])
            if nodes[lk["a"]]["kind"] == "router" and nodes[lk["b"]]["kind"] == "router"
        ]
        if len(routers) != 2 or len(between) != 1:
            return [
                f"links: the mininet backend builds a dumbbell (two routers, one link between them); "
                f"this plan has {len(routers)} routers and {len(between)} router links"
            ]
        out = []
        i, bottleneck = between[0]
        shaped = [n for n, q in bottleneck["queues"].items() if q["kind"] != "lossless"]
        if len(shaped) != 1:
            return [
                f"links[{i}].queues: the mininet backend runs one discipline, at one end of the "
                f"bottleneck (qlab-emu's forward link); got {len(shaped)}"
            ]
        side = shaped[0]
        for j, lk in enumerate(plan["links"]):
            for n, q in lk["queues"].items():
                if native.is_native(q["kind"]):
                    out.append(
                        f"links[{j}].queues.{n}.kind: {q['kind']} is ns-3's own queue disc: only the ns3 "
                        "backend has it, not the mininet backend (qlab-emu runs the core's disciplines; "
                        "a scenario's series of it runs beside the others with `backends: [ns3]`)"
                    )
                elif q["kind"] != "lossless" and lk is not bottleneck:
                    out.append(
                        f"links[{j}].queues.{n}: the mininet backend runs a discipline on the bottleneck only"
                    )
        delays = sorted({lk["delay_ns"] for lk in plan["links"] if lk is not bottleneck})
        if len(delays) > 1:
            out.append(
                f"links: the mininet backend folds the access links' delay into the bottleneck's "
                f"(no netem here), so they must all be equal; got {delays[0]} to {delays[-1]} ns"
            )
        attached = {}
        for lk in plan["links"]:
            if lk is not bottleneck:
                host, router = (lk["a"], lk["b"]) if nodes[lk["a"]]["kind"] == "host" else (lk["b"], lk["a"])
                attached[host] = router
        for j, f in enumerate(plan["flows"]):
            if attached.get(f["src"]) != side:
                out.append(
                    f"flows[{j}].src: the mininet backend sends data through the discipline "
                    f"(from hosts at {side}); {f['src']} is at {attached.get(f['src'])}"
                )
                break
            if attached.get(f["dst"]) == side:
                out.append(
                    f"flows[{j}].dst: the mininet backend sends data through the discipline "
                    f"(to hosts across the bottleneck from {side}); {f['dst']} is at {side}"
                )
                break
        # poisson flows: qlab_traffic.py draws the contract's generator; a datagram longer than
        # the links' MTU would leave the sender as IP fragments, which queue as packets of their own
        mtu = min(lk["mtu_bytes"] for lk in plan["links"])
        big = [f for f in plan["flows"] if f["app"] == "poisson" and f["pkt_bytes"] > mtu]
        if big:
            out.append(
                f"flows: app poisson (flow {big[0]['flow_id']}): datagrams of up to {big[0]['pkt_bytes']} "
                f"bytes exceed the links' MTU ({mtu} bytes): in emulation they would be sent as IP "
                "fragments, each queued on its own; the ns3 backend queues whole datagrams"
            )
        if len(plan["flows"]) > MAX_FLOWS:
            out.append(f"flows: at most {MAX_FLOWS} flows in emulation, got {len(plan['flows'])}")
        return out

    def tools(self) -> dict[str, Path]:
        # qlab-emu is built on the emulation host by the playbook (role
        # emu_host), so the sources are what a run needs here.
        return {
            "ansible-playbook (pip install -r requirements.txt)": _ansible_playbook(),
            "the playbook": PLAYBOOK,
            "the Mininet run helper": HELPER,
            "the qlab-emu sources": EMU_SOURCES,
        }

    prepares_host = True
    # What a preparation depends on (globs at the checkout's root): a change
    # prepares the host again, and so reruns the runs that used it.
    host_inputs = (
        "playbooks/prepare-host.yml",
        "roles/emu_preflight/*/*.yml",
        "roles/emu_host/*/*.yml",
        "disciplines/emu/Makefile",
        "disciplines/emu/*.[ch]",
        "disciplines/core/sources.mk",
        "disciplines/core/*.[ch]",
    )

    def prepare(self, log: Path | None) -> dict[str, Any]:
        """The emulation host checked and prepared once (playbooks/prepare-host.yml:
        roles emu_preflight and emu_host), for every run of a reproduction:
        the runs then only run (role emu_run). Returns the qlab-emu the runs use."""
        self.check_tools()
        import tempfile

        with tempfile.TemporaryDirectory(prefix="qlab-host-") as tmp:
            facts_file = Path(tmp) / "host.json"
            extra: dict[str, Any] = {"qlab_host_facts": str(facts_file)}
            if os.environ.get("QLAB_EMU"):  # a qlab-emu already built (the emu image's)
                extra["qlab_emu"] = os.environ["QLAB_EMU"]
            self._play(PREPARE_PLAYBOOK, extra, log, "preparing the emulation host")
            try:
                facts = json.loads(facts_file.read_text(encoding="utf-8"))
            except (OSError, json.JSONDecodeError) as exc:
                raise BackendError(f"{PREPARE_PLAYBOOK.name} wrote no readable host facts: {exc}") from None
        if not isinstance(facts, dict) or not facts.get("emu"):
            raise BackendError(f"{PREPARE_PLAYBOOK.name} named no qlab-emu in its host facts: {facts!r}")
        return {"emu": facts["emu"], "inventory": str(INVENTORY), "ansible-core": _ansible_version()}

    def run(
        self, job_file: Path, workdir: Path, log: Path | None, host: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        self.check_tools()
        extra: dict[str, Any] = {
            "qlab_job": str(Path(job_file).resolve()),
            "qlab_out": str(Path(workdir).resolve()),
        }
        if host:  # prepared once for the reproduction: run only
            extra["qlab_prepared"] = True
            extra["qlab_emu"] = host["emu"]
        elif os.environ.get("QLAB_EMU"):  # a qlab-emu already built (the emu image's)
            extra["qlab_emu"] = os.environ["QLAB_EMU"]
        t0 = time.monotonic()
        self._play(PLAYBOOK, extra, log, f"the mininet run of {job_file}")
        try:
            facts = json.loads((workdir / "runner.json").read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise BackendError(f"the mininet run wrote no readable runner.json in {workdir}: {exc}") from None
        facts.setdefault("versions", {})["ansible-core"] = _ansible_version()
        # The whole launch (Ansible, Mininet set-up and teardown), beside the
        # helper's own wall_time_s; emu-summary.json stays with the traces.
        facts["launch_wall_s"] = round(time.monotonic() - t0, 3)
        return facts

    def _play(
        self,
        playbook: Path,
        extra: dict[str, Any],
        log: Path | None,
        what: str,
        inventory: Path | None = None,
    ) -> None:
        """ansible-playbook on the inventory (the mininet backend's unless
        given), its output appended to log."""
        cmd = [
            str(_ansible_playbook()),
            "-i",
            str(inventory or INVENTORY),
            str(playbook),
            "-e",
            json.dumps(extra),
        ]
        env = dict(
            os.environ,
            ANSIBLE_NOCOLOR="1",
            ANSIBLE_RETRY_FILES_ENABLED="0",
            ANSIBLE_LOCALHOST_WARNING="0",
            ANSIBLE_INVENTORY_UNPARSED_WARNING="0",
            ANSIBLE_CONFIG=str(paths.ROOT / "playbooks" / "ansible.cfg"),
        )
        with open(log, "ab") if log else open(os.devnull, "wb") as out:
            # Ansible's workers make themselves session leaders, so killing
            # this job's process group does not reach them: ansible-playbook
            # gets SIGTERM when this process dies (PR_SET_PDEATHSIG) and then
            # terminates its workers' groups (the run helper among them); the
            # helper's reaper removes the network.
            # stdin: nothing (Ansible asks nothing here, and refuses a
            # non-blocking stdin, which an ssh beside it may have left)
            proc = subprocess.Popen(
                cmd,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                env=env,
                cwd=paths.ROOT,
                preexec_fn=_die_with_parent,
            )

            def interrupt(_sig: int, _frame: object) -> None:
                raise _Interrupted()

            old = {s: signal.signal(s, interrupt) for s in (signal.SIGTERM, signal.SIGINT)}
            try:
                rc = proc.wait()
            except _Interrupted:
                self._kill_tree(proc)
                raise BackendError(f"{what} interrupted") from None
            finally:
                for s, h in old.items():
                    signal.signal(s, h)
        if rc != 0:
            tail = log.read_text(errors="replace").strip().splitlines()[-15:] if log else []
            raise BackendError(
                f"ansible-playbook failed: {what} (exit {rc})" + (":\n  " + "\n  ".join(tail) if tail else "")
            )

    @staticmethod
    def _kill_tree(proc: subprocess.Popen) -> None:
        """SIGTERM ansible-playbook and every descendant (the run helper cleans
        up on SIGTERM), then SIGKILL what is left; only processes this run started."""

        def descendants(root: int) -> list[int]:
            children: dict[int, list[int]] = {}
            for d in Path("/proc").iterdir():
                if d.name.isdigit():
                    try:
                        ppid = int((d / "stat").read_text().rsplit(")", 1)[1].split()[1])
                    except (OSError, IndexError, ValueError):
                        continue
                    children.setdefault(ppid, []).append(int(d.name))
            out, todo = [], [root]
            while todo:
                pid = todo.pop()
                out.append(pid)
                todo.extend(children.get(pid, []))
            return out

        for sig, wait_s in ((signal.SIGTERM, 15.0), (signal.SIGKILL, 5.0)):
            for pid in reversed(descendants(proc.pid)):  # deepest (the helper) first
                try:
                    os.kill(pid, sig)
                except ProcessLookupError:
                    pass
            try:
                proc.wait(timeout=wait_s)
                return
            except subprocess.TimeoutExpired:
                continue

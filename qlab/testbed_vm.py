"""The virtual testbed: three QEMU VMs (sender, router, receiver) booting
Debian's kernel, reached by SSH like hardware (`qlab testbed up|down|status`).

Each VM boots ``build/testbed/rootfs.ext4`` (``testbed/vm/mkrootfs.sh``,
cached) with ``-snapshot``, so every boot starts from the clean image; with
``up(dkms=True)`` the router boots ``rootfs-dkms.ext4`` instead (the same
with dkms, make, gcc and its kernel's headers) and builds qlab's modules
itself (the inventory sets ``testbed_qdisc_kmod_method: dkms``). The
management NIC is QEMU user networking with SSH forwarded from a loopback
port; the data plane is virtio NICs joined point to point by QEMU's UDP
socket netdevs (no tap, bridge or root network change on this machine):

    sender eth1 10.1.0.1/24 --- eth1 10.1.0.254/24 router eth2 10.2.0.254/24 --- eth1 10.2.0.1/24 receiver

so the router's kernel forwards every data packet, through the qdisc on its
egress eth2. TCG only (no KVM here): each VM is one emulated CPU, the
endpoints run with ``nice`` behind the router (VM_NICE). ``up`` starts an
NTP server on this machine (chronyd serving its clock on 127.0.0.1, reached
by the guests as 10.0.2.2 through QEMU's user networking, without touching
this machine's clock), records each process's PID in
``build/testbed/run/<name>.pid``, waits for SSH and for each guest's chronyd
to have its clock within half the clock bound of this machine's, and writes
the Ansible inventory ``inventories/vm-testbed.yml``; ``down`` stops exactly
those PIDs (checked to be this testbed's processes first)."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from qlab import paths

BUILD = paths.ROOT / "build" / "testbed"
RUN = BUILD / "run"
INVENTORY = paths.ROOT / "inventories" / "vm-testbed.yml"
MKROOTFS = paths.ROOT / "testbed" / "vm" / "mkrootfs.sh"
# SSH on 127.0.0.1:PORT_BASE+1.. and the data links' UDP ports above
# PORT_BASE+100 (QLAB_TESTBED_PORT_BASE moves them all).
PORT_BASE = int(os.environ.get("QLAB_TESTBED_PORT_BASE", "2230"))
MEMORY_MB = int(os.environ.get("QLAB_TESTBED_MEMORY_MB", "384"))
# The router's: the mnkernel backend runs a whole Mininet dumbbell in it
# (two processes per flow of Debian's Python, about 10 MB each).
ROUTER_MEMORY_MB = int(os.environ.get("QLAB_TESTBED_ROUTER_MEMORY_MB", "1024"))
# The router's emulated CPUs (QEMU's multi-threaded TCG: one host thread
# each), and how many of them each kind of run keeps online (the guest
# takes the others offline: an offline CPU's thread sleeps). A testbed run
# forwards on one, leaving this machine's two cores to the three VMs; an
# mnkernel run, whose Mininet hosts all live in the router, needs two
# (docs/benchmarks.md, "mnkernel": 4.54 of 5 Mb/s on one, 4.91 on two; a
# testbed run 4.87 with two online, 4.91-5.09 with one).
ROUTER_CPUS = int(os.environ.get("QLAB_TESTBED_ROUTER_CPUS", "2"))
TESTBED_RUN_CPUS = 1
# Each VM's niceness, relative to `up`'s: the router before the endpoints
# when the three TCG VMs want more than the machine's cores, so that the
# bottleneck holds its rate (measured, docs/benchmarks.md: at equal
# niceness 10 the router forwarded 4.6-8.5 Mb/s of a 10 Mb/s plan), but not
# so far behind that an endpoint starves beside other work.
VM_NICE = {"routers": 0, "senders": 5, "receivers": 5}
# The NTP server's port on 127.0.0.1 (10.0.2.2 in the guests).
NTP_PORT = PORT_BASE + 99
# Each host's clock against this machine's: chrony's own estimate (offset
# plus its maximum error) within this, and the SSH probe's, whose bracket is
# seconds wide under TCG, within this plus its uncertainty.
CLOCK_BOUND_MS = 10
BOOT_TIMEOUT_S = float(os.environ.get("QLAB_TESTBED_BOOT_TIMEOUT_S", "420"))


class TestbedError(Exception):
    """The virtual testbed could not be built, started or stopped."""


@dataclass
class VM:
    name: str
    group: str  # senders | routers | receivers
    index: int
    addrs: dict[str, str] = field(default_factory=dict)  # dev -> address/prefix
    routes: list[str] = field(default_factory=list)  # dst@via
    forward: bool = False

    @property
    def ssh_port(self) -> int:
        return PORT_BASE + 1 + self.index


# link id -> (vm, dev) at each end; each end's UDP port is PORT_BASE + 100 + 2 * link + side
LINKS = [(("tb-sender", "eth1"), ("tb-router", "eth1")), (("tb-router", "eth2"), ("tb-receiver", "eth1"))]
VMS = [
    VM("tb-sender", "senders", 0, {"eth1": "10.1.0.1/24"}, ["10.2.0.0/24@10.1.0.254"]),
    VM("tb-router", "routers", 1, {"eth1": "10.1.0.254/24", "eth2": "10.2.0.254/24"}, [], True),
    VM("tb-receiver", "receivers", 2, {"eth1": "10.2.0.1/24"}, ["10.1.0.0/24@10.2.0.254"]),
]


def _mac(vm: VM, nic: int) -> str:
    return f"52:54:00:71:{vm.index:02x}:{nic:02x}"


IMAGES = {"prebuilt": "rootfs.ext4", "dkms": "rootfs-dkms.ext4"}


def router_method() -> str:
    """How the running router gets qlab's modules: "dkms" when it booted the
    DKMS image (recorded by up), else "prebuilt"."""
    return "dkms" if _read(RUN / "tb-router.method") == "dkms" else "prebuilt"


def qemu_command(vm: VM, image: str = IMAGES["prebuilt"]) -> list[str]:
    """The QEMU command line of one VM (TCG, the cached image as a snapshot)."""
    append = [
        "console=ttyS0",
        "panic=-1",
        "quiet",
        "root=/dev/vda",
        f"qlab.host={vm.name}",
    ]
    if vm.addrs:
        append.append("qlab.addr=" + ",".join(f"{d}={a}" for d, a in sorted(vm.addrs.items())))
    if vm.routes:
        append.append("qlab.route=" + ",".join(vm.routes))
    if vm.forward:
        append.append("qlab.forward=1")
    append.append(f"qlab.ntp=10.0.2.2:{NTP_PORT}")
    cmd = [
        "qemu-system-x86_64",
        "-name",
        f"qlab-testbed-{vm.name}",
        "-accel",
        "tcg",
        "-m",
        str(ROUTER_MEMORY_MB if vm.group == "routers" else MEMORY_MB),
        "-smp",
        str(ROUTER_CPUS if vm.group == "routers" else 1),
        "-kernel",
        str(BUILD / "vmlinuz"),
        "-initrd",
        str(BUILD / "initrd.gz"),
        "-append",
        " ".join(append),
        "-drive",
        f"file={BUILD / image},format=raw,if=virtio,snapshot=on",
        "-rtc",
        "base=utc,clock=host",
        "-display",
        "none",
        "-monitor",
        "none",
        "-serial",
        f"file:{RUN / (vm.name + '.log')}",
        "-no-reboot",
        "-netdev",
        f"user,id=mgmt,hostfwd=tcp:127.0.0.1:{vm.ssh_port}-:22",
        "-device",
        f"virtio-net-pci,netdev=mgmt,mac={_mac(vm, 0)}",
    ]
    # data NICs in device order eth1, eth2 (PCI order follows the command line)
    for dev in sorted(vm.addrs):
        for k, ends in enumerate(LINKS):
            for side, (name, d) in enumerate(ends):
                if name == vm.name and d == dev:
                    here = PORT_BASE + 100 + 2 * k + side
                    there = PORT_BASE + 100 + 2 * k + (1 - side)
                    nid = f"data{dev}"
                    cmd += [
                        "-netdev",
                        f"socket,id={nid},udp=127.0.0.1:{there},localaddr=127.0.0.1:{here}",
                        "-device",
                        f"virtio-net-pci,netdev={nid},mac={_mac(vm, int(dev[3:]))}",
                    ]
    return cmd


def _ssh_base(vm: VM) -> list[str]:
    return [
        "ssh",
        "-p",
        str(vm.ssh_port),
        "-i",
        str(BUILD / "ssh" / "id_ed25519"),
        "-o",
        f"UserKnownHostsFile={BUILD / 'ssh' / 'known_hosts'}",
        "-o",
        "StrictHostKeyChecking=yes",
        "-o",
        "BatchMode=yes",
        "-o",
        "ConnectTimeout=5",
        "root@127.0.0.1",
    ]


def _recorded(name: str, mark: str) -> int | None:
    """The PID recorded as RUN/<name>.pid, when that process is still ours
    (its command line holds ``mark``)."""
    f = RUN / f"{name}.pid"
    try:
        pid = int(f.read_text().strip())
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except (OSError, ValueError):
        return None
    return pid if mark.encode() in cmdline else None


def _pid(vm: VM) -> int | None:
    """The PID recorded for vm, when that process is still this testbed's QEMU."""
    return _recorded(vm.name, f"qlab-testbed-{vm.name}")


def _ntp_pid() -> int | None:
    return _recorded("chronyd", str(RUN / "chronyd.conf"))


def status() -> dict[str, int | None]:
    return {vm.name: _pid(vm) for vm in VMS}


def start_ntp() -> None:
    """This machine's clock served over NTP on 127.0.0.1:NTP_PORT by a
    chronyd of the testbed's own (``-x``: it never adjusts this machine's
    clock; ``local``: it serves it as the reference)."""
    if _ntp_pid():
        return
    exe = shutil.which("chronyd") or ("/usr/sbin/chronyd" if Path("/usr/sbin/chronyd").exists() else None)
    if not exe:
        raise TestbedError(
            "chronyd not found: the VMs' clocks follow this machine's by NTP (apt-get install chrony)"
        )
    if not _port_free(NTP_PORT, socket.SOCK_DGRAM):
        raise TestbedError(
            f"127.0.0.1:{NTP_PORT}/udp is in use (QLAB_TESTBED_PORT_BASE moves the testbed's ports)"
        )
    conf = RUN / "chronyd.conf"
    pidfile = RUN / "chronyd.pid"
    conf.write_text(
        "# the virtual testbed's NTP server (qlab/testbed_vm.py): serves this machine's clock\n"
        f"port {NTP_PORT}\nbindaddress 127.0.0.1\nallow 127.0.0.1\nlocal stratum 8\n"
        f"cmdport 0\nbindcmdaddress /\npidfile {pidfile}\n"
    )
    pidfile.unlink(missing_ok=True)
    log = RUN / "chronyd.log"
    with open(log, "wb") as err:
        # -x: never touch this machine's clock; -u root: its files are ours
        proc = subprocess.run(
            [exe, "-x", "-u", "root", "-f", str(conf)], stdout=err, stderr=subprocess.STDOUT, check=False
        )
    for _ in range(50):
        if _ntp_pid():
            return
        time.sleep(0.1)
    raise TestbedError(
        f"chronyd did not start (exit {proc.returncode}): {log.read_text(errors='replace').strip()[-300:]}"
    )


def build_image(dkms: bool = False) -> None:
    """The cached image, and with dkms the router's DKMS image
    (testbed/vm/mkrootfs.sh does nothing when one is current)."""
    for flags in [[], ["--dkms"]] if dkms else [[]]:
        proc = subprocess.run(["nice", "-n", "10", str(MKROOTFS), *flags, str(BUILD)], check=False)
        if proc.returncode != 0:
            raise TestbedError(
                f"{MKROOTFS.relative_to(paths.ROOT)} {' '.join(flags)} failed (exit {proc.returncode})"
            )


def _port_free(port: int, kind: int) -> bool:
    with socket.socket(socket.AF_INET, kind) as s:
        # as QEMU binds its forwarded port: a connection of a VM just
        # stopped, in TIME_WAIT, does not make the port busy
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def up(build: bool = True, dkms: bool | None = None) -> Path:
    """Boot the three VMs (those not running), wait for SSH and for their
    clocks to follow this machine's, write the inventory; returns the
    inventory's path. dkms: the router boots the DKMS image (True), the
    plain one (False), or, when None, the one it booted since the last
    ``down`` (a fault test's restart keeps the layout), else the plain one."""
    if os.path.exists("/work/QUIET"):
        raise TestbedError("/work/QUIET exists: a timed measurement is running; not starting VMs")
    RUN.mkdir(parents=True, exist_ok=True)
    router = next(vm for vm in VMS if vm.group == "routers")
    method = router_method() if dkms is None else "dkms" if dkms else "prebuilt"
    if _pid(router) and router_method() != method:
        raise TestbedError(
            f"{router.name} runs the {router_method()} image: "
            f"`qlab testbed down` first to boot the {method} one"
        )
    if build:
        build_image(dkms=method == "dkms")
    for f in ("vmlinuz", "initrd.gz", IMAGES[method], "ssh/id_ed25519", "ssh/host_ed25519.pub"):
        if not (BUILD / f).exists():
            flag = " --dkms" if f == IMAGES["dkms"] else ""
            raise TestbedError(f"{BUILD / f} missing: build the image (testbed/vm/mkrootfs.sh{flag})")
    start_ntp()
    hostkey = (BUILD / "ssh" / "host_ed25519.pub").read_text().split()[:2]
    (BUILD / "ssh" / "known_hosts").write_text(
        "".join(f"[127.0.0.1]:{vm.ssh_port} {' '.join(hostkey)}\n" for vm in VMS)
    )
    t0 = time.monotonic()
    started: dict[str, subprocess.Popen] = {}
    for vm in VMS:
        if _pid(vm):
            continue
        if not _port_free(vm.ssh_port, socket.SOCK_STREAM):
            raise TestbedError(
                f"{vm.name}: 127.0.0.1:{vm.ssh_port} is in use "
                "(QLAB_TESTBED_PORT_BASE moves the testbed's ports)"
            )
        log = RUN / f"{vm.name}.log"
        log.unlink(missing_ok=True)
        with open(RUN / f"{vm.name}.qemu.err", "wb") as err:
            proc = subprocess.Popen(
                [
                    "nice",
                    "-n",
                    str(VM_NICE[vm.group]),
                    *qemu_command(vm, IMAGES[method if vm is router else "prebuilt"]),
                ],
                stdin=subprocess.DEVNULL,
                stdout=err,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        (RUN / f"{vm.name}.pid").write_text(f"{proc.pid}\n")
        if vm is router:
            (RUN / f"{vm.name}.method").write_text(f"{method}\n")
        started[vm.name] = proc
    for vm in VMS:
        _wait_ssh(vm, t0, started.get(vm.name))
    for vm in VMS:
        wait_clock(vm, t0)
    write_inventory(INVENTORY)
    return INVENTORY


def _read(f: Path) -> str:
    try:
        return f.read_text(errors="replace").strip()
    except OSError:
        return ""


def _wait_ssh(vm: VM, t0: float, proc: subprocess.Popen | None = None) -> None:
    """Until vm answers SSH. A VM this `up` started is known dead only by
    its exit status: /proc/PID/cmdline reads empty while `nice` execs QEMU,
    which looked like a QEMU gone on a first boot."""
    while True:
        if (proc.poll() is not None) if proc else not _pid(vm):
            err, tail = _read(RUN / f"{vm.name}.qemu.err"), _read(RUN / f"{vm.name}.log").splitlines()[-5:]
            raise TestbedError(
                f"{vm.name}: QEMU exited during boot: {err or ' | '.join(tail) or 'no output'}"
            )
        r = subprocess.run(
            [*_ssh_base(vm), "true"], stdin=subprocess.DEVNULL, capture_output=True, check=False, timeout=60
        )
        if r.returncode == 0:
            return
        if time.monotonic() - t0 > BOOT_TIMEOUT_S:
            raise TestbedError(
                f"{vm.name}: no SSH on 127.0.0.1:{vm.ssh_port} after {BOOT_TIMEOUT_S:.0f} s "
                f"(serial log {RUN / (vm.name + '.log')}; ssh: {r.stderr.decode(errors='replace').strip()})"
            )
        time.sleep(3)


def wait_clock(vm: VM, t0: float) -> float:
    """Wait until the guest's chronyd follows this machine's NTP server
    within CLOCK_BOUND_MS (its offset plus its maximum error); returns that
    sum in ms. The guest boots on its RTC's whole seconds and chronyd steps
    it in its first updates, then slews."""
    script = "chronyc -n tracking"
    last = ""
    while True:
        r = subprocess.run(
            [*_ssh_base(vm), script],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            check=False,
            timeout=60,
        )
        f = dict(
            (k.strip(), v.strip()) for k, _, v in (line.partition(":") for line in r.stdout.splitlines())
        )
        try:
            err_ms = 1e3 * (
                abs(float(f["System time"].split()[0]))
                + float(f["Root dispersion"].split()[0])
                + float(f["Root delay"].split()[0]) / 2
            )
            synced = f.get("Leap status") == "Normal"
        except (KeyError, ValueError, IndexError):
            err_ms, synced = float("inf"), False
        last = (
            f"leap status {f.get('Leap status', '?')}, within {err_ms:.1f} ms"
            if r.returncode == 0
            else r.stderr
        )
        if synced and err_ms <= CLOCK_BOUND_MS / 2:
            return err_ms
        if time.monotonic() - t0 > BOOT_TIMEOUT_S:
            raise TestbedError(
                f"{vm.name}: its clock did not follow this machine's within {CLOCK_BOUND_MS / 2:g} ms "
                f"after {BOOT_TIMEOUT_S:.0f} s (chronyc -n tracking: {last.strip()[-200:]}; "
                f"the NTP server's log {RUN / 'chronyd.log'})"
            )
        time.sleep(2)


def write_inventory(path: Path) -> None:
    """The virtual testbed as an Ansible inventory (the same layout as
    inventories/testbed.example.yml for real hosts)."""
    groups: dict[str, list[str]] = {"senders": [], "routers": [], "receivers": []}
    for vm in VMS:
        lines = [
            f"            {vm.name}:",
            "              ansible_host: 127.0.0.1",
            f"              ansible_port: {vm.ssh_port}",
        ]
        if vm.group == "routers":
            lines += [
                "              testbed_ingress_if: eth1",
                "              testbed_egress_if: eth2",
                f"              testbed_tc_router_cpus: {min(TESTBED_RUN_CPUS, ROUTER_CPUS)}",
                f"              testbed_mininet_router_cpus: {ROUTER_CPUS}",
                f"              testbed_qdisc_kmod_method: {router_method()}",
            ]
        else:
            dev, addr = next(iter(vm.addrs.items()))
            lines += [
                f"              testbed_data_if: {dev}",
                f"              testbed_data_addr: {addr.split('/')[0]}",
            ]
        groups[vm.group] += lines
    text = [
        "---",
        "# Generated by `qlab testbed up` (qlab/testbed_vm.py): the virtual testbed's three QEMU VMs.",
        "# Not committed; inventories/testbed.example.yml is the same layout for real hosts.",
        "all:",
        "  children:",
        "    testbed:",
        "      children:",
    ]
    for g, lines in groups.items():
        text += [f"        {g}:", "          hosts:", *lines]
    ssh = BUILD / "ssh"
    text += [
        "      vars:",
        "        ansible_user: root",
        f"        ansible_ssh_private_key_file: {ssh / 'id_ed25519'}",
        f"        ansible_ssh_common_args: -o UserKnownHostsFile={ssh / 'known_hosts'}"
        " -o StrictHostKeyChecking=yes",
        "        ansible_python_interpreter: /usr/bin/python3",
        # one SSH round trip per task, not three (each costs seconds under TCG)
        "        ansible_pipelining: true",
        "        testbed_virtual: true",
        # the guests' chronyd follow this machine's clock (start_ntp)
        f"        testbed_preflight_max_clock_offset_ms: {CLOCK_BOUND_MS}",
        "        testbed_preflight_require_chrony: true",
        # the two steps after the epoch is chosen (start the sampler, start
        # the flows) take seconds each under TCG on a shared machine
        "        testbed_epoch_lead_s: 30",
        f"        testbed_preflight_kernel: {(BUILD / 'kver').read_text().strip()}",
        "",
    ]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(text))


def down() -> list[str]:
    """Stop the VMs and the NTP server this testbed started (by their
    recorded PIDs); returns their names."""
    stopped = []
    pid = _ntp_pid()
    if pid:
        os.kill(pid, signal.SIGTERM)
        stopped.append("chronyd")
    (RUN / "chronyd.pid").unlink(missing_ok=True)
    for vm in VMS:
        pid = _pid(vm)
        if pid:
            os.kill(pid, signal.SIGTERM)
            for _ in range(50):
                if not Path(f"/proc/{pid}").exists() or _pid(vm) is None:
                    break
                time.sleep(0.1)
            else:
                os.kill(pid, signal.SIGKILL)
            stopped.append(vm.name)
        (RUN / f"{vm.name}.pid").unlink(missing_ok=True)
    (RUN / "tb-router.method").unlink(missing_ok=True)
    return stopped


def kill_vm(name: str) -> None:
    """Stop one VM (the fault tests: a host that is down)."""
    for vm in VMS:
        if vm.name == name:
            pid = _pid(vm)
            if pid:
                os.kill(pid, signal.SIGKILL)
            return
    raise TestbedError(f"no VM {name!r} (one of {', '.join(v.name for v in VMS)})")

"""The virtual testbed: three QEMU VMs (sender, router, receiver) booting
Debian's kernel, reached by SSH like hardware (`qlab testbed up|down|status`).

Each VM boots ``build/testbed/rootfs.ext4`` (``testbed/vm/mkrootfs.sh``,
cached) with ``-snapshot``, so every boot starts from the clean image. The
management NIC is QEMU user networking with SSH forwarded from a loopback
port; the data plane is virtio NICs joined point to point by QEMU's UDP
socket netdevs (no tap, bridge or root network change on this machine):

    sender eth1 10.1.0.1/24 --- eth1 10.1.0.254/24 router eth2 10.2.0.254/24 --- eth1 10.2.0.1/24 receiver

so the router's kernel forwards every data packet, through the qdisc on its
egress eth2. TCG only (no KVM here): each VM is one emulated CPU, run with
``nice``. ``up`` records each QEMU's PID in ``build/testbed/run/<vm>.pid``,
waits for SSH, sets each guest's clock from this machine's and writes the
Ansible inventory ``inventories/vm-testbed.yml``; ``down`` stops exactly
those PIDs (checked to be this testbed's QEMU first).
"""

from __future__ import annotations

import os
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
CLOCK_BOUND_MS = 50
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


def qemu_command(vm: VM) -> list[str]:
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
    cmd = [
        "qemu-system-x86_64",
        "-name",
        f"qlab-testbed-{vm.name}",
        "-accel",
        "tcg",
        "-m",
        str(MEMORY_MB),
        "-smp",
        "1",
        "-kernel",
        str(BUILD / "vmlinuz"),
        "-initrd",
        str(BUILD / "initrd.gz"),
        "-append",
        " ".join(append),
        "-drive",
        f"file={BUILD / 'rootfs.ext4'},format=raw,if=virtio,snapshot=on",
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


def _pid(vm: VM) -> int | None:
    """The PID recorded for vm, when that process is still this testbed's QEMU."""
    f = RUN / f"{vm.name}.pid"
    try:
        pid = int(f.read_text().strip())
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except (OSError, ValueError):
        return None
    return pid if f"qlab-testbed-{vm.name}".encode() in cmdline else None


def status() -> dict[str, int | None]:
    return {vm.name: _pid(vm) for vm in VMS}


def build_image() -> None:
    """The cached image (testbed/vm/mkrootfs.sh does nothing when it is current)."""
    proc = subprocess.run(["nice", "-n", "10", str(MKROOTFS), str(BUILD)], check=False)
    if proc.returncode != 0:
        raise TestbedError(f"{MKROOTFS.relative_to(paths.ROOT)} failed (exit {proc.returncode})")


def _port_free(port: int, kind: int) -> bool:
    with socket.socket(socket.AF_INET, kind) as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def up(build: bool = True) -> Path:
    """Boot the three VMs (those not running), wait for SSH, set their clocks,
    write the inventory; returns the inventory's path."""
    if os.path.exists("/work/QUIET"):
        raise TestbedError("/work/QUIET exists: a timed measurement is running; not starting VMs")
    if build:
        build_image()
    for f in ("vmlinuz", "initrd.gz", "rootfs.ext4", "ssh/id_ed25519", "ssh/host_ed25519.pub"):
        if not (BUILD / f).exists():
            raise TestbedError(f"{BUILD / f} missing: build the image (testbed/vm/mkrootfs.sh)")
    RUN.mkdir(parents=True, exist_ok=True)
    hostkey = (BUILD / "ssh" / "host_ed25519.pub").read_text().split()[:2]
    (BUILD / "ssh" / "known_hosts").write_text(
        "".join(f"[127.0.0.1]:{vm.ssh_port} {' '.join(hostkey)}\n" for vm in VMS)
    )
    t0 = time.monotonic()
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
                ["nice", "-n", "10", *qemu_command(vm)],
                stdin=subprocess.DEVNULL,
                stdout=err,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        (RUN / f"{vm.name}.pid").write_text(f"{proc.pid}\n")
    for vm in VMS:
        _wait_ssh(vm, t0)
    for vm in VMS:
        set_clock(vm)
    write_inventory(INVENTORY)
    return INVENTORY


def _wait_ssh(vm: VM, t0: float) -> None:
    while True:
        if not _pid(vm):
            err = (RUN / f"{vm.name}.qemu.err").read_text(errors="replace").strip()
            tail = (RUN / f"{vm.name}.log").read_text(errors="replace").strip().splitlines()[-5:]
            raise TestbedError(f"{vm.name}: QEMU exited during boot: {err or ' | '.join(tail)}")
        r = subprocess.run([*_ssh_base(vm), "true"], capture_output=True, check=False, timeout=60)
        if r.returncode == 0:
            return
        if time.monotonic() - t0 > BOOT_TIMEOUT_S:
            raise TestbedError(
                f"{vm.name}: no SSH on 127.0.0.1:{vm.ssh_port} after {BOOT_TIMEOUT_S:.0f} s "
                f"(serial log {RUN / (vm.name + '.log')}; ssh: {r.stderr.decode(errors='replace').strip()})"
            )
        time.sleep(3)


def set_clock(vm: VM) -> None:
    """Step the guest's clock to this machine's (its RTC gave it whole
    seconds): the time is sent when the SSH session is open, on stdin, so
    the step is off by the session's one-way latency only; preflight then
    measures the offset and holds it to a bound."""
    script = "read t; date -u -s @$t >/dev/null"
    proc = subprocess.Popen([*_ssh_base(vm), script], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL)
    time.sleep(1.0)  # the session is up
    assert proc.stdin
    proc.stdin.write(f"{time.time():.6f}\n".encode())
    proc.stdin.close()
    if proc.wait(timeout=60) != 0:
        raise TestbedError(f"{vm.name}: could not set the clock over SSH")


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
            lines += ["              testbed_ingress_if: eth1", "              testbed_egress_if: eth2"]
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
        # the guests' clocks are stepped from this machine's at boot (no
        # chrony server here): a looser bound than hardware with PTP
        f"        testbed_preflight_max_clock_offset_ms: {CLOCK_BOUND_MS}",
        # each Ansible task costs seconds under TCG on a shared machine
        "        testbed_epoch_lead_s: 150",
        f"        testbed_preflight_kernel: {(BUILD / 'kver').read_text().strip()}",
        "",
    ]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(text))


def down() -> list[str]:
    """Stop the VMs this testbed started (by their recorded PIDs); returns their names."""
    stopped = []
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

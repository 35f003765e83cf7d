#!/usr/bin/env python3
"""A testbed host's part of one qlab run (the testbed backend; any Python >= 3.9, stdlib only).

The roles' steps, each run by Ansible's `script` module (no Ansible module
runs on the host: under TCG each costs seconds) and each printing one JSON
object that the role's assertions read on the controller:

    qlab_tb_host.py preflight --spec JSON      what the host is (user, kernel, tools,
                                               disk, clock, offloads, data-plane peers)
    BUNDLE.pyz kmod --spec JSON                qlab's modules and tc plugins from the
                                               bundle: installed, (re)loaded, checked
    qlab_tb_host.py tc --spec JSON             shaper + discipline on the egress, netem on
                                               the reverse path, dumped and checked
    BUNDLE.pyz prepare --spec JSON             a fresh run directory with this tool, the
                                               bundle's files (the traffic tool and the
                                               host's part) and the spec's; sysctls,
                                               offloads; the host's part started in the
                                               background (below), waiting for the epoch
    qlab_tb_host.py start --dir D --epoch-ns E the epoch, to the part prepare armed
    qlab_tb_host.py wait --dir D --timeout-s T until the part wrote its facts
    qlab_tb_host.py stop --dir D --end-ns N    the router's sampler: the run's end, then wait
    qlab_tb_host.py collect --dir D            the facts files, as one JSON object
    BUNDLE.pyz mininet --spec JSON             the mnkernel backend's run: Mininet on this
                                               host with the kernel's qdisc as the
                                               bottleneck (qlab_mn_run.py --kernel), its
                                               results as one JSON object

and the two workers `prepare` starts:

    qlab_tb_host.py traffic --spec HOST.json --epoch-file EPOCH.json --out DIR
    qlab_tb_host.py sample --spec SAMPLE.json --epoch-file EPOCH.json --out DIR

Each starts what it runs (the traffic worker one qlab_traffic.py process per
flow, each of which also waits for EPOCH.json) before the epoch is chosen,
then waits for `start` to write EPOCH.json, {"epoch_ns": E}: on a slow host
(a TCG VM) the processes' start-up is paid before the run's time 0, not
after it.

BUNDLE.pyz is this tool with the files a step needs, packed on the
controller by mkbundle.py into one executable zip, so that `script` sends
them with the tool in one step (a copy module costs two module runs). The
traffic worker runs disciplines/emu/qlab_traffic.py (the one per-flow
traffic tool every emulating backend uses), which comes in the bundle.

E is CLOCK_REALTIME (ns) of the plan's time 0, chosen by the controller a
little ahead (testbed_epoch_lead_s). A host told E after it has passed
fails: its flows could not start at their times.

traffic: HOST.json is {"host", "role": "send"|"sink", "duration_ns",
"stop_when_done", "udp_drain_ns", "flows": [{"flow", "src_address", "dst_address",
"listen_address", "tcp"}], "net"} (net: the plan hosts' addresses this
machine holds, and its routes to the other side's: prepare applies them).
One qlab_traffic.py process per flow (the senders' wait for their start
times, so the sinks listen by then), then waits until
the run's end: duration_ns after the epoch or, with stop_when_done, until
each of its flows is done on this host (a TCP sink has every byte, a sender
saw its connection closed, a UDP sender got through its schedule, a UDP
sink's last period plus udp_drain_ns is over); then SIGTERM to each, and
DIR/host-facts.json with each flow's final counters (absolute
CLOCK_REALTIME ns, this host's clock) and "complete": true.
A flow process that dies, or a host that cannot finish, writes
"complete": false with the reason and exits 1: the controller collects no
part of such a run.

sample: SAMPLE.json is {"host", "dev", "handle", "queue", "interval_ns",
"duration_ns", "stop_file", "pcap_snaplen"}. With pcap_snaplen > 0 it first
starts tcpdump on DEV (DIR/router-egress.pcap, that many bytes of each
packet), stopped after the last sample; tcpdump's counts go into the
facts. Reads `qdisc show dev DEV` through one `tc -s -j -batch -`
at epoch + k * interval_ns (each sample stamped with when it was read;
slots a slow host missed are skipped) until epoch + duration_ns or until stop_file
exists (it holds the run's end, ns after the epoch, written by the
controller once every endpoint has finished), then once more, stamped with
that end; writes DIR/queue-samples.json (per sample: time_ns after the epoch,
the qdisc's per-band counters, the bytes it has sent and read_ns, the times
before and after they were read) and DIR/host-facts.json.
"""

from __future__ import annotations

import argparse
import base64
import glob
import json
import os
import shutil
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
UDP_APPS = ("cbr", "onoff", "voip")


def write_json(path: str, obj: dict) -> None:
    tmp = f"{path}.tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(obj, f, sort_keys=True)
    os.replace(tmp, path)


def read_json(path: str) -> dict | None:
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def done(spec: dict, item: dict, out: str, now_ns: int) -> bool:
    """Whether this host's side of one flow is over (absolute times)."""
    f = item["flow"]
    if f["app"] in UDP_APPS:
        if spec["role"] == "send":
            # the sender writes its counters once through its schedule (a
            # host behind the plan finishes late rather than losing the tail)
            got = read_json(out)
            return bool(got) and bool(got.get("schedule_done"))
        periods = f["on_periods_ns"]
        last = periods[-1][1] if periods else f["start_ns"]
        return now_ns >= spec["epoch_ns"] + last + spec["udp_drain_ns"]
    if f["bytes"] == 0:
        return now_ns >= spec["epoch_ns"] + f["start_ns"]
    got = read_json(out)
    if spec["role"] == "sink":
        return bool(got) and got.get("rx_bytes") == f["bytes"]
    return got is not None  # the sender writes its counters once the receiver closed


ARM_TIMEOUT_S = 900  # a worker waits this long for its epoch
ARM_WAIT_S = 180  # prepare waits this long for the worker to start
STOP_WAIT_S = 30  # a flow process's time to write its final counters after SIGTERM (a slow guest)


def wait_epoch(path: str, procs: dict[int, subprocess.Popen]) -> tuple[int, str]:
    """The run's epoch once the controller wrote it ({"epoch_ns": E}), and a
    problem: a flow process that died while waiting, no epoch within
    ARM_TIMEOUT_S, or an epoch that had passed when it arrived."""
    t_end = time.monotonic() + ARM_TIMEOUT_S
    while True:
        doc = read_json(path)
        if doc is not None:
            epoch = int(doc["epoch_ns"])
            late = time.time_ns() - epoch
            # the flow processes sleep until told (qlab_traffic.py's wait_epoch)
            for p in procs.values():
                if p.poll() is None:
                    p.send_signal(signal.SIGUSR1)
            return epoch, (
                f"the run's epoch arrived {late / 1e9:.1f} s after it had passed" if late > 0 else ""
            )
        for fid, p in procs.items():
            if p.poll() is not None:
                return 0, f"flow {fid}'s process exited ({p.returncode}) before the run began"
        if time.monotonic() > t_end:
            return 0, f"no epoch after {ARM_TIMEOUT_S} s: the controller never started the run"
        # `start` signals SIGUSR1 once the file is there (blocked in main, so
        # none is lost); the timeout only looks after the flow processes: a
        # polling loop would take a TCG guest's CPU from the run
        signal.sigtimedwait([signal.SIGUSR1], 1.0)


def wait_files(paths: list[str], procs: dict[int, subprocess.Popen]) -> str:
    """Until every path exists; a problem if a process died first or it took ARM_TIMEOUT_S."""
    t_end = time.monotonic() + ARM_TIMEOUT_S
    while not all(os.path.exists(p) for p in paths):
        for fid, p in procs.items():
            if p.poll() is not None:
                return f"flow {fid}'s process exited ({p.returncode}) before the run began"
        if time.monotonic() > t_end:
            return f"the flows' processes had not started after {ARM_TIMEOUT_S} s"
        time.sleep(0.2)
    return ""


def traffic(spec: dict, out_dir: str, epoch_file: str) -> int:
    facts = os.path.join(out_dir, "host-facts.json")
    role = spec["role"]
    procs: dict[int, subprocess.Popen] = {}
    outs: dict[int, str] = {}
    problem = ""
    for item in spec["flows"]:
        fid = item["flow"]["flow_id"]
        flow_file = os.path.join(out_dir, f"flow-{fid}.json")
        write_json(flow_file, item)
        outs[fid] = os.path.join(out_dir, f"{role}-{fid}.json")
        procs[fid] = subprocess.Popen(
            [
                sys.executable,
                os.path.join(HERE, "qlab_traffic.py"),
                role,
                "--flow",
                flow_file,
                "--epoch-file",
                epoch_file,
                "--end-ns",
                str(spec["duration_ns"]),
                "--out",
                outs[fid],
            ],
            stderr=open(os.path.join(out_dir, f"{role}-{fid}.err"), "wb"),  # noqa: SIM115
        )
    # every flow process started (and paid its start-up): armed, then the epoch
    problem = wait_files([f"{o}.waiting" for o in outs.values()], procs)
    write_json(os.path.join(out_dir, "armed.json"), {"problem": problem})
    spec["epoch_ns"], problem = (0, problem) if problem else wait_epoch(epoch_file, procs)
    end_abs = spec["epoch_ns"] + spec["duration_ns"]
    pending = {item["flow"]["flow_id"]: item for item in spec["flows"]}
    while not problem:
        now = time.time_ns()
        for fid, p in procs.items():
            if p.poll() is not None:
                err = open(os.path.join(out_dir, f"{role}-{fid}.err"), errors="replace").read().strip()  # noqa: SIM115
                problem = f"flow {fid}'s {role} process exited ({p.returncode}): {err[-300:]}"
        if problem or now >= end_abs:
            break
        if spec["stop_when_done"]:
            for fid, item in list(pending.items()):
                if done(spec, item, outs[fid], now):
                    del pending[fid]
            if not pending:
                break
        time.sleep(0.05)
    ended = min(time.time_ns(), end_abs)
    for p in procs.values():
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
    flows = {}
    for fid, p in procs.items():
        try:
            p.wait(timeout=STOP_WAIT_S)
        except subprocess.TimeoutExpired:
            p.kill()
            problem = problem or f"flow {fid}'s {role} process did not stop on SIGTERM in {STOP_WAIT_S} s"
        got = read_json(outs[fid])
        if not problem and not (got and got.get("final")):
            problem = f"flow {fid}'s {role} process wrote no final counters"
        flows[str(fid)] = got
    doc = {"host": spec["host"], "role": role, "ended_ns": ended, "flows": flows, "complete": not problem}
    if problem:
        doc["problem"] = problem
    write_json(facts, doc)
    if problem:
        print(f"{spec['host']}: {problem}", file=sys.stderr)
        return 1
    return 0


class QdiscReader:
    """The discipline's counters, read through one long-lived `tc -s -j
    -batch -` (one command line in, one JSON line out): starting tc for
    every sample would take a TCG router's CPU from the packets it
    forwards."""

    def __init__(self, dev: str, handle: str) -> None:
        self.dev, self.handle = dev, handle
        self.tc = subprocess.Popen(
            ["tc", "-s", "-j", "-batch", "-"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def read(self, epoch: int) -> dict:
        """Its per-band counters, the bytes it has handed to the shaper, and
        read_ns: the times (ns after the epoch) before and after the read,
        between which the kernel took them."""
        before = time.time_ns() - epoch
        assert self.tc.stdin and self.tc.stdout
        try:
            self.tc.stdin.write(f"qdisc show dev {self.dev}\n")
            self.tc.stdin.flush()
        except BrokenPipeError:
            pass
        line = self.tc.stdout.readline()
        read = [before, time.time_ns() - epoch]
        if not line:
            err = self.tc.stderr.read() if self.tc.stderr else ""
            raise RuntimeError(f"tc -batch ended: {err.strip()[-200:]}")
        for q in json.loads(line):
            if q.get("handle") == self.handle:
                bands = q.get("bands") or [
                    {
                        "band": 0,
                        "backlog_pkts": q["qlen"],
                        "backlog_bytes": q["backlog"],
                        "arrivals": q["packets"] + q["drops"] + q["qlen"],
                        "sent": q["packets"],
                        "drop_overflow": q["drops"],
                    }
                ]
                return {"bands": bands, "sent_bytes": q["bytes"], "read_ns": read}
        raise RuntimeError(f"no qdisc {self.handle} on {self.dev}")

    def close(self) -> None:
        if self.tc.stdin:
            self.tc.stdin.close()
        try:
            self.tc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.tc.kill()


PCAP_FILE = "router-egress.pcap"


def start_pcap(spec: dict, out_dir: str) -> tuple[subprocess.Popen | None, str]:
    """tcpdump on the discipline's interface into out_dir/PCAP_FILE (the
    first pcap_snaplen bytes of each packet), once it is listening."""
    argv = ["tcpdump", "-i", spec["dev"], "-n", "-s", str(spec["pcap_snaplen"]), "-U", "-Z", "root"]
    argv += ["-w", os.path.join(out_dir, PCAP_FILE)]
    try:
        p = subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
        )  # noqa: SIM115
    except FileNotFoundError:
        return None, "tcpdump not found (apt-get install tcpdump, or testbed_capture_pcap: false)"
    line = p.stderr.readline().decode(errors="replace") if p.stderr else ""
    if "listening on" not in line:
        p.kill()
        return None, f"tcpdump did not start: {line.strip()[-200:]}"
    return p, ""


def stop_pcap(p: subprocess.Popen) -> dict:
    """SIGINT, then tcpdump's own counts: captured, and dropped by the kernel."""
    p.send_signal(signal.SIGINT)
    try:
        _, err = p.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        p.kill()
        return {"problem": "tcpdump did not stop on SIGINT"}
    got = {}
    for line in err.decode(errors="replace").splitlines():
        words = line.split()
        said = " ".join(words[1:3])
        if len(words) >= 3 and words[0].isdigit() and said in ("packets captured", "packets dropped"):
            got["captured" if words[2] == "captured" else "dropped_by_kernel"] = int(words[0])
    return got


def sample(spec: dict, out_dir: str, epoch_file: str) -> int:
    pcap, problem = start_pcap(spec, out_dir) if spec.get("pcap_snaplen") else (None, "")
    write_json(os.path.join(out_dir, "armed.json"), {"problem": problem})
    if problem:
        return 1
    epoch, problem = wait_epoch(epoch_file, {})
    if problem:
        if pcap:
            stop_pcap(pcap)
        write_json(
            os.path.join(out_dir, "host-facts.json"),
            {"host": spec["host"], "complete": False, "problem": problem},
        )
        return 1
    interval = spec["interval_ns"]
    end_abs = epoch + spec["duration_ns"]
    samples = []
    k = 0
    end_rel = spec["duration_ns"]
    reader = QdiscReader(spec["dev"], spec["handle"])
    while True:
        t = epoch + k * interval
        stop = read_json(spec["stop_file"]) if os.path.exists(spec["stop_file"]) else None
        if stop is not None:
            end_rel = min(int(stop["end_ns"]), spec["duration_ns"])
            break
        if t >= end_abs:
            break
        left = t - time.time_ns()
        if left > 0:
            time.sleep(min(left, 200_000_000) / 1e9)
            continue
        got = reader.read(epoch)
        # stamped when it was read (a slow host reads late); a host that fell
        # behind skips the slots it missed rather than reading back to back
        samples.append({"time_ns": sum(got["read_ns"]) // 2, **got})
        k = max(k + 1, -(-(time.time_ns() - epoch) // interval))
    # samples taken after the run's end (the stop arrives late) are dropped
    samples = [s for s in samples if s["time_ns"] < end_rel]
    samples.append({"time_ns": end_rel, **reader.read(epoch)})
    reader.close()
    write_json(os.path.join(out_dir, "queue-samples.json"), {"queue": spec["queue"], "samples": samples})
    facts = {"host": spec["host"], "role": "router", "ended_ns": epoch + end_rel, "complete": True}
    if pcap:
        facts["pcap"] = stop_pcap(pcap)
        if "problem" in facts["pcap"]:
            facts["complete"], facts["problem"] = False, facts["pcap"]["problem"]
    write_json(os.path.join(out_dir, "host-facts.json"), facts)
    return 0 if facts["complete"] else 1


# --- the roles' steps (each prints one JSON object) -------------------------


def run(argv: list[str], timeout: float = 120) -> tuple[int, str, str]:
    """A command's exit status, stdout and stderr (127 when it is not installed)."""
    try:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)
    except FileNotFoundError:
        return 127, "", f"{argv[0]}: not found"
    except subprocess.TimeoutExpired:
        return 124, "", f"{' '.join(argv)}: no answer in {timeout:.0f} s"
    return p.returncode, p.stdout, p.stderr.strip()


def chrony_tracking() -> dict | None:
    """chronyd's view of this host's clock (`chronyc -n tracking`), or None
    where chronyd does not answer. offset_ms is this clock minus the NTP
    reference; max_error_ms chrony's bound on the reference's own error
    (root dispersion plus half the root delay)."""
    rc, out, _ = run(["chronyc", "-n", "tracking"], timeout=10)
    if rc != 0:
        return None
    f = {}
    for line in out.splitlines():
        k, _, v = line.partition(":")
        f[k.strip()] = v.strip()
    try:
        off_s = float(f["System time"].split()[0])
        if "slow" in f["System time"]:
            off_s = -off_s
        max_err_s = float(f["Root dispersion"].split()[0]) + float(f["Root delay"].split()[0]) / 2
    except (KeyError, ValueError, IndexError):
        return {"synchronised": False, "leap": f.get("Leap status", "unknown"), "reference": ""}
    return {
        "synchronised": f.get("Leap status") == "Normal"
        and not f.get("Reference ID", "").startswith("00000000"),
        "leap": f.get("Leap status", "unknown"),
        "reference": f.get("Reference ID", ""),
        "offset_ms": round(off_s * 1e3, 4),
        "max_error_ms": round(max_err_s * 1e3, 4),
    }


def step_preflight(spec: dict) -> dict:
    """spec: {"work_dir", "ifaces": [...], "peers": [...]}."""
    out: dict = {"clock_ns": time.time_ns(), "uid": os.getuid(), "kernel": os.uname().release}
    out["missing"] = [t for t in ("tc", "ip", "ethtool", "sysctl", "ping") if not shutil.which(t)]
    out["headers"] = os.path.isdir(f"/lib/modules/{out['kernel']}/build")
    # what the DKMS method builds with (testbed_qdisc_kmod_method: dkms)
    out["dkms_missing"] = [t for t in ("dkms", "make", "cc") if not shutil.which(t)]
    try:
        st = os.statvfs(spec["work_dir"])
        out["free_mb"] = st.f_bavail * st.f_frsize // (1 << 20)
    except OSError as e:
        out["free_mb"] = 0
        out["disk_error"] = str(e)
    out["chrony"] = chrony_tracking()
    out["offloads"] = {}
    out["iface_errors"] = {}
    for dev in spec.get("ifaces", []):
        rc, text, err = run(["ethtool", "-k", dev], timeout=20)
        if rc != 0:
            out["iface_errors"][dev] = err or f"ethtool exit {rc}"
            continue
        out["offloads"][dev] = "; ".join(
            line.strip()
            for line in text.splitlines()
            if line.startswith(
                ("tcp-segmentation-offload:", "generic-segmentation-offload:", "generic-receive-offload:")
            )
        )
    out["unreachable"] = [
        a for a in spec.get("peers", []) if run(["ping", "-c", "1", "-W", "3", a], timeout=10)[0] != 0
    ]
    return out


QLAB_QDISCS = ("qlab", "ncq", "cqaqm", "srd", "rbwfq")


def bundle_files() -> dict[str, bytes]:
    """The files of the bundle (testbed/host/mkbundle.py) this tool runs
    from, by name; none when it runs as a plain script."""
    import zipfile

    if not zipfile.is_zipfile(sys.argv[0]):
        return {}
    with zipfile.ZipFile(sys.argv[0]) as z:
        return {n: z.read(n) for n in z.namelist() if n != "__main__.py" and "/" not in n}


def bundle_tree(name: str) -> dict[str, bytes]:
    """The files of the bundle's tree NAME (mkbundle.py --tree), by their
    path in it."""
    import zipfile

    if not zipfile.is_zipfile(sys.argv[0]):
        return {}
    with zipfile.ZipFile(sys.argv[0]) as z:
        return {n[len(name) + 1 :]: z.read(n) for n in z.namelist() if n.startswith(f"{name}/")}


DKMS_SRC = "/usr/src"


def dkms_build(kernel: str, src_root: str = DKMS_SRC) -> dict:
    """The DKMS method: the bundle's tree "dkms" (make -C disciplines/linux
    dkms-src) as /usr/src/qlab-<its PACKAGE_VERSION>, built and installed by
    dkms for this kernel when the tree changed or dkms has not installed it
    for this kernel yet. {"built": bool, "version", "error": "" or what went
    wrong, with the tail of dkms's build log}."""
    import re

    tree = bundle_tree("dkms")
    conf = tree.get("dkms.conf", b"").decode(errors="replace")
    m = re.search(r'^PACKAGE_VERSION="?([^"\s]+)"?', conf, re.M)
    if not m:
        return {
            "built": False,
            "version": "",
            "error": "the bundle has no DKMS tree with a PACKAGE_VERSION in dkms.conf",
        }
    version = m.group(1)
    res = {"built": False, "version": version, "error": ""}
    dest = os.path.join(src_root, f"qlab-{version}")
    changed = False
    for rel, data in sorted(tree.items()):
        if not _same(os.path.join(dest, rel), data):
            os.makedirs(os.path.dirname(os.path.join(dest, rel)), exist_ok=True)
            _write(os.path.join(dest, rel), data)
            changed = True
    for d, _, names in os.walk(dest):
        for n in names:
            if os.path.relpath(os.path.join(d, n), dest) not in tree:
                os.unlink(os.path.join(d, n))
                changed = True
    rc, text, _ = run(["dkms", "status", "-m", "qlab", "-v", version, "-k", kernel], timeout=60)
    if not changed and rc == 0 and "installed" in text:
        return res
    run(["dkms", "remove", "-m", "qlab", "-v", version, "--all"], timeout=120)
    for verb in (["add"], ["build", "-k", kernel], ["install", "-k", kernel]):
        rc, text, err = run(["dkms", *verb, "-m", "qlab", "-v", version], timeout=1800)
        if rc != 0:
            log = f"/var/lib/dkms/qlab/{version}/build/make.log"
            tail = ""
            try:
                with open(log, encoding="utf-8", errors="replace") as f:
                    tail = " ".join(f.read().splitlines()[-8:])
            except OSError:
                pass
            res["error"] = f"dkms {verb[0]} exit {rc}: {(err or text).strip()[-300:]} {tail}".strip()
            return res
    res["built"] = True
    return res


def _same(path: str, data: bytes) -> bool:
    try:
        with open(path, "rb") as f:
            return f.read() == data
    except OSError:
        return False


def _write(path: str, data: bytes, mode: int = 0o644) -> None:
    tmp = f"{path}.qlab-tmp"
    with open(tmp, "wb") as f:
        f.write(data)
    os.chmod(tmp, mode)
    os.replace(tmp, path)


def step_kmod(spec: dict) -> dict:
    """spec: {"modules": [load order], "tc_lib_dir", "method": "prebuilt" |
    "dkms"}. The bundle this runs from (mkbundle.py) holds <module>.ko
    (prebuilt) or the DKMS source tree (dkms: built here, dkms_build), and
    q_<name>.so. Modules whose files changed (all of them after a DKMS
    build) are unloaded first, with the qlab qdiscs that hold them, so the
    run uses what was built. The two methods' files never stand side by
    side: modprobe would load whichever its search order finds first."""
    kernel = os.uname().release
    mod_dir = f"/lib/modules/{kernel}/updates/qlab"
    method = spec.get("method", "prebuilt")
    res: dict = {"kernel": kernel, "changed": False, "installed": [], "reloaded": [], "failed": {}}
    files = bundle_files()
    os.makedirs(mod_dir, exist_ok=True)
    changed_mods: list[str] = []
    if method == "dkms":
        built = dkms_build(kernel)
        res["dkms"] = built
        if built["error"]:
            res["failed"]["dkms"] = built["error"]
            return res
        if built["built"]:
            changed_mods = list(spec["modules"])
            res["installed"].append(f"qlab {built['version']} (dkms)")
        for name in spec["modules"]:  # the prebuilt method's copies
            if os.path.exists(f"{mod_dir}/{name}.ko"):
                os.unlink(f"{mod_dir}/{name}.ko")
                if name not in changed_mods:
                    changed_mods.append(name)
    else:
        dkms_copies = [m for m in spec["modules"] if glob.glob(f"/lib/modules/{kernel}/updates/dkms/{m}.ko*")]
        if dkms_copies:
            res["failed"]["modules"] = (
                f"DKMS has installed qlab's {', '.join(dkms_copies)} for {kernel}: modprobe could load "
                "those, not the prebuilt ones (dkms remove -m qlab --all, or testbed_qdisc_kmod_method: dkms)"
            )
            return res
    for name in spec["modules"] if method == "prebuilt" else []:
        data = files.get(f"{name}.ko")
        if data is None:
            res["failed"][name] = "not in the bundle (was it built?)"
            continue
        if not _same(f"{mod_dir}/{name}.ko", data):
            _write(f"{mod_dir}/{name}.ko", data)
            if name not in changed_mods:
                changed_mods.append(name)
    for name, data in sorted(files.items()):
        if name.startswith("q_") and name.endswith(".so"):
            dest = os.path.join(spec["tc_lib_dir"], name)
            if not _same(dest, data):
                os.makedirs(spec["tc_lib_dir"], exist_ok=True)
                _write(dest, data)
                res["installed"].append(name)
    res["installed"] += [f"{m}.ko" for m in changed_mods if method == "prebuilt"]
    if changed_mods:
        res["changed"] = True
        rc, _, err = run(["depmod", "-a", kernel])
        if rc != 0:
            res["failed"]["depmod"] = err
        loaded = [m for m in spec["modules"] if os.path.exists(f"/sys/module/{m}")]
        if loaded:
            # the new files replace modules in use: remove the qlab qdiscs, then the modules
            rc, text, _ = run(["tc", "-j", "qdisc", "show"])
            for q in json.loads(text or "[]") if rc == 0 else []:
                if q.get("kind") in QLAB_QDISCS and q.get("root"):
                    run(["tc", "qdisc", "del", "dev", q["dev"], "root"])
            for m in reversed(loaded):
                rc, _, err = run(["rmmod", m])
                if rc != 0:
                    res["failed"][m] = f"cannot unload the old module to load the new one: {err}"
                else:
                    res["reloaded"].append(m)
    for m in spec["modules"]:
        if m in res["failed"] or os.path.exists(f"/sys/module/{m}"):
            continue
        rc, _, err = run(["modprobe", m])
        if rc != 0:
            res["failed"][m] = err or f"modprobe exit {rc}"
        res["changed"] = True
    rc, text, err = run(["tc", "qdisc", "add", "dev", "lo", "root", "qlab", "help"])
    res["plugin"] = "Unknown qdisc" not in err and "droptail" in (text + err)
    res["plugin_message"] = (err or text).strip()[-200:]
    return res


def set_online_cpus(n: int, root: str = "/sys/devices/system/cpu") -> str:
    """CPUs 0 to n-1 of this host online, the others offline (n 0: left as
    they are): the virtual testbed's router gives a testbed run one and an
    mnkernel run two. A problem, or ""."""
    if n <= 0:
        return ""
    import re

    for path in sorted(glob.glob(os.path.join(root, "cpu[0-9]*", "online"))):
        k = int(re.search(r"cpu(\d+)/online$", path).group(1))
        want = "1" if k < n else "0"
        try:
            with open(path, encoding="ascii") as f:
                if f.read().strip() == want:
                    continue
            with open(path, "w", encoding="ascii") as f:
                f.write(want)
        except OSError as exc:
            return f"cannot set {path} to {want}: {exc.strerror}"
    return ""


def step_tc(spec: dict) -> dict:
    """spec: {"egress", "ingress", "rate_bps", "burst_bytes", "handle",
    "qdisc": [argv after the handle], "expect": {"kind", "options"} (what
    the dump must show), "delay_ns", "netem_limit", "net": the routes to the
    plan hosts' addresses (step_net), "cpus": how many CPUs to keep online
    (set_online_cpus; 0 or absent: as they are)}.
    The first failing step is named in "failed" with tc's own message."""
    eg, ing = spec["egress"], spec["ingress"]
    res: dict = {"failed": None, "changed": True}

    def fail(step: str, argv: list[str], err: str) -> dict:
        res["failed"] = {"step": step, "command": " ".join(argv), "message": err.strip()[-400:]}
        return res

    problem = set_online_cpus(int(spec.get("cpus", 0)))
    if problem:
        return fail("cpus", ["echo", "0|1", ">", "/sys/devices/system/cpu/cpuN/online"], problem)
    if "net" in spec:
        problem = step_net(spec["net"])
        if problem:
            return fail("routes", ["ip", "route"], problem)

    for dev in (eg, ing):
        argv = ["ethtool", "-K", dev, "tso", "off", "gso", "off", "gro", "off"]
        rc, _, err = run(argv)
        # virtio NICs report some offloads as fixed: 76 is "nothing to change"
        if rc not in (0, 76):
            return fail("offloads", argv, err)
        run(["tc", "qdisc", "del", "dev", dev, "root"])
    rate = f"{spec['rate_bps']}bit"
    burst = str(spec["burst_bytes"])
    for step, argv in (
        ("shaper", ["tc", "qdisc", "add", "dev", eg, "root", "handle", "1:", "htb", "default", "1"]),
        (
            "shaper",
            ["tc", "class", "add", "dev", eg, "parent", "1:", "classid", "1:1", "htb"]
            + ["rate", rate, "ceil", rate, "burst", burst, "cburst", burst],
        ),
        (
            "discipline",
            ["tc", "qdisc", "add", "dev", eg, "parent", "1:1", "handle", spec["handle"], *spec["qdisc"]],
        ),
    ):
        rc, _, err = run(argv)
        if rc != 0:
            return fail(step, argv, err)
    if int(spec["delay_ns"]) > 0:
        argv = [
            "tc",
            "qdisc",
            "add",
            "dev",
            ing,
            "root",
            "netem",
            "delay",
            f"{int(spec['delay_ns']) // 1000}us",
        ]
        argv += ["limit", str(spec["netem_limit"])]
        rc, _, err = run(argv)
        if rc != 0:
            return fail("netem", argv, err)
    argv = ["tc", "-j", "qdisc", "show", "dev", eg]
    rc, text, err = run(argv)
    if rc != 0:
        return fail("dump", argv, err)
    leaf = [q for q in json.loads(text) if q.get("handle") == spec["handle"]]
    res["dump"] = leaf
    want = spec["expect"]
    if (
        len(leaf) != 1
        or leaf[0].get("kind") != want["kind"]
        or any(leaf[0].get("options", {}).get(k) != v for k, v in want["options"].items())
    ):
        return fail(
            "dump",
            argv,
            f"{eg} does not show {' '.join(spec['qdisc'][:3])} at {spec['handle']}: {text[-300:]}",
        )
    return res


def step_prepare(spec: dict) -> dict:
    """spec: {"dir", "files": {name: JSON} (the router's sample.json),
    "sysctls": {name: value}, "data_if": iface or "", "net": see step_net}:
    a fresh run directory with this tool, the files of the bundle this runs
    from (an endpoint's: the traffic tool and part.json) and the spec's
    files; the plan's addresses and routes, sysctls and offloads."""
    d = spec["dir"]
    stop_worker(d)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(os.path.join(d, "out"))
    res: dict = {"failed": None, "changed": True}
    files = bundle_files()
    if "qlab_tb_host.py" not in files:
        shutil.copy2(os.path.abspath(__file__), os.path.join(d, "qlab_tb_host.py"))
    for name, data in files.items():
        _write(os.path.join(d, name), data, 0o755 if name.endswith(".py") else 0o644)
    for name, doc in spec.get("files", {}).items():
        write_json(os.path.join(d, os.path.basename(name)), doc)
    sysctls = spec.get("sysctls", {})
    if sysctls:
        rc, _, err = run(["sysctl", "-qw", *(f"{k}={v}" for k, v in sysctls.items())])
        _, now, _ = run(["sysctl", "-n", *sysctls])
        got = now.split()
        want = [str(v) for v in sysctls.values()]
        if rc != 0 or got != want:
            res["failed"] = {
                "step": "sysctls",
                "message": f"{err.strip()[-200:]}; wanted {' '.join(want)}, now {' '.join(got)}",
            }
            return res
    problem = step_net(spec["net"]) if "net" in spec else ""
    if problem:
        res["failed"] = {"step": "addresses", "message": problem}
        return res
    if spec.get("data_if"):
        argv = ["ethtool", "-K", spec["data_if"], "tso", "off", "gso", "off", "gro", "off"]
        rc, _, err = run(argv)
        if rc not in (0, 76):
            res["failed"] = {"step": "offloads", "message": f"{' '.join(argv)}: {err}"}
            return res
    res["armed"] = arm(d)
    if res["armed"]["problem"]:
        res["failed"] = {"step": "arm", "message": res["armed"]["problem"]}
    return res


NET_STATE = "/var/lib/qlab-testbed/net.json"


def step_net(net: dict) -> str:
    """The plan's addresses on this host: net is {"aliases": [A], "data_addr",
    "routes": [{"dst", "via" | "gateway_to", "initcwnd", "rto_min_ms"}]}.
    Each alias A/32 on the interface that holds data_addr, each route a /32
    (via its gateway, or via the gateway this host uses to reach
    gateway_to, with the plan's TCP route settings). What an earlier run
    added (NET_STATE) is removed first, so a host carries one plan's
    addresses at a time; an address the host already had is left alone.
    Returns a problem, or ""."""
    try:
        with open(NET_STATE) as fh:
            old = json.load(fh)
    except (OSError, ValueError):
        old = {"aliases": [], "routes": []}
    for r in old.get("routes", []):
        run(["ip", "route", "del", f"{r}/32"])
    for a, dev in old.get("aliases", []):
        run(["ip", "addr", "del", f"{a}/32", "dev", dev])
    rc, out, err = run(["ip", "-j", "addr", "show"])
    if rc != 0:
        return f"ip -j addr show: {err}"
    have = {}
    for link in json.loads(out or "[]"):
        for info in link.get("addr_info", []):
            have[info.get("local")] = link["ifname"]
    added: dict = {"aliases": [], "routes": []}

    def save() -> None:
        os.makedirs(os.path.dirname(NET_STATE), exist_ok=True)
        write_json(NET_STATE, added)

    if net.get("aliases"):
        dev = have.get(net.get("data_addr"))
        if not dev:
            return f"no interface holds the data address {net.get('data_addr')}"
        for a in net["aliases"]:
            if a in have:
                if have[a] != dev:
                    return f"the plan's address {a} is already on {have[a]}, not on the data interface {dev}"
                continue
            rc, _, err = run(["ip", "addr", "add", f"{a}/32", "dev", dev])
            if rc != 0:
                save()
                return f"ip addr add {a}/32 dev {dev}: {err}"
            added["aliases"].append([a, dev])
    gateways: dict = {}
    for r in net.get("routes", []):
        if "via" in r:
            hop = ["via", r["via"]]
        else:
            to = r["gateway_to"]
            if to not in gateways:
                rc, out, err = run(["ip", "-j", "route", "get", to])
                if rc != 0:
                    save()
                    return f"ip route get {to}: {err}"
                got = json.loads(out)[0]
                gateways[to] = (["via", got["gateway"]] if got.get("gateway") else []) + ["dev", got["dev"]]
            hop = gateways[to]
        extra = []
        if "initcwnd" in r:
            extra = ["initcwnd", str(r["initcwnd"]), "rto_min", f"{r['rto_min_ms']}ms"]
        argv = ["ip", "route", "replace", f"{r['dst']}/32", *hop, *extra]
        rc, _, err = run(argv)
        if rc != 0:
            save()
            return f"{' '.join(argv)}: {err}"
        added["routes"].append(r["dst"])
    save()
    return ""


def stop_worker(d: str) -> None:
    """The worker an earlier run left in d (and its flow processes, its
    process group), killed: a run that failed before its epoch leaves them
    waiting, holding the flows' ports."""
    try:
        with open(os.path.join(d, "worker.pid")) as f:
            pid = int(f.read())
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            ours = b"qlab_tb_host.py" in f.read()
    except (OSError, ValueError):
        return
    if ours:
        try:
            os.killpg(pid, signal.SIGKILL)
        except OSError:
            pass


def arm(d: str) -> dict:
    """The host's part started in the background, detached from Ansible's
    session: the traffic worker for part.json (its flow processes start and
    wait for the epoch), the sampler for sample.json."""
    what, spec = (
        ("traffic", "part.json")
        if os.path.exists(os.path.join(d, "part.json"))
        else ("sample", "sample.json")
    )
    argv = [sys.executable, os.path.join(d, "qlab_tb_host.py"), what, "--spec", os.path.join(d, spec)]
    argv += ["--epoch-file", os.path.join(d, "epoch.json"), "--out", os.path.join(d, "out")]
    with open(os.path.join(d, "worker.log"), "wb") as log:
        p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True)
    with open(os.path.join(d, "worker.pid"), "w") as f:
        f.write(f"{p.pid}\n")
    # until the worker and its processes have started (so that the host is
    # idle again when the controller chooses the epoch)
    t_end = time.monotonic() + ARM_WAIT_S
    while (doc := read_json(os.path.join(d, "out", "armed.json"))) is None:
        if p.poll() is not None or time.monotonic() > t_end:
            with open(os.path.join(d, "worker.log"), errors="replace") as f:
                return {
                    "pid": p.pid,
                    "problem": f"the {what} worker did not start: {f.read().strip()[-300:]}",
                }
        time.sleep(0.05)
    return {"worker": what, "pid": p.pid, "problem": doc.get("problem", "")}


def step_start(d: str, epoch_ns: int) -> dict:
    """The run's epoch given to the armed worker, if it is still there and
    the epoch is still ahead."""
    late = time.time_ns() - epoch_ns
    if late > 0:
        return {"started": False, "problem": f"was told the epoch {late / 1e9:.1f} s after it had passed"}
    try:
        with open(os.path.join(d, "worker.pid")) as f:
            pid = int(f.read())
    except (OSError, ValueError):
        return {"started": False, "problem": f"has no worker in {d} (was it prepared?)"}
    if not _alive(pid):
        with open(os.path.join(d, "worker.log"), errors="replace") as f:
            return {
                "started": False,
                "problem": f"lost its worker before the epoch: {f.read().strip()[-300:]}",
            }
    write_json(os.path.join(d, "epoch.json"), {"epoch_ns": epoch_ns})
    os.kill(pid, signal.SIGUSR1)  # the worker sleeps until told
    return {"started": True, "pid": pid}


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ", 1)[1][0] != "Z"
    except (OSError, IndexError):
        return False


def step_wait(d: str, timeout_s: float) -> dict:
    """Until the worker wrote out/host-facts.json (its part is over), or it
    died without, or timeout_s passed."""
    facts = os.path.join(d, "out", "host-facts.json")
    with open(os.path.join(d, "worker.pid")) as f:
        pid = int(f.read())
    t_end = time.monotonic() + timeout_s
    while True:
        doc = read_json(facts)
        if doc is not None and not _alive(pid):
            return {
                "complete": bool(doc.get("complete")),
                "problem": doc.get("problem", ""),
                "ended_ns": doc.get("ended_ns"),
            }
        if doc is None and not _alive(pid):
            with open(os.path.join(d, "worker.log"), errors="replace") as f:
                log = f.read().strip()[-300:]
            return {"complete": False, "problem": f"the host's worker exited without its facts: {log}"}
        if time.monotonic() > t_end:
            return {"complete": False, "problem": f"no facts after {timeout_s:.0f} s"}
        time.sleep(0.5)


def step_collect(d: str) -> dict:
    out = {}
    for name in ("host-facts.json", "queue-samples.json"):
        doc = read_json(os.path.join(d, "out", name))
        if doc is not None:
            out[name] = doc
    return {"files": out}


# The files the mininet step needs in its bundle (mkbundle.py), beside this tool.
MN_FILES = ("qlab_mn_run.py", "qlab_traffic.py", "plan.json", "kernel.json")
# What it sends back from the run's output directory.
MN_RESULTS = ("runner.json", "flow_facts.csv", "queue-samples.json")


def step_mininet(spec: dict) -> dict:
    """spec: {"dir", "timeout_s", "cpus" (set_online_cpus)}. The mnkernel backend's run on this host:
    the bundle's files (MN_FILES) in a fresh dir, then Debian's Python runs
    qlab_mn_run.py on the plan with the kernel's qdisc as the bottleneck
    (--kernel kernel.json); "rc" its exit status, "failed" the step and
    message when it failed, "files" the run's results (JSON files parsed,
    the CSV as text)."""
    d = spec["dir"]
    res: dict = {"rc": None, "failed": None, "files": {}, "changed": True}
    files = bundle_files()
    missing = [n for n in MN_FILES if n not in files]
    if missing:
        res["failed"] = {"step": "bundle", "message": f"the bundle lacks {', '.join(missing)}"}
        return res
    problem = set_online_cpus(int(spec.get("cpus", 0)))
    if problem:
        res["failed"] = {"step": "cpus", "message": problem}
        return res
    rc, _, err = run(["/usr/bin/python3", "-c", "import mininet.net"])
    if rc != 0:
        res["failed"] = {
            "step": "mininet",
            "message": "Mininet is not installed for /usr/bin/python3 (apt-get install mininet "
            f"bridge-utils; the virtual testbed's image has it: rebuild it): {err.strip()[-200:]}",
        }
        return res
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    for name, data in files.items():
        _write(os.path.join(d, name), data, 0o755 if name.endswith(".py") else 0o644)
    out = os.path.join(d, "out")
    argv = ["/usr/bin/python3", os.path.join(d, "qlab_mn_run.py"), os.path.join(d, "plan.json"), out]
    argv += ["--kernel", os.path.join(d, "kernel.json")]
    rc, text, err = run(argv, timeout=float(spec["timeout_s"]))
    res["rc"] = rc
    if rc != 0:
        lines = [ln for ln in (err or text).strip().splitlines() if ln.strip()]
        res["failed"] = {"step": "run", "message": " ".join(lines[-3:])[-400:] or f"exit {rc}"}
        return res
    for name in MN_RESULTS:
        path = os.path.join(out, name)
        if name.endswith(".json"):
            doc = read_json(path)
            if doc is not None:
                res["files"][name] = doc
        elif os.path.exists(path):
            with open(path, encoding="utf-8") as f:
                res["files"][name] = f.read()
    absent = [n for n in MN_RESULTS if n not in res["files"]]
    if absent:
        res["failed"] = {"step": "collect", "message": f"the run wrote no {', '.join(absent)} in {out}"}
    return res


STEPS = ("preflight", "kmod", "tc", "prepare", "start", "wait", "stop", "collect", "mininet")


def main_step(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="qlab_tb_host.py", description="one step of a testbed run (prints JSON)")
    p.add_argument("what", choices=STEPS)
    p.add_argument("--spec", help="the step's spec as JSON")
    p.add_argument("--dir")
    p.add_argument("--epoch-ns", type=int)
    p.add_argument("--end-ns", type=int)
    p.add_argument("--timeout-s", type=float, default=600)
    a = p.parse_args(argv)
    # the roles pass the spec base64-encoded (no quoting through the shell)
    text = a.spec or "{}"
    spec = json.loads(text if text.lstrip().startswith("{") else base64.b64decode(text))
    if a.what == "preflight":
        res = step_preflight(spec)
    elif a.what == "kmod":
        res = step_kmod(spec)
    elif a.what == "tc":
        res = step_tc(spec)
    elif a.what == "prepare":
        res = step_prepare(spec)
    elif a.what == "start":
        res = step_start(a.dir, a.epoch_ns)
    elif a.what == "wait":
        res = step_wait(a.dir, a.timeout_s)
    elif a.what == "stop":
        write_json(os.path.join(a.dir, "stop.json"), {"end_ns": a.end_ns})
        res = step_wait(a.dir, a.timeout_s)
    elif a.what == "mininet":
        res = step_mininet(spec)
    else:
        res = step_collect(a.dir)
    print(json.dumps(res, sort_keys=True))
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] in STEPS:
        return main_step(argv)
    p = argparse.ArgumentParser(prog="qlab_tb_host.py", description=__doc__.split("\n")[0])
    p.add_argument("what", choices=("traffic", "sample"))
    p.add_argument("--spec", required=True)
    p.add_argument("--epoch-file", required=True)
    p.add_argument("--out", required=True)
    a = p.parse_args(argv)
    with open(a.spec, encoding="utf-8") as f:
        spec = json.load(f)
    os.makedirs(a.out, exist_ok=True)
    signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGUSR1])  # taken by wait_epoch's sigtimedwait
    return traffic(spec, a.out, a.epoch_file) if a.what == "traffic" else sample(spec, a.out, a.epoch_file)


if __name__ == "__main__":
    sys.exit(main())

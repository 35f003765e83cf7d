#!/usr/bin/env python3
"""A testbed host's part of one qlab run (the testbed backend; any Python >= 3.9, stdlib only).

    qlab_tb_host.py traffic --spec HOST.json --epoch-ns E --out DIR
    qlab_tb_host.py sample --spec SAMPLE.json --epoch-ns E --out DIR

Ansible (roles testbed_traffic and testbed_collect) copies this file and
disciplines/emu/qlab_traffic.py (the one per-flow traffic tool every
emulating backend uses) to each host and runs it there.

E is CLOCK_REALTIME (ns) of the plan's time 0, chosen by the controller a
little ahead (the specs are written before it is known). A host that starts
after E fails: its flows could not start at their times.

traffic: HOST.json is {"host", "role": "send"|"sink", "duration_ns",
"stop_when_done", "udp_drain_ns", "flows": [{"flow", "dst_address", "tcp"}]}.
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
"duration_ns", "stop_file"}. Reads `tc -s -j qdisc show dev DEV`
at epoch + k * interval_ns until epoch + duration_ns or until stop_file
exists (it holds the run's end, ns after the epoch, written by the
controller once every endpoint has finished), then once more, stamped with
that end; writes DIR/queue-samples.json (per sample: time_ns after the epoch
and the qdisc's per-band counters) and DIR/host-facts.json.
"""

from __future__ import annotations

import argparse
import json
import os
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


def traffic(spec: dict, out_dir: str) -> int:
    facts = os.path.join(out_dir, "host-facts.json")
    role = spec["role"]
    procs: dict[int, subprocess.Popen] = {}
    outs: dict[int, str] = {}
    end_abs = spec["epoch_ns"] + spec["duration_ns"]
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
                "--epoch-ns",
                str(spec["epoch_ns"]),
                "--end-ns",
                str(spec["duration_ns"]),
                "--out",
                outs[fid],
            ],
            stderr=open(os.path.join(out_dir, f"{role}-{fid}.err"), "wb"),  # noqa: SIM115
        )
    pending = {item["flow"]["flow_id"]: item for item in spec["flows"]}
    while True:
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
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            p.kill()
            problem = problem or f"flow {fid}'s {role} process did not stop on SIGTERM"
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


def qdisc_bands(dev: str, handle: str) -> list[dict]:
    out = subprocess.run(
        ["tc", "-s", "-j", "qdisc", "show", "dev", dev], capture_output=True, text=True, check=True
    ).stdout
    for q in json.loads(out):
        if q.get("handle") == handle:
            return q.get("bands") or [
                {
                    "band": 0,
                    "backlog_pkts": q["qlen"],
                    "backlog_bytes": q["backlog"],
                    "arrivals": q["packets"] + q["drops"] + q["qlen"],
                    "sent": q["packets"],
                    "drop_overflow": q["drops"],
                }
            ]
    raise RuntimeError(f"no qdisc {handle} on {dev}")


def sample(spec: dict, out_dir: str) -> int:
    epoch, interval = spec["epoch_ns"], spec["interval_ns"]
    end_abs = epoch + spec["duration_ns"]
    samples = []
    k = 0
    end_rel = spec["duration_ns"]
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
        if k * interval < end_rel:
            samples.append({"time_ns": k * interval, "bands": qdisc_bands(spec["dev"], spec["handle"])})
        k += 1
    # samples taken after the run's end (the stop arrives late) are dropped
    samples = [s for s in samples if s["time_ns"] < end_rel]
    samples.append({"time_ns": end_rel, "bands": qdisc_bands(spec["dev"], spec["handle"])})
    write_json(os.path.join(out_dir, "queue-samples.json"), {"queue": spec["queue"], "samples": samples})
    write_json(
        os.path.join(out_dir, "host-facts.json"),
        {"host": spec["host"], "role": "router", "ended_ns": epoch + end_rel, "complete": True},
    )
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="qlab_tb_host.py", description=__doc__.split("\n")[0])
    p.add_argument("what", choices=("traffic", "sample"))
    p.add_argument("--spec", required=True)
    p.add_argument("--epoch-ns", type=int, required=True)
    p.add_argument("--out", required=True)
    a = p.parse_args(argv)
    with open(a.spec, encoding="utf-8") as f:
        spec = json.load(f)
    spec["epoch_ns"] = a.epoch_ns
    os.makedirs(a.out, exist_ok=True)
    late = time.time_ns() - a.epoch_ns
    if late > 0:
        write_json(
            os.path.join(a.out, "host-facts.json"),
            {
                "host": spec["host"],
                "complete": False,
                "problem": f"started {late / 1e9:.1f} s after the epoch",
            },
        )
        print(
            f"{spec['host']}: started {late / 1e9:.1f} s after the run's epoch: its flows could not start "
            "at their times (raise testbed_epoch_lead_s in the inventory)",
            file=sys.stderr,
        )
        return 1
    return traffic(spec, a.out) if a.what == "traffic" else sample(spec, a.out)


if __name__ == "__main__":
    sys.exit(main())

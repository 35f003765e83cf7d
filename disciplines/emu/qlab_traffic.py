#!/usr/bin/env python3
"""One flow of a qlab plan on real sockets (the mininet backend; any Python >= 3.9, stdlib only).

    qlab_traffic.py sink --flow FLOW.json --epoch-ns E --end-ns T --out F.json
    qlab_traffic.py send --flow FLOW.json --epoch-ns E --end-ns T --out F.json

(or --epoch-file EPOCH.json instead of --epoch-ns: the process starts, writes
F.json.waiting, then waits for that file, {"epoch_ns": E}, so that a slow
host pays its start-up before the epoch is chosen: the testbed backend)

FLOW.json is {"flow": <a flow of the plan (docs/jobs.md)>, "dst_address": IPV4,
"tcp": <the plan's tcp>}: the runner's slice of the plan for one flow; with
"src_address" the sender binds it, with "listen_address" the sink (the
testbed, whose machines hold several plan hosts' addresses; otherwise any). A
`bulk` flow is TCP, `cbr`/`onoff`/`voip`/`poisson` UDP. A `poisson` flow's
send times (and with `size_mean_bytes` its datagrams' lengths) are the
contract's generator (docs/jobs.md, `poisson`), drawn here as qlab's
reference `qlab.plan.poisson_times`/`exponential_sizes` draws them
(tests/test_poisson.py checks this copy against it: the emulation host
runs this file without the qlab package). The sender binds the flow's
`src_port`, the sink listens on its `dst_port`, so several flows share a host
and the 5-tuple is the plan's. Times are CLOCK_REALTIME nanoseconds (every
Mininet host shares the clock, so a one-way delay is a plain difference); the
plan's times are relative to the epoch E, and nothing is sent or counted
after the run's end E + T.

What each side writes (atomically: temp file + rename, so whoever polls it
never reads half of it), absolute times:
  - TCP sink: rx_bytes (in order, at most the flow's bytes), first_rx_ns and
    last_rx_ns (when the first byte, and the last counted one, was read:
    for a complete flow, when the goal was reached); written when the goal is
    reached and again, final, on SIGTERM;
  - UDP sink: rx_packets, rx_bytes (payload), first_rx_ns and last_rx_ns
    (the kernel's receive timestamps), delay_sum_ns and delay_max_ns (receive
    time minus the send time in the datagram); on SIGTERM;
  - TCP sender: tx_packets and retx_packets from TCP_INFO
    (tcpi_data_segs_out, and tcpi_total_retrans less the SYNs sent again
    before the connection was established: data segments only, as every
    backend counts them); UDP sender: tx_packets,
    send_errors, late_max_ns; when done or on SIGTERM.

A bulk flow with `stop_ns` (docs/jobs.md) is stopped mid-transfer then, as
ns-3's runner stops it: a timer (SIGALRM) interrupts the sender wherever it
is (connecting, sending, waiting for the sink), which reads its TCP_INFO
counters and aborts the connection (SO_LINGER 0, then close: the unsent
data are discarded and one RST goes out; the ACKs of what was in flight
find no socket and are answered with RSTs by the stack). It sends nothing
more; its file then also holds `stopped_ns`. The sink takes the RST as the
end of the data (what it read stays counted). A flow whose sink had every
byte before its stop_ns is complete, and its timer is cancelled.

UDP datagrams carry a 12-byte header at the start of the payload: the
sequence number (u32) and the send time (u64 ns), big-endian, then zeros up
to pkt_bytes - 28. TCP: TCP_MAXSEG is the flow's seg_bytes, Nagle is off (as
ns-3's default), buffers from the plan's tcp, the ToS byte is the flow's tos.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import signal
import socket
import struct
import sys
import time
from collections.abc import Iterator

UDP_APPS = ("cbr", "onoff", "voip", "poisson")
UDP_HEADER = struct.Struct("!IQ")
UDP_IP_HEADER_BYTES = 28
SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35)
TCP_INFO = getattr(socket, "TCP_INFO", 11)
# struct tcp_info offsets (linux/tcp.h): tcpi_total_retrans, tcpi_data_segs_out
TCPI_TOTAL_RETRANS = 100
TCPI_DATA_SEGS_OUT = 156


class Stop(Exception):
    pass


class Halt(Exception):
    """A bulk flow's stop_ns has come (SIGALRM): abort mid-transfer."""


def _stop(_sig: int, _frame: object) -> None:
    raise Stop()


def _halt(_sig: int, _frame: object) -> None:
    raise Halt()


def arm_stop(stop_abs_ns: int | None) -> None:
    """SIGALRM (Halt) at stop_abs_ns; at once if that has passed. None: nothing."""
    if stop_abs_ns is None:
        return
    signal.signal(signal.SIGALRM, _halt)
    left = stop_abs_ns - time.time_ns()
    if left <= 0:
        raise Halt()
    signal.setitimer(signal.ITIMER_REAL, left / 1e9)


def disarm_stop() -> None:
    signal.setitimer(signal.ITIMER_REAL, 0)


def abort(sock: socket.socket) -> None:
    """Close with a RST at once, the unsent data discarded (SO_LINGER 0)."""
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    except OSError:
        pass
    sock.close()


def write_json(path: str, obj: dict) -> None:
    tmp = f"{path}.tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(obj, f)
    os.replace(tmp, path)


def tight_timers() -> None:
    """Wake from sleep as the kernel's timer fires, not up to 50 us later:
    a process's default timer slack (/proc/self/timerslack_ns) lets the
    kernel batch wakeups, which jitters a UDP sender's departures by up to
    that much (the emulation validation measured what its senders' timing
    adds to a Poisson stream's wait: docs/benchmarks.md). Costs no CPU."""
    try:
        with open("/proc/self/timerslack_ns", "w", encoding="ascii") as f:
            f.write("1")
    except OSError:
        pass  # an older kernel: the default slack


def sleep_until(t_ns: int) -> None:
    while True:
        left = t_ns - time.time_ns()
        if left <= 0:
            return
        time.sleep(left / 1e9)


def tcp_counts(sock: socket.socket) -> tuple[int, int]:
    try:
        info = sock.getsockopt(socket.IPPROTO_TCP, TCP_INFO, 232)
    except OSError:
        return 0, 0
    if len(info) < TCPI_DATA_SEGS_OUT + 4:
        return 0, 0
    (retx,) = struct.unpack_from("I", info, TCPI_TOTAL_RETRANS)
    (segs,) = struct.unpack_from("I", info, TCPI_DATA_SEGS_OUT)
    return segs, retx


def tcp_sink(spec: dict, end_ns: int, out: str) -> None:
    f, tcp = spec["flow"], spec["tcp"]
    goal = f["bytes"]
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.setsockopt(socket.IPPROTO_TCP, socket.TCP_MAXSEG, f["seg_bytes"])
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, tcp["rcv_buf_bytes"])
    srv.bind((spec.get("listen_address", "0.0.0.0"), f["dst_port"]))
    srv.listen(1)
    state = {"rx_bytes": 0, "first_rx_ns": None, "last_rx_ns": None, "final": False}
    write_json(out + ".listening", {})
    try:
        conn, _ = srv.accept()
        try:
            while state["rx_bytes"] < goal:
                data = conn.recv(1 << 16)
                now = time.time_ns()
                if not data or now > end_ns:
                    break
                if state["first_rx_ns"] is None:
                    state["first_rx_ns"] = now
                state["rx_bytes"] = min(goal, state["rx_bytes"] + len(data))
                state["last_rx_ns"] = now
            if state["rx_bytes"] == goal:
                write_json(out, state)  # the goal: the runner polls for it
            while conn.recv(1 << 16):
                pass
        except ConnectionResetError:
            pass  # the sender stopped mid-transfer (stop_ns): the data end here
        conn.close()  # the sender waits for it before it reads its counters
        signal.pause()
    except Stop:
        pass
    state["final"] = True
    write_json(out, state)


def tcp_send(spec: dict, epoch_ns: int, out: str) -> None:
    f, tcp = spec["flow"], spec["tcp"]
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, f["tos"])
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_MAXSEG, f["seg_bytes"])
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, tcp["snd_buf_bytes"])
    sock.bind((spec.get("src_address", "0.0.0.0"), f["src_port"]))
    state = {"tx_packets": 0, "retx_packets": 0, "final": False}
    stop = epoch_ns + f["stop_ns"] if "stop_ns" in f else None
    # SYNs sent again (tcpi_total_retrans counts them): None until connected,
    # when every retransmission so far was one
    syn = {"retx": None}

    def counts() -> tuple[int, int]:
        segs, retx = tcp_counts(sock)
        return segs, retx - (retx if syn["retx"] is None else syn["retx"])

    try:
        try:
            sleep_until(epoch_ns + f["start_ns"])
            arm_stop(stop)
            sock.connect((spec["dst_address"], f["dst_port"]))
            syn["retx"] = tcp_counts(sock)[1]
            left = f["bytes"]
            chunk = bytes(min(left, 1 << 16))
            while left > 0:
                left -= sock.send(chunk[: min(left, len(chunk))])
            sock.shutdown(socket.SHUT_WR)
            while sock.recv(4096):
                pass
            disarm_stop()  # the sink has every byte: complete before its stop
        except Halt:
            state["tx_packets"], state["retx_packets"] = counts()
            state["stopped_ns"] = time.time_ns()
            abort(sock)
        else:
            state["tx_packets"], state["retx_packets"] = counts()
        write_json(out, state)
        signal.pause()
    except Stop:
        if stop is not None:
            disarm_stop()
        if "stopped_ns" not in state and sock.fileno() >= 0:
            state["tx_packets"], state["retx_packets"] = counts()
    state["final"] = True
    write_json(out, state)


MASK64 = (1 << 64) - 1
SPLITMIX_GAMMA = 0x9E3779B97F4A7C15
MIN_UDP_IP_BYTES = 40


def splitmix_uniforms(seed: int) -> Iterator[float]:
    """u = (x >> 11) * 2^-53 of the core's splitmix64 stream (qcore_rng) from `seed`."""
    state = seed & MASK64
    while True:
        state = (state + SPLITMIX_GAMMA) & MASK64
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
        z ^= z >> 31
        yield (z >> 11) * 2.0**-53


def poisson_times(flow: dict) -> Iterator[int]:
    """A poisson flow's send times relative to the epoch: in each on-period
    [s, e), s + g1, s + g1 + g2, ... while before e, gap = floor(-log1p(-u)
    * mean + 0.5) ns, the mean the flow's or its period's (a Markov-modulated
    source); a draw at or past a period's end is spent."""
    periods = flow["on_periods_ns"]
    means = flow.get("period_mean_intervals_ns") or [flow["mean_interval_ns"]] * len(periods)
    uniforms = splitmix_uniforms(flow["poisson_seed"])
    for (start, end), mean in zip(periods, means):  # noqa: B905 (strict= needs Python 3.10)
        t = start
        while True:
            t += math.floor(-math.log1p(-next(uniforms)) * mean + 0.5)
            if t >= end:
                break
            yield t


def datagram_bytes(flow: dict) -> Iterator[int]:
    """IP lengths, datagram by datagram: pkt_bytes, or with size_mean_bytes
    min(pkt_bytes, 40 + floor(-log1p(-u) * (size_mean_bytes - 40) + 0.5))."""
    if "size_mean_bytes" not in flow:
        while True:
            yield flow["pkt_bytes"]
    scale = flow["size_mean_bytes"] - MIN_UDP_IP_BYTES
    for u in splitmix_uniforms(flow["size_seed"]):
        yield min(flow["pkt_bytes"], MIN_UDP_IP_BYTES + math.floor(-math.log1p(-u) * scale + 0.5))


def udp_schedule(flow: dict, epoch_ns: int, end_ns: int) -> Iterator[tuple[int, int]]:
    """(send time in absolute ns, IP length) of each datagram before the run's
    end: start + k * interval_ns < end in each on-period, or a poisson flow's
    draws (generated as they are sent: a long run sends millions)."""
    if flow["app"] == "poisson":
        for t, size in zip(poisson_times(flow), datagram_bytes(flow)):  # noqa: B905 (the lengths never end)
            if epoch_ns + t >= end_ns:
                return
            yield epoch_ns + t, size
        return
    for start, end in flow["on_periods_ns"]:
        for t in range(epoch_ns + start, epoch_ns + end, flow["interval_ns"]):
            if t < end_ns:
                yield t, flow["pkt_bytes"]


def udp_send(spec: dict, epoch_ns: int, end_ns: int, out: str) -> None:
    f = spec["flow"]
    schedule = udp_schedule(f, epoch_ns, end_ns)
    payload = bytearray(f["pkt_bytes"] - UDP_IP_HEADER_BYTES)
    view = memoryview(payload)
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, f["tos"])
    sock.bind((spec.get("src_address", "0.0.0.0"), f["src_port"]))
    dst = (spec["dst_address"], f["dst_port"])
    # schedule_done: every datagram of the schedule was attempted (the runner
    # waits for it before it counts a UDP flow done, and marks a run whose
    # sender never got there invalid: the host fell behind the plan)
    state = {"tx_packets": 0, "send_errors": 0, "late_max_ns": 0, "schedule_done": False, "final": False}
    tight_timers()
    try:
        for seq, (t, ip_bytes) in enumerate(schedule):
            sleep_until(t)
            now = time.time_ns()
            state["late_max_ns"] = max(state["late_max_ns"], now - t)
            UDP_HEADER.pack_into(payload, 0, seq, now)
            try:
                sock.sendto(view[: ip_bytes - UDP_IP_HEADER_BYTES], dst)
                state["tx_packets"] += 1
            except OSError:
                state["send_errors"] += 1  # not sent: not counted as transmitted
        state["schedule_done"] = True
        state["done_ns"] = time.time_ns()
        write_json(out, state)
        signal.pause()
    except Stop:
        pass
    state["final"] = True
    write_json(out, state)


def udp_sink(spec: dict, end_ns: int, out: str) -> None:
    f = spec["flow"]
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 22)
    sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
    sock.bind((spec.get("listen_address", "0.0.0.0"), f["dst_port"]))
    state = {
        "rx_packets": 0,
        "rx_bytes": 0,
        "first_rx_ns": None,
        "last_rx_ns": None,
        "delay_sum_ns": 0,
        "delay_max_ns": None,
        "final": False,
    }
    write_json(out + ".listening", {})
    try:
        while True:
            data, anc, _flags, _addr = sock.recvmsg(1 << 16, 256)
            rx_ns = None
            for level, kind, value in anc:
                if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS:
                    sec, nsec = struct.unpack("qq", value[:16])
                    rx_ns = sec * 1_000_000_000 + nsec
            if rx_ns is None:
                rx_ns = time.time_ns()
            if len(data) < UDP_HEADER.size or rx_ns > end_ns:
                continue
            _seq, sent_ns = UDP_HEADER.unpack_from(data, 0)
            delay = max(0, rx_ns - sent_ns)
            state["rx_packets"] += 1
            state["rx_bytes"] += len(data)
            if state["first_rx_ns"] is None:
                state["first_rx_ns"] = rx_ns
            state["last_rx_ns"] = rx_ns
            state["delay_sum_ns"] += delay
            state["delay_max_ns"] = max(state["delay_max_ns"] or 0, delay)
    except Stop:
        pass
    state["final"] = True
    write_json(out, state)


def wait_epoch(path: str) -> int:
    """The epoch from PATH ({"epoch_ns": E}, written atomically), once it
    exists: the process sleeps until SIGUSR1 (the host's worker sends it
    when the file is there; blocked, so none is lost), looking once a second
    (a polling loop would take a slow guest's CPU from the run)."""
    signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGUSR1])
    try:
        while True:
            try:
                with open(path, encoding="utf-8") as fh:
                    return int(json.load(fh)["epoch_ns"])
            except FileNotFoundError:
                signal.sigtimedwait([signal.SIGUSR1], 1.0)
    finally:
        # the worker's SIGUSR1 may still come (or be pending) when this
        # process found the file by itself: ignored, it discards it; left
        # at its default, it would kill the flow
        signal.signal(signal.SIGUSR1, signal.SIG_IGN)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGUSR1])


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="qlab_traffic.py", description=__doc__.split("\n")[0])
    p.add_argument("role", choices=("send", "sink"))
    p.add_argument("--flow", required=True, help="the flow's JSON (the runner's slice of the plan)")
    when = p.add_mutually_exclusive_group(required=True)
    when.add_argument("--epoch-ns", type=int, help="CLOCK_REALTIME of the plan's time 0")
    when.add_argument("--epoch-file", help='wait for this file, {"epoch_ns": E}, then run with E')
    p.add_argument("--end-ns", type=int, required=True, help="the run's end, ns after the epoch")
    p.add_argument("--out", required=True)
    a = p.parse_args(argv)
    with open(a.flow, encoding="utf-8") as fh:
        spec = json.load(fh)
    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGINT, _stop)
    if a.epoch_file:
        signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGUSR1])  # before the worker can send it
        write_json(a.out + ".waiting", {})  # started: the host's worker counts these
        try:
            a.epoch_ns = wait_epoch(a.epoch_file)
        except Stop:
            write_json(a.out, {"final": True, "stopped_before_epoch": True})
            return 0
    end = a.epoch_ns + a.end_ns
    udp = spec["flow"]["app"] in UDP_APPS
    if a.role == "sink":
        (udp_sink if udp else tcp_sink)(spec, end, a.out)
    elif udp:
        udp_send(spec, a.epoch_ns, end, a.out)
    else:
        tcp_send(spec, a.epoch_ns, a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""qlab's traffic on real sockets (the mininet backend; any Python >= 3.9, stdlib only).

    qlab_traffic.py tcp-sink  --port P --goal BYTES --mss M --out F.json
    qlab_traffic.py tcp-send  --dst IP --port P --bytes N --mss M --tos T --start-ns S --out F.json
    qlab_traffic.py udp-sink  --port P --out F.json
    qlab_traffic.py udp-send  --dst IP --port P --pkt-bytes B --rate-bps R --epoch-ns E
                              --periods '[[a, b], ...]' --tos T --out F.json

Times are CLOCK_REALTIME nanoseconds (every Mininet host shares the clock, so a
one-way delay is a plain difference). A sink writes its JSON when its goal is
reached (tcp) and again, final, on SIGTERM; a sender writes its counters when
it is done or on SIGTERM. Writes are atomic (temp file + rename), so whoever
polls the file never reads half of it.

UDP datagrams carry a 12-byte header at the start of the payload: the
sequence number (u32) and the send time (u64 ns), big-endian, then zero
padding up to pkt_bytes - 28 (docs/jobs.md). TCP: TCP_MAXSEG is the flow's
seg_bytes, Nagle is off (as ns-3's default), the ToS byte is cls << 5 | prec << 3,
the sender's segment and retransmission counts come from TCP_INFO.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import struct
import sys
import time

UDP_HEADER = struct.Struct("!IQ")
SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35)
TCP_INFO = getattr(socket, "TCP_INFO", 11)
# struct tcp_info offsets (linux/tcp.h): tcpi_total_retrans, tcpi_data_segs_out
TCPI_TOTAL_RETRANS = 100
TCPI_DATA_SEGS_OUT = 156


class Stop(Exception):
    pass


def _stop(_sig: int, _frame: object) -> None:
    raise Stop()


def write_json(path: str, obj: dict) -> None:
    tmp = f"{path}.tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(obj, f)
    os.replace(tmp, path)


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


def tcp_sink(a: argparse.Namespace) -> None:
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.setsockopt(socket.IPPROTO_TCP, socket.TCP_MAXSEG, a.mss)
    if a.rcvbuf:
        srv.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, a.rcvbuf)
    srv.bind(("0.0.0.0", a.port))
    srv.listen(1)
    state = {"delivered": 0, "end_ns": None, "final": False}
    write_json(a.out + ".listening", {})
    try:
        if a.goal == 0:
            state["end_ns"] = time.time_ns()
            write_json(a.out, state)
        conn, _ = srv.accept()
        while True:
            data = conn.recv(1 << 16)
            if not data:
                break
            state["delivered"] += len(data)
            if state["end_ns"] is None and state["delivered"] >= a.goal:
                state["end_ns"] = time.time_ns()
                write_json(a.out, state)
        conn.close()
        state["final"] = True
        write_json(a.out, state)
        signal.pause()
    except Stop:
        state["final"] = True
        write_json(a.out, state)


def tcp_send(a: argparse.Namespace) -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, a.tos)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_MAXSEG, a.mss)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    if a.sndbuf:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, a.sndbuf)
    state = {"tx_segments": 0, "retx_segments": 0, "sent": 0, "final": False}
    try:
        sleep_until(a.start_ns)
        state["connect_ns"] = time.time_ns()
        sock.connect((a.dst, a.port))
        chunk = bytes(min(a.bytes, 1 << 16)) if a.bytes else b""
        left = a.bytes
        while left > 0:
            n = sock.send(chunk[: min(left, len(chunk))])
            left -= n
            state["sent"] += n
        sock.shutdown(socket.SHUT_WR)
        while sock.recv(4096):
            pass
        state["tx_segments"], state["retx_segments"] = tcp_counts(sock)
        state["final"] = True
        write_json(a.out, state)
        signal.pause()
    except Stop:
        state["tx_segments"], state["retx_segments"] = tcp_counts(sock)
        state["final"] = True
        write_json(a.out, state)


def udp_schedule(periods: list[list[float]], interval_ns: int, epoch_ns: int) -> list[int]:
    """Send times (absolute ns): start + k * interval < end, in each period."""
    times = []
    for start_s, end_s in periods:
        start = round(start_s * 1e9)
        end = round(end_s * 1e9)
        t = start
        while t < end:
            times.append(epoch_ns + t)
            t += interval_ns
    return times


def udp_send(a: argparse.Namespace) -> None:
    interval_ns = round(8 * a.pkt_bytes / a.rate_bps * 1e9)
    times = udp_schedule(json.loads(a.periods), interval_ns, a.epoch_ns)
    payload = bytearray(a.pkt_bytes - 28)
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, a.tos)
    state = {"scheduled": len(times), "tx": 0, "send_errors": 0, "late_max_ns": 0, "final": False}
    try:
        for seq, t in enumerate(times):
            sleep_until(t)
            now = time.time_ns()
            state["late_max_ns"] = max(state["late_max_ns"], now - t)
            UDP_HEADER.pack_into(payload, 0, seq, now)
            try:
                sock.sendto(payload, (a.dst, a.port))
                state["tx"] += 1
            except OSError:
                state["send_errors"] += 1  # not sent: not counted as transmitted
        state["final"] = True
        write_json(a.out, state)
        signal.pause()
    except Stop:
        state["final"] = True
        write_json(a.out, state)


def udp_sink(a: argparse.Namespace) -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 22)
    sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
    sock.bind(("0.0.0.0", a.port))
    state = {"rx": 0, "rx_bytes": 0, "delay_sum_ns": 0, "delay_max_ns": 0, "final": False}
    write_json(a.out + ".listening", {})
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
            if len(data) < UDP_HEADER.size:
                continue
            _seq, sent_ns = UDP_HEADER.unpack_from(data, 0)
            delay = max(0, rx_ns - sent_ns)
            state["rx"] += 1
            state["rx_bytes"] += len(data)
            state["delay_sum_ns"] += delay
            state["delay_max_ns"] = max(state["delay_max_ns"], delay)
    except Stop:
        state["final"] = True
        write_json(a.out, state)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="qlab_traffic.py", description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("tcp-sink")
    s.add_argument("--port", type=int, required=True)
    s.add_argument("--goal", type=int, required=True)
    s.add_argument("--mss", type=int, required=True)
    s.add_argument("--rcvbuf", type=int, default=0)
    s.add_argument("--out", required=True)
    s = sub.add_parser("tcp-send")
    s.add_argument("--dst", required=True)
    s.add_argument("--port", type=int, required=True)
    s.add_argument("--bytes", type=int, required=True)
    s.add_argument("--mss", type=int, required=True)
    s.add_argument("--tos", type=int, default=0)
    s.add_argument("--sndbuf", type=int, default=0)
    s.add_argument("--start-ns", type=int, required=True)
    s.add_argument("--out", required=True)
    s = sub.add_parser("udp-sink")
    s.add_argument("--port", type=int, required=True)
    s.add_argument("--out", required=True)
    s = sub.add_parser("udp-send")
    s.add_argument("--dst", required=True)
    s.add_argument("--port", type=int, required=True)
    s.add_argument("--pkt-bytes", type=int, required=True)
    s.add_argument("--rate-bps", type=float, required=True)
    s.add_argument("--periods", required=True)
    s.add_argument("--tos", type=int, default=0)
    s.add_argument("--epoch-ns", type=int, required=True)
    s.add_argument("--out", required=True)
    a = p.parse_args(argv)
    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGINT, _stop)
    {"tcp-sink": tcp_sink, "tcp-send": tcp_send, "udp-sink": udp_sink, "udp-send": udp_send}[a.cmd](a)
    return 0


if __name__ == "__main__":
    sys.exit(main())

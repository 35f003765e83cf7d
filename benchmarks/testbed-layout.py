"""The virtual testbed's two layouts, side by side: the rate the router VM
forwards at when the sender and receiver are VMs too (the testbed as
`qlab testbed up` boots it) and when they are native network namespaces
on this machine, cabled to the router VM by tap devices (the layout with
the endpoints in containers: a container's network is such a namespace,
and its processes run natively, not under TCG).

    .venv/bin/python benchmarks/testbed-layout.py [--rates 5,10,20,40] [--flows 10]
        [--seconds 20] [--rounds 1]

Needs root, the testbed's image (testbed/vm/mkrootfs.sh), iperf3 and a
free /dev/net/tun; stops a running testbed first. For each layout in turn
(the other one stopped: nothing else should run), for each rate: the
router's egress eth2 gets HTB at the rate (burst two packets, as
testbed_tc) over a 100-packet bfifo, one emulated CPU online (as for a
testbed run), and iperf3 sends FLOWS TCP flows for SECONDS from the sender
to the receiver through it. Prints, per layout and rate, the receiver's
goodput in the steady state (the median of iperf3's one-second intervals
after the first five) as a fraction of the most the shaper lets through
(the rate times 1448/1514, TCP payload per 1500-byte packet on the wire).
Used for docs/benchmarks.md, "The virtual testbed", 2026-11-28
(seventeenth session).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time

from qlab import testbed_vm as tv

PAYLOAD_SHARE = 1448 / 1514
TAPS = {
    "eth1": ("qtb-snd", "qtbn-snd", "10.1.0.1/24", "10.2.0.0/24 via 10.1.0.254"),
    "eth2": ("qtb-rcv", "qtbn-rcv", "10.2.0.1/24", "10.1.0.0/24 via 10.2.0.254"),
}


def sh(*argv: str, check: bool = True, timeout: float = 600) -> str:
    p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)
    if check and p.returncode != 0:
        raise SystemExit(f"testbed-layout: {' '.join(argv)}: exit {p.returncode}: {p.stderr.strip()[-400:]}")
    return p.stdout


def ssh(name: str, command: str, timeout: float = 600) -> str:
    vm = next(v for v in tv.VMS if v.name == name)
    return sh(*tv._ssh_base(vm), command, timeout=timeout)


def shape(rate_mbps: int) -> None:
    ssh(
        "tb-router",
        "echo 0 > /sys/devices/system/cpu/cpu1/online 2>/dev/null; "
        "tc qdisc del dev eth2 root 2>/dev/null; "
        "tc qdisc add dev eth2 root handle 1: htb default 1 && "
        f"tc class add dev eth2 parent 1: classid 1:1 htb rate {rate_mbps}mbit burst 3200 cburst 3200 && "
        "tc qdisc add dev eth2 parent 1:1 handle 10: bfifo limit 151400; "
        "for d in eth1 eth2; do ethtool -K $d tso off gso off gro off 2>/dev/null; done; true",
    )


def goodput(report: dict) -> float:
    """The median receiver goodput (b/s) over the intervals after the first five."""
    server = report.get("server_output_json") or {}
    ivals = [i["sum"]["bits_per_second"] for i in server.get("intervals", [])][5:]
    if not ivals:
        raise SystemExit(f"testbed-layout: iperf3 reported no receiver intervals: {str(report)[:300]}")
    return statistics.median(ivals)


def iperf(server, client, flows: int, seconds: int) -> dict:
    server("iperf3 -s -1 -D -J -p 5301")
    time.sleep(2)
    out = client(f"iperf3 -c 10.2.0.1 -p 5301 -P {flows} -t {seconds} -J --get-server-output")
    return json.loads(out)


def sweep(layout: str, rates, server, client, flows: int, seconds: int) -> dict[int, float]:
    """Each rate in turn: the shaper set, the flows run; goodput over the shaper's most."""
    res = {}
    for r in rates:
        shape(r)
        got = goodput(iperf(server, client, flows, seconds))
        res[r] = got / (r * 1e6 * PAYLOAD_SHARE)
        print(
            f"{layout:7s} {r:3d} Mb/s: goodput {got / 1e6:.2f} Mb/s, {res[r]:.3f} of the shaper's", flush=True
        )
    return res


def vm_layout(rates, flows, seconds) -> dict[int, float]:
    tv.down()
    tv.up(build=False, dkms=False)
    res = {}
    try:
        ssh("tb-sender", "ethtool -K eth1 tso off gso off 2>/dev/null; true")
        res = sweep(
            "vm", rates, lambda c: ssh("tb-receiver", c), lambda c: ssh("tb-sender", c), flows, seconds
        )
    finally:
        tv.down()
    return res


def tap_layout(rates, flows, seconds) -> dict[int, float]:
    router = next(v for v in tv.VMS if v.group == "routers")
    cmd = tv.qemu_command(router)
    # the data NICs: tap devices instead of the UDP socket links
    for i, a in enumerate(cmd):
        if a.startswith("socket,id=data"):
            dev = a.split(",")[1].removeprefix("id=data")
            cmd[i] = f"tap,id=data{dev},ifname={TAPS[dev][0]},script=no,downscript=no"
    for tap, ns, _, _ in TAPS.values():
        sh("ip", "link", "del", tap, check=False)
        sh("ip", "netns", "del", ns, check=False)
        sh("ip", "tuntap", "add", "dev", tap, "mode", "tap")
    tv.RUN.mkdir(parents=True, exist_ok=True)
    hostkey = " ".join((tv.BUILD / "ssh" / "host_ed25519.pub").read_text().split()[:2])
    (tv.BUILD / "ssh" / "known_hosts").write_text(f"[127.0.0.1]:{router.ssh_port} {hostkey}\n")
    err = open(tv.RUN / "layout-router.err", "wb")  # noqa: SIM115 (QEMU's output for the run)
    proc = subprocess.Popen(
        cmd, stdin=subprocess.DEVNULL, stdout=err, stderr=subprocess.STDOUT, start_new_session=True
    )
    res = {}
    try:
        tv._wait_ssh(router, time.monotonic(), proc)
        for tap, ns, addr, route in TAPS.values():
            sh("ip", "netns", "add", ns)
            sh("ip", "link", "set", tap, "netns", ns)
            sh("ip", "netns", "exec", ns, "ip", "addr", "add", addr, "dev", tap)
            sh("ip", "netns", "exec", ns, "ip", "link", "set", tap, "up")
            sh("ip", "netns", "exec", ns, "ip", "link", "set", "lo", "up")
            sh("ip", "netns", "exec", ns, "ip", "route", "add", *route.split())
            sh(
                "ip",
                "netns",
                "exec",
                ns,
                "ethtool",
                "-K",
                tap,
                "tso",
                "off",
                "gso",
                "off",
                "gro",
                "off",
                check=False,
            )

        def in_ns(ns):
            return lambda c: sh("nice", "-n", "5", "ip", "netns", "exec", ns, "sh", "-c", c)

        in_ns(TAPS["eth1"][1])("ping -c 3 -W 5 10.2.0.1 >/dev/null")
        res = sweep("netns", rates, in_ns(TAPS["eth2"][1]), in_ns(TAPS["eth1"][1]), flows, seconds)
    finally:
        proc.kill()
        proc.wait()
        err.close()
        for tap, ns, _, _ in TAPS.values():
            sh("ip", "netns", "del", ns, check=False)
            sh("ip", "link", "del", tap, check=False)
    return res


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rates", default="5,10,20,40")
    ap.add_argument("--flows", type=int, default=10)
    ap.add_argument("--seconds", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=1)
    a = ap.parse_args()
    rates = [int(x) for x in a.rates.split(",")]
    rows = []
    for k in range(a.rounds):
        for name, fn in (
            (("vm", vm_layout), ("netns", tap_layout))
            if k % 2 == 0
            else (("netns", tap_layout), ("vm", vm_layout))
        ):
            t0 = time.monotonic()
            got = fn(rates, a.flows, a.seconds)
            rows += [(k, name, r, f) for r, f in got.items()]
            print(f"round {k}: {name} layout measured in {time.monotonic() - t0:.0f} s", flush=True)
    print(
        "\n| rate (Mb/s) | "
        + " | ".join(f"{n} (round {k})" for k in range(a.rounds) for n in ("vm", "netns"))
        + " |"
    )
    print("|---|" + "---|" * (2 * a.rounds))
    for r in rates:
        cells = [
            next((f"{f:.3f}" for kk, nn, rr, f in rows if (kk, nn, rr) == (k, n, r)), "-")
            for k in range(a.rounds)
            for n in ("vm", "netns")
        ]
        print(f"| {r} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())

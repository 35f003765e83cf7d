"""Why qlab-emu runs late: its wake-ups, its timers and its CPU, from a kernel trace.

    python3 benchmarks/emu_sched_trace.py TRACE [--comm qlab-emu] [--over-us 100]

TRACE is tracefs's text output (`/sys/kernel/tracing/trace`) with the events
sched_switch, sched_wakeup, hrtimer_start, hrtimer_cancel,
hrtimer_expire_entry, softirq_entry and softirq_exit enabled; benchmarks/emu-sched-trace.sh
records one around emulation runs. An emulation run is invalid when its
departures are late (qlab_mn_run.py's fidelity checks); this says which of
three things made the emulator late, per emulator process (one per run,
and one for the host preparation's check of qlab-emu, in the order they
started):

- woken but not running: the time from sched_wakeup to the switch onto the
  CPU, and what ran on that CPU meanwhile (with qlab-emu at real-time
  priority, a task still in a system call on a kernel that does not preempt
  kernel code, or interrupts and softirqs);
- its sleeps' timers expiring late (hrtimer_expire_entry's `now` against
  the `expires` its ppoll() armed): the CPU did not take the timer
  interrupt on time, as when a virtual CPU is not running;
- on the CPU for a long stretch (its own work, or softirqs run in its
  context).
"""

from __future__ import annotations

import argparse
import collections
import re
import sys
from dataclasses import dataclass, field

LINE = re.compile(
    r"^\s*(?P<task>.+?)-(?P<pid>\d+)\s+\[(?P<cpu>\d+)\]\s+\S+\s+(?P<ts>[\d.]+):\s+(?P<ev>\w+):\s+(?P<rest>.*)$"
)
KV = re.compile(r"(\w+)=(\S+)")
# The tracefs events analyse() reads (benchmarks/emu-sched-trace.sh turns on
# what --events prints).
EVENTS = (
    "sched/sched_switch",
    "sched/sched_wakeup",
    "timer/hrtimer_start",
    "timer/hrtimer_cancel",
    "timer/hrtimer_expire_entry",
    "irq/softirq_entry",
    "irq/softirq_exit",
)


@dataclass
class Emu:
    first_s: float
    wakeups: list[float] = field(default_factory=list)  # wake -> run, s
    late_wakeups: list[tuple[float, float, str]] = field(default_factory=list)  # (at, delay, what ran)
    late_timers: list[tuple[float, float, str]] = field(
        default_factory=list
    )  # (at, lateness, interrupted task)
    stretches: list[float] = field(default_factory=list)  # on-CPU stretches over the threshold, s


@dataclass
class Summary:
    emus: dict[int, Emu] = field(default_factory=dict)
    blockers: collections.Counter = field(default_factory=collections.Counter)  # what held the CPU
    long_softirqs: collections.Counter = field(default_factory=collections.Counter)
    events: int = 0
    malformed: int = 0


def quantile(xs: list[float], q: float) -> float:
    return xs[min(len(xs) - 1, int(q * len(xs)))] if xs else float("nan")


def analyse(lines, comm: str, over_s: float) -> Summary:
    """Every event of the emulator, of what held its CPU, of its sleeps' timers."""
    out = Summary()
    emus, blockers, long_softirqs = out.emus, out.blockers, out.long_softirqs
    woken: dict[int, float] = {}
    running: dict[int, tuple[str, float]] = {}  # cpu -> (comm, since)
    recent: dict[int, collections.deque] = collections.defaultdict(lambda: collections.deque(maxlen=512))
    on_cpu: dict[int, float] = {}
    timers: dict[str, tuple[int, int]] = {}  # hrtimer -> (expires ns, pid)
    softirq_at: dict[int, float] = {}
    for line in lines:
        m = LINE.match(line)
        if not m:
            continue
        out.events += 1
        try:
            ts, cpu, ev, rest, pid = float(m["ts"]), int(m["cpu"]), m["ev"], m["rest"], int(m["pid"])
            if ev == "sched_switch":
                kv = dict(KV.findall(rest.replace(" ==> ", " ")))
                prev_pid, next_pid = int(kv["prev_pid"]), int(kv["next_pid"])
                if cpu in running:
                    recent[cpu].append((running[cpu][0], running[cpu][1], ts))
                running[cpu] = (kv["next_comm"], ts)
                if kv["next_comm"] == comm:
                    emu = emus.setdefault(next_pid, Emu(ts))
                    on_cpu[next_pid] = ts
                    if next_pid in woken:
                        at = woken.pop(next_pid)
                        emu.wakeups.append(ts - at)
                        if ts - at > over_s:
                            who = sorted({c for c, _, end in recent[cpu] if end > at and c != comm}) or [
                                "(nothing)"
                            ]
                            blockers.update(who)
                            emu.late_wakeups.append((at, ts - at, ", ".join(who)))
                if kv["prev_comm"] == comm and prev_pid in on_cpu:
                    stretch = ts - on_cpu.pop(prev_pid)
                    if stretch > over_s:
                        emus[prev_pid].stretches.append(stretch)
            elif ev == "sched_wakeup":
                kv = dict(KV.findall(rest))
                if kv.get("comm") == comm:
                    woken[int(kv["pid"])] = ts
            elif ev == "hrtimer_start":
                if pid in emus:
                    kv = dict(KV.findall(rest))
                    # its own sleeps only: not the timers the network stack arms
                    # in its context (TCP's pacing and compressed-ACK timers)
                    if kv.get("function") == "hrtimer_wakeup":
                        timers[kv["hrtimer"]] = (int(kv["expires"]), pid)
            elif ev == "hrtimer_cancel":
                # a sleep that ended early (an arrival): its timer never fires
                timers.pop(dict(KV.findall(rest)).get("hrtimer", ""), None)
            elif ev == "hrtimer_expire_entry":
                kv = dict(KV.findall(rest))
                armed = timers.pop(kv["hrtimer"], None)
                if armed is not None:
                    late = (int(kv["now"]) - armed[0]) * 1e-9
                    if late > over_s:
                        # what the timer interrupt found on the CPU: idle, or a
                        # task (kernel code can hold interrupts off briefly; an
                        # idle CPU or a user task for milliseconds means the
                        # virtual CPU itself was not running)
                        emus[armed[1]].late_timers.append((ts, late, "idle" if pid == 0 else m["task"]))
            elif ev == "softirq_entry":
                softirq_at[cpu] = ts
            elif ev == "softirq_exit":
                start = softirq_at.pop(cpu, None)
                if start is not None and ts - start > over_s:
                    long_softirqs[m_action(rest)] += 1
        except (KeyError, ValueError):
            out.malformed += 1  # an event without the fields of its kind: skipped, counted
    return out


def m_action(rest: str) -> str:
    m = re.search(r"action=(\w+)", rest)
    return m[1] if m else "?"


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("trace", nargs="?")
    p.add_argument("--events", action="store_true", help="print the tracefs events it reads, and exit")
    p.add_argument("--comm", default="qlab-emu", help="the emulator's command name (default: qlab-emu)")
    p.add_argument("--over-us", type=float, default=100.0, help="what counts as late, us (default: 100)")
    a = p.parse_args()
    if a.events:
        print("\n".join(EVENTS))
        return 0
    if a.trace is None:
        p.error("a trace is required (or --events)")
    over = a.over_us * 1e-6
    try:
        with open(a.trace, errors="replace") as f:
            summary = analyse(f, a.comm, over)
    except OSError as e:
        print(f"emu_sched_trace: {a.trace}: {e.strerror}", file=sys.stderr)
        return 2
    emus, blockers, softirqs, n = summary.emus, summary.blockers, summary.long_softirqs, summary.events
    if summary.malformed:
        print(
            f"emu_sched_trace: {a.trace}: {summary.malformed} of {n} events lack their fields (skipped)",
            file=sys.stderr,
        )
    if not emus:
        print(
            f"emu_sched_trace: {a.trace}: no {a.comm} process in {n} events "
            "(was the trace on during the runs?)",
            file=sys.stderr,
        )
        return 1
    every = sorted(x for e in emus.values() for x in e.wakeups)
    print(f"{n} events, {len(emus)} {a.comm} processes (a run's each, or the host preparation's check)")
    print(
        f"woken -> running: {len(every)} wake-ups, p50 {quantile(every, 0.5) * 1e6:.0f} us, "
        f"p99 {quantile(every, 0.99) * 1e6:.0f}, p99.9 {quantile(every, 0.999) * 1e6:.0f}, "
        f"max {every[-1] * 1e6:.0f}"
    )
    print(
        f"what ran while {a.comm} waited over {a.over_us:g} us: "
        + (", ".join(f"{c} {k}" for c, k in blockers.most_common(8)) or "nothing")
    )
    found = collections.Counter(who for e in emus.values() for _, _, who in e.late_timers)
    print(
        f"its sleeps' timers that fired over {a.over_us:g} us late: {sum(found.values())}; the CPU was then: "
        + (", ".join(f"{c} {k}" for c, k in found.most_common(6)) or "-")
    )
    print(
        f"softirqs over {a.over_us:g} us: "
        + (", ".join(f"{c} {k}" for c, k in softirqs.most_common()) or "none")
    )
    print(
        f"per process (over {a.over_us:g} us: late wake-ups, late sleeps, on-CPU stretches; "
        "the worst of each, us):"
    )
    for pid, e in sorted(emus.items(), key=lambda kv: kv[1].first_s):
        worst_w = max((d for _, d, _ in e.late_wakeups), default=0.0)
        worst_t = max((d for _, d, _ in e.late_timers), default=0.0)
        worst_s = max(e.stretches, default=0.0)
        print(
            f"  {pid} from {e.first_s:.1f} s: {len(e.late_wakeups)} ({worst_w * 1e6:.0f}), "
            f"{len(e.late_timers)} ({worst_t * 1e6:.0f}), {len(e.stretches)} ({worst_s * 1e6:.0f})"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""benchmarks/emu_sched_trace.py: what made the emulator late, from a tracefs text trace."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "benchmarks" / "emu_sched_trace.py"


def load():
    spec = importlib.util.spec_from_file_location("emu_sched_trace", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    assert spec.loader
    sys.modules[spec.name] = module  # its dataclass looks its module up
    spec.loader.exec_module(module)
    return module


def ev(task: str, pid: int, cpu: int, ts: float, name: str, rest: str) -> str:
    return f"{task:>16}-{pid:<7} [{cpu:03d}] d..2. {ts:.6f}: {name}: {rest}\n"


def switch(cpu, ts, prev, prev_pid, nxt, next_pid):
    return ev(
        prev,
        prev_pid,
        cpu,
        ts,
        "sched_switch",
        f"prev_comm={prev} prev_pid={prev_pid} prev_prio=120 prev_state=S ==> "
        f"next_comm={nxt} next_pid={next_pid} next_prio=49",
    )


def arm(ts, timer, function, expires):
    return ev(
        "qlab-emu",
        10,
        1,
        ts,
        "hrtimer_start",
        f"hrtimer={timer} function={function} expires={expires} mode=ABS",
    )


def fire(task, pid, cpu, ts, timer, function, now):
    return ev(task, pid, cpu, ts, "hrtimer_expire_entry", f"hrtimer={timer} function={function} now={now}")


TRACE = [
    "# tracer: nop\n",
    # the emulator (pid 10) runs on CPU 1, then sleeps; a sender (python3) takes the CPU
    switch(1, 1.000000, "swapper/1", 0, "qlab-emu", 10),
    arm(1.000010, "aa", "hrtimer_wakeup", 1000100000),
    # a TCP timer armed in its context: not one of its sleeps
    arm(1.000011, "tt", "tcp_compressed_ack_kick", 1000000000),
    # a sleep that ends early (an arrival): cancelled, never judged
    arm(1.000012, "cc", "hrtimer_wakeup", 1000050000),
    ev("qlab-emu", 10, 1, 1.000013, "hrtimer_cancel", "hrtimer=cc"),
    switch(1, 1.000020, "qlab-emu", 10, "python3", 20),
    # its timer fires 2 ms late, on a CPU running python3; it waits 300 us more to run
    fire("python3", 20, 1, 1.002100, "aa", "hrtimer_wakeup", 1002100000),
    ev("python3", 20, 1, 1.002101, "sched_wakeup", "comm=qlab-emu pid=10 prio=49 target_cpu=001"),
    ev("<idle>", 0, 1, 1.002200, "softirq_entry", "vec=3 [action=NET_RX]"),
    ev("<idle>", 0, 1, 1.002350, "softirq_exit", "vec=3 [action=NET_RX]"),
    switch(1, 1.002401, "python3", 20, "qlab-emu", 10),
    # a stale expiry of the cancelled timer's address must not count
    fire("<idle>", 0, 0, 1.003000, "cc", "hrtimer_wakeup", 1003000000),
    fire("<idle>", 0, 0, 1.003001, "tt", "tcp_compressed_ack_kick", 1003001000),
    switch(1, 1.003000, "qlab-emu", 10, "swapper/1", 0),
]


def test_late_wakeup_timer_and_softirq_are_attributed():
    mod = load()
    out = mod.analyse(TRACE, "qlab-emu", 100e-6)
    emus, blockers, softirqs = out.emus, out.blockers, out.long_softirqs
    assert out.events == len(TRACE) - 1 and out.malformed == 0
    assert list(emus) == [10]
    emu = emus[10]
    # woken at 1.002101, running at 1.002401: 300 us, behind python3
    assert len(emu.late_wakeups) == 1
    at, delay, who = emu.late_wakeups[0]
    assert abs(delay - 300e-6) < 1e-9 and who == "python3"
    assert blockers == {"python3": 1}
    # only its own sleep, 2 ms late, found python3 on the CPU; the cancelled
    # sleep and the TCP timer are not judged
    assert [(round(late * 1e6), what) for _, late, what in emu.late_timers] == [(2000, "python3")]
    assert softirqs == {"NET_RX": 1}
    # 1.002401 -> 1.003000 on the CPU: one stretch over 100 us
    assert len(emu.stretches) == 1


def test_a_trace_without_the_emulator_says_so(tmp_path):
    trace = tmp_path / "trace"
    trace.write_text("# tracer: nop\n" + switch(0, 1.0, "swapper/0", 0, "bash", 5))
    out = subprocess.run([sys.executable, str(SCRIPT), str(trace)], capture_output=True, text=True)
    assert out.returncode == 1
    assert "no qlab-emu process in 1 events" in out.stderr
    missing = subprocess.run(
        [sys.executable, str(SCRIPT), str(tmp_path / "nope")], capture_output=True, text=True
    )
    assert missing.returncode == 2 and "No such file" in missing.stderr
    assert "Traceback" not in out.stderr + missing.stderr


def test_the_summary_prints_per_process_lines(tmp_path):
    trace = tmp_path / "trace"
    trace.write_text("".join(TRACE))
    out = subprocess.run(
        [sys.executable, str(SCRIPT), str(trace)], capture_output=True, text=True, check=True
    )
    assert "1 qlab-emu processes" in out.stdout
    assert "python3 1" in out.stdout
    assert "  10 from 1.0 s: 1 (300), 1 (2000), 1 (599)" in out.stdout


def test_a_corrupt_event_is_counted_and_skipped_not_a_traceback(tmp_path):
    broken = [
        ev("python3", 20, 1, 1.5, "sched_switch", "prev_comm=python3 (cut off)"),
        ev("python3", 20, 1, 1.6, "hrtimer_expire_entry", "hrtimer=aa function=hrtimer_wakeup now=soon"),
        "python3-20 [001] d..2. 1.2.3: sched_wakeup: comm=qlab-emu pid=10\n",
    ]
    out = load().analyse(TRACE[:3] + broken + TRACE[3:], "qlab-emu", 100e-6)
    assert out.malformed == 3 and len(out.emus[10].late_wakeups) == 1
    trace = tmp_path / "trace"
    trace.write_text("".join(TRACE[:3] + broken + TRACE[3:]))
    run = subprocess.run([sys.executable, str(SCRIPT), str(trace)], capture_output=True, text=True)
    assert run.returncode == 0 and f"3 of {len(TRACE) + 2} events lack their fields (skipped)" in run.stderr
    assert "Traceback" not in run.stderr


def test_the_events_it_turns_on_are_the_events_it_reads():
    """emu-sched-trace.sh enables what --events prints: every event name
    analyse() dispatches on, and nothing else."""
    mod = load()
    listed = subprocess.run(
        [sys.executable, str(SCRIPT), "--events"], capture_output=True, text=True, check=True
    )
    assert listed.stdout.split() == list(mod.EVENTS)
    read = set(re.findall(r'ev == "(\w+)"', SCRIPT.read_text()))
    assert read == {e.split("/")[1] for e in mod.EVENTS}
    assert "--events" in (ROOT / "benchmarks" / "emu-sched-trace.sh").read_text()

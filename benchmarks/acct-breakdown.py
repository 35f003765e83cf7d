"""Where a reproduction's CPU went, from BSD process accounting.

    touch /var/log/account/pacct && accton /var/log/account/pacct
    make reproduce CORES=2
    accton off
    python3 benchmarks/acct-breakdown.py /var/log/account/pacct [--comm R]

Reads every finished process's record (`dump-acct`, Debian's `acct`
package: command name, user and system CPU in centiseconds, pid, parent
pid) and sums the CPU by part, as docs/benchmarks.md ("Orchestration")
counts it:

- simulators: `qlab-ns3-run` (and its wireless build), ns-2's `ns`;
- emulation: the Mininet run helper (the parent of `qlab-emu` and `mn`)
  and everything below it: `qlab-emu`, `mn`, the hosts' senders;
- R: every `R` process (the analyses, the benchmark's, the pages);
- qlab's Python in the rules: `python3`/`qlab` processes below Snakemake
  (run-job, collect, render, provenance ...), Ansible's own left out;
- Ansible: `ansible-playbook` and everything below it;
- the rest (Snakemake, pandoc, compilers, shells ...).

Orchestration is everything but simulators and emulation. Parents are
followed by pid, so a pid the kernel reused can misattribute a process;
the accounting file should cover one reproduction and nothing else.
"""

from __future__ import annotations

import argparse
import collections
import shutil
import subprocess
import sys
from pathlib import Path

SIMULATORS = ("qlab-ns3-run", "ns")
PARTS = ("simulators", "emulation", "R", "qlab's Python in the rules", "Ansible")


def records(path: Path) -> dict[int, tuple[str, float, int]]:
    """pid -> (command, CPU seconds, parent pid), from dump-acct."""
    tool = shutil.which("dump-acct")
    if tool is None:
        sys.exit("acct-breakdown: dump-acct not found (apt-get install acct)")
    out = subprocess.run([tool, str(path)], capture_output=True, text=True, check=False)
    if out.returncode != 0:
        sys.exit(f"acct-breakdown: dump-acct {path}: {out.stderr.strip()}")
    procs = {}
    for line in out.stdout.splitlines():
        f = [x.strip() for x in line.split("|")]
        if len(f) < 11:
            continue
        procs[int(f[9])] = (f[0], (float(f[2]) + float(f[3])) / 100, int(f[10]))
    return procs


def ancestors(procs: dict[int, tuple[str, float, int]], pid: int) -> list[int]:
    pids: list[int] = []
    seen = {pid}
    while True:
        pid = procs[pid][2]
        if pid not in procs or pid in seen:
            return pids
        seen.add(pid)
        pids.append(pid)


def part(comm: str, above: list[str], emulating: bool) -> str:
    if comm.startswith(SIMULATORS[0]) or comm == SIMULATORS[1]:
        return "simulators"
    if emulating:
        return "emulation"
    if comm == "ansible-playboo" or "ansible-playboo" in above:  # comm is 15 characters
        return "Ansible"
    if comm == "R":
        return "R"
    if comm in ("python3", "python", "qlab") and "snakemake" in above:
        return "qlab's Python in the rules"
    return "rest:" + comm


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("pacct", type=Path)
    ap.add_argument("--comm", help="also list this command's CPU by its first ancestors")
    a = ap.parse_args()
    procs = records(a.pacct)
    cpu: collections.Counter[str] = collections.Counter()
    by_parents: collections.Counter[str] = collections.Counter()
    # the Mininet run helper (qlab_mn_run.py, a python3 below Ansible's
    # command module): the parent of qlab-emu and mn; it and all it starts
    # (the hosts' senders and receivers) are the emulation
    helpers = {ppid for comm, _, ppid in procs.values() if comm in ("qlab-emu", "mn")}
    for pid, (comm, seconds, _) in procs.items():
        up = ancestors(procs, pid)
        above = [procs[p][0] for p in up]
        emulating = pid in helpers or any(p in helpers for p in up)
        cpu[part(comm, above, emulating)] += seconds
        if comm == a.comm:
            by_parents[" < ".join(above[:3])] += seconds
    total = sum(cpu.values())
    rest = {k[5:]: v for k, v in cpu.items() if k.startswith("rest:")}
    print("| part | CPU-s | share |\n|---|---|---|")
    for name in PARTS:
        print(f"| {name} | {cpu[name]:.1f} | {100 * cpu[name] / total:.1f}% |")
    largest = ", ".join(f"{k} {v:.1f}" for k, v in sorted(rest.items(), key=lambda kv: -kv[1])[:5])
    print(f"| the rest ({largest}) | {sum(rest.values()):.1f} | {100 * sum(rest.values()) / total:.1f}% |")
    orchestration = total - cpu["simulators"] - cpu["emulation"]
    print(f"| **orchestration** | **{orchestration:.1f}** | **{100 * orchestration / total:.1f}%** |")
    print(f"| all processes | {total:.1f} | |")
    for chain, seconds in by_parents.most_common(10):
        print(f"{seconds:8.1f}  {a.comm} < {chain}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

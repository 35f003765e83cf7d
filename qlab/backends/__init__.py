"""Backends: a registry mapping backend names to runner classes.

A runner turns one job description (docs/jobs.md) into plain trace tables
(``flows.csv``, ``queues.csv``, optionally ``packets.csv``) plus
``runner.json`` in a work directory; ``qlab.runjob`` does the rest (gzip,
run.json, validation, atomic placement), identically for every backend.
"""

from __future__ import annotations

from qlab.backends.base import Backend, BackendError
from qlab.backends.mininet import MininetBackend
from qlab.backends.ns3 import Ns3Backend

BACKENDS: dict[str, type[Backend]] = {
    Ns3Backend.name: Ns3Backend,
    MininetBackend.name: MininetBackend,
}


def get(name: str) -> Backend:
    try:
        return BACKENDS[name]()
    except KeyError:
        raise BackendError(f"unknown backend {name!r} (known: {', '.join(sorted(BACKENDS))})") from None


__all__ = ["BACKENDS", "Backend", "BackendError", "get"]

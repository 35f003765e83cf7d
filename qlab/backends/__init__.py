"""Backends: the one registry of backend names (qlab.backends.BACKENDS).

The scenario and workflow schemas, the workflow (threads, images), the
Docker runtime and the report read backend names from here; a test checks
the schemas against it. A new backend is its runner, a module here with its
Backend subclass registered below, and its image (README, "Adding a backend").
"""

from __future__ import annotations

from qlab.backends.base import Backend, BackendError
from qlab.backends.mininet import MininetBackend
from qlab.backends.ns3 import Ns3Backend

BACKENDS: dict[str, type[Backend]] = {
    Ns3Backend.name: Ns3Backend,
    MininetBackend.name: MininetBackend,
}
# What a scenario runs on when it does not say.
DEFAULT = Ns3Backend.name


def names() -> list[str]:
    return list(BACKENDS)


def get(name: str) -> Backend:
    try:
        return BACKENDS[name]()
    except KeyError:
        raise BackendError(f"unknown backend {name!r} (known: {', '.join(sorted(BACKENDS))})") from None


def available() -> tuple[list[str], dict[str, str]]:
    """The backends this machine runs natively, and why the others are left out."""
    ok, why = [], {}
    for name in BACKENDS:
        reason = get(name).unavailable()
        if reason is None:
            ok.append(name)
        else:
            why[name] = reason
    return ok, why


__all__ = ["BACKENDS", "DEFAULT", "Backend", "BackendError", "available", "get", "names"]

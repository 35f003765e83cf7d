"""Backends: the one registry of backend names (qlab.backends.BACKENDS).

Every module of this package that defines a Backend subclass with a `name`
is a backend: a new backend is its runner, its module here and its image
(README, "Adding a backend"); nothing else lists it. The scenario and
workflow schemas, the workflow (threads, images), the Docker runtime and the
report read backend names from here; a test checks the schemas against it.
"""

from __future__ import annotations

import importlib
import pkgutil

from qlab.backends.base import Backend, BackendError

# What a scenario runs on when it does not say; listed first.
DEFAULT = "ns3"


def _discover() -> dict[str, type[Backend]]:
    found: dict[str, type[Backend]] = {}
    for info in pkgutil.iter_modules(__path__):
        if info.name == "base":
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        for obj in vars(module).values():
            if (
                isinstance(obj, type)
                and issubclass(obj, Backend)
                and obj is not Backend
                and obj.name
                and obj.__module__ == module.__name__
            ):
                if obj.name in found:
                    raise RuntimeError(f"backend {obj.name!r} is defined twice ({module.__name__})")
                found[obj.name] = obj
    return dict(sorted(found.items(), key=lambda kv: (kv[0] != DEFAULT, kv[0])))


BACKENDS: dict[str, type[Backend]] = _discover()


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

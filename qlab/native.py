"""ns-3's own queue discs, the plan's queue kinds ``ns3-*`` (the ns3 backend only).

Each is described once, in the job contract (``docs/job.schema.json``,
``$defs/queue_ns3-<name>``): its kind, its parameters with their types,
ranges and meaning. qlab reads them from there: ``qlab.plan.schema`` composes
a rule per kind into ``$defs/queue``, a scenario's series (or a graph's link
queue) may name them, and ``typed_params`` checks a scenario's values. The
ns-3 runner maps each kind to its TypeId and attributes
(``disciplines/ns3/qlab-plan.cc``); every other backend refuses them.

Unlike the core's disciplines they have no defaults in qlab: a scenario
gives every parameter (``scenarios/bench/defaults.yaml`` states the RFC
values), so nothing a run depends on is hidden in the runner.
"""

from __future__ import annotations

import functools
import json
import math
from typing import Any

from qlab import paths
from qlab.core import ParamError

# Every kind of ns-3's own queue discs is named ns3-<name>; no discipline of
# the core is (its names are lower-case letters and digits), so a runner that
# cannot import qlab (ns-2's) tells them apart by the prefix alone.
PREFIX = "ns3-"
_DEF = "queue_"


@functools.cache
def _defs() -> dict[str, Any]:
    doc = json.loads((paths.ROOT / "docs" / "job.schema.json").read_text(encoding="utf-8"))
    return doc["$defs"]


def kinds() -> list[str]:
    """The ns3-* queue kinds, in the order the job schema lists them."""
    return [name[len(_DEF) :] for name in _defs() if name.startswith(_DEF + PREFIX)]


def is_native(kind: str) -> bool:
    return kind in kinds()


def definition(kind: str) -> dict[str, Any]:
    """The job schema's $defs entry of a kind (its queue object)."""
    return _defs()[_DEF + kind]


def param_schemas(kind: str) -> dict[str, dict[str, Any]]:
    """Each parameter's schema, its $ref resolved, in the schema's order."""
    out = {}
    for name, spec in definition(kind)["properties"]["params"]["properties"].items():
        ref = spec.get("$ref")
        if ref:
            spec = {**_defs()[ref.rsplit("/", 1)[1]], **{k: v for k, v in spec.items() if k != "$ref"}}
        out[name] = spec
    return out


def _typed(name: str, spec: dict[str, Any], value: Any) -> Any:
    kind = spec["type"]
    lo, hi = spec.get("minimum"), spec.get("maximum")
    if kind == "boolean":
        if value in (True, 1, "1", "true") and not isinstance(value, float):
            return True
        if value in (False, 0, "0", "false") and not isinstance(value, float):
            return False
        raise ParamError(f"{name}: expected true or false, got {json.dumps(value)}")
    what = f"{'an integer' if kind == 'integer' else 'a number'} between {lo} and {hi}"
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ParamError(f"{name}: expected {what}, got {json.dumps(value)}")
    if kind == "integer":
        if isinstance(value, float):
            if not value.is_integer():
                raise ParamError(f"{name}: expected {what}, got {json.dumps(value)}")
            value = int(value)
    elif not math.isfinite(value):
        raise ParamError(f"{name}: expected {what}, got {value}")
    if not lo <= value <= hi:
        raise ParamError(f"{name}: expected {what}, got {json.dumps(value)}")
    return value


def typed_params(kind: str, values: dict[str, Any]) -> dict[str, Any]:
    """Every parameter of an ns3-* kind, typed as the plan carries it;
    ParamError naming the parameter (unknown, missing, or a bad value)."""
    table = param_schemas(kind)
    unknown = sorted(set(values) - set(table))
    if unknown:
        raise ParamError(f"unknown parameter {unknown[0]!r} for {kind} (valid: {', '.join(table)})")
    missing = [name for name in table if name not in values]
    if missing:
        raise ParamError(
            f"{missing[0]}: missing; {kind} is ns-3's own queue disc and qlab gives it no defaults: "
            f"give every parameter ({', '.join(table)}; docs/job.schema.json, $defs/queue_{kind})"
        )
    return {name: _typed(name, spec, values[name]) for name, spec in table.items()}

"""The discipline core's registry, as Python sees it.

``disciplines/core/registry.json`` is ``qcore-replay --describe``: every
discipline of the core with its parameters (kind, range, default, unit).
It is committed, so a plan's parameters can be typed before anything is
built; ``tests/test_plan.py`` checks that it matches the core.

Typed values (docs/jobs.md): u32/u64 an integer, ppm a number with at most
six decimals, enum one of the choices, bool true/false, u32_list a list of
integers. ``typed_params`` turns a scenario's values (numbers or the core's
text syntax) into them and fills in every default; the cross-parameter
checks are the core's own (``qlab validate`` asks ``qcore-replay``).
"""

from __future__ import annotations

import decimal
import functools
import json
from typing import Any

from qlab import paths

REGISTRY = paths.ROOT / "disciplines" / "core" / "registry.json"
# The queue kind a plan may hold besides the core's disciplines and ns-3's
# own queue discs (qlab.native).
LOSSLESS = "lossless"


class ParamError(Exception):
    """A parameter value the core's table rejects (the message names it)."""


@functools.cache
def registry() -> dict[str, Any]:
    return json.loads(REGISTRY.read_text(encoding="utf-8"))


def disciplines() -> dict[str, dict[str, Any]]:
    return {d["name"]: d for d in registry()["disciplines"]}


def names() -> list[str]:
    return [d["name"] for d in registry()["disciplines"]]


def _ppm_text(ppm: int) -> str:
    whole, frac = divmod(ppm, 1_000_000)
    return str(whole) if not frac else f"{whole}.{frac:06d}".rstrip("0")


def _range(p: dict[str, Any]) -> str:
    if p["kind"] == "ppm":
        return f"{_ppm_text(p['min'])} and {_ppm_text(p['max'])}"
    return f"{p['min']} and {p['max']}"


def _bad(p: dict[str, Any], value: Any, what: str) -> ParamError:
    return ParamError(f"{p['name']}: expected {what} ({p['unit']}), got {json.dumps(value)}")


def _integer(p: dict[str, Any], value: Any) -> int:
    if isinstance(value, bool):
        raise _bad(p, value, f"an integer between {_range(p)}")
    if isinstance(value, str) and value.isdigit():
        value = int(value)
    elif isinstance(value, float) and value.is_integer():
        value = int(value)
    if not isinstance(value, int) or not p["min"] <= value <= p["max"]:
        raise _bad(p, value, f"an integer between {_range(p)}")
    return value


def _ppm(p: dict[str, Any], value: Any) -> int | float:
    what = f"a decimal with at most 6 places between {_range(p)}"
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise _bad(p, value, what)
    try:
        # repr: the shortest digits that read back as the same float (0.05, not 0.05000000000000000277)
        d = decimal.Decimal(value if isinstance(value, str) else repr(value))
    except decimal.InvalidOperation:
        raise _bad(p, value, what) from None
    if not d.is_finite() or d < 0 or (d * 1_000_000) != (d * 1_000_000).to_integral_value():
        raise _bad(p, value, what)
    ppm = int(d * 1_000_000)
    if not p["min"] <= ppm <= p["max"]:
        raise _bad(p, value, what)
    return ppm // 1_000_000 if ppm % 1_000_000 == 0 else ppm / 1_000_000


def typed_value(p: dict[str, Any], value: Any) -> Any:
    """One parameter's value in the plan's typed form; ParamError naming it."""
    kind = p["kind"]
    if kind in ("u32", "u64"):
        return _integer(p, value)
    if kind == "ppm":
        return _ppm(p, value)
    if kind == "enum":
        if value not in p["choices"]:
            raise _bad(p, value, f"one of {', '.join(p['choices'])}")
        return value
    if kind == "bool":
        if value in (True, 1, "1", "true"):
            return True
        if value in (False, 0, "0", "false"):
            return False
        raise _bad(p, value, "true or false (1 or 0)")
    if kind == "u32_list":
        items = value.split(":") if isinstance(value, str) else value if isinstance(value, list) else [value]
        what = f"up to 8 integers a:b:... each between {_range(p)}"
        if not 1 <= len(items) <= registry()["max_bands"]:
            raise _bad(p, value, what)
        out = []
        for item in items:
            try:
                out.append(_integer(p, item))
            except ParamError:
                raise _bad(p, value, what) from None
        return out
    raise ParamError(f"{p['name']}: unknown parameter kind {kind!r} in {REGISTRY}")


def typed_params(kind: str, values: dict[str, Any]) -> dict[str, Any]:
    """Every parameter of discipline `kind`: the given values typed, the rest
    the core's defaults. Raises ParamError (unknown discipline or parameter,
    bad value)."""
    disc = disciplines().get(kind)
    if disc is None:
        raise ParamError(f"unknown discipline {kind!r} (known: {', '.join(names())})")
    table = {p["name"]: p for p in disc["params"]}
    unknown = sorted(set(values) - set(table))
    if unknown:
        raise ParamError(f"unknown parameter {unknown[0]!r} for {kind} (valid: {', '.join(table) or 'none'})")
    return {name: typed_value(p, values.get(name, p["default"])) for name, p in table.items()}


def param_text(p: dict[str, Any], value: Any) -> str:
    """A typed value in the core's text syntax (qcore-replay --param)."""
    if p["kind"] == "bool":
        return "1" if value else "0"
    if p["kind"] == "u32_list":
        return ":".join(str(v) for v in value)
    if p["kind"] == "ppm":
        return _ppm_text(round(decimal.Decimal(repr(value)) * 1_000_000))
    return str(value)


def params_text(kind: str, params: dict[str, Any]) -> list[tuple[str, str]]:
    table = {p["name"]: p for p in disciplines()[kind]["params"]}
    return [(name, param_text(table[name], v)) for name, v in params.items()]


def param_schema(p: dict[str, Any]) -> dict[str, Any]:
    """The JSON Schema of one typed parameter (composed into docs/job.schema.json)."""
    kind = p["kind"]
    desc = f"{p['help']} [{p['unit']}; default {p['default']}]"
    if kind in ("u32", "u64"):
        return {"type": "integer", "minimum": p["min"], "maximum": p["max"], "description": desc}
    if kind == "ppm":
        return {
            "type": "number",
            "minimum": p["min"] / 1e6,
            "maximum": p["max"] / 1e6,
            "description": desc + " (at most 6 decimals)",
        }
    if kind == "enum":
        return {"enum": p["choices"], "description": desc}
    if kind == "bool":
        return {"type": "boolean", "description": desc}
    return {
        "type": "array",
        "minItems": 1,
        "maxItems": registry()["max_bands"],
        "items": {"type": "integer", "minimum": p["min"], "maximum": p["max"]},
        "description": desc,
    }

"""Scenario files: loading with inheritance, validation, expansion into jobs.

A scenario is YAML under ``scenarios/<paper>/``. A file may ``extends:``
another file of the same directory; mappings merge deeply (the extending file
wins) and lists are replaced. The merged document is validated against
``scenarios/schema.json`` and then by the semantic checks below. Every problem
is reported as one line ``FILE: FIELD.PATH: what was expected``, naming the
file that set the offending value.
"""

from __future__ import annotations

import copy
import decimal
import itertools
import json
import math
import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jsonschema
import yaml

from qlab import PROFILES, paths

SAFE_TOKEN = re.compile(r"^[A-Za-z0-9.+-]{1,64}$")
# a directory name of a run's results path (paper, scenario, backend, point, seed-N)
SAFE_PART = re.compile(r"(?!\.)[A-Za-z0-9_.+-]{1,200}")


class ScenarioError(Exception):
    """One or more user mistakes in scenario files, one line each."""

    def __init__(self, problems: list[str]):
        super().__init__("\n".join(problems))
        self.problems = problems


@dataclass
class Scenario:
    """A validated, merged scenario file (not yet specialised to a profile)."""

    id: str  # "<paper>/<name>"
    file: Path
    doc: dict[str, Any]
    origins: dict[str, Path] = field(repr=False, default_factory=dict)
    files: list[Path] = field(default_factory=list)  # this file and its ancestors
    checked: set[tuple[str, str]] = field(default_factory=set, repr=False)  # check_resolved done

    @property
    def paper(self) -> str:
        return self.id.split("/")[0]

    @property
    def name(self) -> str:
        return self.id.split("/")[1]

    @property
    def abstract(self) -> bool:
        return bool(self.doc.get("abstract", False))


@dataclass(frozen=True)
class Job:
    scenario: str
    backend: str
    series: str
    point: str
    seed: int
    spec: dict[str, Any]  # the job description (docs/jobs.md)

    @property
    def rel_dir(self) -> str:
        return f"{self.scenario}/{self.backend}/{self.point}/seed-{self.seed}"


# ---------------------------------------------------------------------------
# loading


def display_path(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


# Bounds on what a scenario file may be: anything larger is a mistake or an
# attack (a YAML bomb expands a few lines into billions of nodes).
MAX_FILE_BYTES = 1 << 20
MAX_DEPTH = 32
MAX_NODES = 100_000  # after expanding aliases
MAX_EXTENDS = 16


class _YAMLRefused(yaml.YAMLError):
    def __init__(self, problem: str, mark: Any = None):
        super().__init__(problem)
        self.problem = problem
        self.problem_mark = mark


class StrictLoader(yaml.SafeLoader):
    """YAML as scenarios need it: mappings with unique string keys, scalars
    (no dates, sets, binary or ordered-pair tags), nesting at most
    MAX_DEPTH deep and at most MAX_NODES nodes once aliases are expanded."""

    def __init__(self, stream: str):
        super().__init__(stream)
        self._depth = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                raise _YAMLRefused(f"nested more than {MAX_DEPTH} levels deep", self.peek_event().start_mark)
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        if isinstance(node, yaml.MappingNode):
            self.flatten_mapping(node)
        seen: set[str] = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=True)
            if not isinstance(key, str):
                raise _YAMLRefused(
                    f"keys must be text; got {_type_name(key)} {key!r} (quote it)", key_node.start_mark
                )
            if key in seen:
                raise _YAMLRefused(f"duplicate key {key!r}", key_node.start_mark)
            seen.add(key)
        return super().construct_mapping(node, deep=deep)

    def construct_yaml_int(self, node: yaml.ScalarNode) -> int:
        try:
            return super().construct_yaml_int(node)
        except ValueError:
            raise _YAMLRefused("integer too large", node.start_mark) from None

    def refuse_tag(self, node: yaml.Node) -> None:
        raise _YAMLRefused(
            f"unsupported YAML type {node.tag} (scenarios hold text, numbers, booleans, lists and mappings)",
            node.start_mark,
        )


StrictLoader.add_constructor("tag:yaml.org,2002:int", StrictLoader.construct_yaml_int)
for _tag in ("timestamp", "set", "binary", "omap", "pairs"):
    StrictLoader.add_constructor(f"tag:yaml.org,2002:{_tag}", StrictLoader.refuse_tag)
# dates stay text (2024-01-01 is not a date in a scenario)
StrictLoader.yaml_implicit_resolvers = {
    ch: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for ch, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
# unknown tags (!!python/object, !custom) are refused too
StrictLoader.add_constructor(None, StrictLoader.refuse_tag)


def _expanded_size(node: yaml.Node, memo: dict[int, int]) -> int:
    """Nodes in the document once every alias is expanded (shared nodes
    counted once per reference), computed without expanding anything."""
    key = id(node)
    if key not in memo:
        memo[key] = 0  # an alias cycle (a node inside itself) counts once
        if isinstance(node, yaml.MappingNode):
            size = 1 + sum(_expanded_size(k, memo) + _expanded_size(v, memo) for k, v in node.value)
        elif isinstance(node, yaml.SequenceNode):
            size = 1 + sum(_expanded_size(v, memo) for v in node.value)
        else:
            size = 1
        memo[key] = min(size, MAX_NODES + 1)
    return memo[key]


def parse_yaml(text: str, where: str) -> Any:
    """A scenario document from text, strictly (StrictLoader); ScenarioError naming
    the line."""
    loader = StrictLoader(text)
    try:
        node = loader.get_single_node()
        if node is not None and _expanded_size(node, {}) > MAX_NODES:
            raise _YAMLRefused(
                f"more than {MAX_NODES} values once aliases are expanded (a YAML bomb?)", node.start_mark
            )
        return loader.construct_document(node) if node is not None else None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise ScenarioError([f"{where}: {at}not valid YAML: {problem}"]) from None
    except RecursionError:
        raise ScenarioError([f"{where}: not valid YAML: nested too deeply"]) from None
    finally:
        loader.dispose()


def _read_yaml(path: Path) -> dict[str, Any]:
    where = display_path(path)
    try:
        with path.open("rb") as fh:
            raw = fh.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise ScenarioError([f"{where}: cannot read: {exc.strerror}"]) from None
    if len(raw) > MAX_FILE_BYTES:
        raise ScenarioError([f"{where}: larger than {MAX_FILE_BYTES // 1024} KiB; not a scenario"])
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise ScenarioError([f"{where}: line {line}: not UTF-8 text (byte 0x{raw[exc.start]:02x})"]) from None
    doc = parse_yaml(text, where)
    if doc is None:
        doc = {}
    if not isinstance(doc, dict):
        raise ScenarioError([f"{where}: (top level): expected a mapping of fields"])
    return doc


def _leaf_paths(doc: Any, prefix: str = "") -> Iterator[str]:
    if isinstance(doc, dict):
        for k, v in doc.items():
            p = f"{prefix}.{k}" if prefix else str(k)
            yield p
            yield from _leaf_paths(v, p)


def deep_merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    """Merge ``over`` into a copy of ``base``: mappings recursively, lists of
    assumptions accumulate, all else is replaced; a null value removes an
    inherited key (e.g. a series)."""
    out = copy.deepcopy(base)
    for k, v in over.items():
        if v is None and k in out:
            del out[k]
        elif k == "assumptions" and isinstance(v, list) and isinstance(out.get(k), list):
            out[k] = merge_assumptions(out[k], v)
        elif isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = deep_merge(out[k], v)
        else:
            out[k] = copy.deepcopy(v)
    return out


def merge_assumptions(base: list[Any], over: list[Any]) -> list[Any]:
    """Assumptions accumulate down the inheritance chain; an entry with the
    same id as an inherited one replaces it in place."""
    ids = {a.get("id"): i for i, a in enumerate(base) if isinstance(a, dict)}
    out = copy.deepcopy(base)
    for a in over:
        i = ids.get(a.get("id")) if isinstance(a, dict) else None
        if i is None:
            out.append(copy.deepcopy(a))
        else:
            out[i] = copy.deepcopy(a)
    return out


def _load_chain(path: Path, seen: tuple[Path, ...] = ()) -> tuple[dict, dict[str, Path], list[Path]]:
    path = path.resolve()
    if path in seen:
        chain = " -> ".join(display_path(p) for p in (*seen, path))
        raise ScenarioError([f"{display_path(path)}: extends: circular inheritance ({chain})"])
    doc = _read_yaml(path)
    if not isinstance(doc.get("abstract", False), bool):
        raise ScenarioError(
            [
                f"{display_path(path)}: abstract: expected true or false, "
                f"got {_type_name(doc['abstract'])} {doc['abstract']!r}"
            ]
        )
    origins = {p: path for p in _leaf_paths(doc)}
    parent_name = doc.get("extends")
    if parent_name is None:
        return doc, origins, [path]
    if not isinstance(parent_name, str) or not re.fullmatch(r"[A-Za-z0-9_.-]+\.yaml", parent_name):
        raise ScenarioError(
            [
                f"{display_path(path)}: extends: expected a file name in the same directory "
                f"(letters, digits, '_.-', ending in .yaml), got {parent_name!r}"
            ]
        )
    parent_path = path.parent / parent_name
    if not parent_path.is_file():
        raise ScenarioError([f"{display_path(path)}: extends: no such file {display_path(parent_path)}"])
    if parent_path.resolve().parent != path.parent:
        raise ScenarioError(
            [
                f"{display_path(path)}: extends: {parent_name} leads outside "
                f"{display_path(path.parent)} (a symbolic link?)"
            ]
        )
    if len(seen) + 1 >= MAX_EXTENDS:
        raise ScenarioError([f"{display_path(path)}: extends: more than {MAX_EXTENDS} files deep"])
    parent_doc, parent_origins, files = _load_chain(parent_path, (*seen, path))
    merged = deep_merge(parent_doc, {k: v for k, v in doc.items() if k != "extends"})
    merged.pop("abstract", None)
    if "abstract" in doc:
        merged["abstract"] = doc["abstract"]
    parent_origins.update(origins)
    return merged, parent_origins, [path, *files]


# ---------------------------------------------------------------------------
# validation

_SCHEMA: dict[str, Any] | None = None


def schema() -> dict[str, Any]:
    """scenarios/schema.json with the names it takes from the registries: the
    core's disciplines (disciplines/core/registry.json), ns-3's own queue discs
    (docs/job.schema.json, qlab.native) and qlab's backends."""
    global _SCHEMA
    if _SCHEMA is None:
        from qlab import backends, core, native

        doc = json.loads(paths.SCHEMA.read_text(encoding="utf-8"))
        doc["$defs"]["discipline"]["properties"]["kind"]["enum"] = core.names() + native.kinds()
        doc["properties"]["backends"]["items"]["enum"] = backends.names()
        doc["$defs"]["series_discipline"]["properties"]["backends"]["items"]["enum"] = backends.names()
        _SCHEMA = doc
    return _SCHEMA


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _type_name(value: Any) -> str:
    return {
        bool: "boolean",
        int: "integer",
        float: "number",
        str: "string",
        list: "list",
        dict: "mapping",
        type(None): "null",
    }.get(type(value), type(value).__name__)


def describe_error(err: jsonschema.ValidationError) -> tuple[list[str], str]:
    """One schema error in a user's words: the field path (with the missing or
    unknown field itself) and the message."""
    return _describe(err)


def _describe(err: jsonschema.ValidationError) -> tuple[list[str], str]:
    """(field path, message) for one schema error, in a user's words."""
    path = [str(p) for p in err.absolute_path]
    v = err.validator
    inst = err.instance
    if v == "additionalProperties":
        allowed = sorted(err.schema.get("properties", {}))
        extra = sorted(set(inst) - set(allowed)) if isinstance(inst, dict) else []
        # One message per unknown key is produced by the caller.
        return path + extra[:1], "unknown field" + (f" (allowed: {', '.join(allowed)})" if allowed else "")
    if v == "required":
        missing = re.findall(r"'([^']+)' is a required property", err.message)
        return path + missing[:1], "missing required field"
    if v == "type":
        want = err.validator_value
        want = " or ".join(want) if isinstance(want, list) else want
        if isinstance(inst, float) and not math.isfinite(inst):
            return path, f"expected a finite {want}, got {inst}"
        shown = json.dumps(inst) if len(json.dumps(inst)) <= 60 else json.dumps(inst)[:57] + "..."
        return path, f"expected {want}, got {_type_name(inst)} {shown}"
    if v in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
        op = {"minimum": ">=", "maximum": "<=", "exclusiveMinimum": ">", "exclusiveMaximum": "<"}[v]
        return path, f"expected a value {op} {err.validator_value}, got {inst}"
    if v in ("minItems", "minProperties"):
        return path, f"expected at least {err.validator_value} entries"
    if v in ("maxItems", "maxProperties"):
        return path, f"expected at most {err.validator_value} entries"
    if v in ("maxLength", "minLength"):
        op = "at most" if v == "maxLength" else "at least"
        return path, f"expected {op} {err.validator_value} characters, got {len(inst)}"
    if v == "enum":
        return path, f"expected one of {', '.join(map(str, err.validator_value))}; got {_short(inst)}"
    if v == "const":
        return path, f"expected {err.validator_value!r}, got {_short(inst)}"
    if v == "pattern":
        what = err.schema.get("description", f"text matching {err.validator_value}")
        return path, f"expected {what}; got {_short(inst)}"
    if v == "propertyNames":
        return path, f"invalid name {_short(inst)}: {err.message}"
    if v == "uniqueItems":
        return path, "expected unique entries"
    if v == "not" and err.validator_value == {}:  # $defs/absent of the plan schema
        return path, f"unexpected field: {err.schema.get('description', 'not allowed here')}"
    if v == "oneOf":
        desc = err.schema.get("description", "")
        return path, f"invalid value {_short(inst)}" + (f": expected {desc}" if desc else "")
    return path, err.message


def _is_integer(_checker: Any, value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(_checker: Any, value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


# JSON Schema counts 2.0 as an integer and NaN as a number; a runner would not.
StrictValidator = jsonschema.validators.extend(
    jsonschema.Draft202012Validator,
    type_checker=jsonschema.Draft202012Validator.TYPE_CHECKER.redefine_many(
        {"integer": _is_integer, "number": _is_number}
    ),
)

_VALIDATOR: Any = None


def _validator() -> Any:
    """One validator (jsonschema.validate would check the schema itself on every call)."""
    global _VALIDATOR
    if _VALIDATOR is None:
        _VALIDATOR = StrictValidator(schema())
    return _VALIDATOR


def _schema_problems(doc: dict[str, Any]) -> list[tuple[str, str]]:
    validator = _validator()
    out: list[tuple[str, str]] = []
    for err in sorted(validator.iter_errors(doc), key=lambda e: list(map(str, e.absolute_path))):
        if err.validator == "additionalProperties" and isinstance(err.instance, dict):
            allowed = sorted(err.schema.get("properties", {}))
            for extra in sorted(set(err.instance) - set(allowed)):
                p = ".".join([*map(str, err.absolute_path), extra])
                out.append((p, f"unknown field (allowed: {', '.join(allowed)})"))
            continue
        if err.validator == "propertyNames":
            # report against the offending key itself
            bad = err.instance
            p = ".".join([*map(str, err.absolute_path), _short(bad).strip("'")])
            desc = err.schema.get("description") or err.schema.get("$ref", "")
            pattern = err.schema.get("pattern")
            desc = desc if not desc.startswith("#") else ""
            out.append((p, "invalid name: expected " + (desc or f"a name matching {pattern}")))
            continue
        path, msg = _describe(err)
        out.append((".".join(path) or "(top level)", msg))
    return out


def _get(doc: Any, dotted: str) -> tuple[bool, Any]:
    cur = doc
    for part in dotted.split("."):
        if isinstance(cur, dict) and part in cur:
            cur = cur[part]
        else:
            return False, None
    return True, cur


def _set(doc: dict[str, Any], dotted: str, value: Any) -> None:
    parts = dotted.split(".")
    cur = doc
    for part in parts[:-1]:
        cur = cur[part]
    cur[parts[-1]] = value


def sweep_paths(sw: dict[str, Any]) -> list[str]:
    """The dotted paths a sweep variable sets to its own value: its `path`,
    then any `also`."""
    return [sw["path"], *sw.get("also", [])]


def sweep_targets(sw: dict[str, Any]) -> list[tuple[str, str]]:
    """Every (field, dotted path) a sweep variable sets: `path`, `also.i`
    (the same value), `with.PATH` (a value of its own per swept value)."""
    return [
        ("path", sw["path"]),
        *((f"also.{i}", p) for i, p in enumerate(sw.get("also", []))),
        *((f"with.{p}", p) for p in sw.get("with") or {}),
    ]


def format_value(value: Any) -> str:
    """A sweep value as it appears in point ids and discipline parameters."""
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, float):
        if value.is_integer() and abs(value) < 1e15:
            return str(int(value))
        # the shortest digits that read back as the same float, without an
        # exponent (1e-05 -> 0.00001): the core's parser takes plain decimals
        return format(decimal.Decimal(repr(value)), "f")
    return str(value)


UDP_FIELDS = ("pkt_bytes", "rate_bps", "on_s", "off_s", "stop_s")
ONOFF_FIELDS = ("onoff_dist",)
BULK_FIELDS = ("seg_bytes", "task_bytes")
WEB_FIELDS = ("arrival_rate_per_s", "size_mean_bytes", "pareto_shape", "max_flows")
# Poisson arrivals of calls: UDP sources with a fixed schedule once started
ARRIVAL_FIELDS = ("arrivals",)


def _semantic_problems(doc: dict[str, Any]) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    groups = doc.get("workload", {}).get("groups", {})
    rest = [g for g, spec in groups.items() if spec.get("share") == "rest"]
    if len(rest) > 1:
        out.append(("workload.groups", f"at most one group may have share: rest, got {', '.join(rest)}"))
    for g, spec in groups.items():
        app = spec.get("app", "bulk")
        if app == "web":
            for key in ("share", "count", "rounding", "min_flows"):
                if key in spec:
                    out.append(
                        (
                            f"workload.groups.{g}.{key}",
                            "a web group's flows arrive at random: "
                            "give arrival_rate_per_s, not a number of flows",
                        )
                    )
        elif ("share" in spec) == ("count" in spec):
            out.append((f"workload.groups.{g}", "expected exactly one of share or count"))
        elif "share" in spec and "flows" not in doc.get("workload", {}):
            out.append((f"workload.groups.{g}.share", "a share of workload.flows: give workload.flows"))
        count = spec.get("count")
        if isinstance(count, dict):
            if count["min"] > count["max"]:
                out.append(
                    (
                        f"workload.groups.{g}.count",
                        f"expected min <= max, got min {count['min']} > max {count['max']}",
                    )
                )
            if "packet_share" in spec:
                out.append(
                    (
                        f"workload.groups.{g}.count",
                        "a packet_share is split over a fixed number of flows: give count as an integer",
                    )
                )
        wrong = {
            "web": ("task_bytes", "start_spacing_s", *UDP_FIELDS[:-1], *ONOFF_FIELDS, *ARRIVAL_FIELDS),
            # a bulk group may stop (stop_s): its senders stop mid-transfer
            "bulk": (*UDP_FIELDS[:-1], *ONOFF_FIELDS, *WEB_FIELDS, *ARRIVAL_FIELDS),
            # on/off sources may shape their periods as Pareto (pareto_shape)
            "onoff": (*BULK_FIELDS, *(f for f in WEB_FIELDS if f != "pareto_shape")),
            "voip": (*BULK_FIELDS, *(f for f in WEB_FIELDS if f != "pareto_shape")),
            # exponentially distributed datagram sizes (size_mean_bytes)
            "poisson": (
                *BULK_FIELDS,
                *ONOFF_FIELDS,
                *(f for f in WEB_FIELDS if f != "size_mean_bytes"),
                *ARRIVAL_FIELDS,
            ),
        }.get(app, (*BULK_FIELDS, *ONOFF_FIELDS, *WEB_FIELDS))
        for key in sorted(set(spec) & set(wrong)):
            out.append((f"workload.groups.{g}.{key}", f"not a field of app {app}"))
        size_mean = spec.get("size_mean_bytes")
        if app == "poisson" and size_mean is not None and not 40 < size_mean <= spec["pkt_bytes"]:
            out.append(
                (
                    f"workload.groups.{g}.size_mean_bytes",
                    "expected more than 40 (the smallest datagram) and at most pkt_bytes "
                    f"({spec['pkt_bytes']}), got {size_mean}",
                )
            )
        if "arrivals" in spec and float(spec.get("start_spacing_s", 0)) > 0:
            out.append(
                (
                    f"workload.groups.{g}.start_spacing_s",
                    "calls with arrivals start at Poisson times: no ramp as well",
                )
            )
        if app in ("onoff", "voip") and "pareto_shape" in spec and spec.get("onoff_dist") != "pareto":
            out.append(
                (
                    f"workload.groups.{g}.pareto_shape",
                    "shapes Pareto on/off periods: needs onoff_dist: pareto",
                )
            )
    topo = doc.get("topology") or {}
    deploying = [name for name, disc in (doc.get("series") or {}).items() if "routers" in disc]
    for name in deploying:
        if topo.get("kind") != "graph":
            out.append(
                (f"series.{name}.routers", "only a graph topology's series list the routers that deploy them")
            )
            continue
        for i, router in enumerate(doc["series"][name]["routers"]):
            if router not in topo.get("routers", []):
                out.append(
                    (
                        f"series.{name}.routers.{i}",
                        f"no router {router!r} (routers: {', '.join(topo.get('routers', []))})",
                    )
                )
    runs_on = doc.get("backends")
    for name, disc in (doc.get("series") or {}).items():
        own = disc.get("backends") if isinstance(disc, dict) else None
        if runs_on and own and not set(own) & set(runs_on):
            out.append(
                (
                    f"series.{name}.backends",
                    f"none of {', '.join(own)} is among the scenario's backends ({', '.join(runs_on)}): "
                    "the series would run nowhere",
                )
            )
    if deploying and topo.get("kind") == "graph" and "undeployed" not in topo:
        out.append(
            (
                "topology.undeployed",
                f"series {', '.join(deploying)} list their routers: give the discipline the others run",
            )
        )
    trace = doc.get("trace") or {}
    if "packets" in trace.get("collect", []) and not trace.get("packets", False):
        out.append(("trace.collect", "collecting packets needs trace.packets: true"))
    if "tcp" in trace.get("collect", []) and trace.get("tcp", False) in (False, []):
        out.append(("trace.collect", "collecting tcp needs trace.tcp (true or flow ids)"))
    for name, sw in (doc.get("sweep") or {}).items():
        for key, path in sweep_targets(sw):
            if not _get(doc, path)[0]:
                verb = "set" if key.startswith("with.") else "vary"
                out.append((f"sweep.{name}.{key}", f"no field {path!r} in the scenario to {verb}"))
            if key != "path" and (path == sw["path"] or path.split(".")[0] in NOT_SWEPT):
                out.append((f"sweep.{name}.{key}", f"{path} cannot be set by a sweep"))
        for path, companions in (sw.get("with") or {}).items():
            if len(companions) != len(sw["values"]):
                out.append(
                    (
                        f"sweep.{name}.with.{path}",
                        f"{len(companions)} values for the sweep's {len(sw['values'])}: one per sweep value",
                    )
                )
        for i, value in enumerate(sw["values"]):
            if not SAFE_TOKEN.match(format_value(value)):
                out.append(
                    (
                        f"sweep.{name}.values.{i}",
                        f"expected a value usable in a path (letters, digits, '.+-'), got {value!r}",
                    )
                )
    for prof, spec in (doc.get("profiles") or {}).items():
        for key in spec.get("override") or {}:
            if key not in schema()["properties"] or key in ("extends", "abstract", "paper", "profiles"):
                out.append((f"profiles.{prof}.override.{key}", "unknown or non-overridable field"))
    return out


def load(path: str | Path) -> Scenario:
    """Load, merge and validate one scenario file; raise ScenarioError listing every problem."""
    path = Path(path)
    doc, origins, files = _load_chain(path)
    paper_dir = path.resolve().parent.name
    scen_id = f"{paper_dir}/{path.stem}"
    problems: list[tuple[str, str]] = []
    if not doc.get("abstract"):
        doc = with_every_discipline(doc)
        problems = _schema_problems(doc)
        if not problems:
            problems = _semantic_problems(doc)
            if doc.get("paper") != paper_dir:
                problems.append(
                    ("paper", f"expected {paper_dir!r} (the directory name), got {doc.get('paper')!r}")
                )
            if not re.fullmatch(r"[a-z0-9][a-z0-9-]{0,47}", path.stem):
                problems.append(("(file name)", "expected lower-case letters, digits and '-' only"))
    else:
        # abstract files are checked through the files that extend them, but
        # unknown top-level keys are caught here already.
        allowed = set(schema()["properties"])
        problems = [
            (k, "unknown field (allowed: " + ", ".join(sorted(allowed)) + ")")
            for k in doc
            if k not in allowed
        ]
    if problems:
        lines = []
        for fpath, msg in problems:
            origin = origin_of(fpath, origins, path)
            lines.append(f"{display_path(origin)}: {fpath}: {msg}")
        raise ScenarioError(lines)
    return Scenario(id=scen_id, file=path, doc=doc, origins=origins, files=files)


def with_every_discipline(doc: dict[str, Any]) -> dict[str, Any]:
    """The document with a series per discipline of the core's registry when
    it says ``every_discipline: true`` (the benchmark suite): a discipline
    that no series labelled with its name configures runs with the
    registry's defaults, so a newly registered discipline joins every such
    scenario without an edit. Series the file states are kept as written."""
    if doc.get("every_discipline") is not True or not isinstance(doc.get("series"), dict):
        return doc
    from qlab import core

    out = copy.deepcopy(doc)
    for name in core.names():
        out["series"].setdefault(name, {"kind": name, "params": {}})
    return out


def origin_of(field_path: str, origins: dict[str, Path], default: Path) -> Path:
    parts = field_path.split(".")
    for n in range(len(parts), 0, -1):
        p = ".".join(parts[:n])
        if p in origins:
            return origins[p]
    return default


def discover(root: Path | None = None) -> list[Path]:
    """Every scenario file in the repository, sorted."""
    root = root or paths.SCENARIOS
    return sorted(p for p in root.glob("*/*.yaml"))


def load_all(files: Iterable[str | Path] | None = None) -> list[Scenario]:
    """Load every file; collect the problems of all of them before failing."""
    scenarios: list[Scenario] = []
    problems: list[str] = []
    for f in files if files is not None else discover():
        try:
            scenarios.append(load(f))
        except ScenarioError as exc:
            problems.extend(exc.problems)
    if problems:
        # a mistake in a shared defaults file shows up once, not once per child
        raise ScenarioError(list(dict.fromkeys(problems)))
    return scenarios


# ---------------------------------------------------------------------------
# expansion


def _merged(scen: Scenario, profile: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The scenario with the profile's override and seeds applied, before
    defaults; and the override itself."""
    if profile not in PROFILES:
        raise ScenarioError([f"profile: expected one of {', '.join(PROFILES)}, got {profile!r}"])
    doc = copy.deepcopy(scen.doc)
    prof = (doc.get("profiles") or {}).get(profile, {})
    override = prof.get("override") or {}
    if override:
        doc = deep_merge(doc, override)
    if "seeds" in prof:
        doc["seeds"] = prof["seeds"]
    doc.pop("profiles", None)
    return doc, override


def resolve(scen: Scenario, profile: str) -> dict[str, Any]:
    """The scenario document as a given profile runs it, with defaults filled
    in. The resolved document is validated first, at every sweep point
    (check_resolved): values an override or a sweep sets pass the same
    checks as the file's own."""
    from qlab import backends

    check_resolved(scen, profile)
    doc, _ = _merged(scen, profile)
    seeds = doc["seeds"]
    doc["seeds"] = list(range(1, seeds + 1)) if isinstance(seeds, int) else list(seeds)
    doc.setdefault("backends", [backends.DEFAULT])
    doc.setdefault("stop_when_done", True)
    doc.setdefault("sweep", {})
    doc.setdefault("assumptions", [])
    doc["workload"].setdefault("start_jitter_s", 1.0)
    trace = doc.setdefault("trace", {})
    trace.setdefault("queue_sample_interval_s", 0.1)
    trace.setdefault("packets", False)
    tcp_defaults = schema()["properties"]["tcp"]["properties"]
    for k, spec in tcp_defaults.items():
        if "default" in spec:
            doc["tcp"].setdefault(k, spec["default"])
    doc["profile"] = profile
    doc["id"] = scen.id
    doc.pop("abstract", None)
    return doc


# ---------------------------------------------------------------------------
# bounds: how much a scenario may expand to

# Defaults, raised for a real large study by QLAB_MAX_JOBS / QLAB_MAX_PACKETS
# (or `qlab validate|expand --max-jobs/--max-packets`). A scenario's packets
# are estimated before anything is drawn (estimate_packets): the paper
# profile of every scenario in the repository stays well below them.
DEFAULT_MAX_JOBS = 10_000
DEFAULT_MAX_PACKETS = 10**11
# on/off periods are drawn into the plan, one entry each: a flow's mean
# number of periods, active time / (on_s + off_s), is bounded
MAX_PERIODS_PER_FLOW = 100_000
NOT_SWEPT = (
    "extends",
    "abstract",
    "paper",
    "profiles",
    "seeds",
    "sweep",
    "backends",
    "assumptions",
    "every_discipline",
    "repetition",
)


def limits() -> tuple[int, float]:
    """(jobs, packets) a scenario may expand to, per profile."""
    out = []
    for var, default in (("QLAB_MAX_JOBS", DEFAULT_MAX_JOBS), ("QLAB_MAX_PACKETS", DEFAULT_MAX_PACKETS)):
        raw = os.environ.get(var, "")
        try:
            value = float(raw) if raw else default
        except ValueError:
            raise ScenarioError([f"{var}: expected a number, got {raw!r}"]) from None
        if not math.isfinite(value) or value < 1:
            raise ScenarioError([f"{var}: expected a number >= 1, got {raw!r}"])
        out.append(value)
    return int(out[0]), out[1]


def estimate_packets(doc: dict[str, Any]) -> list[tuple[str, float]]:
    """Packets one run of a (merged, valid) scenario document offers, per
    traffic group, estimated before any draw (docs/scenarios.md):

    bulk:  flows x ceil(task_bytes / seg_bytes)
    cbr, onoff, voip:  flows x (rate_bps x active / (8 pkt_bytes)
                       + active / (on_s + off_s) + 1), active = stop_s - start_offset_s
                       (every on-period sends at least one datagram)
    poisson: flows x mean datagrams per second x active
    web:   min(max_flows, arrival_rate_per_s x active) x ceil(size_mean_bytes / seg_bytes)

    flows: a group's count, or for a count drawn per seed (`count: {min,
    max}`) its max, so the estimate bounds every draw.
    """
    from qlab import plan as plans

    duration = float(doc["duration_s"])
    try:
        counts = dict(plans.group_counts(doc["workload"], "workload"))
    except plans.PlanError:
        counts = {}
    out = []
    for g, spec in doc["workload"]["groups"].items():
        app = spec.get("app", "bulk")
        start = float(spec.get("start_offset_s", 0.0))
        active = max(0.0, float(spec.get("stop_s", duration)) - start)
        n = counts.get(g, 0)
        if app == "bulk":
            packets = n * math.ceil(spec["task_bytes"] / spec["seg_bytes"])
        elif app == "poisson":
            try:
                rate = plans.poisson_flow_rates(doc, "workload").get(g, 0.0)
                stop = min(plans.poisson_stop_s(doc, spec, start, "workload"), duration)
            except plans.PlanError:
                rate, stop = 0.0, start
            packets = n * rate * max(0.0, stop - start)
        elif app == "web":
            arrivals = min(float(spec.get("max_flows", 1000)), spec["arrival_rate_per_s"] * active)
            packets = arrivals * math.ceil(spec["size_mean_bytes"] / spec["seg_bytes"])
        else:
            udp = {**plans.UDP_DEFAULTS[app], **spec}
            packets = n * (udp["rate_bps"] * active / (8 * udp["pkt_bytes"]) + 1)
            if app != "cbr":
                packets += n * active / (udp["on_s"] + udp["off_s"])
        out.append((g, float(packets)))
    return out


def _size_problems(doc: dict[str, Any]) -> list[tuple[str, str]]:
    """What would make one run's plan unreasonably large or not add up."""
    from qlab import plan as plans

    out: list[tuple[str, str]] = []
    try:
        plans.group_counts(doc["workload"], "workload")
    except plans.PlanError as exc:
        out.append(("workload.groups", exc.problems[0].split(": ", 2)[-1]))
    try:
        plans.poisson_flow_rates(doc, "workload")
    except plans.PlanError as exc:
        out.append(("workload.poisson_load", exc.problems[0].split(": ", 2)[-1]))
    duration = float(doc["duration_s"])
    for g, spec in doc["workload"]["groups"].items():
        app = spec.get("app", "bulk")
        if app in ("onoff", "voip"):
            udp = {**plans.UDP_DEFAULTS[app], **spec}
            active = max(0.0, float(spec.get("stop_s", duration)) - float(spec.get("start_offset_s", 0.0)))
            periods = active / (udp["on_s"] + udp["off_s"])
            if periods > MAX_PERIODS_PER_FLOW:
                out.append(
                    (
                        f"workload.groups.{g}.on_s",
                        f"about {periods:.3g} on/off periods per flow (active time / (on_s + off_s)); "
                        f"at most {MAX_PERIODS_PER_FLOW:,}",
                    )
                )
    return out


def _field_of(
    field_path: str, profile: str, override: dict[str, Any], sweep: dict[str, Any], values: dict[str, Any]
) -> str:
    """Where a value of the resolved document was set: a sweep point, the
    profile's override, or the file itself."""
    for name, value in values.items():
        i = next(i for i, v in enumerate(sweep[name]["values"]) if v == value and type(v) is type(value))
        src = f"profiles.{profile}.override.sweep" if name in (override.get("sweep") or {}) else "sweep"
        for key, path in sweep_targets(sweep[name]):
            if field_path == path or field_path.startswith(path + "."):
                label = f"{key}.{i}" if key.startswith("with.") else f"values.{i}"
                return f"{src}.{name}.{label} (sets {path})"
    parts = field_path.split(".")
    for n in range(len(parts), 0, -1):
        if _get(override, ".".join(parts[:n]))[0]:
            return f"profiles.{profile}.override.{field_path}"
    return field_path


def check_resolved(scen: Scenario, profile: str) -> None:
    """Validate the scenario as the profile runs it, at every sweep point:
    the schema and the semantic checks on the fully resolved document, then
    the bounds on jobs and packets. ScenarioError naming the file and field
    (a sweep value, an override, or the file's own)."""
    key = ("checked", profile)
    if key in scen.checked:
        return
    if scen.abstract:
        scen.checked.add(key)
        return
    doc, override = _merged(scen, profile)
    where = display_path(scen.file)

    def fail(problems: list[tuple[str, str]], values: dict[str, Any]) -> ScenarioError:
        lines = []
        for fpath, msg in problems:
            label = _field_of(fpath, profile, override, doc.get("sweep") or {}, values)
            origin = origin_of(
                f"profiles.{profile}.override.{fpath}" if label.startswith("profiles.") else fpath,
                scen.origins,
                scen.file,
            )
            if label.startswith(("sweep.", "profiles.")) and " (sets " in label:
                origin = origin_of(label.split(" ")[0], scen.origins, scen.file)
            at = f" (profile {profile})" if override or values else ""
            lines.append(f"{display_path(origin)}: {label}: {msg}{at}")
        return ScenarioError(list(dict.fromkeys(lines)))

    if override:
        problems = _schema_problems(doc) or _semantic_problems(doc)
        if problems:
            raise fail(problems, {})
    sweep = doc.get("sweep") or {}
    for name, sw in sweep.items():
        for key, path in sweep_targets(sw):
            top = path.split(".")[0]
            found, target = _get(doc, path)
            if top in NOT_SWEPT:
                raise fail([(f"sweep.{name}.{key}", f"{top} cannot be swept")], {})
            if found and isinstance(target, (dict, list)):
                raise fail(
                    [(f"sweep.{name}.{key}", f"{path} is a {_type_name(target)}; a sweep sets one value")], {}
                )
    max_jobs, max_packets = limits()
    n_points = math.prod(len(sw["values"]) for sw in sweep.values())
    seeds = doc["seeds"] if isinstance(doc["seeds"], int) else len(doc["seeds"])
    n_jobs = n_points * seeds * series_backends(doc)
    if n_jobs > max_jobs:
        field_name = "sweep" if n_points > 1 else "seeds"
        raise ScenarioError(
            [
                f"{where}: {field_name}: profile {profile} expands to {n_jobs:,} runs "
                f"({n_points:,} points x {seeds} seeds x {series_backends(doc)} series on their "
                f"backends), above the limit of {max_jobs:,} (raise it with QLAB_MAX_JOBS or --max-jobs)"
            ]
        )
    total = 0.0
    per_run = n_jobs // n_points
    for combo in itertools.product(*(sw["values"] for sw in sweep.values())):
        values = dict(zip(sweep, combo, strict=True))
        pdoc = copy.deepcopy(doc)
        apply_point(pdoc, sweep, values)
        if values:
            problems = _schema_problems(pdoc) or _semantic_problems(pdoc)
            if problems:
                raise fail(problems, values)
        problems = _size_problems(pdoc)
        if problems:
            raise fail(problems, values)
        groups = estimate_packets(pdoc)
        total += per_run * sum(p for _, p in groups)
        if total > max_packets:
            g, p = max(groups, key=lambda gp: gp[1])
            raise fail(
                [
                    (
                        f"workload.groups.{g}",
                        f"about {p:.3g} packets per run; profile {profile}'s {n_jobs:,} runs offer "
                        f"more than {max_packets:.3g} packets, the limit (offered load x duration / "
                        "packet size, docs/scenarios.md; raise it with QLAB_MAX_PACKETS or --max-packets)",
                    )
                ],
                values,
            )
    scen.checked.add(key)


def points(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """Sweep points: the cartesian product of every sweep variable, in file order."""
    sweep = doc.get("sweep") or {}
    names = list(sweep)
    return [
        dict(zip(names, combo, strict=True))
        for combo in itertools.product(*(sweep[n]["values"] for n in names))
    ]


def apply_point(doc: dict[str, Any], sweep: dict[str, Any], values: dict[str, Any]) -> None:
    """Set one sweep point's values in doc: each variable's path and its
    `also` paths to the value, and the paths its `with` sets alongside it
    (the value at the same index)."""
    for name, value in values.items():
        sw = sweep[name]
        for dotted in sweep_paths(sw):
            _set(doc, dotted, value)
        if sw.get("with"):
            i = next(i for i, v in enumerate(sw["values"]) if v == value and type(v) is type(value))
            for path, companions in sw["with"].items():
                _set(doc, path, companions[i])


def series_runs_on(doc: dict[str, Any], series: str, backend: str) -> bool:
    """Whether a series of a resolved scenario runs on one of its backends
    (series.<name>.backends, default every backend of the scenario)."""
    return backend in doc["series"][series].get("backends", [backend])


def series_backends(doc: dict[str, Any]) -> int:
    """How many (series, backend) pairs a resolved scenario runs (a scenario
    without backends counts once per series, as one that runs somewhere)."""
    backends = doc.get("backends") or [None]
    return sum(1 for name in doc["series"] for b in backends if b is None or series_runs_on(doc, name, b))


def point_id(series: str, values: dict[str, Any]) -> str:
    return "_".join([series, *(f"{k}-{format_value(v)}" for k, v in values.items())])


def expand(scen: Scenario, profile: str, backends: Iterable[str] | None = None) -> list[Job]:
    """Every job of a scenario for a profile: series x sweep point x seed x
    backend, each job's spec its resolved plan (qlab.plan, docs/jobs.md). A
    plan a backend cannot build is refused here, naming the backend and the
    field (qlab.backends)."""
    return list(iter_jobs(scen, profile, backends))


def iter_jobs(
    scen: Scenario, profile: str, backends: Iterable[str] | None = None, first_seed_only: bool = False
) -> Iterator[Job]:
    """expand(), one job at a time; first_seed_only: the first seed of each
    point (a plan's structure does not depend on the seed)."""
    from qlab import backends as registry
    from qlab import plan as plans

    if scen.abstract:
        return
    base = resolve(scen, profile)
    wanted = [
        b for b in (list(backends) if backends is not None else base["backends"]) if b in base["backends"]
    ]
    where = display_path(scen.file)
    problems: list[str] = []
    for values in points(base):
        doc = copy.deepcopy(base)
        apply_point(doc, doc["sweep"], values)
        for seed in doc["seeds"][:1] if first_seed_only else doc["seeds"]:
            try:
                workload = plans.build_workload(doc, seed, where)
            except plans.PlanError as exc:
                at = ", ".join(f"{k}={format_value(v)}" for k, v in values.items())
                raise ScenarioError(
                    [f"{p} (profile {profile}, seed {seed}{', ' + at if at else ''})" for p in exc.problems]
                ) from None
            for series in doc["series"]:
                pid = point_id(series, values)
                for backend in wanted:
                    if not series_runs_on(doc, series, backend):
                        continue
                    try:
                        spec = plans.build(
                            doc,
                            scenario=scen.id,
                            paper=scen.paper,
                            backend=backend,
                            series=series,
                            point=pid,
                            point_values=values,
                            seed=seed,
                            workload=workload,
                        )
                    except plans.PlanError as exc:
                        origin = display_path(origin_of(f"series.{series}.params", scen.origins, scen.file))
                        raise ScenarioError([f"{origin}: {p}" for p in exc.problems]) from None
                    refused = registry.get(backend).refuse(spec)
                    if refused:
                        problems += [
                            f"{where}: backend {backend} cannot run {pid} (profile {profile}): {r}"
                            for r in refused
                        ]
                        continue
                    yield Job(scen.id, backend, series, pid, seed, spec)
    if problems:
        raise ScenarioError(list(dict.fromkeys(problems)))


def canonical_json(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, indent=1, ensure_ascii=False) + "\n"


def plan_json(obj: Any) -> str:
    """A plan as written: compact (the C encoder; plans are large), sorted keys."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False) + "\n"


def write_if_changed(path: Path, text: str) -> bool:
    """Write atomically, and only when the content differs (keeps mtimes for Snakemake)."""
    try:
        if path.read_text(encoding="utf-8") == text:
            return False
    except OSError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)
    return True


def write_jobs(jobs: Iterable[Job], results: Path) -> int:
    """Write each job's plan under results/jobs/; return how many changed.
    Every part of a job's path was checked against a safe pattern when its
    scenario was; this refuses anything else rather than write elsewhere."""
    changed = 0
    for job in jobs:
        parts = job.rel_dir.split("/")
        if not all(SAFE_PART.fullmatch(p) for p in parts):
            raise ScenarioError(
                [f"{job.scenario}: refusing to write a plan at {job.rel_dir!r}: not a safe results path"]
            )
        changed += write_if_changed(results / "jobs" / f"{job.rel_dir}.json", plan_json(job.spec))
    return changed

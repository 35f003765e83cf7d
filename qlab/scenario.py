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
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jsonschema
import yaml

from qlab import PROFILES, paths

SAFE_TOKEN = re.compile(r"^[A-Za-z0-9.+-]{1,64}$")



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


def _read_yaml(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ScenarioError([f"{display_path(path)}: cannot read: {exc.strerror}"]) from None
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise ScenarioError([f"{display_path(path)}: {where}not valid YAML: {problem}"]) from None
    if doc is None:
        doc = {}
    if not isinstance(doc, dict):
        raise ScenarioError([f"{display_path(path)}: (top level): expected a mapping of fields"])
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
    origins = {p: path for p in _leaf_paths(doc)}
    parent_name = doc.get("extends")
    if parent_name is None:
        return doc, origins, [path]
    if not isinstance(parent_name, str) or not re.fullmatch(r"[A-Za-z0-9_.-]+\.yaml", parent_name):
        raise ScenarioError(
            [f"{display_path(path)}: extends: expected a file name in the same directory "
             f"(letters, digits, '_.-', ending in .yaml), got {parent_name!r}"]
        )
    parent_path = path.parent / parent_name
    if not parent_path.is_file():
        raise ScenarioError([f"{display_path(path)}: extends: no such file {display_path(parent_path)}"])
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
    core's disciplines (disciplines/core/registry.json) and qlab's backends."""
    global _SCHEMA
    if _SCHEMA is None:
        from qlab import backends, core

        doc = json.loads(paths.SCHEMA.read_text(encoding="utf-8"))
        doc["$defs"]["discipline"]["properties"]["kind"]["enum"] = core.names()
        doc["properties"]["backends"]["items"]["enum"] = backends.names()
        _SCHEMA = doc
    return _SCHEMA


def _type_name(value: Any) -> str:
    return {bool: "boolean", int: "integer", float: "number", str: "string",
            list: "list", dict: "mapping", type(None): "null"}.get(type(value), type(value).__name__)


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
        return path + extra[:1], "unknown field" + (
            f" (allowed: {', '.join(allowed)})" if allowed else "")
    if v == "required":
        missing = re.findall(r"'([^']+)' is a required property", err.message)
        return path + missing[:1], "missing required field"
    if v == "type":
        want = err.validator_value
        want = " or ".join(want) if isinstance(want, list) else want
        return path, f"expected {want}, got {_type_name(inst)} {json.dumps(inst)}"
    if v in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
        op = {"minimum": ">=", "maximum": "<=", "exclusiveMinimum": ">",
              "exclusiveMaximum": "<"}[v]
        return path, f"expected a value {op} {err.validator_value}, got {inst}"
    if v in ("minItems", "minProperties"):
        return path, f"expected at least {err.validator_value} entries"
    if v in ("maxItems", "maxProperties"):
        return path, f"expected at most {err.validator_value} entries"
    if v == "enum":
        return path, f"expected one of {', '.join(map(str, err.validator_value))}; got {inst!r}"
    if v == "const":
        return path, f"expected {err.validator_value!r}, got {inst!r}"
    if v == "pattern":
        what = err.schema.get("description", f"text matching {err.validator_value}")
        return path, f"expected {what}; got {inst!r}"
    if v == "propertyNames":
        return path, f"invalid name {inst!r}: {err.message}"
    if v == "uniqueItems":
        return path, "expected unique entries"
    if v == "oneOf":
        desc = err.schema.get("description", "")
        return path, f"invalid value {json.dumps(inst)}" + (f": expected {desc}" if desc else "")
    return path, err.message


_VALIDATOR: jsonschema.Draft202012Validator | None = None


def _validator() -> jsonschema.Draft202012Validator:
    """One validator (jsonschema.validate would check the schema itself on every call)."""
    global _VALIDATOR
    if _VALIDATOR is None:
        _VALIDATOR = jsonschema.Draft202012Validator(schema())
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
            p = ".".join([*map(str, err.absolute_path), str(bad)])
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
BULK_FIELDS = ("seg_bytes", "task_bytes")
WEB_FIELDS = ("arrival_rate_per_s", "size_mean_bytes", "pareto_shape", "max_flows")


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
                    out.append((f"workload.groups.{g}.{key}", "a web group's flows arrive at random: "
                                "give arrival_rate_per_s, not a number of flows"))
        elif ("share" in spec) == ("count" in spec):
            out.append((f"workload.groups.{g}", "expected exactly one of share or count"))
        wrong = {"web": ("task_bytes", *UDP_FIELDS[:-1]), "bulk": (*UDP_FIELDS, *WEB_FIELDS)}.get(
            app, (*BULK_FIELDS, *WEB_FIELDS))
        for key in sorted(set(spec) & set(wrong)):
            out.append((f"workload.groups.{g}.{key}", f"not a field of app {app}"))
    trace = doc.get("trace") or {}
    if "packets" in trace.get("collect", []) and not trace.get("packets", False):
        out.append(("trace.collect", "collecting packets needs trace.packets: true"))
    if "tcp" in trace.get("collect", []) and trace.get("tcp", False) in (False, []):
        out.append(("trace.collect", "collecting tcp needs trace.tcp (true or flow ids)"))
    for name, sw in (doc.get("sweep") or {}).items():
        found, _ = _get(doc, sw["path"])
        if not found:
            out.append((f"sweep.{name}.path", f"no field {sw['path']!r} in the scenario to vary"))
        for i, value in enumerate(sw["values"]):
            if not SAFE_TOKEN.match(format_value(value)):
                out.append((f"sweep.{name}.values.{i}",
                            f"expected a value usable in a path (letters, digits, '.+-'), got {value!r}"))
    for prof, spec in (doc.get("profiles") or {}).items():
        for key in (spec.get("override") or {}):
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
        problems = _schema_problems(doc)
        if not problems:
            problems = _semantic_problems(doc)
            if doc.get("paper") != paper_dir:
                problems.append(("paper", f"expected {paper_dir!r} (the directory name), "
                                          f"got {doc.get('paper')!r}"))
            if not re.fullmatch(r"[a-z0-9][a-z0-9-]{0,47}", path.stem):
                problems.append(("(file name)", "expected lower-case letters, digits and '-' only"))
    else:
        # abstract files are checked through the files that extend them, but
        # unknown top-level keys are caught here already.
        allowed = set(schema()["properties"])
        problems = [(k, "unknown field (allowed: " + ", ".join(sorted(allowed)) + ")")
                    for k in doc if k not in allowed]
    if problems:
        lines = []
        for fpath, msg in problems:
            origin = origin_of(fpath, origins, path)
            lines.append(f"{display_path(origin)}: {fpath}: {msg}")
        raise ScenarioError(lines)
    return Scenario(id=scen_id, file=path, doc=doc, origins=origins, files=files)


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


def resolve(scen: Scenario, profile: str) -> dict[str, Any]:
    """The scenario document as a given profile runs it, with defaults filled in."""
    from qlab import backends

    if profile not in PROFILES:
        raise ScenarioError([f"profile: expected one of {', '.join(PROFILES)}, got {profile!r}"])
    doc = copy.deepcopy(scen.doc)
    prof = (doc.get("profiles") or {}).get(profile, {})
    if prof.get("override"):
        doc = deep_merge(doc, prof["override"])
        try:
            _validator().validate(doc)
        except jsonschema.ValidationError as err:
            path, msg = _describe(err)
            raise ScenarioError([f"{display_path(scen.file)}: profiles.{profile}.override: "
                                 f"{'.'.join(path)}: {msg}"]) from None
    if "seeds" in prof:
        doc["seeds"] = prof["seeds"]
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
    doc.pop("profiles", None)
    doc.pop("abstract", None)
    return doc


def points(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """Sweep points: the cartesian product of every sweep variable, in file order."""
    sweep = doc.get("sweep") or {}
    names = list(sweep)
    return [dict(zip(names, combo, strict=True))
            for combo in itertools.product(*(sweep[n]["values"] for n in names))]


def point_id(series: str, values: dict[str, Any]) -> str:
    return "_".join([series, *(f"{k}-{format_value(v)}" for k, v in values.items())])


def expand(scen: Scenario, profile: str, backends: Iterable[str] | None = None) -> list[Job]:
    """Every job of a scenario for a profile: series x sweep point x seed x
    backend, each job's spec its resolved plan (qlab.plan, docs/jobs.md). A
    plan a backend cannot build is refused here, naming the backend and the
    field (qlab.backends)."""
    from qlab import backends as registry
    from qlab import plan as plans

    if scen.abstract:
        return []
    base = resolve(scen, profile)
    wanted = [b for b in (list(backends) if backends is not None else base["backends"])
              if b in base["backends"]]
    jobs: list[Job] = []
    where = display_path(scen.file)
    problems: list[str] = []
    for values in points(base):
        doc = copy.deepcopy(base)
        for name, value in values.items():
            _set(doc, doc["sweep"][name]["path"], value)
        for seed in doc["seeds"]:
            try:
                workload = plans.build_workload(doc, seed, f"{where} at {values}")
            except plans.PlanError as exc:
                raise ScenarioError(exc.problems) from None
            for series in doc["series"]:
                pid = point_id(series, values)
                for backend in wanted:
                    try:
                        spec = plans.build(doc, scenario=scen.id, paper=scen.paper, backend=backend,
                                           series=series, point=pid, point_values=values, seed=seed,
                                           workload=workload)
                    except plans.PlanError as exc:
                        origin = display_path(origin_of(f"series.{series}.params", scen.origins, scen.file))
                        raise ScenarioError([f"{origin}: {p}" for p in exc.problems]) from None
                    refused = registry.get(backend).refuse(spec)
                    if refused:
                        problems += [f"{where}: backend {backend} cannot run {pid} (profile {profile}): {r}"
                                     for r in refused]
                        continue
                    jobs.append(Job(scen.id, backend, series, pid, seed, spec))
    if problems:
        raise ScenarioError(list(dict.fromkeys(problems)))
    return jobs


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
    """Write each job's plan under results/jobs/; return how many changed."""
    changed = 0
    for job in jobs:
        changed += write_if_changed(results / "jobs" / f"{job.rel_dir}.json", plan_json(job.spec))
    return changed

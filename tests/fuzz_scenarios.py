"""A fuzz suite for scenario files: malformed and hostile variants of the
repository's own scenarios, each validated and expanded in-process.

    python -m tests.fuzz_scenarios --cases 1000 --seed 1 [--out summary.json]

Each case is one scenario file (and the defaults file it extends) written
to a fresh scenarios tree; qlab loads, validates (every profile) and
expands it, and writes the plans of the accepted ones to a results
directory. A case passes when:

- it is refused with qlab's error (ScenarioError: one line per problem,
  each naming the file and a field), or accepted with every plan passing
  the job schema and rules (qlab.plan.check: what a runner accepts);
- nothing else is raised (no traceback), within TIME_LIMIT_S seconds
  (no hang) and the memory limit the caller sets (RLIMIT_AS);
- nothing is written outside the case's results directory: every hostile
  path names a file under a canary directory that must stay absent.

The summary (JSON) counts cases by outcome and lists every failure.
"""

from __future__ import annotations

import argparse
import copy
import json
import math
import random
import shutil
import signal
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any

import yaml

from qlab import PROFILES, paths
from qlab import plan as plans
from qlab import scenario as sc

TIME_LIMIT_S = 10
BASES = ("ncq-conf/flows", "ncq-conf/thresh", "disciplines/ncq", "disciplines/cqaqm", "disciplines/srd")


class Hang(Exception):
    pass


def _alarm(_sig: int, _frame: Any) -> None:
    raise Hang


# ---------------------------------------------------------------------------
# the corpus: the repository's scenarios, merged and made small


def base_docs() -> dict[str, dict[str, Any]]:
    """Each base scenario as one file (extends resolved), cut down so a case
    validates in milliseconds: one seed, at most two sweep values, few flows."""
    out = {}
    for sid in BASES:
        paper, name = sid.split("/")
        doc = copy.deepcopy(sc.load(paths.SCENARIOS / paper / f"{name}.yaml").doc)
        doc.pop("extends", None)
        doc["seeds"] = 1
        doc["duration_s"] = min(float(doc["duration_s"]), 20.0)
        wl = doc["workload"]
        if not any("count" in g for g in wl["groups"].values()):
            wl["flows"] = min(wl["flows"], 10)
        for sw in (doc.get("sweep") or {}).values():
            sw["values"] = sw["values"][:2]
            if sw["path"] == "workload.flows":
                sw["values"] = [v for v in sw["values"] if v <= 20] or [10]
        doc["profiles"] = {"test": {"seeds": 1}}
        out[sid] = doc
    return out


# ---------------------------------------------------------------------------
# mutations


def leaves(doc: Any, prefix: tuple = ()) -> list[tuple]:
    """Paths of every value (mappings' keys and lists' indices)."""
    out = []
    if isinstance(doc, dict):
        for k, v in doc.items():
            out.append((*prefix, k))
            out += leaves(v, (*prefix, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            out.append((*prefix, i))
            out += leaves(v, (*prefix, i))
    return out


def get(doc: Any, path: tuple) -> Any:
    for p in path:
        doc = doc[p]
    return doc


def put(doc: Any, path: tuple, value: Any) -> None:
    get(doc, path[:-1])[path[-1]] = value


def hostile_strings(canary: Path) -> list[str]:
    """Traversal and shell payloads; each would create something under canary."""
    c = str(canary)
    return [
        f"../../../../../../../../..{c}/a",
        f"{c}/b",
        "..",
        ".",
        "../x",
        "a/../../b",
        "a/b",
        f"x;touch${{IFS}}{c}/c;true",
        f"$(touch {c}/d)",
        f"`touch {c}/e`",
        f"2;touch {c}/f",
        "a b",
        "a\tb",
        "a\nb",
        "a\x00b",
        "-rf",
        "--help",
        "~root",
        "*",
        "?",
        "a|b",
        "a&b",
        "a>b",
        "é",
        "\u202e",
        "x" * 300,
        "",
        " ",
        "NaN",
        "1e999",
        "0x10",
        "1_0",
        "+12",
    ]


def wild_values(rng: random.Random, canary: Path) -> list[Any]:
    return [
        None,
        True,
        False,
        0,
        -1,
        -1e308,
        1e308,
        float("nan"),
        float("inf"),
        -float("inf"),
        2.5,
        10**30,
        -(10**30),
        1e-9,
        1e-300,
        "",
        "x",
        "5",
        "true",
        [],
        [1, 2],
        {},
        {"a": 1},
        [[[]]],
        {"kind": "droptail"},
        rng.choice(hostile_strings(canary)),
        10**6,
        2**31,
        2**63,
    ]


NAME_KEYS = ("series", "workload.groups", "sweep")  # mappings whose keys become names or paths


def mutate(
    doc: dict[str, Any], rng: random.Random, canary: Path
) -> tuple[str, dict[str, Any] | None, str | None]:
    """One mutation: (description, new document or None, raw YAML text or None)."""
    doc = copy.deepcopy(doc)
    op = rng.choice(
        [
            "value",
            "value",
            "value",
            "unknown_key",
            "delete",
            "name",
            "name",
            "sweep",
            "sweep",
            "override",
            "override",
            "override_sweep",
            "yaml",
            "huge",
        ]
    )
    paths_ = leaves(doc)
    if op == "value":
        path = rng.choice(paths_)
        v = rng.choice(wild_values(rng, canary))
        put(doc, path, v)
        return f"value {'.'.join(map(str, path))} = {v!r:.60}", doc, None
    if op == "unknown_key":
        maps = [()] + [p for p in paths_ if isinstance(get(doc, p), dict)]
        path = rng.choice(maps)
        key = rng.choice(["bogus", "x", "Kind", "kind ", "1", "extends", "abstract"])
        get(doc, path)[key] = rng.choice(wild_values(rng, canary))
        return f"unknown key {key!r} at {'.'.join(map(str, path)) or '(top)'}", doc, None
    if op == "delete":
        path = rng.choice(paths_)
        parent = get(doc, path[:-1])
        del parent[path[-1]]
        return f"delete {'.'.join(map(str, path))}", doc, None
    if op == "name":
        where = rng.choice(NAME_KEYS + ("paper", "assumptions", "extends"))
        bad = rng.choice(hostile_strings(canary))
        if where == "paper":
            doc["paper"] = bad
        elif where == "extends":
            doc["extends"] = bad
        elif where == "assumptions":
            doc.setdefault("assumptions", []).append({"id": bad, "text": "a hostile assumption id"})
        elif rng.random() < 0.4:  # the same name arriving through the test profile's override
            m = doc
            for k in where.split("."):
                m = m.setdefault(k, {})
            entry = copy.deepcopy(next(iter(m.values()))) if m else {"path": "description", "values": ["a"]}
            over: dict[str, Any] = {}
            o = over
            for k in where.split("."):
                o = o.setdefault(k, {})
            o[bad] = entry
            doc["profiles"]["test"]["override"] = over
            where = f"profiles.test.override.{where}"
        else:
            m = doc
            for k in where.split("."):
                m = m.setdefault(k, {})
            if m:
                old = rng.choice(list(m))
                m[bad] = m.pop(old)
            else:
                m[bad] = {"path": "description", "values": ["a"]}
        return f"name {where} = {bad!r:.60}", doc, None
    if op in ("sweep", "override_sweep"):
        leaf = [p for p in paths_ if not isinstance(get(doc, p), (dict, list)) and p[0] != "profiles"]
        target = (
            ".".join(map(str, rng.choice(leaf)))
            if rng.random() < 0.8
            else rng.choice(
                ["seeds", "sweep", "profiles", "paper", "backends", "workload", "nonexistent.field"]
            )
        )
        values = rng.sample(wild_values(rng, canary) + hostile_strings(canary), 3)
        values = [v for v in values if isinstance(v, (int, float, str))] or ["a"]
        sweep = {"x": {"path": target, "values": values}}
        if op == "sweep":
            doc["sweep"] = sweep
        else:
            doc["profiles"]["test"]["override"] = {"sweep": sweep}
        return f"{op} {target} over {values!r:.80}", doc, None
    if op == "override":
        path = rng.choice([p for p in paths_ if p[0] not in ("profiles", "sweep") and isinstance(p[-1], str)])
        over: dict[str, Any] = {}
        m = over
        for k in path[:-1]:
            if isinstance(k, int):
                break
            m = m.setdefault(k, {})
        v = rng.choice(wild_values(rng, canary) + hostile_strings(canary))
        m[path[-1]] = v
        doc["profiles"]["test"]["override"] = over
        return f"override {'.'.join(map(str, path))} = {v!r:.60}", doc, None
    if op == "huge":
        kind = rng.choice(["cartesian", "duration", "onoff", "seeds", "flows"])
        if kind == "cartesian":
            doc["sweep"] = {
                f"s{i}": {"path": p, "values": list(range(1, 101))}
                for i, p in enumerate(
                    ["workload.flows", "workload.start_jitter_s", "topology.access_delay_s"]
                )
            }
        elif kind == "duration":
            doc["duration_s"] = rng.choice([1e9, 1e12, 1e308, 1e6])
        elif kind == "onoff":
            doc["workload"]["groups"]["u"] = {
                "app": "onoff",
                "count": 1,
                "pkt_bytes": 100,
                "rate_bps": rng.choice([1000, 1e12]),
                "on_s": 1e-9,
                "off_s": 1e-9,
            }
            doc["workload"]["flows"] = doc["workload"].get("flows", 0)
        elif kind == "seeds":
            doc["seeds"] = list(range(rng.choice([1000, 5000])))
        else:
            doc["workload"]["flows"] = rng.choice([10000, 10**6])
        return f"huge {kind}", doc, None
    # yaml-level
    text = yaml.safe_dump(doc, sort_keys=False)
    kind = rng.choice(
        [
            "bomb",
            "deep",
            "utf8",
            "dupkey",
            "tags",
            "date",
            "intkey",
            "boolkey",
            "bigint",
            "alias_cycle",
            "tab",
            "empty",
            "list",
        ]
    )
    if kind == "bomb":
        lines = ['a0: &a0 ["x","x","x","x","x","x","x","x","x"]']
        lines += [f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, 9)]
        text = "\n".join(lines) + "\n" + text
    elif kind == "deep":
        depth = rng.choice([40, 1000, 5000])
        text = text.replace("description:", "description: " + "[" * depth + "]" * depth + "\nx_desc:", 1)
    elif kind == "utf8":
        return "non-UTF-8 bytes", None, text.replace("description:", 'description: "\udcff"\nx:', 1)
    elif kind == "dupkey":
        text += "duration_s: 5\n"
    elif kind == "tags":
        text += rng.choice(
            [
                "description: !!binary aGVsbG8=\n",
                "x: !!set {a, b}\n",
                "x: !!python/object:os.system {}\n",
                "x: !!timestamp 2024-01-01\n",
                "x: !custom 5\n",
                "x: !!omap [{a: 1}]\n",
            ]
        )
    elif kind == "date":
        text = text.replace("description:", "description: 2024-01-01\nx_old_description:", 1)
    elif kind == "intkey":
        text += "1: x\n"
    elif kind == "boolkey":
        text += "yes: x\n"
    elif kind == "bigint":
        text = text.replace("seeds: 1", "seeds: " + "9" * 5000, 1)
    elif kind == "alias_cycle":
        text += "x: &c [*c]\n"
    elif kind == "tab":
        text = "\t" + text
    elif kind == "empty":
        text = rng.choice(["", "---\n", "null\n", "[]\n", "5\n", "'a'\n"])
    else:
        text = "- " + text.replace("\n", "\n  ")
    return f"yaml {kind}", None, text


# ---------------------------------------------------------------------------
# running a case


def write_case(root: Path, name: str, doc: dict[str, Any] | None, text: str | None) -> Path:
    d = root / "scenarios" / "fuzz"
    d.mkdir(parents=True, exist_ok=True)
    f = d / f"{name}.yaml"
    if text is None:
        assert doc is not None
        doc = copy.deepcopy(doc)
        doc["paper"] = doc.get("paper", "fuzz") if doc.get("paper") not in BASE_PAPERS else "fuzz"
        try:
            text = yaml.safe_dump(doc, sort_keys=False, allow_unicode=True)
        except yaml.YAMLError:
            text = json.dumps(doc, default=str)
    f.write_bytes(text.encode("utf-8", "surrogateescape"))
    return f


BASE_PAPERS = ("ncq-conf", "disciplines")


def run_case(file: Path, results: Path) -> tuple[str, str]:
    """(outcome, detail): refused | accepted | bad-error | traceback | invalid-plan."""
    try:
        scen = sc.load(file)
        jobs = []
        for profile in PROFILES:
            jobs += list(sc.iter_jobs(scen, profile, first_seed_only=True))
    except sc.ScenarioError as exc:
        shown = sc.display_path(file)
        bad = [p for p in exc.problems if not (p.startswith(shown + ": ") and len(p) > len(shown) + 2)]
        if bad:
            return "bad-error", bad[0][:300]
        return "refused", exc.problems[0][:300]
    for job in jobs:
        problems = plans.check(job.spec)
        if problems:
            return "invalid-plan", f"{job.rel_dir}: {problems[0]}"[:300]
    sc.write_jobs(jobs, results)
    return "accepted", f"{len(jobs)} plans"


def outside_writes(root: Path, results: Path, canary: Path) -> list[str]:
    """Files the case created outside its results directory and scenario file."""
    out = [str(p) for p in canary.rglob("*")] if canary.exists() else []
    if canary.exists():
        out.append(str(canary))
    for p in root.rglob("*"):
        if p.is_file() and results not in p.parents and "scenarios" not in p.relative_to(root).parts[:1]:
            out.append(str(p))
    return out


def fuzz(cases: int, seed: int, time_budget_s: float | None = None) -> dict[str, Any]:
    rng = random.Random(seed)
    bases = base_docs()
    counts: dict[str, int] = {}
    failures: list[dict[str, Any]] = []
    slowest = 0.0
    signal.signal(signal.SIGALRM, _alarm)
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="qlab-fuzz-") as tmp:
        canary = Path(tmp) / "canary"
        done = 0
        for i in range(cases):
            if time_budget_s and time.monotonic() - start > time_budget_s:
                break
            sid = rng.choice(list(bases))
            what, doc, text = mutate(bases[sid], rng, canary)
            root = Path(tmp) / f"case-{i}"
            results = root / "results"
            t0 = time.monotonic()
            signal.alarm(TIME_LIMIT_S)
            try:
                file = write_case(root, f"c{i}", doc, text)
                outcome, detail = run_case(file, results)
            except Hang:
                outcome, detail = "hang", f"over {TIME_LIMIT_S} s"
            except MemoryError:
                outcome, detail = "memory", "MemoryError"
            except Exception:  # noqa: BLE001 (the point: count every traceback)
                outcome, detail = "traceback", traceback.format_exc(limit=-3)[-600:]
            finally:
                signal.alarm(0)
            slowest = max(slowest, time.monotonic() - t0)
            escaped = outside_writes(root, results, canary)
            if escaped:
                outcome, detail = "wrote-outside", ", ".join(escaped[:3])
                shutil.rmtree(canary, ignore_errors=True)
            counts[outcome] = counts.get(outcome, 0) + 1
            if outcome not in ("refused", "accepted"):
                failures.append(
                    {"case": i, "base": sid, "mutation": what, "outcome": outcome, "detail": detail}
                )
            shutil.rmtree(root, ignore_errors=True)
            done += 1
    return {
        "cases": done,
        "seed": seed,
        "counts": counts,
        "failures": failures[:50],
        "n_failures": len(failures),
        "slowest_case_s": round(slowest, 3),
        "wall_s": round(time.monotonic() - start, 1),
    }


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--cases", type=int, default=1000)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--time-budget", type=float, help="stop after this many seconds")
    p.add_argument("--out", type=Path)
    a = p.parse_args()
    summary = fuzz(a.cases, a.seed, a.time_budget)
    text = json.dumps(summary, indent=1, default=str)
    if a.out:
        a.out.write_text(text + "\n", encoding="utf-8")
    print(text)
    return 0 if summary["n_failures"] == 0 and math.isfinite(summary["wall_s"]) else 1


if __name__ == "__main__":
    sys.exit(main())

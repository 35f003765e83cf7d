"""Whether a change to docs/job.schema.json keeps every verdict: flows and
queues of real plans, mutated at random, validated under the schema of
another commit and under this checkout's (both composed as qlab.plan.schema
composes them), with jsonschema.

    .venv/bin/python benchmarks/plan-schema-equivalence.py --before REV \\
        [--cases 6000] [--seed 1] PLAN.json...

A mutation drops a field, copies fields from another flow or queue of the
plans, or sets the flow's app or the queue's kind (to every kind there is,
to an unknown one, or removes it). Prints the number of cases, how many
were valid, and each case on which the two schemas disagree (exit 1).
"""

from __future__ import annotations

import argparse
import copy
import json
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema

from qlab import core, native, plan


def composed(doc: dict[str, Any]) -> dict[str, Any]:
    """A schema file composed as qlab.plan.schema composes it, wherever the
    file keeps the queue's rules (its allOf, or the allOf of its else)."""
    queue = doc["$defs"]["queue"]
    return plan.compose(doc, queue["allOf"] if "allOf" in queue else queue["else"]["allOf"])


def set_or_drop(x: dict[str, Any], key: str, value: str | None) -> None:
    """x[key] = value, or no key at all for None."""
    if value is None:
        x.pop(key, None)
    else:
        x[key] = value


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", required=True, help="the commit whose docs/job.schema.json to compare with")
    ap.add_argument("--cases", type=int, default=6000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("plans", nargs="+", type=Path)
    a = ap.parse_args()
    old_text = subprocess.run(
        ["git", "show", f"{a.before}:docs/job.schema.json"], check=True, capture_output=True, text=True
    ).stdout
    schemas = {"before": composed(json.loads(old_text)), "after": plan.schema()}
    validators = {
        (side, what): jsonschema.Draft202012Validator({"$ref": f"#/$defs/{what}", "$defs": s["$defs"]})
        for side, s in schemas.items()
        for what in ("flow", "queue")
    }
    docs = [json.loads(p.read_text()) for p in a.plans]
    flows = [f for d in docs for f in d["flows"]]
    queues = [q for d in docs for lk in d["links"] for q in lk["queues"].values()]
    keys = sorted({k for f in flows for k in f})
    apps = ["bulk", "cbr", "onoff", "voip", "poisson", "x", None]
    kinds = [*core.names(), *native.kinds(), "lossless", "zz", None]
    rng = random.Random(a.seed)
    valid = differ = 0
    for i in range(a.cases):
        if i % 2 == 0:
            what, x, other = "flow", copy.deepcopy(rng.choice(flows)), rng.choice(flows)
            for _ in range(rng.randint(1, 3)):
                r = rng.random()
                if r < 0.3 and x:
                    x.pop(rng.choice(list(x)))
                elif r < 0.6:
                    k = rng.choice(keys)
                    if k in other:
                        x[k] = copy.deepcopy(other[k])
                else:
                    set_or_drop(x, "app", rng.choice(apps))
        else:
            what, x, other = "queue", copy.deepcopy(rng.choice(queues)), rng.choice(queues)
            r = rng.random()
            if r < 0.3 and x:
                x.pop(rng.choice(list(x)))
            elif r < 0.6:
                x.update({k: copy.deepcopy(v) for k, v in other.items() if rng.random() < 0.5})
            else:
                set_or_drop(x, "kind", rng.choice(kinds))
        before = validators["before", what].is_valid(x)
        valid += before
        if before != validators["after", what].is_valid(x):
            differ += 1
            print(f"differ ({what}, valid before: {before}): {json.dumps(x)[:300]}")
    print(f"{a.cases} cases, {valid} valid before, {differ} on which the schemas differ")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Turn the core's golden vectors into C for the in-kernel conformance test.

    gen_golden.py GOLDEN_DIR OUT.c

Every case of every discipline with golden vectors (one directory each)
runs through the generic qdisc `qlab`: the case's replay arguments
(--param NAME=VALUE, --seed N, see disciplines/core/replay.c) go into the
C as text, and the test module turns them into typed values with the
core's own parser (qcore_param_parse) and into the netlink options of
`tc qdisc change ... qlab disc NAME ...`.  The cases of the disciplines a
dedicated qdisc runs (ncq, cqaqm, srd, rd, rbaqm, wred) run through that
qdisc too, with the TCA_OPTIONS nest `tc` would send to it (qlab_sched.h:
attribute order and units of the core's parameter tables).  Each case's
events become a C array, its expected decision rows one string.  Mutated
copies are added that the test must see fail: with a decision row changed
(dedicated and generic), with an event changed (dedicated).
"""

import re
import struct
import sys
from decimal import Decimal
from pathlib import Path

HERE = Path(__file__).resolve().parent
LINUX = HERE.parent.parent
CORE = LINUX.parent / "core"
TCA_OPTIONS = 2

# The dedicated qdiscs: disc -> (qdisc id, core source, first parameter
# attribute, seed attribute, (variant attribute, value) or None)
DISCS = {
    "ncq": ("ncq", "ncq.c", "TCA_NCQ_SIZE_BYTES", "TCA_NCQ_SEED", None),
    "cqaqm": ("cqaqm", "cqaqm.c", "TCA_CQAQM_B_HIGH", "TCA_CQAQM_SEED", None),
    "srd": ("srd", "srd.c", "TCA_SRD_RATE_BPS", "TCA_SRD_SEED", ("TCA_SRD_VARIANT", 0)),
    "rd": ("srd", "srd.c", "TCA_SRD_RATE_BPS", "TCA_SRD_SEED", ("TCA_SRD_VARIANT", 1)),
    "rbaqm": ("rbwfq", "rbaqm.c", "TCA_RBWFQ_RB_CLASSES", "TCA_RBWFQ_SEED", ("TCA_RBWFQ_AQM", 0)),
    "wred": ("rbwfq", "wred.c", "TCA_RBWFQ_WRED_CLASSES", "TCA_RBWFQ_SEED", ("TCA_RBWFQ_AQM", 1)),
}


def uapi_enums(header: Path) -> dict:
    """Every enumerator of the uapi header with its value."""
    values = {}
    for body in re.findall(r"enum\s*\{(.*?)\};", header.read_text(), re.S):
        body = re.sub(r"/\*.*?\*/", "", body, flags=re.S)
        for i, name in enumerate(n.strip() for n in body.split(",") if n.strip()):
            values[name] = i
    return values


def param_table(source: Path) -> list:
    """(name, kind, choices) of the core's parameter table, in order."""
    text = source.read_text()
    table = re.search(r"param_descs\[\] = \{(.*?)\n\};", text, re.S).group(1)
    rows = []
    for entry in re.findall(r"\{(.*?)\n\t\}", table, re.S):
        name = re.search(r'\.name = "([^"]+)"', entry).group(1)
        kind = re.search(r"\.kind = QCORE_PARAM_(\w+)", entry).group(1)
        choices = re.search(r'\.choices = "([^"]+)"', entry)
        rows.append((name, kind, choices.group(1).split("|") if choices else None))
    return rows


def nla(attr: int, payload: bytes) -> bytes:
    head = struct.pack("=HH", 4 + len(payload), attr)
    return head + payload + b"\0" * (-len(payload) % 4)


def encode(kind: str, choices, value: str, where: str) -> bytes:
    if kind == "U32":
        return struct.pack("=I", int(value))
    if kind == "U64":
        return struct.pack("=Q", int(value))
    if kind == "PPM":
        ppm = Decimal(value) * 1000000
        if ppm != ppm.to_integral_value():
            sys.exit(f"{where}: {value} is not an exact ppm value")
        return struct.pack("=I", int(ppm))
    if kind == "ENUM":
        return struct.pack("=B", choices.index(value))
    if kind == "BOOL":
        return struct.pack("=B", int(value))
    if kind == "U32_LIST":
        return b"".join(struct.pack("=I", int(v)) for v in value.split(":"))
    sys.exit(f"{where}: unknown parameter kind {kind}")


def replay_args(args: list, where: str):
    """The seed and the --param values (text, a later one wins) of a case."""
    seed, values = 1, {}
    it = iter(args)
    for flag in it:
        value = next(it)
        if flag == "--seed":
            seed = int(value)
        elif flag == "--param":
            name, _, v = value.partition("=")
            values[name] = v  # a later --param wins, as in the replay
        else:
            sys.exit(f"{where}: unexpected argument {flag}")
    return seed, values


def options(disc: str, args: list, enums: dict, where: str) -> bytes:
    _, source, first, seed_attr, variant = DISCS[disc]
    table = param_table(CORE / source)
    index = {name: i for i, (name, _, _) in enumerate(table)}
    seed, values = replay_args(args, where)
    body = nla(enums[seed_attr], struct.pack("=Q", seed))
    if variant:
        body += nla(enums[variant[0]], struct.pack("=B", variant[1]))
    for name, v in values.items():
        if name not in index:
            sys.exit(f"{where}: unknown parameter {name}")
        _, kind, choices = table[index[name]]
        body += nla(enums[first] + index[name], encode(kind, choices, v, where))
    return nla(TCA_OPTIONS, body)


def c_bytes(data: bytes) -> str:
    return ", ".join(str(b) for b in data)


def c_string(text: str) -> str:
    lines = text.splitlines(keepends=True)
    return "\n\t".join('"' + ln.replace("\n", "\\n") + '"' for ln in lines) or '""'


def events_c(rows: list) -> str:
    out = []
    for r in rows:
        t, op, length, cls, prec, flow = r
        if op == "enq":
            out.append(f"{{ {t}ULL, {length or 0}, {flow or 0}U, 0, {cls or 0}, {prec or 0} }}")
        else:
            out.append(f"{{ {t}ULL, 0, 0, 1, 0, 0 }}")
    return ",\n\t".join(out)


def c_str(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def main() -> None:
    golden, out = Path(sys.argv[1]), Path(sys.argv[2])
    enums = uapi_enums(LINUX / "qlab_sched.h")
    # (name, qdisc, disc, opts, seed, params, rows, decisions, expect_fail)
    cases = []
    for ddir in sorted(d for d in golden.iterdir() if d.is_dir()):
        disc = ddir.name
        for events in sorted(ddir.glob("*.events.csv")):
            base = str(events)[: -len(".events.csv")]
            name = f"{disc}/{Path(base).name}"
            args_file = Path(base + ".args")
            args = args_file.read_text().split() if args_file.exists() else []
            rows = [ln.split(",") for ln in events.read_text().splitlines()[1:] if ln]
            decisions = Path(base + ".decisions.csv").read_text().split("\n", 1)[1]
            seed, values = replay_args(args, name)
            params = [f"{k}={v}" for k, v in values.items()]
            cases.append((f"qlab {name}", "qlab", disc, None, seed, params, rows, decisions, 0))
            if disc in DISCS:
                opts = options(disc, args, enums, name)
                cases.append((name, DISCS[disc][0], disc, opts, seed, None, rows, decisions, 0))

    # The proof that a drift is caught: each must fail.
    by_name = {c[0]: c for c in cases}
    for name in ("ncq/thresh-1-small-first", "qlab ncq/thresh-1-small-first"):
        _, qdisc, disc, opts, seed, params, rows, decisions, _ = by_name[name]
        flipped = decisions.replace(",queued,0,", ",queued,1,", 1)
        assert flipped != decisions
        cases.append((name + " [mutated decision]", qdisc, disc, opts, seed, params, rows, flipped, 1))
    # ncq has no head drops: decision row i is event row i.  The first
    # favoured packet made large must leave the favoured band.
    name = "ncq/thresh-1-small-first"
    _, qdisc, disc, opts, seed, params, rows, decisions, _ = by_name[name]
    favoured = next(
        i for i, d in enumerate(decisions.splitlines()) if d.split(",")[1:2] == ["enq"] and ",queued,0," in d
    )
    mutated = [list(r) for r in rows]
    mutated[favoured][2] = "1500"
    cases.append((name + " [mutated event]", qdisc, disc, opts, seed, params, mutated, decisions, 1))

    c = [
        "/* Generated by gen_golden.py from disciplines/core/golden; do not edit. */",
        '#include "qlab_golden.h"',
        "",
    ]
    for i, (_n, _q, _d, opts, _s, params, rows, decisions, _) in enumerate(cases):
        if opts is not None:
            c.append(f"static const u8 opts_{i}[] = {{ {c_bytes(opts)} }};")
        if params is not None:
            names = "".join(c_str(p) + ", " for p in params)
            c.append(f"static const char *const params_{i}[] = {{ {names}NULL }};")
        c.append(f"static const struct qlab_golden_event events_{i}[] = {{\n\t{events_c(rows)}\n}};")
        c.append(f"static const char decisions_{i}[] =\n\t{c_string(decisions)};")
    c.append("const struct qlab_golden_case qlab_golden_cases[] = {")
    for i, (name, qdisc, disc, opts, seed, params, _r, _d, expect_fail) in enumerate(cases):
        o = f"opts_{i}, sizeof(opts_{i})" if opts is not None else "NULL, 0"
        p = f"params_{i}" if params is not None else "NULL"
        c.append(
            f'\t{{ {c_str(name)}, "{qdisc}", "{disc}", {o}, {seed}ULL, {p}, '
            f"events_{i}, ARRAY_SIZE(events_{i}), decisions_{i}, {expect_fail} }},"
        )
    c.append("};")
    c.append("const u32 qlab_golden_ncases = ARRAY_SIZE(qlab_golden_cases);")
    out.write_text("\n".join(c) + "\n")


if __name__ == "__main__":
    main()

"""qlab's command line: a thin layer over the library.

User mistakes (a bad scenario, a missing tool) print one line per problem and
exit 2; no traceback.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

# Commands import what they need when they run: `run-job` runs once per
# simulation, and the scenario machinery (jsonschema, yaml) would double the
# cost of a small job.
from qlab import PROFILES, __version__, paths

EXIT_USER = 2


def _fail(lines: Sequence[str]) -> int:
    for line in lines:
        print(line, file=sys.stderr)
    return EXIT_USER


def cmd_validate(args: argparse.Namespace) -> int:
    from qlab import scenario as sc

    files = args.files or sc.discover()
    try:
        scenarios = sc.load_all(files)
        for s in scenarios:
            for profile in sc.PROFILES:
                sc.expand(s, profile)
        problems = check_discipline_params(scenarios)
    except sc.ScenarioError as exc:
        return _fail(exc.problems)
    if problems:
        return _fail(problems)
    concrete = [s for s in scenarios if not s.abstract]
    print(f"ok: {len(concrete)} scenarios valid ({len(scenarios) - len(concrete)} defaults files)")
    return 0


def check_discipline_params(scenarios: list) -> list[str]:
    """Ask the core's parser (through qcore-replay) about every series' parameters."""
    from qlab import scenario as sc

    if not paths.QCORE_REPLAY.exists():
        return [f"qlab validate: {paths.QCORE_REPLAY} is not built, so discipline parameters "
                "cannot be checked (run `make build`)"]
    problems = []
    seen: set[tuple] = set()
    for s in scenarios:
        if s.abstract:
            continue
        for profile in sc.PROFILES:
            for job in sc.expand(s, profile):
                disc = job.spec["discipline"]
                key = (disc["kind"], tuple(sorted(disc["params"].items())))
                if key in seen:
                    continue
                seen.add(key)
                # Each parameter alone first, so every value the parser
                # rejects is reported; then all together, for the checks that
                # relate parameters (a value alone may break them against
                # another parameter's default, so they are not asked alone).
                items = list(disc["params"].items())
                errors = [e for kv in items
                          if (e := _core_rejects(disc["kind"], [kv], parse_only=True))]
                if not errors and (e := _core_rejects(disc["kind"], items)):
                    errors = [e]
                field = f"series.{job.series}.params"
                origin = sc.display_path(sc.origin_of(field, s.origins, s.file))
                problems += [f"{origin}: {field}: {e}" for e in errors]
    return list(dict.fromkeys(problems))


def _core_rejects(kind: str, params: list[tuple[str, str]], parse_only: bool = False) -> str | None:
    """The core's complaint about these parameters, or None.

    parse_only: only a value the parser rejects (qcore-replay's "--param:"
    errors), not the cross-parameter checks."""
    cmd = [str(paths.QCORE_REPLAY), kind]
    for k, v in params:
        cmd += ["--param", f"{k}={v}"]
    proc = subprocess.run(cmd, input="t_ns,op,len,cls,prec,flow\n", text=True,
                          capture_output=True, check=False)
    if proc.returncode == 0:
        return None
    lines = proc.stderr.strip().splitlines()
    if parse_only and not any(line.startswith("qcore-replay: --param: ") for line in lines):
        return None
    msg = [re.sub(r"^qcore-replay: (--param: )?", "", line) for line in lines]
    return msg[-1] if msg else "rejected by the core"


def cmd_expand(args: argparse.Namespace) -> int:
    from qlab import scenario as sc

    try:
        scenarios = sc.load_all(args.files or None)
        jobs = [j for s in scenarios for j in sc.expand(s, args.profile, args.backend or None)]
    except sc.ScenarioError as exc:
        return _fail(exc.problems)
    changed = sc.write_jobs(jobs, Path(args.results))
    print(f"{len(jobs)} jobs ({changed} new or changed) under {Path(args.results) / 'jobs'}")
    return 0


def cmd_run_job(args: argparse.Namespace) -> int:
    from qlab import backends, runjob

    try:
        runjob.run_job(Path(args.job), Path(args.out), Path(args.log) if args.log else None)
    except (runjob.JobError, backends.BackendError) as exc:
        return _fail([str(exc)])
    return 0


def cmd_check_traces(args: argparse.Namespace) -> int:
    from qlab import traces

    problems = []
    for d in args.dirs:
        problems += traces.check_dir(Path(d))
    if problems:
        return _fail(problems)
    print(f"ok: {len(args.dirs)} trace directories valid")
    return 0


def cmd_replay(args: argparse.Namespace) -> int:
    if not paths.QCORE_REPLAY.exists():
        return _fail([f"qlab replay: {paths.QCORE_REPLAY} is not built (run `make build`)"])
    os.execv(str(paths.QCORE_REPLAY), [str(paths.QCORE_REPLAY), *args.rest])
    return 0  # not reached


def cmd_collect(args: argparse.Namespace) -> int:
    from qlab import collect as collect_mod
    from qlab import scenario as sc

    try:
        # the workflow names the file it expanded (its scenarios may live
        # outside scenarios/); a bare id means scenarios/<id>.yaml
        path = Path(args.scenario) if args.scenario.endswith(".yaml") \
            else paths.SCENARIOS / f"{args.scenario}.yaml"
        scen = sc.load(path)
        out = collect_mod.collect(scen, args.profile, args.backend, Path(args.results))
    except sc.ScenarioError as exc:
        return _fail(exc.problems)
    except (OSError, ValueError) as exc:
        return _fail([f"qlab collect: {exc}"])
    print(out)
    return 0


def cmd_provenance(args: argparse.Namespace) -> int:
    from qlab import provenance
    from qlab import scenario as sc

    try:
        scenarios = sc.load_all(args.files or None)
    except sc.ScenarioError as exc:
        return _fail(exc.problems)
    provenance.write(Path(args.out), scenarios, args.profile)
    return 0


def cmd_render(args: argparse.Namespace) -> int:
    site = Path(args.site).resolve()
    env = dict(os.environ, QLAB_RESULTS=str(Path(args.results).resolve()), QLAB_SITE=str(site),
               QLAB_ROOT=str(paths.ROOT), TZ=os.environ.get("TZ", "UTC"))
    quarto = shutil.which("quarto")
    if quarto and not args.fallback:
        cmd = [quarto, "render", str(paths.REPORTS), "--output-dir", str(site)]
    else:
        if not shutil.which("Rscript"):
            return _fail(["qlab render: neither quarto nor Rscript is on PATH (run scripts/setup.sh)"])
        cmd = ["Rscript", str(paths.REPORTS / "render.R")]
    proc = subprocess.run(cmd, env=env, cwd=paths.ROOT, check=False)
    if proc.returncode != 0:
        return _fail([f"qlab render: {' '.join(cmd)} failed (exit {proc.returncode})"])
    print(site / "index.html")
    return 0


def cmd_images(args: argparse.Namespace) -> int:
    from qlab import containers

    if args.action == "prune":
        try:
            removed = containers.prune()
        except containers.ImageError as exc:
            return _fail([f"qlab images: {exc}"])
        print(f"removed {len(removed)} older builds: {' '.join(removed)}".rstrip(": "))
        return 0
    if args.action == "list":
        for name, img in containers.IMAGES.items():
            stamp = containers.stamps([name]).get(name, {})
            print(f"{name:9} {stamp.get('tag', '(not built)'):28} {stamp.get('id', '')[:19]:19}"
                  f"  {'default' if img.default else 'optional'}")
        return 0
    names = args.names or [n for n, i in containers.IMAGES.items() if i.default]
    quarto = Path(args.quarto_deb) if args.quarto_deb else None
    if quarto and not quarto.is_file():
        return _fail([f"qlab images: --quarto-deb {quarto}: no such file"])
    try:
        for name in names:
            # an image's base first, so `qlab images build ns3` works from nothing
            chain: list[str] = []
            n: str | None = name
            while n and n not in chain:
                chain.insert(0, n)
                n = containers.IMAGES[n].base if n in containers.IMAGES and not args.no_deps else None
            for n in chain:
                doc = containers.build(n, quarto_deb=quarto if n == "analysis" else None)
                print(f"{n}: {doc['tag']} {doc['id']}")
    except containers.ImageError as exc:
        return _fail([f"qlab images: {exc}"])
    return 0


def cmd_export_images(args: argparse.Namespace) -> int:
    from qlab import containers

    names = args.names or ["base", *[n for n in containers.stamps() if n != "base"]]
    try:
        tags = containers.export(names, Path(args.out))
    except containers.ImageError as exc:
        return _fail([f"qlab export-images: {exc}"])
    print(f"{args.out}: {' '.join(tags)} (load with: docker load -i {args.out})")
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="qlab", description=__doc__.splitlines()[0])
    p.add_argument("--version", action="version", version=f"qlab {__version__}")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    v = sub.add_parser("validate", help="check scenario files; exit 2 listing every problem")
    v.add_argument("files", nargs="*", help="scenario files (default: every scenarios/*/*.yaml)")
    v.set_defaults(func=cmd_validate)

    e = sub.add_parser("expand", help="write the job descriptions of scenarios")
    e.add_argument("files", nargs="*")
    e.add_argument("--profile", default="quick", choices=PROFILES)
    e.add_argument("--backend", action="append", help="only this backend (repeatable)")
    e.add_argument("--results", default="results")
    e.set_defaults(func=cmd_expand)

    r = sub.add_parser("run-job", help="run one job description on its backend")
    r.add_argument("job")
    r.add_argument("--out", required=True, help="trace directory to create")
    r.add_argument("--log")
    r.set_defaults(func=cmd_run_job)

    c = sub.add_parser("check-traces", help="validate trace directories (docs/traces.md)")
    c.add_argument("dirs", nargs="+")
    c.set_defaults(func=cmd_check_traces)

    rp = sub.add_parser("replay", add_help=False,
                        help="feed events through a core discipline (qcore-replay DISC --help)")
    rp.add_argument("rest", nargs=argparse.REMAINDER)
    rp.set_defaults(func=cmd_replay)

    co = sub.add_parser("collect", help="gather a scenario's traces into tidy tables")
    co.add_argument("scenario", help="scenario id (ncq-conf/flows: scenarios/<id>.yaml) or its .yaml file")
    co.add_argument("--profile", default="quick", choices=PROFILES)
    co.add_argument("--backend", default="ns3")
    co.add_argument("--results", default="results")
    co.set_defaults(func=cmd_collect)

    pv = sub.add_parser("provenance", help="write provenance.json (commit, hashes, versions)")
    pv.add_argument("--profile", default="quick", choices=PROFILES)
    pv.add_argument("--out", default="results/provenance.json")
    pv.add_argument("files", nargs="*", help="the scenario files run (default: every scenarios/*/*.yaml)")
    pv.set_defaults(func=cmd_provenance)

    rd = sub.add_parser("render", help="render the report (quarto, or knitr + pandoc without it)")
    rd.add_argument("--results", default="results")
    rd.add_argument("--site", default=str(paths.REPORTS / "_site"), help="where the HTML goes")
    rd.add_argument("--fallback", action="store_true", help="use knitr + pandoc even if quarto exists")
    rd.set_defaults(func=cmd_render)

    im = sub.add_parser("images", help="build qlab's Docker images (containers/), list them, "
                        "or remove older builds of them (prune)")
    im.add_argument("action", choices=("build", "list", "prune"))
    im.add_argument("names", nargs="*", help="images (default: base ns3 analysis)")
    im.add_argument("--quarto-deb", help="a Quarto .deb to install in the analysis image")
    im.add_argument("--no-deps", action="store_true",
                    help="not the images they are built FROM (those must be built)")
    im.set_defaults(func=cmd_images)

    ex = sub.add_parser("export-images", help="write built images to a tarball (docker save)")
    ex.add_argument("names", nargs="*", help="images (default: every built one)")
    ex.add_argument("--out", default="build/qlab-images.tar",
                    help="tarball to write (.tar.gz: gzip-compressed)")
    ex.set_defaults(func=cmd_export_images)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    # `qlab replay` passes everything through to qcore-replay, --help included.
    if argv[:1] == ["replay"]:
        args = argparse.Namespace(rest=argv[1:], func=cmd_replay)
    else:
        args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())

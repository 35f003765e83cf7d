"""qlab's command line: a thin layer over the library.

User mistakes (a bad scenario, a missing tool) print one line per problem and
exit 2; no traceback.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

# Commands import what they need when they run: `run-job` runs once per
# sweep point (its seeds), and the scenario machinery (jsonschema, yaml) would double the
# cost of a small job.
from qlab import PROFILES, __version__, paths

EXIT_USER = 2


def _fail(lines: Sequence[str]) -> int:
    for line in lines:
        print(line, file=sys.stderr)
    return EXIT_USER


def _limits(args: argparse.Namespace) -> None:
    """--max-jobs / --max-packets: the bounds of qlab.scenario.limits()."""
    for flag, var in (("max_jobs", "QLAB_MAX_JOBS"), ("max_packets", "QLAB_MAX_PACKETS")):
        if getattr(args, flag, None) is not None:
            os.environ[var] = str(getattr(args, flag))


def validation_digest(files: Sequence[str | Path], profile: str | None) -> str:
    """What a validation's outcome depends on: the scenario files (and every
    file they may extend), qlab's code and schemas, the core's registry and
    its replay binary, the profile and the expansion limits."""
    import hashlib

    # a scenario extends files of its own tree (<tree>/<paper>/<name>.yaml)
    trees = {Path(f).resolve().parent.parent for f in files} | {paths.SCENARIOS}
    inputs = sorted(
        {*map(Path, files), *(p for t in trees for p in t.glob("*/*.yaml")), *paths.SCENARIOS.glob("*.json")}
    )
    inputs += sorted(Path(__file__).parent.rglob("*.py")) + sorted((paths.ROOT / "docs").glob("*.json"))
    inputs += [paths.ROOT / "disciplines" / "core" / "registry.json", paths.QCORE_REPLAY]
    h = hashlib.sha256(
        f"{profile}|{os.environ.get('QLAB_MAX_JOBS')}|{os.environ.get('QLAB_MAX_PACKETS')}".encode()
    )
    for path in inputs:
        h.update(str(path).encode() + b"\0")
        h.update(path.read_bytes() if path.is_file() else b"(absent)")
    return h.hexdigest()


def cmd_validate(args: argparse.Namespace) -> int:
    from qlab import plan as plans
    from qlab import scenario as sc

    files = args.files or sc.discover()
    _limits(args)
    stamp = Path(args.stamp) if args.stamp else None
    digest = validation_digest(files, args.profile) if stamp else ""
    if stamp and stamp.is_file() and stamp.read_text(encoding="utf-8", errors="replace").strip() == digest:
        print(f"ok: nothing changed since the last validation ({stamp})")
        return 0
    # Every plan's structure is the same for every seed: build and check one
    # seed of each point, series and backend (`expand` builds every seed).
    problems: list[str] = []
    try:
        scenarios = sc.load_all(files)
        jobs = []
        for s in scenarios:
            for profile in [args.profile] if args.profile else PROFILES:
                for job in sc.iter_jobs(s, profile, first_seed_only=True):
                    problems += [f"{job.scenario} {job.rel_dir}: plan: {p}" for p in plans.check(job.spec)]
                    jobs.append(job)
    except sc.ScenarioError as exc:
        return _fail(exc.problems)
    problems += check_disciplines(scenarios, jobs)
    if problems:
        return _fail(list(dict.fromkeys(problems)))
    concrete = [s for s in scenarios if not s.abstract]
    print(f"ok: {len(concrete)} scenarios valid ({len(scenarios) - len(concrete)} defaults files)")
    if stamp:
        stamp.parent.mkdir(parents=True, exist_ok=True)
        stamp.write_text(digest + "\n", encoding="utf-8")
    return 0


def check_disciplines(scenarios: list, jobs: list) -> list[str]:
    """Ask the core (through qcore-replay) about every discipline queue of
    every plan: its parameters together (check_params, which relates them)
    and the packet classes its flows will send (check_pkt)."""
    from qlab import core
    from qlab import scenario as sc

    if not paths.QCORE_REPLAY.exists():
        return [
            f"qlab validate: {paths.QCORE_REPLAY} is not built, so discipline parameters "
            "cannot be checked (run `make build`)"
        ]
    by_id = {s.id: s for s in scenarios}
    problems = []
    seen: set[tuple] = set()
    for job in jobs:
        classes = sorted({(f["cls"], f["prec"]) for f in job.spec["flows"]})
        for link in job.spec["links"]:
            for q in link["queues"].values():
                if q["kind"] not in core.names():
                    continue
                key = (q["kind"], json.dumps(q["params"], sort_keys=True), tuple(classes))
                if key in seen:
                    continue
                seen.add(key)
                error = _core_rejects(q["kind"], core.params_text(q["kind"], q["params"]), classes)
                if error:
                    s = by_id[job.scenario]
                    field = f"series.{job.series}.params"
                    origin = sc.display_path(sc.origin_of(field, s.origins, s.file))
                    problems.append(f"{origin}: {field}: {error}")
    return problems


def _core_rejects(kind: str, params: list[tuple[str, str]], classes: list[tuple[int, int]]) -> str | None:
    """The core's complaint about these parameters and packet classes, or None."""
    cmd = [str(paths.QCORE_REPLAY), kind]
    for k, v in params:
        cmd += ["--param", f"{k}={v}"]
    events = "t_ns,op,len,cls,prec,flow\n" + "".join(f"0,enq,100,{c},{p},0\n" for c, p in classes)
    proc = subprocess.run(cmd, input=events, text=True, capture_output=True, check=False)
    if proc.returncode == 0:
        return None
    lines = [re.sub(r"^qcore-replay: (--param: )?", "", line) for line in proc.stderr.strip().splitlines()]
    msg = lines[-1] if lines else "rejected by the core"
    # a class the discipline cannot take: say which flows send it
    return re.sub(r"^row \d+ \(line \d+\): column (cls|prec): ", r"flows with that \1: ", msg)


def cmd_expand(args: argparse.Namespace) -> int:
    from qlab import scenario as sc

    _limits(args)
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

    outs, logs = args.out, args.log or []
    if len(outs) != len(args.job) or (logs and len(logs) != len(args.job)):
        return _fail(
            [
                f"run-job: {len(args.job)} plans need as many --out (got {len(outs)})"
                + (f" and --log (got {len(logs)})" if logs else "")
            ]
        )
    try:
        runjob.run_point(
            [
                (Path(job), Path(out), Path(logs[i]) if logs else None)
                for i, (job, out) in enumerate(zip(args.job, outs, strict=True))
            ],
            Path(args.host) if args.host else None,
            Path(args.done) if args.done else None,
            reuse=args.reuse,
            only_if=Path(args.only_if_continues) if args.only_if_continues else None,
        )
    except (runjob.JobError, backends.BackendError) as exc:
        return _fail([str(exc)])
    return 0


def cmd_prepare_host(args: argparse.Namespace) -> int:
    import time

    from qlab import backends, traces

    try:
        backend = backends.get(args.backend)
    except backends.BackendError as exc:
        return _fail([str(exc)])
    out = Path(args.out)
    out.unlink(missing_ok=True)  # no facts of an earlier preparation survive a failed one
    log = Path(args.log) if args.log else None
    if log:
        log.parent.mkdir(parents=True, exist_ok=True)
        log.unlink(missing_ok=True)
    try:
        host = backend.prepare(log) if backend.prepares_host else {}
    except backends.BackendError as exc:
        return _fail([f"prepare-host {args.backend}: {exc}"])
    when = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    doc = {"backend": args.backend, "host": host, "prepared_at": when}
    out.parent.mkdir(parents=True, exist_ok=True)
    traces.atomic_write_bytes(out, (json.dumps(doc, indent=1, sort_keys=True) + "\n").encode())
    print(f"{args.backend}: hosts prepared ({out})")
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

    def split(value: str) -> list[str]:
        return [] if value in ("", "-") else value.split(",")

    try:
        listed = [d for done in args.listed_in or [] for d in collect_mod.listed_runs(Path(done))]
        out = collect_mod.collect(
            Path(args.out), [Path(d) for d in args.runs] + listed, split(args.sweep), split(args.tables)
        )
    except collect_mod.Damaged as exc:  # one line per damaged run, naming how to rerun it
        return _fail(exc.lines)
    except (OSError, ValueError) as exc:
        return _fail([f"qlab collect: {exc}"])
    print(out)
    return 0


def cmd_schema(args: argparse.Namespace) -> int:
    from qlab import plan as plans

    print(json.dumps(plans.schema(), indent=1))
    return 0


def cmd_backends(args: argparse.Namespace) -> int:
    from qlab import backends

    if args.available:
        ok, why = backends.available()
        if args.no_realtime:  # a cluster's batch jobs: a real-time backend needs a machine it controls
            why |= {
                n: "runs in real time (not on a cluster's batch nodes)"
                for n in ok
                if backends.get(n).realtime
            }
            ok = [n for n in ok if not backends.get(n).realtime]
        for name, reason in why.items():
            print(f"qlab backends: {name} left out: {reason}", file=sys.stderr)
        print("[" + ",".join(ok) + "]")
        return 0
    for name in backends.names():
        b = backends.get(name)
        reason = b.unavailable()
        print(f"{name:8} {'here' if reason is None else 'not here: ' + reason}\n         {b.summary}")
    return 0


def cmd_provenance(args: argparse.Namespace) -> int:
    from qlab import provenance
    from qlab import scenario as sc

    try:
        scenarios = sc.load_all(args.files or None)
    except sc.ScenarioError as exc:
        return _fail(exc.problems)
    if args.software_only:
        provenance.write_software(Path(args.out), scenarios, args.profile)
    else:
        provenance.write(Path(args.out), scenarios, args.profile)
    return 0


def cmd_render(args: argparse.Namespace) -> int:
    from qlab import backends

    site = Path(args.site).resolve()
    env = dict(
        os.environ,
        QLAB_RESULTS=str(Path(args.results).resolve()),
        QLAB_SITE=str(site),
        QLAB_ROOT=str(paths.ROOT),
        QLAB_DEFAULT_BACKEND=backends.DEFAULT,
        TZ=os.environ.get("TZ", "UTC"),
    )
    pages = [p for p in (args.pages or "").split(",") if p]
    if pages:
        listed = paths.site_pages()
        unknown = [p for p in pages if p not in listed]
        if unknown:
            return _fail(
                [
                    f"qlab render: --pages: {', '.join(unknown)} not in {paths.REPORTS / '_quarto.yml'}"
                    f" (project.render lists {', '.join(listed)})"
                ]
            )
        env["QLAB_RENDER_PAGES"] = ",".join(pages)
    quarto = shutil.which("quarto")
    if quarto and not args.fallback:
        targets = [str(paths.REPORTS / p) for p in pages] or [str(paths.REPORTS)]
        cmds = [[quarto, "render", t, "--output-dir", str(site)] for t in targets]
    else:
        if not shutil.which("Rscript"):
            return _fail(["qlab render: neither quarto nor Rscript is on PATH (run scripts/setup.sh)"])
        cmds = [["Rscript", str(paths.REPORTS / "render.R")]]
    for cmd in cmds:
        proc = subprocess.run(cmd, env=env, cwd=paths.ROOT, check=False)
        if proc.returncode != 0:
            return _fail([f"qlab render: {' '.join(cmd)} failed (exit {proc.returncode})"])
    for page in pages or ["index.qmd"]:
        print(site / page.replace(".qmd", ".html"))
    return 0


def cmd_diff(args: argparse.Namespace) -> int:
    problems = [
        f"{d}: not a results directory (no runs.csv.gz under it)"
        for d in (args.a, args.b)
        if not Path(d).is_dir() or not any(Path(d).glob("*/*/*/runs.csv.gz"))
    ]
    if problems:
        return _fail(problems)
    if not shutil.which("Rscript"):
        return _fail(["qlab diff: Rscript not found (scripts/setup.sh installs R)"])
    cmd = [
        "Rscript",
        str(paths.ROOT / "analysis" / "scripts" / "compare-runs.R"),
        "--old",
        args.a,
        "--new",
        args.b,
        *(["--out", args.out] if args.out else []),
    ]
    proc = subprocess.run(cmd, check=False, env={**os.environ, "TZ": "UTC"})
    return 0 if proc.returncode == 0 else (EXIT_USER if proc.returncode == 2 else 1)


def find_item(item_id: str) -> tuple[str, dict] | None:
    """(paper, item) of the report item with this id (analysis/papers/*.yaml)."""
    import yaml

    for spec_file in sorted((paths.ROOT / "analysis" / "papers").glob("*.yaml")):
        spec = yaml.safe_load(spec_file.read_text(encoding="utf-8"))
        for item in spec.get("items", []):
            if item.get("id") == item_id:
                return spec_file.stem, item
    return None


def figure_command(item_id: str, profile: str, results: str, backends: Sequence[str]) -> list[str] | str:
    """The Snakemake command that regenerates one report item: the runs of its
    scenarios (and of those it draws beside them) and its paper's analysis.
    A string: why there is none."""
    found = find_item(item_id)
    if found is None:
        return f"qlab figure: {item_id}: no item of analysis/papers/*.yaml has this id"
    paper, item = found
    scenarios = [item["scenario"]] if "scenario" in item else []
    scenarios += [extra["scenario"] for extra in item.get("also", [])]
    if not scenarios:  # a listing, or a figure of the paper's analytic model: no runs
        analyze = str(paths.ROOT / "analysis" / "scripts" / "analyze.R")
        return [
            "Rscript",
            analyze,
            "--results",
            results,
            "--paper",
            paper,
            "--out",
            f"{results}/analysis/{paper}",
        ]
    snakemake = Path(sys.executable).with_name("snakemake")
    cmd = [
        str(snakemake),
        "--workflow-profile",
        "workflows/profiles/local",
        "--cores",
        str(os.cpu_count() or 1),
        "--config",
        f"profile={profile}",
        f"results={results}",
        f"scenarios={json.dumps([str(paths.SCENARIOS / f'{s}.yaml') for s in scenarios])}",
    ]
    # an item comparing two backends needs both
    backends = list(backends) or [item[side] for side in ("numerator", "denominator") if side in item]
    if backends:
        cmd.append(f"backends={json.dumps(backends)}")
    return [*cmd, "--quiet", "host", "--", f"{results}/analysis/{paper}/claims.csv"]


def cmd_figure(args: argparse.Namespace) -> int:
    # the command runs in the checkout: results as an absolute path
    results = Path(args.results).resolve()
    cmd = figure_command(args.id, args.profile, str(results), args.backend or [])
    if isinstance(cmd, str):
        return _fail([cmd])
    paper = (find_item(args.id) or ("", {}))[0]
    table = results / "analysis" / paper / f"{args.id.rsplit('/', 1)[1]}.csv"
    if args.dry_run:
        print(shlex.join(cmd))
        print(table)
        return 0
    proc = subprocess.run(cmd, cwd=paths.ROOT, check=False, env={**os.environ, "TZ": "UTC"})
    if proc.returncode != 0:
        return _fail(
            [f"qlab figure {args.id}: {cmd[0]} failed (exit {proc.returncode}); logs: {args.results}/logs/"]
        )
    print(table)
    return 0


BENCH_DIR = "bench"


def compare_plan(args: argparse.Namespace) -> tuple[list[str], list[str]] | str:
    """(the Snakemake command that runs or reuses a benchmark workload's
    jobs, the Rscript command that prints A vs B); a string: why not."""
    from qlab import scenario as sc

    path = paths.SCENARIOS / BENCH_DIR / f"{args.workload}.yaml"
    known = sorted(
        p.stem for p in (paths.SCENARIOS / BENCH_DIR).glob("*.yaml") if not sc.load(p).doc.get("abstract")
    )
    if args.workload not in known:
        listed = ", ".join(known)
        return f"qlab compare: --workload {args.workload}: no such workload (scenarios/bench/: {listed})"
    try:
        scen = sc.load(path)
        doc = sc.resolve(scen, args.profile)
    except sc.ScenarioError as exc:
        return "\n".join(exc.problems)
    for name in (args.a, args.b):
        if name not in doc["series"]:
            return (
                f"qlab compare: {name}: not a discipline of {display(path)} "
                f"(series: {', '.join(sorted(doc['series']))})"
            )
    refused = _bench_backend_refusal("compare", scen, doc, args, (args.a, args.b))
    if refused:
        return refused
    results = str(Path(args.results).resolve())
    run = _bench_workflow(
        args, [str(path)], [], [f"{results}/{BENCH_DIR}/{args.workload}/{args.backend}/flows.csv.gz"]
    )
    script = paths.ROOT / "analysis" / "scripts" / "compare.R"
    show = ["Rscript", str(script), "--results", results, "--workload", args.workload]
    show += ["--a", args.a, "--b", args.b, "--backend", args.backend]
    if args.html:
        show += ["--html", str(Path(args.html).resolve())]
    return run, show


def _bench_backend_refusal(
    what: str, scen: Any, doc: dict[str, Any], args: argparse.Namespace, series: tuple[str, ...]
) -> str | None:
    """Why `qlab compare`/`qlab bench` cannot run these series of a workload
    on args.backend in args.profile (None: it can): the workload does not run
    there in this profile (and which profile does), or a series runs only
    on other backends (series.<name>.backends)."""
    from qlab import scenario as sc

    where = display(scen.file)
    if args.backend not in doc["backends"]:
        on = ", ".join(doc["backends"]) or f"no backend in the {args.profile} profile"
        elsewhere = [
            p for p in PROFILES if p != args.profile and args.backend in sc.resolve(scen, p)["backends"]
        ]
        hint = ""
        if elsewhere:
            hint = f" (on {args.backend} in profile {', '.join(elsewhere)}: --profile {elsewhere[0]})"
        return f"qlab {what}: --backend {args.backend}: {where} runs on {on}{hint}"
    for name in series:
        if not sc.series_runs_on(doc, name, args.backend):
            return (
                f"qlab {what}: {name}: runs on {', '.join(doc['series'][name]['backends'])} only "
                f"(series.{name}.backends of {where}), not on {args.backend}"
            )
    return None


def display(path: Path) -> str:
    try:
        return str(path.relative_to(paths.ROOT))
    except ValueError:
        return str(path)


def _bench_workflow(
    args: argparse.Namespace, scenarios: list[str], config: list[str], targets: list[str]
) -> list[str]:
    """The Snakemake command `qlab compare` and `qlab bench` run: these
    scenarios on args.backend in args.profile, up to these targets."""
    return [
        str(Path(sys.executable).with_name("snakemake")),
        "--workflow-profile",
        "workflows/profiles/local",
        "--cores",
        str(args.cores),
        "--config",
        f"profile={args.profile}",
        f"results={Path(args.results).resolve()}",
        f"scenarios={json.dumps(scenarios)}",
        f"backends={json.dumps([args.backend])}",
        *config,
        "--quiet",
        "host",
        "--",
        *targets,
    ]


def _run_then_show(what: str, plan: tuple[list[str], list[str]] | str, args: argparse.Namespace) -> int:
    """`qlab compare` and `qlab bench`: the workflow (its runs), then the R
    script that prints the result; --dry-run prints both commands."""
    if isinstance(plan, str):
        return _fail(plan.splitlines())
    run, show = plan
    if args.dry_run:
        print(shlex.join(run))
        print(shlex.join(show))
        return 0
    if not shutil.which("Rscript"):
        return _fail([f"qlab {what}: Rscript not found (scripts/setup.sh installs R)"])
    env = {**os.environ, "TZ": "UTC"}
    proc = subprocess.run(run, cwd=paths.ROOT, check=False, env=env)
    if proc.returncode != 0:
        return _fail(
            [f"qlab {what}: the workflow failed (exit {proc.returncode}); logs: {args.results}/logs/"]
        )
    proc = subprocess.run(show, check=False, env=env)
    return 0 if proc.returncode == 0 else (EXIT_USER if proc.returncode == 2 else 1)


def cmd_compare(args: argparse.Namespace) -> int:
    return _run_then_show("compare", compare_plan(args), args)


def bench_plan(args: argparse.Namespace) -> tuple[list[str], list[str]] | str:
    """(the Snakemake command that runs or reuses one discipline's and the
    baseline's runs of the benchmark's workloads, the Rscript command that
    places the discipline on the leaderboard); a string: why not."""
    import yaml

    from qlab import scenario as sc

    bench = paths.SCENARIOS / BENCH_DIR
    known = sorted(p.stem for p in bench.glob("*.yaml") if not sc.load(p).doc.get("abstract"))
    workloads = args.workload or known
    unknown = [w for w in workloads if w not in known]
    if unknown:
        listed = ", ".join(known)
        return f"qlab bench: --workload {', '.join(unknown)}: no such workload (scenarios/bench/: {listed})"
    baseline = yaml.safe_load((paths.ROOT / "analysis" / "bench.yaml").read_text(encoding="utf-8"))[
        "baseline"
    ]
    if args.discipline == baseline:
        return (
            f"qlab bench: --discipline {baseline}: that is the baseline every discipline is compared against"
        )
    chosen = []
    for workload in workloads:
        path = bench / f"{workload}.yaml"
        try:
            scen = sc.load(path)
            doc = sc.resolve(scen, args.profile)
        except sc.ScenarioError as exc:
            return "\n".join(exc.problems)
        if not doc["backends"] and not args.workload:
            continue  # a workload this profile does not run (bulk-1g in quick): not asked for by name
        chosen.append(workload)
        if args.discipline not in doc["series"]:
            return (
                f"qlab bench: --discipline {args.discipline}: not a discipline of {display(path)} "
                f"(series: {', '.join(sorted(doc['series']))})"
            )
        refused = _bench_backend_refusal("bench", scen, doc, args, (args.discipline, baseline))
        if refused:
            return refused
    workloads = chosen
    results = str(Path(args.results).resolve())
    bench_set = f"only-{args.discipline}"  # workflows/common.smk, BENCH_SET
    run = _bench_workflow(
        args,
        [str(bench / f"{w}.yaml") for w in workloads],
        [f"bench_series={json.dumps([args.discipline])}"],
        [f"{results}/{BENCH_DIR}/{w}/{args.backend}/sets/{bench_set}/all/flows.csv.gz" for w in workloads],
    )
    script = paths.ROOT / "analysis" / "scripts" / "bench-place.R"
    out = f"{results}/analysis/{BENCH_DIR}-{args.discipline}"
    place = [
        "Rscript",
        str(script),
        "--results",
        results,
        "--set",
        bench_set,
        "--discipline",
        args.discipline,
    ]
    place += ["--backend", args.backend, "--workloads", ",".join(workloads), "--out", out]
    return run, place


def cmd_bench(args: argparse.Namespace) -> int:
    return _run_then_show("bench", bench_plan(args), args)


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
        for name in containers.IMAGES:
            stamp = containers.stamps([name]).get(name, {})
            print(
                f"{name:9} {stamp.get('tag', '(not built)'):28} {stamp.get('id', '')[:19]:19}"
                f"  {containers.used_by(name)}"
            )
        return 0
    names = args.names or containers.default_images()
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


def cmd_testbed(args: argparse.Namespace) -> int:
    from qlab import testbed_vm

    try:
        if args.action == "up":
            inv = testbed_vm.up(build=not args.no_build, dkms=True if args.dkms else None)
            print(f"testbed: up ({', '.join(v.name for v in testbed_vm.VMS)}); inventory {inv}")
        elif args.action == "down":
            stopped = testbed_vm.down()
            print(f"testbed: stopped {', '.join(stopped) or 'nothing (no VM was running)'}")
        else:
            for name, pid in testbed_vm.status().items():
                print(f"{name}: " + (f"running (pid {pid})" if pid else "stopped"))
    except testbed_vm.TestbedError as exc:
        return _fail([f"qlab testbed {args.action}: {exc}"])
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


def _limit_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--max-jobs",
        type=int,
        metavar="N",
        help="runs a scenario may expand to, per profile (default 10,000; QLAB_MAX_JOBS)",
    )
    p.add_argument(
        "--max-packets",
        type=float,
        metavar="N",
        help="packets a scenario's runs may offer, per profile (default 1e11; QLAB_MAX_PACKETS)",
    )


class _Help(argparse.RawDescriptionHelpFormatter):
    """Defaults shown (those that say something); descriptions kept as written."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        if (
            action.default not in (None, False, argparse.SUPPRESS)
            and "%(default)" not in text
            and action.option_strings
        ):
            text += " (default: %(default)s)"
        return text


def _command(sub: Any, name: str, summary: str, details: str = "", **kw: Any) -> argparse.ArgumentParser:
    """A subcommand: `summary` in `qlab --help`, summary and details in its own help."""
    return sub.add_parser(
        name,
        help=summary,
        description=summary + (f"\n\n{details}" if details else ""),
        formatter_class=_Help,
        **kw,
    )


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="qlab",
        description=__doc__.splitlines()[0],
        formatter_class=_Help,
        epilog="`qlab COMMAND --help` for a command's arguments. Exit status: 0 "
        "ok, 2 a user mistake (one line per problem), 1 a failure.",
    )
    p.add_argument("--version", action="version", version=f"qlab {__version__}")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    v = _command(
        sub,
        "validate",
        "check scenario files; exit 2 listing every problem",
        "Loads each file with what it extends, validates it as every profile runs it (every "
        "sweep point), builds one seed's plans and asks the discipline core about their "
        "parameters (docs/jobs.md, 'How a scenario is checked').",
    )
    v.add_argument("files", nargs="*", help="scenario files (default: every scenarios/*/*.yaml)")
    v.add_argument(
        "--profile",
        choices=PROFILES,
        help="check the scenarios as this profile runs them, and its plans, only "
        "(default: every profile; make reproduce checks the profile it runs)",
    )
    v.add_argument(
        "--stamp",
        help="a file recording the inputs of the last successful validation (scenarios, "
        "qlab's code and schemas, the core); while none of them changed, nothing is "
        "checked again (make reproduce: RESULTS/.qlab-validated)",
    )
    v.set_defaults(func=cmd_validate)
    _limit_flags(v)

    e = _command(
        sub,
        "expand",
        "write the resolved plans of scenarios (RESULTS/jobs/)",
        "One plan per run: series x sweep point x seed x backend (docs/jobs.md). Only "
        "plans whose content changed are rewritten.",
    )
    e.add_argument("files", nargs="*", help="scenario files (default: every scenarios/*/*.yaml)")
    e.add_argument("--profile", default="quick", choices=PROFILES, help="which profile's runs")
    e.add_argument(
        "--backend",
        action="append",
        help="only this backend (repeatable; default: every backend each scenario lists)",
    )
    e.add_argument("--results", default="results", help="results directory (plans go to RESULTS/jobs/)")
    _limit_flags(e)
    e.set_defaults(func=cmd_expand)

    r = _command(
        sub,
        "run-job",
        "check a plan, run it on its backend, finalise its traces",
        "Nothing runs unless the plan passes the job schema and its backend can build it; "
        "nothing lands in OUT unless the traces pass validation (docs/traces.md).",
    )
    r.add_argument(
        "job",
        nargs="+",
        help="the plan (a JSON file written by `qlab expand`); several run one after another, "
        "the first failure stopping the rest",
    )
    r.add_argument(
        "--out", required=True, action="append", help="trace directory to create (one per plan, in order)"
    )
    r.add_argument(
        "--log", action="append", help="file for the runner's own output, replaced (one per plan, in order)"
    )
    r.add_argument(
        "--host",
        help="the host facts `qlab prepare-host` wrote: the backend's hosts are prepared, the run only runs "
        "(default: the run checks and prepares what it needs itself)",
    )
    r.add_argument(
        "--done",
        help="when every plan ran, write this file (the workflow's point.json: the plans' digests)",
    )
    r.add_argument(
        "--reuse",
        action="store_true",
        help="leave a run whose trace directory already holds this plan's run, intact (its digest, "
        "its tables)",
    )
    r.add_argument(
        "--only-if-continues",
        metavar="DECISION",
        help="a batch of adaptive repetition: run nothing unless this decision (qlab-adaptive/1) lets the "
        "point continue; --done then records no runs",
    )
    r.set_defaults(func=cmd_run_job)

    h = _command(
        sub,
        "prepare-host",
        "check and prepare a backend's hosts once, for many runs",
        "For a backend whose runs need a prepared machine (mininet: Mininet installed, qlab-emu "
        "built, veth works; playbooks/prepare-host.yml), does that once and writes what the runs "
        "need to OUT (`qlab run-job --host OUT`). Other backends: OUT records that nothing was needed.",
    )
    h.add_argument("backend", help="a backend (`qlab backends`)")
    h.add_argument("--out", required=True, help="the host facts file to write")
    h.add_argument("--log", help="file for the preparation's output (ansible-playbook's)")
    h.set_defaults(func=cmd_prepare_host)

    c = _command(sub, "check-traces", "validate trace directories (docs/traces.md)")
    c.add_argument("dirs", nargs="+", help="run directories (each with run.json)")
    c.set_defaults(func=cmd_check_traces)

    rp = sub.add_parser(
        "replay", add_help=False, help="feed events through a core discipline (qcore-replay DISC --help)"
    )
    rp.add_argument("rest", nargs=argparse.REMAINDER)
    rp.set_defaults(func=cmd_replay)

    co = _command(
        sub,
        "collect",
        "gather one scenario's runs (on one backend) into tidy tables",
        "Concatenates and labels; every metric is computed in analysis/R.",
    )
    co.add_argument("runs", nargs="*", help="the runs' trace directories (each with run.json)")
    co.add_argument(
        "--listed-in",
        action="append",
        metavar="DONE",
        help="also the runs a point's or a batch's done file lists (point.json, batch-<k>.json: "
        "`qlab run-job --done`), beside it (repeatable)",
    )
    co.add_argument("--out", required=True, help="where the collected tables go")
    co.add_argument("--sweep", default="-", help="the sweep variables, comma-separated, in order ('-': none)")
    co.add_argument("--tables", default="-", help="per-run tables besides flows to gather (queues,packets)")
    co.set_defaults(func=cmd_collect)

    sch = _command(sub, "schema", "print the plan schema (docs/job.schema.json, with the core's parameters)")
    sch.set_defaults(func=cmd_schema)

    be = _command(sub, "backends", "the backends, and whether this machine runs them")
    be.add_argument(
        "--available", action="store_true", help="print the ones this machine runs, as a workflow config list"
    )
    be.add_argument(
        "--no-realtime",
        action="store_true",
        help="with --available: leave out the backends that run in real time (emulation), for a cluster",
    )
    be.set_defaults(func=cmd_backends)

    pv = _command(sub, "provenance", "write provenance.json (commit, hashes, versions)")
    pv.add_argument("--profile", default="quick", choices=PROFILES, help="the profile that was run")
    pv.add_argument("--out", default="results/provenance.json", help="file to write")
    pv.add_argument(
        "--software-only",
        action="store_true",
        help="only what is known before any run: commit, scenario hashes, versions (software.json)",
    )
    pv.add_argument("files", nargs="*", help="the scenario files run (default: every scenarios/*/*.yaml)")
    pv.set_defaults(func=cmd_provenance)

    rd = _command(sub, "render", "render the report (quarto, or knitr + pandoc without it)")
    rd.add_argument("--results", default="results", help="results directory the report reads")
    rd.add_argument("--site", default=str(paths.REPORTS / "_site"), help="where the HTML goes")
    rd.add_argument("--fallback", action="store_true", help="use knitr + pandoc even if quarto exists")
    rd.add_argument(
        "--pages",
        help="only these pages of reports/_quarto.yml, comma-separated (e.g. ncq-conf.qmd); default all",
    )
    rd.set_defaults(func=cmd_render)

    df = _command(
        sub,
        "diff",
        "what changed between two result trees: figure data and verdicts",
        "Every per-run metric of both trees, paired by run (series, sweep point, seed), "
        "per figure cell the mean difference A - B with its paired 95% t-interval over "
        "the seeds both have; then every claim whose verdict differs "
        "(analysis/scripts/compare-runs.R).",
    )
    df.add_argument("a", metavar="RESULTS_A", help="a results directory (the 'before')")
    df.add_argument("b", metavar="RESULTS_B", help="a results directory (the 'after')")
    df.add_argument("--out", help="also write every cell (CSV)")
    df.set_defaults(func=cmd_diff)

    fg = _command(
        sub,
        "figure",
        "regenerate one item of the report: its runs and its paper's analysis",
        "Runs what one item needs, by its id as the report shows it (ncq-conf/fig2): "
        "the runs of its scenario (and of the scenarios drawn beside it) that are missing "
        "or out of date, then its paper's figure tables and verdicts; prints the item's "
        "figure-data CSV. Items of a paper's analytic model run nothing.",
    )
    fg.add_argument("id", help="the item's id (e.g. ncq-conf/fig2)")
    fg.add_argument("--profile", default="quick", choices=PROFILES, help="seeds and scale")
    fg.add_argument("--results", default="results", help="results directory")
    fg.add_argument("--backend", action="append", help="run on this backend (repeat; default: ns3)")
    fg.add_argument("--dry-run", action="store_true", help="print the command and the CSV, run nothing")
    fg.set_defaults(func=cmd_figure)

    cp = _command(
        sub,
        "compare",
        "two disciplines on a benchmark workload: paired differences with intervals and a verdict",
        "Runs (or reuses) the jobs of one workload of scenarios/bench/ through the workflow, as "
        "`qlab figure` does (every discipline of the workload, so the leaderboard can reuse them), "
        "then prints, per metric of the workload (analysis/bench.yaml), A's and B's means with 95% "
        "t-intervals, the paired difference A - B over seeds with its interval, the Holm-adjusted "
        "p-value over the workload's metrics and a verdict (analysis/scripts/compare.R).",
    )
    cp.add_argument("a", metavar="A", help="a discipline (series) of the workload, e.g. ncq")
    cp.add_argument("b", metavar="B", help="the one to compare with, e.g. droptail")
    cp.add_argument("--workload", required=True, help="a workload of scenarios/bench/ (e.g. small-flows)")
    cp.add_argument("--backend", default="ns3", help="the backend whose runs to compare")
    cp.add_argument("--profile", default="quick", choices=PROFILES, help="seeds and scale")
    cp.add_argument("--results", default="results", help="results directory")
    cp.add_argument("--cores", type=int, default=os.cpu_count() or 1, help="parallel simulations")
    cp.add_argument("--html", metavar="FILE", help="also write the table as a small HTML page")
    cp.add_argument("--dry-run", action="store_true", help="print the two commands, run nothing")
    cp.set_defaults(func=cmd_compare)

    bn = _command(
        sub,
        "bench",
        "one discipline on every benchmark workload, placed on the leaderboard",
        "Runs (or reuses) the discipline's runs and the baseline's (DropTail) on the workloads of "
        "scenarios/bench/ through the workflow (config bench_series: no other discipline runs; "
        "adaptive repetition where the profile sets it), then prints, per workload and metric "
        "(analysis/bench.yaml), its rank among the disciplines with runs in RESULTS, its mean with a "
        "95% t-interval, its paired difference against the baseline with the Holm-adjusted p-value "
        "and a verdict (analysis/scripts/bench-place.R); the tables go to RESULTS/analysis/bench-X/.",
    )
    bn.add_argument("--discipline", required=True, help="a discipline (series) of the suite, e.g. ncq")
    bn.add_argument(
        "--workload",
        action="append",
        help="only this workload of scenarios/bench/ (repeatable; default: all)",
    )
    bn.add_argument("--backend", default="ns3", help="the backend to run on")
    bn.add_argument("--profile", default="quick", choices=PROFILES, help="seeds and scale")
    bn.add_argument("--results", default="results", help="results directory")
    bn.add_argument("--cores", type=int, default=os.cpu_count() or 1, help="parallel simulations")
    bn.add_argument("--dry-run", action="store_true", help="print the two commands, run nothing")
    bn.set_defaults(func=cmd_bench)

    im = _command(
        sub,
        "images",
        "build qlab's Docker images (containers/), list them, or remove older builds of them (prune)",
    )
    im.add_argument("action", choices=("build", "list", "prune"), help="what to do")
    im.add_argument(
        "names",
        nargs="*",
        help="images (default: those of the backends this machine "
        "runs, and analysis; each with what it is built FROM)",
    )
    im.add_argument("--quarto-deb", help="a Quarto .deb to install in the analysis image")
    im.add_argument(
        "--no-deps", action="store_true", help="not the images they are built FROM (those must be built)"
    )
    im.set_defaults(func=cmd_images)

    tb = _command(
        sub,
        "testbed",
        "the virtual testbed: three QEMU VMs (sender, router, receiver) reached by SSH (up, down, status)",
        "up builds the cached image (testbed/vm/mkrootfs.sh), boots the VMs that are not running, "
        "waits for SSH and writes inventories/vm-testbed.yml; down stops the VMs it started.",
    )
    tb.add_argument("action", choices=("up", "down", "status"))
    tb.add_argument("--no-build", action="store_true", help="do not check or build the image first")
    tb.add_argument(
        "--dkms",
        action="store_true",
        help="up: the router boots an image with dkms, gcc and its kernel's headers and builds qlab's "
        "modules itself (testbed_qdisc_kmod_method: dkms) instead of taking the prebuilt ones",
    )
    tb.set_defaults(func=cmd_testbed)

    ex = _command(sub, "export-images", "write built images to a tarball (docker save)")
    ex.add_argument("names", nargs="*", help="images (default: every built one)")
    ex.add_argument(
        "--out", default="build/qlab-images.tar", help="tarball to write (.tar.gz: gzip-compressed)"
    )
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

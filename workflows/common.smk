# Configuration, scenario expansion and the input functions every module uses.
#
# Parsing expands every scenario into its runs in memory (no file is
# written here): the `plan` rule writes each run's plan, so a second run
# with nothing changed writes nothing and runs nothing, and changing one
# scenario value reruns only the runs whose plan changed (their `digest`
# param changes).
import hashlib
import os
import re
import shlex
import json
import sys
from pathlib import Path

import yaml
from snakemake.scheduling import job_scheduler as snakemake_job_scheduler
from snakemake.utils import validate

from qlab import backends as qlab_backends
from qlab import paths as qlab_paths
from qlab import resume as qlab_resume
from qlab import scenario as sc
from qlab import snakemake_timers as qlab_snakemake_timers

# One pending scheduler re-evaluation, not one per finished job (qlab/snakemake_timers.py).
qlab_snakemake_timers.install(snakemake_job_scheduler.JobScheduler)


configfile: "workflows/config.yaml"


validate(config, "config.schema.json")

_unknown = [b for b in config["backends"] if b not in qlab_backends.names()]
if _unknown:
    print(
        f"config: backends: unknown {', '.join(_unknown)} (known: {', '.join(qlab_backends.names())})",
        file=sys.stderr,
    )
    sys.exit(2)

RUNTIME = config["runtime"]  # native | docker (workflows/containers.smk)


# Rules run qlab as `python3 -m qlab`: in an image, the image's Python; on
# the host, the Python running this workflow (the checkout's venv), first on
# the jobs' PATH. Not a parameter of the rules: Snakemake reruns a job whose
# params changed, and `python -m snakemake` and the `snakemake` script name
# the same interpreter by two paths (tests/test_e2e.py). Local and SLURM
# jobs inherit this environment; PATH is no `envvars:` of the workflow, which
# would send this host's PATH into a Kubernetes pod in place of its image's
# (tests/test_kubernetes.py).
qlab_paths.interpreter_first_on_path()
RESULTS = config["results"].rstrip("/")
SITE = config["site"].rstrip("/")
PROFILE = config["profile"]

try:
    SCENARIOS = [s for s in sc.load_all(config["scenarios"] or None) if not s.abstract]
    JOBS = [j for s in SCENARIOS for j in sc.expand(s, PROFILE, config["backends"])]
    RESOLVED = {s.id: sc.resolve(s, PROFILE) for s in SCENARIOS}
except sc.ScenarioError as exc:
    for line in exc.problems:
        print(line, file=sys.stderr)
    sys.exit(2)

# The benchmark suite (scenarios/bench/) is no paper: its leaderboard is
# computed by the analyze_bench rule (analysis/scripts/bench.R), not from a
# paper spec and claims.
BENCH = "bench"
BENCH_BASELINE = yaml.safe_load(Path("analysis/bench.yaml").read_text(encoding="utf-8"))["baseline"]

# `qlab bench --discipline X` (config bench_series): only those series of
# the suite, and the baseline they are compared against.
BENCH_SERIES = list(config.get("bench_series") or [])
if BENCH_SERIES:
    _known = {j.series for j in JOBS if j.scenario.split("/")[0] == BENCH}
    _unknown = [s for s in BENCH_SERIES if s not in _known]
    if _unknown:
        print(
            f"config: bench_series: {', '.join(_unknown)}: not a series of the benchmark suite"
            f" (scenarios/bench/: {', '.join(sorted(_known)) or 'none run'})",
            file=sys.stderr,
        )
        sys.exit(2)
    JOBS = [
        j
        for j in JOBS
        if j.scenario.split("/")[0] != BENCH or j.series in BENCH_SERIES or j.series == BENCH_BASELINE
    ]
# Where a set of the suite's series keeps its own collections (adaptive
# repetition's decisions, and `qlab bench`'s collection of its series):
# results/bench/<workload>/<backend>/sets/<set>/, so that `qlab bench` and
# a whole reproduction never overwrite each other's (the runs are shared).
BENCH_SET = "all" if not BENCH_SERIES else "only-" + "+".join(sorted(BENCH_SERIES))

# Adaptive repetition (scenario `repetition`, analysis/bench.yaml): a
# point's seeds run in batches of this many, each batch after the
# previous one's decision (workflows/simulate.smk). Benchmark workloads
# only: the rule compares each series with the suite's baseline.
REPETITION = {}
for _s in SCENARIOS:
    _batch = (RESOLVED[_s.id].get("repetition") or {}).get("batch")
    if _batch is None:
        continue
    if _s.paper != BENCH:
        print(
            f"{_s.id}: repetition: adaptive repetition is for the benchmark suite (scenarios/bench/) only",
            file=sys.stderr,
        )
        sys.exit(2)
    REPETITION[_s.id] = min(int(_batch), len(RESOLVED[_s.id]["seeds"]))


def repetition_rules():
    """The adaptive rules (batch:cap) the benchmark's workloads run by, in
    this profile and in the paper profile: the page shows what optional
    stopping does to coverage under each, whichever profile it shows."""
    rules = set()
    for s in SCENARIOS:
        if s.paper != BENCH:
            continue
        for profile in dict.fromkeys([PROFILE, "paper"]):
            doc = RESOLVED[s.id] if profile == PROFILE else sc.resolve(s, profile)
            batch = (doc.get("repetition") or {}).get("batch")
            if batch and batch < len(doc["seeds"]):
                rules.add(f"{batch}:{len(doc['seeds'])}")
    return ",".join(sorted(rules)) or "-"


# A reproduction resumes by itself after a kill (qlab/resume.py): the main
# Snakemake process holds qlab's lock while it lives (a second reproduction
# exits 2 naming it) and, holding it, clears Snakemake's stale locks, sweeps
# the work directories of killed runs and sets damaged runs aside, so that
# their outputs are missing and they run again. Jobs that Snakemake starts
# as processes of their own parse this file too: they leave all that alone.
if workflow.is_main_process:
    QLAB_LOCK = qlab_resume.start(Path(RESULTS), [Path(RESULTS) / j.rel_dir for j in JOBS])


# The analysis code (R): a change reruns the analyses (workflows/analyze.smk)
# and the adaptive-repetition decisions (workflows/simulate.smk).
ANALYSIS_CODE = sorted(str(p) for p in Path("analysis/R").glob("*.R")) + sorted(
    str(p) for p in Path("analysis/scripts").glob("*.R")
)


def papers_with_analytic_items():
    """Papers with items that need no run (a figure of the paper's analytic
    model): analysed in every reproduction, they cost seconds. When the
    workflow runs none of such a paper's scenarios (`scenarios=` limited
    them), its analysis holds the analytic items and its run items are
    empty (analyze_paper in analysis/R/analyze-paper.R)."""
    out = set()
    for spec_file in Path("analysis/papers").glob("*.yaml"):
        spec = yaml.safe_load(spec_file.read_text(encoding="utf-8"))
        if any(item.get("kind") == "model_vs_x" for item in spec.get("items", [])):
            out.add(spec_file.stem)
    return out


BENCH_SCENARIOS = [s for s in SCENARIOS if s.paper == BENCH]
PAPERS = sorted(({s.paper for s in SCENARIOS} | papers_with_analytic_items()) - {BENCH})


def papers_of_page(page):
    """The papers whose results a page shows: its load_paper_context() calls."""
    text = (Path("reports") / page).read_text(encoding="utf-8")
    return sorted(set(re.findall(r'load_paper_context\("([^"]+)"\)', text)))


# A page that shows papers' results renders as soon as their analyses are
# done, while other papers still simulate (the `page` rule); the rest
# (index, verdicts, provenance, benchmark), which read every paper or every
# run, render last (the `report` rule). A page whose papers this run does
# not include renders last too, and says so.
PAGE_PAPERS = {
    page[: -len(".qmd")]: papers_of_page(page)
    for page in qlab_paths.site_pages()
    if papers_of_page(page) and set(papers_of_page(page)) <= set(PAPERS)
}


def git_state():
    """The checkout's commit, with '-dirty' when tracked files differ from it."""
    import subprocess

    def git(*args):
        out = subprocess.run(["git", *args], capture_output=True, text=True, check=False)
        return out.stdout.strip() if out.returncode == 0 else None

    head = git("rev-parse", "HEAD") or "unknown"
    return head + ("-dirty" if git("status", "--porcelain", "--untracked-files=no") else "")


# A provenance parameter: a new commit regenerates the provenance page and
# the report (Snakemake's params trigger), never a simulation.
GIT_STATE = git_state()


wildcard_constraints:
    paper="[a-z0-9-]+",
    name="[a-z0-9-]+",
    backend="[a-z0-9]+",
    point="[A-Za-z0-9.+_-]+",
    seed="[0-9]+",
    batch="[0-9]+",


def point_of(job):
    """The point a run belongs to: paper/name/backend/point."""
    return job.rel_dir.rsplit("/", 1)[0]


JOBS_BY_POINT = {}
for _job in JOBS:
    JOBS_BY_POINT.setdefault(point_of(_job), []).append(_job)
for _jobs in JOBS_BY_POINT.values():
    _jobs.sort(key=lambda j: j.seed)


def is_realtime(wildcards):
    """Whether the job's backend runs in real time (Backend.realtime)."""
    return qlab_backends.get(wildcards.backend).realtime


def run_priority(wildcards):
    """A run's scheduling priority: an emulation's first (10: they start
    while the cores are free, a simulation beside each), then every other
    run (1), and only then what reads their results (0: collections,
    analyses, pages), so that no paper's last simulations start after
    other papers' analyses and pages have taken the cores, as in one quick
    reproduction that left 180 core-s idle at its end. On a CPU-bound run
    it changes nothing measurable (docs/benchmarks.md, "2026-11-28
    (nineteenth session)" under "Orchestration")."""
    return 10 if is_realtime(wildcards) else 1


def simulate_threads(wildcards):
    """A point job's cores: every one for an exclusive backend (the virtual
    testbed), every one but one for another realtime backend (one simulation
    runs beside it), else one."""
    backend = qlab_backends.get(wildcards.backend)
    if backend.exclusive:
        return workflow.cores
    return max(1, workflow.cores - 1) if backend.realtime else 1


def jobs_of_point(wildcards):
    return JOBS_BY_POINT[f"{wildcards.paper}/{wildcards.name}/{wildcards.backend}/{wildcards.point}"]


def plan_text(job):
    return sc.plan_json(job.spec)


def plans_doc(wildcards):
    """plans.json: each of the point's plans (seed-<n>.json) and its SHA-256."""
    plans = {
        f"seed-{j.seed}.json": hashlib.sha256(plan_text(j).encode()).hexdigest()
        for j in jobs_of_point(wildcards)
    }
    return json.dumps({"schema": "qlab-plans/1", "plans": plans}, indent=1, sort_keys=True) + "\n"


def plans_digest(wildcards):
    """The point's plans' content, on which its plan job reruns (a params trigger)."""
    return hashlib.sha256(plans_doc(wildcards).encode()).hexdigest()


def write_plans(wildcards, path, log):
    """The plan rule's job: the point's plans, each written only when its
    content differs, then plans.json."""
    lines = []
    for j in jobs_of_point(wildcards):
        plan = Path(path).parent / f"seed-{j.seed}.json"
        lines.append(f"{plan}: {'written' if sc.write_if_changed(plan, plan_text(j)) else 'unchanged'}\n")
    sc.write_if_changed(Path(path), plans_doc(wildcards))
    Path(log).write_text("".join(lines))


def point_run_args(wildcards):
    """qlab run-job's arguments for a point's runs: the plans, then one
    --out and one --log each, in the same order."""
    jobs = jobs_of_point(wildcards)
    q = shlex.quote
    return " ".join(
        [q(f"{RESULTS}/jobs/{j.rel_dir}.json") for j in jobs]
        + [f"--out {q(f'{RESULTS}/{j.rel_dir}')}" for j in jobs]
        + [f"--log {q(f'{RESULTS}/logs/simulate/{j.rel_dir}.log')}" for j in jobs]
    )


def write_scenario_description(wildcards, output, log):
    """The describe_scenario rule's job: scenario.json and graph.json."""
    lines = []
    for path, text in (
        (output.scenario, sc.canonical_json(resolved_doc(wildcards))),
        (output.graph, scenario_graph_text(wildcards)),
    ):
        lines.append(f"{path}: {'written' if sc.write_if_changed(Path(path), text) else 'unchanged'}\n")
    Path(log).write_text("".join(lines))


def scenario_graph_text(wildcards):
    """The plan of a scenario's first run on a backend (graph.json): the
    topology drawings are made from its graph; it says which run it is."""
    scenario = f"{wildcards.paper}/{wildcards.name}"
    job = min(
        (j for j in JOBS if j.scenario == scenario and j.backend == wildcards.backend),
        key=lambda j: (j.series, j.point, j.seed),
    )
    return sc.plan_json(job.spec)


def jobs_of_scenario(wildcards):
    """Every run of one scenario on one backend."""
    scenario = f"{wildcards.paper}/{wildcards.name}"
    return [j for j in JOBS if j.scenario == scenario and j.backend == wildcards.backend]


def runs_of_scenario(wildcards):
    """point.json of every point of one scenario on one backend (a point
    one of whose runs is missing or damaged loses it when the workflow
    starts, qlab.resume, and runs again); with adaptive repetition, every
    batch-<k>.json of every point (the runs each batch ran)."""
    return done_files_of_scenario(wildcards) + image_of(qlab_backends.get(wildcards.backend).image)


def done_files_of_scenario(wildcards, last_batch=None):
    """The done files of a scenario's points: point.json each, or its
    batch files up to last_batch (all by default) under adaptive repetition."""
    points = dict.fromkeys(point_of(j) for j in jobs_of_scenario(wildcards))
    scenario = f"{wildcards.paper}/{wildcards.name}"
    if scenario not in REPETITION:
        return [f"{RESULTS}/{p}/{qlab_resume.POINT_FILE}" for p in points]
    return [
        f"{RESULTS}/{p}/batch-{k}.json"
        for p in points
        for k in range(1, (last_batch or batches_of_scenario(scenario)) + 1)
    ]


def batches_of_scenario(scenario):
    """How many batches a scenario of adaptive repetition runs at most."""
    seeds = len(RESOLVED[scenario]["seeds"])
    return -(-seeds // REPETITION[scenario])


def jobs_of_batch(wildcards):
    """The runs of one batch of a point: its seeds' k-th slice of `repetition.batch`."""
    size = REPETITION[f"{wildcards.paper}/{wildcards.name}"]
    k = int(wildcards.batch)
    return jobs_of_point(wildcards)[(k - 1) * size : k * size]


def batch_run_args(wildcards):
    """qlab run-job's arguments for one batch of a point (as point_run_args)."""
    jobs = jobs_of_batch(wildcards)
    if not jobs:
        raise ValueError(f"{wildcards.paper}/{wildcards.name}: no batch {wildcards.batch}")
    q = shlex.quote
    return " ".join(
        [q(f"{RESULTS}/jobs/{j.rel_dir}.json") for j in jobs]
        + [f"--out {q(f'{RESULTS}/{j.rel_dir}')}" for j in jobs]
        + [f"--log {q(f'{RESULTS}/logs/simulate/{j.rel_dir}.log')}" for j in jobs]
    )


def adaptive_dir(wildcards):
    """Where this set of series keeps its collections and adaptive-repetition decisions."""
    return f"{RESULTS}/{wildcards.paper}/{wildcards.name}/{wildcards.backend}/sets/{BENCH_SET}"


def previous_decision(wildcards):
    """The decision a batch waits for: the one after the batch before (none for the first)."""
    k = int(wildcards.batch)
    return [f"{adaptive_dir(wildcards)}/batch-{k - 1}.json"] if k > 1 else []


def batches_so_far(wildcards):
    """The batch files of every point of a workload up to this batch (a decision's runs)."""
    return done_files_of_scenario(wildcards, last_batch=int(wildcards.batch))


def collect_sources(wildcards):
    """collect's runs: the trace directories, or the done files that list them (adaptive repetition)."""
    if f"{wildcards.paper}/{wildcards.name}" in REPETITION:
        return " ".join(f"--listed-in {shlex.quote(f)}" for f in done_files_of_scenario(wildcards))
    return " ".join(shlex.quote(f"{RESULTS}/{j.rel_dir}") for j in jobs_of_scenario(wildcards))


def scenario_files(wildcards):
    """The YAML files that define a scenario (the file and what it extends)."""
    scenario = f"{wildcards.paper}/{wildcards.name}"
    return [str(f) for s in SCENARIOS if s.id == scenario for f in s.files]


def resolved_doc(wildcards):
    return RESOLVED[f"{wildcards.paper}/{wildcards.name}"]


def collected_of_paper(wildcards):
    """The collected flow tables of every scenario (and backend) of one paper."""
    return sorted(
        {
            f"{RESULTS}/{j.scenario}/{j.backend}/flows.csv.gz"
            for j in JOBS
            if j.scenario.split("/")[0] == wildcards.paper
        }
    ) + image_of("analysis")


def collected_of_bench(wildcards):
    """The collected flow tables of every benchmark workload (and backend)."""
    return sorted(
        {
            f"{RESULTS}/{j.scenario}/{j.backend}/flows.csv.gz"
            for j in JOBS
            if j.scenario.split("/")[0] == BENCH
        }
    ) + image_of("analysis")


def runner_tools(wildcards):
    """Programs a backend's runner needs; building them is a rule (build.smk).
    Under the docker runtime the runner is built into the backend's image."""
    if RUNTIME == "docker":
        return image_of(qlab_backends.get(wildcards.backend).image)
    return [workdir_relative(p) for p in qlab_backends.get(wildcards.backend).tools().values()]


def prepared_host(wildcards):
    """The host facts of a backend prepared once per reproduction (the
    prepare_host rule), natively; nothing otherwise."""
    if RUNTIME == "docker" or not qlab_backends.get(wildcards.backend).prepares_host:
        return []
    return [f"{RESULTS}/hosts/{wildcards.backend}.json"]


def workdir_relative(path):
    """A path under the working directory as the build rules name their
    outputs (relative): Snakemake matches an input to a rule's output by its
    text, so an absolute input would find no rule to build it."""
    try:
        return str(Path(path).resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def image_of(name):
    """The stamp of the image a job runs in, under the docker runtime (a rule
    of containers.smk builds it); nothing natively."""
    return [f"build/images/{name}.json"] if RUNTIME == "docker" and name else []

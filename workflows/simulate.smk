# Plans, runs and collection: one plan job and one run job per (series x
# sweep point x backend), running every seed of the point; one collection
# per scenario and backend. A job per seed made Snakemake's own scheduling
# the largest cost of a reproduction after the simulators (every finished
# job starts a round over every ready job; docs/benchmarks.md,
# "Orchestration"): a point's seeds are the batch.


# The resolved plans of a point's runs (docs/jobs.md), seed-<n>.json each,
# from the expansion made at parse time, each rewritten only when its
# content changes; plans.json, their digests, is the job's output. The job
# reruns when any of its plans changed (the digest).
rule plan:
    output:
        f"{RESULTS}/jobs/{{paper}}/{{name}}/{{backend}}/{{point}}/plans.json",
    log:
        f"{RESULTS}/logs/plan/{{paper}}/{{name}}/{{backend}}/{{point}}.log",
    # an emulation's plans first, so its runs can start early (rule simulate)
    priority: run_priority
    localrule: True
    params:
        digest=plans_digest,
    run:
        write_plans(wildcards, output[0], log[0])


# A backend whose runs need a prepared machine (mininet: Mininet, qlab-emu,
# veth) has it prepared once per reproduction, not by each run; its runs
# read the host facts this writes (natively: in an image each job brings
# its own host).
rule prepare_host:
    input:
        lambda w: sorted(str(p) for g in qlab_backends.get(w.backend).host_inputs for p in Path().glob(g)),
    output:
        f"{RESULTS}/hosts/{{backend}}.json",
    log:
        f"{RESULTS}/logs/prepare/{{backend}}.log",
    # first, while every core is free: later a job that needs them all
    # waits for the last simulation (the greedy scheduler fills a core as
    # soon as one frees)
    priority: 20
    # it may build qlab-emu and probes the kernel: nothing else runs meanwhile
    threads: workflow.cores
    shell:
        "python3 -m qlab prepare-host {wildcards.backend} --out {output:q} --log {log:q}"


# Every seed of a point, one after another in one `qlab run-job` (each run
# placed in seed-<n>/ as it finishes, with its log in
# logs/simulate/.../<point>/seed-<n>.log); point.json, written when all
# have finished, is the job's output. A run that fails stops the point's
# job; the runs before it stay, and the point runs again whole.
rule simulate:
    input:
        plans=f"{RESULTS}/jobs/{{paper}}/{{name}}/{{backend}}/{{point}}/plans.json",
        tools=runner_tools,
        host=prepared_host,
    output:
        f"{RESULTS}/{{paper}}/{{name}}/{{backend}}/{{point}}/{qlab_resume.POINT_FILE}",
    # what run-job says (a failure names its plan), also on Snakemake's stderr
    log:
        f"{RESULTS}/logs/simulate/{{paper}}/{{name}}/{{backend}}/{{point}}.log",
    # an emulation's runs first (see threads)
    priority: run_priority
    # A cluster profile batches these (group-components) where per-job
    # overhead would dominate; locally each runs as its own process.
    group:
        "simulate"
    # A backend that runs in real time (emulation) checks its own timing: its
    # jobs run one at a time (the `realtime` resource, 1 in the local and
    # docker profiles) with every core but one; the one left runs a
    # simulation beside it (measured on 2 cores: the runs' validity followed
    # the machine, not the simulation, and the flows' completion times
    # stayed within their spread; docs/benchmarks.md), and they start first,
    # so the emulation's real time overlaps the simulations'.
    # (the virtual testbed takes every core: simulate_threads)
    threads: simulate_threads
    # a cluster job's time limit (minutes): 2 per seed, as for the longest
    # quick-profile simulation with a margin (workflows/profiles/slurm)
    resources:
        mem_mb=500,
        runtime=lambda w: 2 * len(jobs_of_point(w)),
        realtime=lambda w: 1 if is_realtime(w) else 0,
    params:
        runs=point_run_args,
        host=lambda w, input: f"--host {shlex.quote(str(input.host[0]))}" if len(input.host) else "",
    shell:
        "set -o pipefail; python3 -m qlab run-job {params.runs} --done {output:q} {params.host} 2>&1"
        " | tee {log:q} >&2"


# Adaptive repetition (a benchmark workload whose scenario sets
# `repetition.batch`): a point's seeds run in batches, batch k (its seeds'
# k-th slice) only if the decision after batch k-1 lets the point continue
# (`qlab run-job --only-if-continues`); a stopped point's later batches run
# nothing and say so in their batch-<k>.json. The DAG is the same whatever
# the decisions (no checkpoint): every batch job exists, and one a decision
# stopped costs a process start. A batch run again after its decision's
# input changed reuses its runs that are in place (--reuse).
rule simulate_batch:
    input:
        plans=f"{RESULTS}/jobs/{{paper}}/{{name}}/{{backend}}/{{point}}/plans.json",
        tools=runner_tools,
        host=prepared_host,
        decision=previous_decision,
    output:
        f"{RESULTS}/{{paper}}/{{name}}/{{backend}}/{{point}}/batch-{{batch}}.json",
    log:
        f"{RESULTS}/logs/simulate/{{paper}}/{{name}}/{{backend}}/{{point}}.batch-{{batch}}.log",
    priority: run_priority
    group:
        "simulate"
    threads: 1
    resources:
        mem_mb=500,
        runtime=lambda w: 2 * len(jobs_of_batch(w)),
        realtime=0,
    params:
        runs=batch_run_args,
        host=lambda w, input: f"--host {shlex.quote(str(input.host[0]))}" if len(input.host) else "",
        only_if=lambda w, input: (
            f"--only-if-continues {shlex.quote(str(input.decision[0]))}" if len(input.decision) else ""
        ),
    shell:
        "set -o pipefail; python3 -m qlab run-job {params.runs} --done {output:q} --reuse {params.only_if}"
        " {params.host} 2>&1 | tee {log:q} >&2"


# Every run of a workload so far (up to batch k), collected for the decision
# after batch k: the tables the leaderboard reads, of the runs the batch
# files list.
rule collect_batch:
    input:
        runs=batches_so_far,
        scenario=f"{RESULTS}/{{paper}}/{{name}}/{{backend}}/scenario.json",
    output:
        flows=f"{RESULTS}/{{paper}}/{{name}}/{{backend}}/sets/{BENCH_SET}/batch-{{batch}}/flows.csv.gz",
        runs=f"{RESULTS}/{{paper}}/{{name}}/{{backend}}/sets/{BENCH_SET}/batch-{{batch}}/runs.csv.gz",
    log:
        f"{RESULTS}/logs/collect/{{paper}}/{{name}}/{{backend}}/set-{BENCH_SET}-batch-{{batch}}.log",
    # it and the decision open the next batch's runs: a run's priority
    priority: run_priority
    localrule: True
    threads: 1
    params:
        sweep=lambda w: ",".join(resolved_doc(w)["sweep"]) or "-",
        tables=lambda w: ",".join(resolved_doc(w)["trace"].get("collect", [])) or "-",
        listed=lambda w, input: " ".join(f"--listed-in {shlex.quote(f)}" for f in input.runs),
    shell:
        "python3 -m qlab collect --out $(dirname {output.flows:q}) --sweep {params.sweep}"
        " --tables {params.tables} {params.listed} > {log} 2>&1"
        " && cp {input.scenario:q} $(dirname {output.flows:q})/scenario.json"


# Every run of a workload's series in this set (`qlab bench --discipline X`:
# X and the baseline), collected apart from the scenario's own collection.
rule collect_set:
    input:
        runs=done_files_of_scenario,
        scenario=f"{RESULTS}/{{paper}}/{{name}}/{{backend}}/scenario.json",
    output:
        flows=f"{RESULTS}/{{paper}}/{{name}}/{{backend}}/sets/{BENCH_SET}/all/flows.csv.gz",
        runs=f"{RESULTS}/{{paper}}/{{name}}/{{backend}}/sets/{BENCH_SET}/all/runs.csv.gz",
    log:
        f"{RESULTS}/logs/collect/{{paper}}/{{name}}/{{backend}}/set-{BENCH_SET}-all.log",
    localrule: True
    threads: 1
    params:
        sweep=lambda w: ",".join(resolved_doc(w)["sweep"]) or "-",
        tables=lambda w: ",".join(resolved_doc(w)["trace"].get("collect", [])) or "-",
        listed=lambda w, input: " ".join(f"--listed-in {shlex.quote(f)}" for f in input.runs),
    shell:
        "python3 -m qlab collect --out $(dirname {output.flows:q}) --sweep {params.sweep}"
        " --tables {params.tables} {params.listed} > {log} 2>&1"
        " && cp {input.scenario:q} $(dirname {output.flows:q})/scenario.json"


# The adaptive rule after batch k (analysis/scripts/bench-adapt.R): which
# points of the workload run batch k + 1.
rule bench_decide:
    input:
        ANALYSIS_CODE,
        flows=f"{RESULTS}/{{paper}}/{{name}}/{{backend}}/sets/{BENCH_SET}/batch-{{batch}}/flows.csv.gz",
        spec="analysis/bench.yaml",
    output:
        f"{RESULTS}/{{paper}}/{{name}}/{{backend}}/sets/{BENCH_SET}/batch-{{batch}}.json",
    log:
        f"{RESULTS}/logs/analyze/{{paper}}/{{name}}/{{backend}}/set-{BENCH_SET}-batch-{{batch}}.log",
    priority: run_priority
    threads: 1
    params:
        batch_size=lambda w: REPETITION[f"{w.paper}/{w.name}"],
        cap=lambda w: len(resolved_doc(w)["seeds"]),
    shell:
        "TZ=UTC Rscript analysis/scripts/bench-adapt.R --collected $(dirname {input.flows:q}) --workload {wildcards.name}"
        " --batch {wildcards.batch} --batch-size {params.batch_size} --cap {params.cap} --out {output:q} > {log} 2>&1"


# What the report shows of a scenario besides its runs: the resolved
# scenario (parameters, assumptions) and the graph of its first run (the
# topology drawings), from the expansion made at parse time.
rule describe_scenario:
    output:
        scenario=f"{RESULTS}/{{paper}}/{{name}}/{{backend}}/scenario.json",
        graph=f"{RESULTS}/{{paper}}/{{name}}/{{backend}}/graph.json",
    log:
        f"{RESULTS}/logs/describe/{{paper}}/{{name}}/{{backend}}.log",
    localrule: True
    params:
        digest=lambda w: hashlib.sha256(
            (sc.canonical_json(resolved_doc(w)) + scenario_graph_text(w)).encode()
        ).hexdigest(),
    run:
        write_scenario_description(wildcards, output, log[0])


rule collect:
    input:
        runs=runs_of_scenario,
        scenario=f"{RESULTS}/{{paper}}/{{name}}/{{backend}}/scenario.json",
    output:
        flows=f"{RESULTS}/{{paper}}/{{name}}/{{backend}}/flows.csv.gz",
        runs=f"{RESULTS}/{{paper}}/{{name}}/{{backend}}/runs.csv.gz",
    log:
        f"{RESULTS}/logs/collect/{{paper}}/{{name}}/{{backend}}.log",
    # on a cluster, on the submitting host: seconds of reading the runs'
    # tables, less than a cluster job's queueing (workflows/profiles/slurm)
    localrule: True
    threads: 1
    params:
        sweep=lambda w: ",".join(resolved_doc(w)["sweep"]) or "-",
        tables=lambda w: ",".join(resolved_doc(w)["trace"].get("collect", [])) or "-",
        runs=collect_sources,
    shell:
        "python3 -m qlab collect --out $(dirname {output.flows:q}) --sweep {params.sweep}"
        " --tables {params.tables} {params.runs} > {log} 2>&1"

# Plans, runs and collection: one plan and one run per (series x sweep point
# x seed x backend), one collection per scenario and backend.


# The resolved plan of one run (docs/jobs.md), from the expansion made at
# parse time; rewritten only when its content changes (the digest).
rule plan:
    output:
        f"{RESULTS}/jobs/{{paper}}/{{name}}/{{backend}}/{{point}}/seed-{{seed}}.json",
    log:
        f"{RESULTS}/logs/plan/{{paper}}/{{name}}/{{backend}}/{{point}}/seed-{{seed}}.log",
    localrule: True
    params:
        digest=plan_digest,
    run:
        write_plan(wildcards, output[0], log[0])


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
    # it may build qlab-emu and probes the kernel: nothing else runs meanwhile
    threads: workflow.cores
    shell:
        "python3 -m qlab prepare-host {wildcards.backend} --out {output:q} --log {log:q}"


rule simulate:
    input:
        job=f"{RESULTS}/jobs/{{paper}}/{{name}}/{{backend}}/{{point}}/seed-{{seed}}.json",
        tools=runner_tools,
        host=prepared_host,
    output:
        flows=f"{RESULTS}/{{paper}}/{{name}}/{{backend}}/{{point}}/seed-{{seed}}/flows.csv.gz",
        queues=f"{RESULTS}/{{paper}}/{{name}}/{{backend}}/{{point}}/seed-{{seed}}/queues.csv.gz",
        run=f"{RESULTS}/{{paper}}/{{name}}/{{backend}}/{{point}}/seed-{{seed}}/run.json",
    log:
        f"{RESULTS}/logs/simulate/{{paper}}/{{name}}/{{backend}}/{{point}}/seed-{{seed}}.log",
    # A cluster profile batches these (group-components) where per-job
    # overhead would dominate; locally each runs as its own process.
    group:
        "simulate"
    # A backend that runs in real time (emulation) checks its own timing: it
    # gets the machine to itself (every core), a simulation one core.
    threads: lambda wildcards: workflow.cores if qlab_backends.get(wildcards.backend).realtime else 1
    resources:
        mem_mb=500,
    params:
        host=lambda w, input: f"--host {shlex.quote(str(input.host[0]))}" if len(input.host) else "",
    shell:
        "rm -f {log}; python3 -m qlab run-job {input.job:q} --out $(dirname {output.run:q}) --log {log:q} {params.host}"


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
        runs=lambda w, input: " ".join(str(Path(r).parent) for r in input.runs if r.endswith("run.json")),
    shell:
        "python3 -m qlab collect --out $(dirname {output.flows:q}) --sweep {params.sweep}"
        " --tables {params.tables} {params.runs} > {log} 2>&1"

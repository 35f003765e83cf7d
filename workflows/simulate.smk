# One job per (series x sweep point x seed x backend); collect per scenario.


rule simulate:
    input:
        job=f"{RESULTS}/jobs/{{paper}}/{{name}}/{{backend}}/{{point}}/seed-{{seed}}.json",
        tools=runner_tools,
    output:
        flows=f"{RESULTS}/{{paper}}/{{name}}/{{backend}}/{{point}}/seed-{{seed}}/flows.csv.gz",
        queues=f"{RESULTS}/{{paper}}/{{name}}/{{backend}}/{{point}}/seed-{{seed}}/queues.csv.gz",
        run=f"{RESULTS}/{{paper}}/{{name}}/{{backend}}/{{point}}/seed-{{seed}}/run.json",
    log:
        f"{RESULTS}/logs/simulate/{{paper}}/{{name}}/{{backend}}/{{point}}/seed-{{seed}}.log",
    params:
        py=PY,
    # An emulation runs in real time and checks its own timing: it gets the
    # machine to itself (every core), a simulation one core.
    threads: lambda wildcards: workflow.cores if wildcards.backend == "mininet" else 1
    resources:
        mem_mb=500,
    # A cluster profile batches these (group-components) where per-job
    # overhead would dominate; locally each runs as its own process.
    group:
        "simulate"
    shell:
        "rm -f {log}; {params.py} -m qlab run-job {input.job:q} --out $(dirname {output.run:q}) --log {log:q}"


rule collect:
    input:
        runs=runs_of_scenario,
        # scenario.json carries the assumptions the report shows
        scenario=scenario_files,
    output:
        flows=f"{RESULTS}/{{paper}}/{{name}}/{{backend}}/flows.csv.gz",
        runs=f"{RESULTS}/{{paper}}/{{name}}/{{backend}}/runs.csv.gz",
        scenario=f"{RESULTS}/{{paper}}/{{name}}/{{backend}}/scenario.json",
    log:
        f"{RESULTS}/logs/collect/{{paper}}/{{name}}/{{backend}}.log",
    params:
        py=PY,
        profile=PROFILE,
        # results/<paper>/<name>/<backend>/flows.csv.gz -> results
        results=lambda w, output: Path(output.flows).parents[3],
    threads: 1
    shell:
        "{params.py} -m qlab collect {input.scenario[0]:q} --profile {params.profile}"
        " --backend {wildcards.backend} --results {params.results} > {log} 2>&1"

# Metrics, statistics and claim verdicts, in R (analysis/R).


rule analyze:
    input:
        collected_of_paper,
        ANALYSIS_CODE,
        # srd's Figs. 1-2 replay a schedule through the core (analysis/R/model-srd-schedule.R)
        "build/core/qcore-replay",
        claims="analysis/claims/{paper}.yaml",
        paper_items="analysis/papers/{paper}.yaml",
    output:
        claims=f"{RESULTS}/analysis/{{paper}}/claims.csv",
    log:
        f"{RESULTS}/logs/analyze/{{paper}}.log",
    threads: 1
    params:
        # results/analysis/<paper>/claims.csv -> results
        results=lambda w, output: Path(output.claims).parents[2],
    shell:
        "TZ=UTC Rscript analysis/scripts/analyze.R --results {params.results} --paper {wildcards.paper}"
        " --out $(dirname {output.claims}) > {log} 2>&1"


rule analyze_bench:
    input:
        collected_of_bench,
        ANALYSIS_CODE,
        spec="analysis/bench.yaml",
    output:
        ranking=f"{RESULTS}/analysis/{BENCH}/ranking.csv",
        effects=f"{RESULTS}/analysis/{BENCH}/effects.csv",
        seeds=f"{RESULTS}/analysis/{BENCH}/seeds.csv",
        adaptive=f"{RESULTS}/analysis/{BENCH}/adaptive.csv",
        coverage=f"{RESULTS}/analysis/{BENCH}/coverage.csv",
    log:
        f"{RESULTS}/logs/analyze/{BENCH}.log",
    threads: 1
    params:
        results=lambda w, output: Path(output.ranking).parents[2],
        rules=repetition_rules(),
    shell:
        "TZ=UTC Rscript analysis/scripts/bench.R --results {params.results}"
        " --out $(dirname {output.ranking}) --rules {params.rules} > {log} 2>&1"


rule provenance:
    input:
        # each scenario on the backends it lists (and the workflow runs)
        sorted({f"{RESULTS}/{j.scenario}/{j.backend}/runs.csv.gz" for j in JOBS}),
    output:
        f"{RESULTS}/provenance.json",
    log:
        f"{RESULTS}/logs/provenance.log",
    # on a cluster, on the submitting host (reads the runs' run.json)
    localrule: True
    threads: 1
    params:
        profile=PROFILE,
        git=GIT_STATE,
        # the scenarios this workflow runs (they may live outside scenarios/)
        files=" ".join(shlex.quote(str(f)) for f in dict.fromkeys(f for s in SCENARIOS for f in s.files)),
    shell:
        "python3 -m qlab provenance --profile {params.profile} --out {output} {params.files} > {log} 2>&1"

# The Quarto website (knitr + pandoc when quarto is absent).

# every file of reports/ the pages read (the site's own output, _site, aside)
REPORT_SOURCES = sorted(
    str(p)
    for p in Path("reports").glob("*")
    if p.is_file() and p.suffix in (".qmd", ".yml", ".yaml", ".R", ".css", ".html")
)


rule report:
    input:
        REPORT_SOURCES,
        [f"{RESULTS}/analysis/{paper}/claims.csv" for paper in PAPERS],
        [f"{RESULTS}/analysis/{BENCH}/ranking.csv"] if BENCH_SCENARIOS else [],
        provenance=f"{RESULTS}/provenance.json",
    output:
        index=f"{SITE}/index.html",
    log:
        f"{RESULTS}/logs/report.log",
    # the last step: its pages render in parallel (reports/render.R)
    threads: workflow.cores
    params:
        site=lambda w, output: Path(output.index).parent,
        results=lambda w, input: Path(input.provenance).parent,
    shell:
        "QLAB_RENDER_CORES={threads} python3 -m qlab render --results {params.results} --site {params.site} > {log} 2>&1"

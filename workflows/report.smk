# The Quarto website (knitr + pandoc when quarto is absent).

REPORT_SOURCES = sorted(str(p) for p in Path("reports").glob("*.qmd")) + [
    "reports/_quarto.yml",
    "reports/_common.R",
    "reports/render.R",
]


rule report:
    input:
        REPORT_SOURCES,
        [f"{RESULTS}/analysis/{paper}/claims.csv" for paper in PAPERS],
        provenance=f"{RESULTS}/provenance.json",
    output:
        index=f"{SITE}/index.html",
    log:
        f"{RESULTS}/logs/report.log",
    threads: 1
    params:
        site=lambda w, output: Path(output.index).parent,
        results=lambda w, input: Path(input.provenance).parent,
    shell:
        "python3 -m qlab render --results {params.results} --site {params.site} > {log} 2>&1"

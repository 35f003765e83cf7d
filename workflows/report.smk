# The Quarto website (knitr + pandoc when quarto is absent).

# what every page reads besides its own .qmd (the site's output, _site,
# aside): a page renders again when these or its own source change
REPORT_SHARED = sorted(
    str(p)
    for p in Path("reports").glob("*")
    if p.is_file() and p.suffix in (".yml", ".yaml", ".R", ".css", ".html")
)
# the pages the report rule renders: those no page job does (PAGE_PAPERS)
REPORT_PAGES = [p for p in qlab_paths.site_pages() if p[: -len(".qmd")] not in PAGE_PAPERS]


# What the pages' colophons say a reproduction ran with (commit, scenario
# hashes, versions), known before any run; provenance.json adds the runs.
rule software:
    input:
        lambda w: [stamp for name in IMAGES_USED for stamp in image_of(name)],
    output:
        f"{RESULTS}/software.json",
    log:
        f"{RESULTS}/logs/software.log",
    localrule: True
    threads: 1
    params:
        profile=PROFILE,
        git=GIT_STATE,
        files=" ".join(shlex.quote(str(f)) for f in dict.fromkeys(f for s in SCENARIOS for f in s.files)),
    shell:
        "python3 -m qlab provenance --software-only --profile {params.profile} --out {output}"
        " {params.files} > {log} 2>&1"


rule page:
    input:
        REPORT_SHARED,
        "reports/{page}.qmd",
        lambda w: [f"{RESULTS}/analysis/{paper}/claims.csv" for paper in PAGE_PAPERS[w.page]],
        software=f"{RESULTS}/software.json",
    output:
        f"{SITE}/{{page}}.html",
    log:
        f"{RESULTS}/logs/report/{{page}}.log",
    wildcard_constraints:
        page="|".join(map(re.escape, PAGE_PAPERS)) or "(?!)",
    threads: 1
    params:
        site=lambda w, output: Path(output[0]).parent,
        results=lambda w, input: Path(input.software).parent,
    shell:
        "python3 -m qlab render --pages {wildcards.page}.qmd --results {params.results} --site {params.site}"
        " > {log} 2>&1"


rule report:
    input:
        REPORT_SHARED,
        [f"reports/{p}" for p in REPORT_PAGES],
        [f"{RESULTS}/analysis/{paper}/claims.csv" for paper in PAPERS],
        [f"{RESULTS}/analysis/{BENCH}/ranking.csv"] if BENCH_SCENARIOS else [],
        [f"{SITE}/{page}.html" for page in PAGE_PAPERS],
        software=f"{RESULTS}/software.json",
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
        pages=",".join(REPORT_PAGES),
    shell:
        "QLAB_RENDER_CORES={threads} python3 -m qlab render --pages {params.pages}"
        " --results {params.results} --site {params.site} > {log} 2>&1"

#!/usr/bin/env Rscript
# Render the site without Quarto: every page listed in _quarto.yml (index
# first) through knitr + pandoc (rmarkdown), as standalone HTML pages with
# their figures embedded, under reports/_site, with the navbar of
# _quarto.yml on every page. Works offline (no MathJax).
#
#   Rscript reports/render.R        (from the repo root)
#
# Honours QLAB_RESULTS (default <root>/results), QLAB_ROOT (default the repo
# root), QLAB_SITE (default reports/_site) and QLAB_BACKEND. Relative values
# are taken relative to the directory this is run from.

if (Sys.getenv("TZ") == "") Sys.setenv(TZ = "UTC")

`%||%` <- function(x, default) if (is.null(x)) default else x

script_path <- function() {
  file_arg <- grep("^--file=", commandArgs(FALSE), value = TRUE)
  if (length(file_arg) == 0) stop("render.R: run it with Rscript reports/render.R")
  normalizePath(sub("^--file=", "", file_arg[[1]]))
}

reports_dir <- dirname(script_path())
root_dir <- normalizePath(Sys.getenv("QLAB_ROOT", dirname(reports_dir)), mustWork = TRUE)
results_dir <- normalizePath(Sys.getenv("QLAB_RESULTS", file.path(root_dir, "results")), mustWork = FALSE)
if (!dir.exists(results_dir)) {
  stop(sprintf("render.R: results directory %s not found (set QLAB_RESULTS)", results_dir), call. = FALSE)
}
# Pages run with reports/ as their working directory: pass absolute paths.
Sys.setenv(QLAB_ROOT = root_dir, QLAB_RESULTS = results_dir)

site <- yaml::read_yaml(file.path(reports_dir, "_quarto.yml"))
navbar <- site$website$navbar$left
pages <- unlist(site$project$render %||% purrr::map_chr(navbar, "href"))
pages <- c(intersect("index.qmd", pages), setdiff(pages, "index.qmd"))
# a child of a parallel render renders the pages it is given (comma-separated)
only_pages <- Sys.getenv("QLAB_RENDER_PAGES")
if (nzchar(only_pages)) pages <- intersect(pages, strsplit(only_pages, ",", fixed = TRUE)[[1]])
site_dir <- Sys.getenv("QLAB_SITE", file.path(reports_dir, site$project$`output-dir` %||% "_site"))
dir.create(site_dir, showWarnings = FALSE, recursive = TRUE)
site_dir <- normalizePath(site_dir)

html_name <- function(page) sub("\\.qmd$", ".html", page)

navbar_fragment <- function(navbar, site_title) {
  links <- vapply(navbar, function(entry) {
    sprintf("<a href=\"%s\">%s</a>", html_name(entry$href), htmltools::htmlEscape(entry$text))
  }, character(1))
  paste0(
    "<style>.qlab-nav{display:flex;gap:1.2em;align-items:baseline;padding:.6em 1em;",
    "margin:0 -15px 1em;background:#2c3e50}.qlab-nav a{color:#fff;text-decoration:none}",
    ".qlab-nav .qlab-brand{font-weight:bold;font-size:1.15em}</style>\n",
    "<nav class=\"qlab-nav\"><a class=\"qlab-brand\" href=\"index.html\">",
    htmltools::htmlEscape(site_title %||% "qlab"), "</a>", paste(links, collapse = ""), "</nav>\n"
  )
}

work_dir <- tempfile("qlab-render-")
dir.create(work_dir)
on.exit(unlink(work_dir, recursive = TRUE), add = TRUE)
navbar_file <- file.path(work_dir, "navbar.html")
writeLines(navbar_fragment(navbar, site$website$title), navbar_file)

render_page <- function(page) {
  source_file <- file.path(reports_dir, page)
  if (!file.exists(source_file)) {
    stop(sprintf("render.R: page %s is listed in _quarto.yml but %s does not exist", page, source_file), call. = FALSE)
  }
  page_dir <- file.path(work_dir, sub("\\.qmd$", "", page))
  dir.create(page_dir)
  rmd <- file.path(page_dir, sub("\\.qmd$", ".Rmd", basename(page)))
  file.copy(source_file, rmd)
  message(sprintf("render.R: rendering %s", page))
  tryCatch(
    rmarkdown::render(
      rmd,
      output_format = rmarkdown::html_document(
        toc = TRUE, self_contained = TRUE, mathjax = NULL,
        # the widgets' JavaScript (plotly, DT) is embedded once per page
        css = file.path(reports_dir, "qlab.css"),
        includes = rmarkdown::includes(in_header = file.path(reports_dir, "_qlab-head.html"),
                                       before_body = navbar_file)
      ),
      output_file = html_name(basename(page)),
      output_dir = site_dir,
      intermediates_dir = page_dir,
      knit_root_dir = reports_dir,
      envir = new.env(parent = globalenv()),
      quiet = TRUE
    ),
    error = function(e) {
      stop(sprintf("render.R: page %s failed: %s", page, conditionMessage(e)), call. = FALSE)
    }
  )
}

# Pages render in parallel when QLAB_RENDER_CORES > 1, each in an Rscript
# process of its own (QLAB_RENDER_PAGES names it): forks of this process
# would share its temporary directory and draw the same temporary file names,
# and one page's pandoc run would lose its input to another's clean-up.
cores <- suppressWarnings(as.integer(Sys.getenv("QLAB_RENDER_CORES", "1")))
if (is.na(cores) || cores < 1) cores <- 1L
if (cores > 1 && length(pages) > 1) {  # a child renders one page with QLAB_RENDER_CORES=1
  rscript <- file.path(R.home("bin"), "Rscript")
  # The longest pages first, so that none of them starts last: a paper's page
  # costs about its items (analysis/papers/<paper>.yaml; the ncq-journal page,
  # with 50, took 54 s of an 86-s render on 2 cores when it started third).
  items <- vapply(pages, function(page) {
    spec <- file.path(root_dir, "analysis", "papers", sub("\\.qmd$", ".yaml", page))
    if (file.exists(spec)) length(yaml::read_yaml(spec)$items) else 0L
  }, integer(1))
  pages <- pages[order(-items)]
  status <- parallel::mclapply(pages, function(page) {
    system2(rscript, shQuote(script_path()), env = c(sprintf("QLAB_RENDER_PAGES=%s", shQuote(page)),
                                                     "QLAB_RENDER_CORES=1"))
  }, mc.cores = cores, mc.preschedule = FALSE)
  failed <- pages[vapply(status, function(code) !identical(as.integer(code), 0L), logical(1))]
  if (length(failed) > 0) {
    stop(sprintf("render.R: page %s failed (its error is above)", paste(failed, collapse = ", ")), call. = FALSE)
  }
} else {
  for (page in pages) render_page(page)
}

cat(normalizePath(file.path(site_dir, "index.html")), "\n")

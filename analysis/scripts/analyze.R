#!/usr/bin/env Rscript
# Compute one paper's figure tables and claim verdicts.
#
#   Rscript analysis/scripts/analyze.R --results results --paper ncq-conf \
#       --out results/analysis/ncq-conf [--backend ns3] [--analysis analysis]
#
# Writes <out>/<figure file>.csv (figure, metric, series, x, n, mean, sd,
# ci_lo, ci_hi, backend, x_variable, n_censored, method) and <out>/claims.csv.

if (Sys.getenv("TZ") == "") Sys.setenv(TZ = "UTC")

parse_args <- function(args) {
  usage <- "usage: analyze.R --results DIR --paper KEY --out DIR [--backend NAME ...] [--analysis DIR]"
  options <- list(analysis = NULL, backend = NULL)
  i <- 1
  while (i <= length(args)) {
    name <- sub("^--", "", args[[i]])
    known <- c("results", "paper", "out", "backend", "analysis")
    if (!grepl("^--", args[[i]]) || i == length(args) || !name %in% known) {
      stop(sprintf("analyze.R: unexpected argument '%s'\n%s", args[[i]], usage), call. = FALSE)
    }
    options[[name]] <- if (name == "backend") c(options$backend, args[[i + 1]]) else args[[i + 1]]
    i <- i + 2
  }
  for (required in c("results", "paper", "out")) {
    if (is.null(options[[required]])) stop(sprintf("analyze.R: --%s is required\n%s", required, usage), call. = FALSE)
  }
  options
}

script_dir <- function() {
  file_arg <- grep("^--file=", commandArgs(FALSE), value = TRUE)
  dirname(normalizePath(sub("^--file=", "", file_arg[[1]])))
}

main <- function() {
  options <- parse_args(commandArgs(trailingOnly = TRUE))
  analysis_dir <- options$analysis %||% dirname(script_dir())
  for (file in list.files(file.path(analysis_dir, "R"), pattern = "\\.R$", full.names = TRUE)) {
    source(file, local = globalenv())
  }
  suppressPackageStartupMessages(library(dplyr))
  analysis <- analyze_paper(options$results, options$paper, analysis_dir, options$backend)
  write_paper_analysis(analysis, options$out)
  counts <- table(analysis$claims$verdict)
  message(sprintf("analyze.R: wrote %d figure table(s) and claims.csv to %s (%s)",
                  length(analysis$figures), options$out,
                  paste(names(counts), counts, sep = ": ", collapse = ", ")))
}

`%||%` <- function(x, default) if (is.null(x)) default else x
main()

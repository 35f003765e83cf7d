#!/usr/bin/env Rscript
# The benchmark leaderboard's tables, from the collected results of
# scenarios/bench/ and the workloads' metrics (analysis/bench.yaml).
#
#   Rscript analysis/scripts/bench.R --results results --out results/analysis/bench [--rules 5:20,...]
#
# Writes <out>/ranking.csv, effects.csv, seeds.csv, adaptive.csv (the adaptive rule's status of each
# discipline) and coverage.csv (what optional stopping does to coverage under each --rules; analysis/R/bench.R).

if (Sys.getenv("TZ") == "") Sys.setenv(TZ = "UTC")

`%||%` <- function(x, default) if (is.null(x)) default else x

main <- function() {
  args <- commandArgs(trailingOnly = TRUE)
  usage <- "usage: bench.R --results DIR --out DIR [--rules BATCH:CAP,...|-]"
  known <- c("--results", "--out", "--rules")
  if (!length(args) %in% c(4, 6) || !all(args[seq(1, length(args), by = 2)] %in% known) ||
        !all(c("--results", "--out") %in% args)) {
    stop(sprintf("bench.R: unexpected arguments '%s'\n%s", paste(args, collapse = " "), usage), call. = FALSE)
  }
  options <- list()
  for (i in seq(1, length(args), by = 2)) options[[sub("^--", "", args[[i]])]] <- args[[i + 1]]
  rules <- if (is.null(options$rules) || options$rules == "-") character() else strsplit(options$rules, ",")[[1]]
  file_arg <- grep("^--file=", commandArgs(FALSE), value = TRUE)
  analysis_dir <- dirname(dirname(normalizePath(sub("^--file=", "", file_arg[[1]]))))
  for (file in list.files(file.path(analysis_dir, "R"), pattern = "\\.R$", full.names = TRUE)) {
    source(file, local = globalenv())
  }
  suppressPackageStartupMessages(library(dplyr))
  spec <- read_bench_spec(file.path(analysis_dir, "bench.yaml"))
  board <- analyze_bench(options$results, spec)
  # what optional stopping does to coverage under each rule the suite runs by (this profile's and the paper's)
  board$coverage <- purrr::map_dfr(rules, function(rule) {
    parts <- as.integer(strsplit(rule, ":")[[1]])
    adaptive_coverage(batch = parts[[1]], cap = parts[[2]])
  })
  if (nrow(board$coverage) == 0) {
    board$coverage <- tibble::tibble(width_sd = numeric(), batch = integer(), cap = integer(), trials = integer(),
                                     coverage = numeric(), mean_seeds = numeric(), stopped_on_width = numeric())
  }
  write_bench_analysis(board, options$out)
  message(sprintf("bench.R: %d workload(s), %d discipline(s), %d effect(s) to %s",
                  length(unique(board$ranking$workload)), length(unique(board$ranking$series)),
                  nrow(board$effects), options$out))
}

main()

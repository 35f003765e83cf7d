#!/usr/bin/env Rscript
# The benchmark leaderboard's tables, from the collected results of
# scenarios/bench/ and the workloads' metrics (analysis/bench.yaml).
#
#   Rscript analysis/scripts/bench.R --results results --out results/analysis/bench
#
# Writes <out>/ranking.csv, <out>/effects.csv and <out>/seeds.csv (analysis/R/bench.R).

if (Sys.getenv("TZ") == "") Sys.setenv(TZ = "UTC")

`%||%` <- function(x, default) if (is.null(x)) default else x

main <- function() {
  args <- commandArgs(trailingOnly = TRUE)
  usage <- "usage: bench.R --results DIR --out DIR"
  if (length(args) != 4 || !identical(sort(args[c(1, 3)]), c("--out", "--results"))) {
    stop(sprintf("bench.R: unexpected arguments '%s'\n%s", paste(args, collapse = " "), usage), call. = FALSE)
  }
  options <- list()
  options[[sub("^--", "", args[[1]])]] <- args[[2]]
  options[[sub("^--", "", args[[3]])]] <- args[[4]]
  file_arg <- grep("^--file=", commandArgs(FALSE), value = TRUE)
  analysis_dir <- dirname(dirname(normalizePath(sub("^--file=", "", file_arg[[1]]))))
  for (file in list.files(file.path(analysis_dir, "R"), pattern = "\\.R$", full.names = TRUE)) {
    source(file, local = globalenv())
  }
  suppressPackageStartupMessages(library(dplyr))
  spec <- read_bench_spec(file.path(analysis_dir, "bench.yaml"))
  board <- analyze_bench(options$results, spec)
  write_bench_analysis(board, options$out)
  message(sprintf("bench.R: %d workload(s), %d discipline(s), %d effect(s) to %s",
                  length(unique(board$ranking$workload)), length(unique(board$ranking$series)),
                  nrow(board$effects), options$out))
}

main()

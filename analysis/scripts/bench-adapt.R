#!/usr/bin/env Rscript
# The adaptive-repetition rule after one batch of a benchmark workload
# (analysis/R/bench.R, adaptive_status()): which disciplines run another
# batch of seeds. The workflow's bench_decide rule runs it
# (workflows/simulate.smk); the next batch's runs read its `continue`.
#
#   Rscript analysis/scripts/bench-adapt.R --collected DIR --workload W --batch K --batch-size B --cap C --out FILE
#
# DIR holds the tables `qlab collect` made of every run so far.

if (Sys.getenv("TZ") == "") Sys.setenv(TZ = "UTC")

`%||%` <- function(x, default) if (is.null(x)) default else x

fail <- function(message) {
  cat("bench-adapt.R: ", message, "\n", sep = "", file = stderr())
  quit(status = 2)
}

main <- function() {
  args <- commandArgs(trailingOnly = TRUE)
  known <- c("collected", "workload", "batch", "batch-size", "cap", "out")
  if (length(args) != 2 * length(known)) {
    fail(sprintf("expected --%s, each with a value", paste(known, collapse = " --")))
  }
  options <- list()
  for (i in seq(1, length(args), by = 2)) {
    name <- sub("^--", "", args[[i]])
    if (!name %in% known) fail(sprintf("unexpected argument '%s'", args[[i]]))
    options[[name]] <- args[[i + 1]]
  }
  file_arg <- grep("^--file=", commandArgs(FALSE), value = TRUE)
  analysis_dir <- dirname(dirname(normalizePath(sub("^--file=", "", file_arg[[1]]))))
  for (file in list.files(file.path(analysis_dir, "R"), pattern = "\\.R$", full.names = TRUE)) {
    source(file, local = globalenv())
  }
  suppressPackageStartupMessages(library(dplyr))
  spec <- read_bench_spec(file.path(analysis_dir, "bench.yaml"))
  selectors <- spec$workloads[[options$workload]]$metrics
  if (is.null(selectors)) fail(sprintf("workload %s has no metrics in analysis/bench.yaml", options$workload))
  results <- read_collected(options$collected)
  metrics <- compute_run_metrics(results, warmup_s = spec$warmup_s,
                                 metrics = bench_workload_metrics(spec, options$workload))
  repetition <- list(batch = as.integer(options[["batch-size"]]), cap = as.integer(options$cap),
                     width_relative = spec$repetition$width_relative)
  status <- adaptive_status(bench_values(metrics, selectors), selectors, spec$baseline, repetition,
                            ran = seeds_run(results$runs))
  points <- dplyr::distinct(results$runs, .data$series, .data$point)
  status <- dplyr::left_join(status, points, by = "series")
  # the baseline runs every batch, whichever disciplines run with it: each
  # discipline's seeds depend on its own runs and the baseline's alone
  going <- status$point[status$status %in% c("continue", "baseline")]
  doc <- list(
    schema = "qlab-adaptive/1", workload = options$workload, batch = as.integer(options$batch),
    batch_size = repetition$batch, cap = repetition$cap, width_relative = repetition$width_relative,
    `continue` = I(sort(going)),
    series = purrr::pmap(status, function(series, n, n_valid, status, n_stop, seeds, widest, point) {
      list(series = series, point = point, n = n, valid = n_valid, status = status,
           widest = if (is.finite(widest)) widest else NULL)
    })
  )
  dir.create(dirname(options$out), recursive = TRUE, showWarnings = FALSE)
  tmp <- paste0(options$out, ".tmp")
  jsonlite::write_json(doc, tmp, auto_unbox = TRUE, pretty = TRUE, digits = NA, null = "null")
  file.rename(tmp, options$out)
  message(sprintf("bench-adapt.R: %s after batch %s: %d of %d disciplines run another batch", options$workload,
                  options$batch, sum(status$status == "continue"), sum(status$status != "baseline")))
}

main()

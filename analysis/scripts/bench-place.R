#!/usr/bin/env Rscript
# `qlab bench --discipline X`: X's place on the benchmark leaderboard. X's
# and the baseline's runs are the collection of qlab bench's set
# (<results>/bench/<w>/<backend>/sets/<set>/all/); every other discipline's,
# where the suite has run, its own collection (<results>/bench/<w>/<backend>/).
#
#   Rscript analysis/scripts/bench-place.R --results DIR --set SET --discipline X --backend B \
#     --workloads W1,W2 --out DIR
#
# Prints X's rank per workload and metric with intervals, its paired difference
# against the baseline and a verdict; writes ranking.csv, effects.csv,
# adaptive.csv and placement.csv to --out. Exit 2 when runs are missing.

if (Sys.getenv("TZ") == "") Sys.setenv(TZ = "UTC")

`%||%` <- function(x, default) if (is.null(x)) default else x

fail <- function(message) {
  cat("qlab bench: ", message, "\n", sep = "", file = stderr())
  quit(status = 2)
}

main <- function() {
  args <- commandArgs(trailingOnly = TRUE)
  known <- c("results", "set", "discipline", "backend", "workloads", "out")
  if (length(args) != 2 * length(known)) fail(sprintf("bench-place.R: expected --%s", paste(known, collapse = " --")))
  options <- list()
  for (i in seq(1, length(args), by = 2)) {
    name <- sub("^--", "", args[[i]])
    if (!name %in% known) fail(sprintf("bench-place.R: unexpected argument '%s'", args[[i]]))
    options[[name]] <- args[[i + 1]]
  }
  file_arg <- grep("^--file=", commandArgs(FALSE), value = TRUE)
  analysis_dir <- dirname(dirname(normalizePath(sub("^--file=", "", file_arg[[1]]))))
  for (file in list.files(file.path(analysis_dir, "R"), pattern = "\\.R$", full.names = TRUE)) {
    source(file, local = globalenv())
  }
  suppressPackageStartupMessages(library(dplyr))
  spec <- read_bench_spec(file.path(analysis_dir, "bench.yaml"))
  workloads <- strsplit(options$workloads, ",")[[1]]
  suite_series <- character()
  adaptive <- list()
  runs_seen <- list()
  series_ran <- list()
  metrics <- purrr::map(purrr::set_names(workloads), function(workload) {
    suite_dir <- scenario_results_dir(options$results, file.path("bench", workload), options$backend)
    own_dir <- file.path(suite_dir, "sets", options$set, "all")
    if (!file.exists(file.path(own_dir, "runs.csv.gz"))) fail(sprintf("%s: no collected runs (runs.csv.gz)", own_dir))
    own_results <- read_collected(own_dir)
    runs_seen[[workload]] <<- own_results$runs
    wanted <- bench_workload_metrics(spec, workload)
    own <- compute_run_metrics(own_results, warmup_s = spec$warmup_s, metrics = wanted)
    selectors <- spec$workloads[[workload]]$metrics
    repetition <- scenario_repetition(own_results$scenario, spec)
    adaptive[[workload]] <<- adaptive_status(bench_values(own, selectors), selectors, spec$baseline, repetition,
                                             ran = seeds_run(own_results$runs)) |>
      dplyr::filter(.data$series == options$discipline) |>
      dplyr::mutate(workload = workload, .before = 1) |>
      dplyr::mutate(batch = repetition$batch, cap = repetition$cap)
    suite <- if (file.exists(file.path(suite_dir, "runs.csv.gz"))) {
      compute_run_metrics(read_collected(suite_dir), warmup_s = spec$warmup_s, metrics = wanted)
    }
    suite_series <<- union(suite_series, unique(suite$series))
    series_ran[[workload]] <<- union(unique(own_results$runs$series), unique(suite$series))
    placement_metrics(own, suite)
  })
  board <- bench_leaderboard(metrics, spec, ran = series_ran)
  adaptive <- dplyr::bind_rows(adaptive)
  # what the backend's fidelity checks left out (emulation runs that broke their timing invariants)
  invalid <- function(runs) {
    bad <- dplyr::filter(runs, !.data$valid) |> dplyr::count(.data$series)
    if (nrow(bad) == 0) return("")
    sprintf(" (invalid by the backend's fidelity checks: %s)",
            paste(sprintf("%d of %d runs of %s", bad$n, as.integer(table(runs$series)[bad$series]), bad$series),
                  collapse = ", "))
  }
  if (nrow(board$ranking) == 0 || !options$discipline %in% board$ranking$series) {
    fail(sprintf("%s and %s have no valid pair of runs on %s in %s%s", options$discipline, spec$baseline,
                 options$backend, paste(workloads, collapse = ", "),
                 invalid(dplyr::bind_rows(unname(runs_seen)))))
  }
  placement <- bench_placement(board, options$discipline)
  dir.create(options$out, recursive = TRUE, showWarnings = FALSE)
  write_bench_analysis(list(ranking = board$ranking, effects = board$effects, adaptive = adaptive,
                            placement = placement), options$out)

  options(width = 200) # one line per metric
  fmt <- function(x) formatC(x, digits = 3, format = "g")
  others <- setdiff(suite_series, c(options$discipline, spec$baseline))
  cat(sprintf("%s on the benchmark leaderboard (%s; %s)\n", options$discipline, options$backend,
              if (length(others) == 0) {
                sprintf("ranked against %s only: no other discipline's runs in %s", spec$baseline, options$results)
              } else {
                sprintf("ranked among %d disciplines with runs in %s", length(others) + 2, options$results)
              }))
  for (workload in workloads) {
    rows <- dplyr::filter(placement, .data$workload == !!workload)
    seeds <- dplyr::filter(adaptive, .data$workload == !!workload)
    if (nrow(rows) == 0) {
      cat(sprintf("\n%s: no valid pair of runs%s\n", workload, invalid(runs_seen[[workload]])))
      next
    }
    stopped <- if (seeds$status == "cap" && seeds$batch >= seeds$cap) "fixed" else seeds$status
    cat(sprintf("\n%s (%d seeds; %s)%s\n", workload, seeds$n,
                switch(stopped, width = "stopped: every interval narrow enough", cap = "stopped at the cap",
                       fixed = "the profile's fixed seeds", continue = "not finished", stopped),
                invalid(runs_seen[[workload]])))
    table <- data.frame(
      metric = rows$label,
      rank = dplyr::if_else(is.na(rows$rank), sprintf("not ranked (of %d)", rows$of),
                            sprintf("%d of %d", rows$rank, rows$of)),
      mean = sprintf("%s [%s, %s]", fmt(rows$mean), fmt(rows$ci_lo), fmt(rows$ci_hi)),
      `vs baseline` = sprintf("%s [%s, %s]", fmt(rows$d_mean), fmt(rows$d_lo), fmt(rows$d_hi)),
      holm_p = format_p(rows$p_holm),
      verdict = rows$verdict,
      check.names = FALSE
    )
    names(table)[[4]] <- sprintf("vs %s", spec$baseline)
    print(table, row.names = FALSE, right = FALSE)
  }
  cat(sprintf("\nTables: %s\n", options$out))
}

main()

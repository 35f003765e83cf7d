#!/usr/bin/env Rscript
# `qlab compare A B --workload W`: the paired differences A - B on a
# benchmark workload's metrics (analysis/bench.yaml), as a terminal table.
#
#   Rscript analysis/scripts/compare.R --results DIR --workload W --a A --b B --backend ns3 [--html FILE]
#
# With --html, the same table is also written as a small HTML page.
# Reads DIR/bench/W/<backend>/ (collected tables); exit 2 when A or B did not run there.

if (Sys.getenv("TZ") == "") Sys.setenv(TZ = "UTC")

`%||%` <- function(x, default) if (is.null(x)) default else x

fail <- function(message) {
  cat("qlab compare: ", message, "\n", sep = "", file = stderr())
  quit(status = 2)
}

parse_args <- function(args) {
  known <- c("results", "workload", "a", "b", "backend", "html")
  options <- list()
  if (length(args) %% 2 != 0) fail("compare.R: expected --name value pairs")
  for (i in seq(1, length(args), by = 2)) {
    name <- sub("^--", "", args[[i]])
    if (!name %in% known) fail(sprintf("compare.R: unexpected argument '%s'", args[[i]]))
    options[[name]] <- args[[i + 1]]
  }
  missing <- setdiff(setdiff(known, "html"), names(options))
  if (length(missing) > 0) fail(sprintf("compare.R: --%s is required", missing[[1]]))
  options
}

main <- function() {
  options <- parse_args(commandArgs(trailingOnly = TRUE))
  file_arg <- grep("^--file=", commandArgs(FALSE), value = TRUE)
  analysis_dir <- dirname(dirname(normalizePath(sub("^--file=", "", file_arg[[1]]))))
  for (file in list.files(file.path(analysis_dir, "R"), pattern = "\\.R$", full.names = TRUE)) {
    source(file, local = globalenv())
  }
  suppressPackageStartupMessages(library(dplyr))
  spec <- read_bench_spec(file.path(analysis_dir, "bench.yaml"))
  selectors <- spec$workloads[[options$workload]]$metrics
  if (is.null(selectors)) {
    fail(sprintf("workload %s has no metrics in analysis/bench.yaml (workloads: %s)", options$workload,
                 paste(names(spec$workloads), collapse = ", ")))
  }
  scenario <- file.path("bench", options$workload)
  dir <- scenario_results_dir(options$results, scenario, options$backend)
  if (!file.exists(file.path(dir, "runs.csv.gz"))) fail(sprintf("%s: no collected results (runs.csv.gz)", dir))
  metrics <- compute_run_metrics(read_scenario_results(options$results, scenario, options$backend),
                                 warmup_s = spec$warmup_s)
  absent <- setdiff(c(options$a, options$b), metrics$series)
  if (length(absent) > 0) {
    fail(sprintf("%s: no runs of %s (series there: %s)", dir, paste(absent, collapse = ", "),
                 paste(sort(unique(metrics$series)), collapse = ", ")))
  }
  metrics <- dplyr::filter(metrics, .data$series %in% c(options$a, options$b))
  values <- bench_values(metrics, selectors)
  means <- rank_disciplines(values)
  effects <- bench_effects(values, baseline = options$b) |>
    dplyr::left_join(bench_labels(selectors), by = "selector")
  fmt <- function(x) formatC(x, digits = 3, format = "g")
  side <- function(series) {
    m <- dplyr::filter(means, .data$series == !!series)
    m <- m[match(effects$selector, m$selector), ]
    sprintf("%s [%s, %s]", fmt(m$mean), fmt(m$ci_lo), fmt(m$ci_hi))
  }
  verdict <- dplyr::case_when(
    !effects$significant ~ "no significant difference",
    effects$improves ~ sprintf("%s better", options$a),
    TRUE ~ sprintf("%s worse", options$a)
  )
  table <- data.frame(
    metric = effects$label,
    a = side(options$a),
    b = side(options$b),
    difference = sprintf("%s [%s, %s]", fmt(effects$mean), fmt(effects$ci_lo), fmt(effects$ci_hi)),
    holm_p = format_p(effects$p_holm),
    verdict = verdict,
    check.names = FALSE
  )
  names(table) <- c("metric", options$a, options$b, sprintf("%s - %s (paired)", options$a, options$b), "Holm p",
                    "verdict")
  title <- sprintf("%s vs %s on %s (%s): %d seeds paired; means with 95%% t-intervals", options$a, options$b,
                   scenario, options$backend, max(effects$n))
  method <- sprintf(paste("paired by seed: mean per-seed difference %s - %s with its 95%% t-interval; two-sided",
                          "paired t-tests, Holm-adjusted over the workload's %d metrics"),
                    options$a, options$b, nrow(table))
  if (!is.null(options$html)) {
    body <- knitr::kable(table, format = "html", escape = TRUE, caption = title)
    writeLines(c("<!DOCTYPE html>", "<html><head><meta charset=\"utf-8\">", sprintf("<title>%s</title>", title),
                 "<style>table{border-collapse:collapse}td,th{padding:2px 8px;border-bottom:1px solid #ccc}</style>",
                 "</head><body>", body, sprintf("<p>%s</p>", method), "</body></html>"), options$html)
  }
  options(width = 10000)
  cat(title, "\n\n", sep = "")
  print(table, row.names = FALSE, right = FALSE)
  cat("\n", method, "\n", sep = "")
}

main()

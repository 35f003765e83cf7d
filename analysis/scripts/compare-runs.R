#!/usr/bin/env Rscript
# Are two reproductions the same, run for run? For every scenario and backend
# collected in both results directories: every per-run metric of analysis/R
# (compute_run_metrics), paired by run (series, sweep point, seed), and per
# figure cell (scenario, backend, series, point, metric and its group, class,
# queue or band) the mean difference old - new with its paired 95%
# t-interval over the seeds. A cell whose interval excludes 0 changed.
#
#   Rscript analysis/scripts/compare-runs.R --old DIR --new DIR [--out cells.csv]
#   qlab diff OLD NEW [--out cells.csv]      (the same)
#
# Prints one Markdown row per scenario and backend: cells, cells identical in
# every run, cells whose interval excludes 0 (at 95%, about 5% of cells would
# by chance alone if the runs differed only by noise), and the largest
# relative mean difference. Collected queue/packet tables written before they
# had a `queue` column (one traced queue per run) are read as queue
# `bottleneck:L`. Then every claim whose verdict differs between the two
# trees' analysis/<paper>/claims.csv, claim by claim and backend by backend.

if (Sys.getenv("TZ") == "") Sys.setenv(TZ = "UTC")

script_dir <- function() {
  file_arg <- grep("^--file=", commandArgs(FALSE), value = TRUE)
  dirname(normalizePath(sub("^--file=", "", file_arg[[1]])))
}

parse_args <- function(args) {
  usage <- "usage: compare-runs.R --old DIR --new DIR [--out FILE.csv]"
  options <- list(out = NULL)
  for (i in seq(1, length(args), by = 2)) {
    name <- sub("^--", "", args[[i]])
    if (!name %in% c("old", "new", "out") || i == length(args)) {
      stop(sprintf("compare-runs.R: unexpected argument '%s'\n%s", args[[i]], usage), call. = FALSE)
    }
    options[[name]] <- args[[i + 1]]
  }
  if (is.null(options$old) || is.null(options$new)) stop(usage, call. = FALSE)
  options
}

#' The scenario/backend directories collected under a results directory.
collected <- function(results) {
  runs <- list.files(results, pattern = "^runs\\.csv\\.gz$", recursive = TRUE)
  parts <- strsplit(dirname(runs), "/", fixed = TRUE)
  keep <- vapply(parts, length, 1L) == 3 & vapply(parts, `[`, "", 1) != "analysis"
  tibble::tibble(scenario = vapply(parts[keep], function(p) paste(p[1:2], collapse = "/"), ""),
                 backend = vapply(parts[keep], `[`, "", 3))
}

#' One scenario's results; queue/packet tables without a `queue` column are
#' given the single queue a run traced before there was one.
read_results <- function(results, scenario, backend) {
  dir <- file.path(results, scenario, backend)
  shim <- NULL
  for (table in c("queues", "packets")) {
    path <- file.path(dir, paste0(table, ".csv.gz"))
    if (!file.exists(path)) next
    header <- names(readr::read_csv(path, n_max = 0, show_col_types = FALSE))
    if ("queue" %in% header) next
    if (is.null(shim)) {
      shim <- file.path(tempfile("compare-runs-"), scenario, backend)
      dir.create(shim, recursive = TRUE)
      for (f in list.files(dir)) file.copy(file.path(dir, f), shim)
    }
    data <- readr::read_csv(path, col_types = readr::cols(.default = readr::col_character()), na = character())
    data <- dplyr::mutate(data, queue = "bottleneck:L", .after = "time_s")
    readr::write_csv(data, file.path(shim, paste0(table, ".csv.gz")), na = "")
  }
  read_scenario_results(if (is.null(shim)) results else dirname(dirname(dirname(shim))), scenario, backend)
}

main <- function() {
  options <- parse_args(commandArgs(trailingOnly = TRUE))
  analysis_dir <- dirname(script_dir())
  for (file in list.files(file.path(analysis_dir, "R"), pattern = "\\.R$", full.names = TRUE)) {
    source(file, local = globalenv())
  }
  suppressPackageStartupMessages(library(dplyr))
  both <- dplyr::inner_join(collected(options$old), collected(options$new), by = c("scenario", "backend"))
  if (nrow(both) == 0) stop("compare-runs.R: no scenario is collected in both directories", call. = FALSE)
  cells <- purrr::pmap_dfr(both, function(scenario, backend) {
    paper <- strsplit(scenario, "/", fixed = TRUE)[[1]][[1]]
    spec_path <- file.path(analysis_dir, "papers", paste0(paper, ".yaml"))
    warmup <- if (file.exists(spec_path)) scenario_warmup_s(yaml::read_yaml(spec_path), scenario) else 0
    metrics <- function(results) {
      suppressWarnings(compute_run_metrics(read_results(results, scenario, backend), warmup_s = warmup))
    }
    old <- metrics(options$old)
    new <- metrics(options$new)
    keys <- setdiff(intersect(names(old), names(new)), c("value", "n_censored"))
    cell <- setdiff(keys, "seed")
    paired <- dplyr::inner_join(old, new, by = keys, suffix = c("_old", "_new")) |>
      dplyr::mutate(diff = .data$value_old - .data$value_new)
    paired |>
      dplyr::group_by(dplyr::across(dplyr::all_of(cell))) |>
      dplyr::summarise(
        seeds = dplyr::n(),
        identical = all(.data$value_old == .data$value_new | (is.na(.data$value_old) & is.na(.data$value_new))),
        mean_old = mean(.data$value_old), mean_new = mean(.data$value_new),
        t_interval(.data$diff), .groups = "drop"
      ) |>
      dplyr::mutate(changed = !.data$identical & !is.na(.data$ci_lo) & (.data$ci_lo > 0 | .data$ci_hi < 0))
  })
  if (!is.null(options$out)) readr::write_csv(cells, options$out, na = "NA")
  summary <- cells |>
    dplyr::group_by(.data$scenario, .data$backend) |>
    dplyr::summarise(
      cells = dplyr::n(), identical = sum(.data$identical), changed = sum(.data$changed),
      max_rel_diff = max(abs(.data$mean_old - .data$mean_new) / pmax(abs(.data$mean_old), 1e-12), na.rm = TRUE),
      .groups = "drop"
    )
  cat(paste("| scenario | backend | cells | identical in every run | 95% interval of old - new excludes 0 |",
            "largest relative mean difference |\n"))
  cat("|---|---|---|---|---|---|\n")
  for (i in seq_len(nrow(summary))) {
    s <- summary[i, ]
    cat(sprintf("| %s | %s | %d | %d | %d | %.3g |\n", s$scenario, s$backend, s$cells, s$identical, s$changed,
                s$max_rel_diff))
  }
  changed <- dplyr::filter(cells, .data$changed)
  if (nrow(changed) > 0) {
    cat("\nCells whose interval excludes 0:\n")
    print(as.data.frame(dplyr::select(changed, -"identical")), row.names = FALSE)
  }
  verdict_changes(options$old, options$new)
}

#' Every claim whose verdict differs between the two trees' analysis/<paper>/claims.csv.
verdict_changes <- function(old, new) {
  read_claims <- function(results) {
    files <- Sys.glob(file.path(results, "analysis", "*", "claims.csv"))
    purrr::map_dfr(files, function(f) {
      d <- readr::read_csv(f, col_types = readr::cols(.default = readr::col_character()), na = "NA")
      if (!"ours" %in% names(d)) d$ours <- NA_character_
      if (!"backend" %in% names(d)) d$backend <- NA_character_
      dplyr::transmute(d, paper = basename(dirname(f)), claim_id = .data$claim_id, backend = .data$backend,
                       verdict = .data$verdict, ours = .data$ours)
    })
  }
  a <- read_claims(old)
  b <- read_claims(new)
  if (nrow(a) == 0 || nrow(b) == 0) {
    cat("\nVerdicts: no analysis/<paper>/claims.csv in", if (nrow(a) == 0) old else new, "\n")
    return(invisible(NULL))
  }
  # a claim has a verdict per backend: pair them by backend, not by row order
  both <- dplyr::full_join(a, b, by = c("paper", "claim_id", "backend"), suffix = c("_old", "_new"),
                           na_matches = "na")
  diff <- dplyr::filter(both, is.na(.data$verdict_old) | is.na(.data$verdict_new) |
                          .data$verdict_old != .data$verdict_new)
  cat(sprintf("\nVerdicts: %d claims in both, %d changed, %d only in the old tree, %d only in the new\n",
              sum(!is.na(both$verdict_old) & !is.na(both$verdict_new)),
              sum(!is.na(diff$verdict_old) & !is.na(diff$verdict_new)),
              sum(is.na(both$verdict_new)), sum(is.na(both$verdict_old))))
  if (nrow(diff) == 0) return(invisible(NULL))
  cat("\n| paper | claim | backend | old verdict | new verdict | new value |\n|---|---|---|---|---|---|\n")
  for (i in seq_len(nrow(diff))) {
    d <- diff[i, ]
    cat(sprintf("| %s | %s | %s | %s | %s | %s |\n", d$paper, d$claim_id, d$backend %if_na% "-",
                d$verdict_old %if_na% "-",
                d$verdict_new %if_na% "-", gsub("\\|", "/", d$ours_new %if_na% "")))
  }
}

`%if_na%` <- function(x, default) ifelse(is.na(x), default, x)

`%||%` <- function(x, default) if (is.null(x)) default else x
if (sys.nframe() == 0) main()   # not when sourced (analysis/tests/testthat/test-compare-runs.R)

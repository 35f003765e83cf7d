# One paper's figure tables and claim verdicts, from the collected results.
#
# The paper spec (analysis/papers/<paper>.yaml) lists the items in the paper's
# order and says, for each figure, which scenario feeds it and how it is
# summarised; the claims file (analysis/claims/<paper>.yaml) lists the claims.

summary_columns <- c("figure", "metric", "series", "x", "n", "mean", "sd", "ci_lo", "ci_hi",
                     "backend", "x_variable", "n_censored", "method")

#' Read analysis/papers/<paper>.yaml.
read_paper_spec <- function(analysis_dir, paper) {
  path <- file.path(analysis_dir, "papers", paste0(paper, ".yaml"))
  if (!file.exists(path)) {
    stop(sprintf("%s: file not found (every paper needs a spec listing its items)", path))
  }
  spec <- yaml::read_yaml(path)
  for (field in c("key", "title", "items")) {
    if (is.null(spec[[field]])) {
      stop(sprintf("%s: missing field `%s`", path, field))
    }
  }
  spec
}

#' The items of a paper spec that produce a figure table (those with a `file`).
figure_items <- function(spec) {
  purrr::keep(spec$items, function(item) !is.null(item$file))
}

#' Compute every figure table and the claim verdicts of a paper.
#'
#' @param results_dir The results directory (holds <paper>/<name>/<backend>/).
#' @param paper Paper key, e.g. "ncq-conf".
#' @param analysis_dir The analysis/ directory (papers/ and claims/ specs).
#' @param backends Backends to analyse; NULL: every backend with results.
#' @return A list: `figures` (named by the item's `file`), `claims`.
analyze_paper <- function(results_dir, paper, analysis_dir = "analysis", backends = NULL) {
  spec <- read_paper_spec(analysis_dir, paper)
  claims <- read_claims(file.path(analysis_dir, "claims", paste0(paper, ".yaml")))
  items <- figure_items(spec)
  scenarios <- unique(c(
    purrr::map_chr(items, "scenario"),
    unlist(purrr::map(claims, "scenario"))
  ))
  if (is.null(backends)) {
    backends <- sort(unique(unlist(purrr::map(scenarios, function(s) list_backends(results_dir, s)))))
  }
  if (length(backends) == 0) {
    stop(sprintf("%s: no results for any scenario of %s (looked for %s/<backend>/runs.csv.gz)",
                 results_dir, paper, paste(file.path(results_dir, scenarios, "<backend>", "runs.csv.gz"), collapse = ", ")))
  }
  loaded <- list()
  for (backend in backends) {
    for (scenario in scenarios) {
      # a backend runs only the scenarios that list it (mininet: the emulation ones)
      if (!scenario %in% list_scenarios_of_backend(results_dir, scenarios, backend)) next
      results <- read_scenario_results(results_dir, scenario, backend)
      loaded[[backend]][[scenario]] <- list(
        results = results,
        metrics = compute_run_metrics(results, warmup_s = scenario_warmup_s(spec, scenario)),
        sweep_vars = results$sweep_vars
      )
    }
  }
  figures <- purrr::map(items, function(item) {
    if (item$kind == "backend_ratio_vs_x") {
      return(summarise_backend_ratio_vs_x(item, loaded))
    }
    table <- purrr::map_dfr(backends, function(backend) {
      data <- loaded[[backend]][[item$scenario]]
      if (is.null(data)) NULL else summarise_figure(item, data)
    })
    if (nrow(table) == 0) empty_summary() else table
  })
  names(figures) <- purrr::map_chr(items, "file")
  verdicts <- purrr::map_dfr(backends, function(backend) {
    evaluate_claims(claims, loaded[[backend]]) |>
      dplyr::mutate(backend = backend)
  })
  list(figures = figures, claims = verdicts)
}

#' The scenarios (of `scenarios`) with collected results for `backend`.
list_scenarios_of_backend <- function(results_dir, scenarios, backend) {
  purrr::keep(scenarios, function(s) backend %in% list_backends(results_dir, s))
}

#' A summary table with no rows (a figure no backend has results for).
empty_summary <- function() {
  tibble::tibble(figure = character(), metric = character(), series = character(), x = numeric(),
                 n = integer(), mean = numeric(), sd = numeric(), ci_lo = numeric(), ci_hi = numeric(),
                 backend = character(), x_variable = character(), n_censored = integer(),
                 method = character())
}

#' Paired ratios between two backends (`numerator` / `denominator`, e.g.
#' mininet / ns3) of per-run metrics, per series, vs a sweep variable. Both
#' backends ran the same jobs, so runs pair by series, sweep values and seed;
#' runs a backend marked invalid are left out (compute_run_metrics).
summarise_backend_ratio_vs_x <- function(item, loaded) {
  num <- loaded[[item$numerator]][[item$scenario]]
  den <- loaded[[item$denominator]][[item$scenario]]
  if (is.null(num) || is.null(den)) {
    return(empty_summary())
  }
  check_sweep_variable(item, den, item$x)
  runs <- dplyr::bind_rows(num$metrics, den$metrics) |>
    dplyr::filter(.data$metric %in% unlist(item$metrics))
  purrr::map_dfr(sort(unique(runs$series)), function(label) {
    # compare_paired pairs two "series": here the two backends of one series
    per_backend <- dplyr::filter(runs, .data$series == label) |>
      dplyr::mutate(series = .data$backend)
    if (!all(c(item$numerator, item$denominator) %in% per_backend$series)) {
      return(NULL)
    }
    compare_paired(per_backend, item$numerator, item$denominator, by = c(item$x, "metric")) |>
      dplyr::filter(.data$contrast == "ratio") |>
      dplyr::mutate(series = label)
  }) |>
    dplyr::mutate(n_censored = NA_integer_, figure = item$id,
                  backend = paste0(item$numerator, "/", item$denominator)) |>
    dplyr::rename(x = dplyr::all_of(item$x)) |>
    dplyr::mutate(x = as.numeric(.data$x), x_variable = item$x) |>
    dplyr::select(dplyr::all_of(summary_columns))
}

#' One figure's summary table for one backend's results of its scenario.
summarise_figure <- function(item, scenario_data) {
  table <- switch(item$kind,
    metric_vs_x = summarise_metric_vs_x(item, scenario_data),
    tasks_over_time = summarise_tasks_over_time(item, scenario_data),
    paired_ratio_vs_x = summarise_paired_ratio_vs_x(item, scenario_data),
    metric_by_series = summarise_metric_by_series(item, scenario_data),
    stop(sprintf("figure %s: kind `%s` must be metric_vs_x, tasks_over_time, paired_ratio_vs_x or metric_by_series",
                 item$id, item$kind))
  )
  table |>
    dplyr::mutate(figure = item$id) |>
    dplyr::select(dplyr::all_of(summary_columns))
}

check_sweep_variable <- function(item, scenario_data, variable) {
  if (!variable %in% scenario_data$sweep_vars) {
    stop(sprintf("figure %s: `%s` must be a sweep variable of %s (found: %s)", item$id, variable,
                 item$scenario, paste(scenario_data$sweep_vars, collapse = ", ")))
  }
}

summarise_metric_vs_x <- function(item, scenario_data) {
  check_sweep_variable(item, scenario_data, item$x)
  runs <- dplyr::filter(scenario_data$metrics, .data$metric == item$metric)
  if (nrow(runs) == 0) {
    stop(sprintf("figure %s: metric `%s` is not computed for %s", item$id, item$metric, item$scenario))
  }
  runs |>
    summarise_over_seeds(c("backend", "series", item$x, "metric")) |>
    dplyr::rename(x = dplyr::all_of(item$x)) |>
    dplyr::mutate(x = as.numeric(.data$x), x_variable = item$x)
}

summarise_tasks_over_time <- function(item, scenario_data) {
  results <- scenario_data$results
  valid_runs <- dplyr::filter(results$runs, .data$valid)
  for (variable in names(item$at)) {
    check_sweep_variable(item, scenario_data, variable)
    valid_runs <- valid_runs[valid_runs[[variable]] == item$at[[variable]], ]
  }
  if (nrow(valid_runs) == 0) {
    stop(sprintf("figure %s: no valid run of %s at %s", item$id, item$scenario, describe_point(item$at)))
  }
  flows <- dplyr::semi_join(results$flows, valid_runs, by = run_key_columns)
  grid_s <- time_grid_s(valid_runs$sim_end_s)
  count_tasks_completed(flows, run_key_columns, grid_s) |>
    dplyr::transmute(.data$backend, .data$series, .data$seed, .data$time_s,
                     metric = "tasks_completed", value = .data$tasks_completed) |>
    summarise_over_seeds(c("backend", "series", "time_s", "metric")) |>
    dplyr::mutate(n_censored = NA_integer_) |>
    dplyr::rename(x = "time_s") |>
    dplyr::mutate(x_variable = "time_s")
}

summarise_paired_ratio_vs_x <- function(item, scenario_data) {
  check_sweep_variable(item, scenario_data, item$x)
  runs <- dplyr::filter(scenario_data$metrics, .data$metric %in% unlist(item$metrics))
  treatments <- setdiff(sort(unique(runs$series)), item$baseline)
  purrr::map_dfr(treatments, function(treatment) {
    compare_paired(runs, treatment, item$baseline, by = c("backend", item$x, "metric")) |>
      dplyr::filter(.data$contrast == "ratio") |>
      dplyr::mutate(series = treatment)
  }) |>
    dplyr::mutate(n_censored = NA_integer_) |>
    dplyr::rename(x = dplyr::all_of(item$x)) |>
    dplyr::mutate(x = as.numeric(.data$x), x_variable = item$x)
}

#' Several per-run metrics side by side, per series, at one point: `x` is the
#' metric's position in `item$metrics` (1, 2, ...).
summarise_metric_by_series <- function(item, scenario_data) {
  wanted <- unlist(item$metrics)
  runs <- dplyr::filter(scenario_data$metrics, .data$metric %in% wanted)
  missing <- setdiff(wanted, runs$metric)
  if (length(missing) > 0) {
    stop(sprintf("figure %s: metric(s) %s not computed for %s (found: %s)", item$id,
                 paste(missing, collapse = ", "), item$scenario,
                 paste(sort(unique(scenario_data$metrics$metric)), collapse = ", ")))
  }
  for (variable in scenario_data$sweep_vars) {
    if (length(unique(runs[[variable]])) > 1) {
      stop(sprintf("figure %s: metric_by_series needs one sweep point, %s has several values of %s",
                   item$id, item$scenario, variable))
    }
  }
  runs |>
    summarise_over_seeds(c("backend", "series", "metric")) |>
    dplyr::mutate(x = match(.data$metric, wanted), x_variable = "metric")
}

#' The warm-up of a scenario's queue and packet metrics: the paper spec's
#' `scenarios: {<id>: {warmup_s: ...}}`, else 0.
scenario_warmup_s <- function(spec, scenario) {
  as.numeric(spec$scenarios[[scenario]]$warmup_s %||% 0)
}

#' Write each figure table as <file>.csv and the verdicts as claims.csv.
write_paper_analysis <- function(analysis, out_dir) {
  dir.create(out_dir, recursive = TRUE, showWarnings = FALSE)
  purrr::iwalk(analysis$figures, function(table, file) {
    readr::write_csv(table, file.path(out_dir, paste0(file, ".csv")), na = "NA")
  })
  readr::write_csv(analysis$claims, file.path(out_dir, "claims.csv"), na = "NA")
  invisible(out_dir)
}

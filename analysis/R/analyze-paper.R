# One paper's figure tables and claim verdicts, from the collected results.
#
# The paper spec (analysis/papers/<paper>.yaml) lists the items in the paper's
# order and says, for each figure, which scenario feeds it and how it is
# summarised; the claims file (analysis/claims/<paper>.yaml) lists the claims.

#' The columns of a figure table, in order. (Functions, not values: the files
#' of analysis/R are sourced in any order.)
summary_columns <- function() {
  c("figure", selector_columns(), "series", "x", "n", "mean", "sd", "ci_lo", "ci_hi", "backend", "x_variable",
    "n_censored", "method")
}

#' A figure table with no rows (a backend none of whose runs of the item is
#' valid): the summary columns, typed as the summaries type them, so that it
#' binds with another backend's rows and the page says what is missing.
empty_summary <- function() {
  tibble::tibble(figure = character(), selector = integer(), metric = character(), group = character(),
                 cls = integer(), queue = character(), band = integer(), reason = character(),
                 series = character(), x = double(), n = integer(), mean = double(), sd = double(),
                 ci_lo = double(), ci_hi = double(), backend = character(), x_variable = character(),
                 n_censored = integer(), method = character())[summary_columns()]
}

#' The columns that name one plotted metric: its position in the item's list
#' (`selector`), the metric and the part of the run it is about.
selector_columns <- function() {
  c("selector", "metric", metric_key_columns)
}

# Item kinds. A figure kind's summary table is written as <file>.csv; a
# listing (the paper's pseudo-code beside ours), a diagram (the topology,
# drawn from the run's graph.json) and a table are drawn by the report
# directly: a notation table from the rows its item gives (the paper's), a
# model table computed from analysis/R by a function of `analytic_tables()`
# beside the paper's printed rows.
figure_kinds <- c("metric_vs_x", "tasks_over_time", "paired_ratio_vs_x", "metric_by_series", "backend_ratio_vs_x",
                  "tcp_worst_flow", "model_vs_x", "theory_vs_x", "improvement_frequency", "time_series",
                  "useful_vs_sessions")
# table_scenario: a table of a scenario's classes (analysis/R/rbaqm.R), from its resolved file
table_kinds <- c("table_notation", "table_model", "table_scenario")
item_kinds <- c("listing", "diagram", table_kinds, figure_kinds)
# Figure kinds drawn from something other than the per-run metrics (metrics.R).
kinds_without_metrics <- c("tasks_over_time", "tcp_worst_flow", "model_vs_x", "time_series", "useful_vs_sessions")
# Figure kinds computed without any run: a paper's analytic model.
kinds_without_runs <- "model_vs_x"

# What each kind must give besides id, label, caption and kind.
item_kind_fields <- list(
  listing = "pseudo_code_verbatim",
  diagram = "scenario",
  metric_vs_x = c("scenario", "metric", "x", "x_label", "y_label"),
  tasks_over_time = c("scenario", "at", "x_label", "y_label"),
  paired_ratio_vs_x = c("scenario", "baseline", "metrics", "x", "x_label", "y_label"),
  metric_by_series = c("scenario", "metrics", "y_label"),
  improvement_frequency = c("scenario", "metric", "treatment", "baseline", "bins", "x_label", "y_label"),
  backend_ratio_vs_x = c("scenario", "numerator", "denominator", "metrics", "x", "x_label", "y_label"),
  tcp_worst_flow = c("scenario", "at", "x_label"),
  model_vs_x = c("model", "x_label", "y_label"),
  table_notation = "notation",
  table_model = c("table", "paper_rows"),
  table_scenario = c("scenario", "series"),
  time_series = c("scenario", "metrics", "x_label", "y_label"),
  useful_vs_sessions = c("scenario", "band", "group", "edges", "deadline_s", "x_label", "y_label"),
  theory_vs_x = c("scenario", "metrics", "x", "theory", "x_label", "y_label")
)

#' Read and check analysis/papers/<paper>.yaml.
read_paper_spec <- function(analysis_dir, paper) {
  path <- file.path(analysis_dir, "papers", paste0(paper, ".yaml"))
  if (!file.exists(path)) {
    stop(sprintf("%s: file not found (every paper needs a spec listing its items)", path))
  }
  spec <- yaml::read_yaml(path)
  for (field in c("key", "title", "page", "items")) {
    if (is.null(spec[[field]])) {
      stop(sprintf("%s: missing field `%s`", path, field))
    }
  }
  if (!identical(spec$key, paper)) {
    stop(sprintf("%s: `key` must be the file's name, %s (found %s)", path, paper, spec$key))
  }
  purrr::iwalk(spec$items, function(item, i) check_item(item, sprintf("%s: items[%d]", path, i)))
  ids <- purrr::map_chr(spec$items, "id")
  files <- purrr::map_chr(spec$items, item_file)
  if (anyDuplicated(ids) || anyDuplicated(files)) {
    stop(sprintf("%s: item ids, and their last parts (the figure tables' file names), must be unique (repeated: %s)",
                 path, paste(unique(c(ids[duplicated(ids)], files[duplicated(files)])), collapse = ", ")))
  }
  pending <- unlist(spec$pending)
  if (!is.null(spec$pending) && (!is.character(pending) || any(pending %in% ids))) {
    stop(sprintf("%s: `pending` must list ids of items the spec does not produce (found: %s)", path,
                 paste(intersect(pending, ids), collapse = ", ")))
  }
  sections <- purrr::map_chr(spec$sections %||% list(), "id")
  unknown <- setdiff(unlist(purrr::map(spec$items, "section")), sections)
  if (length(unknown) > 0) {
    stop(sprintf("%s: item section(s) %s must be listed under `sections`", path, paste(unknown, collapse = ", ")))
  }
  spec
}

check_item <- function(item, where) {
  missing <- setdiff(c("id", "label", "caption", "kind"), names(item))
  if (length(missing) > 0) {
    stop(sprintf("%s: missing field(s) %s", where, paste(missing, collapse = ", ")))
  }
  where <- sprintf("%s (%s)", where, item$id)
  if (!item$kind %in% item_kinds) {
    stop(sprintf("%s: kind must be one of %s (found %s)", where, paste(item_kinds, collapse = ", "), item$kind))
  }
  # a list of `metrics` stands for one `metric` (a panel each in metric_vs_x)
  missing <- setdiff(item_kind_fields[[item$kind]], c(names(item), if (!is.null(item$metrics)) "metric"))
  if (length(missing) > 0) {
    stop(sprintf("%s: an item of kind %s must give %s", where, item$kind, paste0("`", missing, "`", collapse = ", ")))
  }
  if ((item$kind %in% figure_kinds && !item$kind %in% kinds_without_metrics) || item$kind == "time_series") {
    item_selectors(item, where)
  }
  if (item$kind %in% c(kinds_without_runs, setdiff(table_kinds, "table_scenario")) && !is.null(item$scenario)) {
    stop(sprintf("%s: an item of kind %s runs nothing: it must not name a `scenario`", where, item$kind))
  }
  if (item$kind %in% kinds_without_runs && !item$model %in% names(analytic_models())) {
    stop(sprintf("%s: model must be one of %s (found %s)",
                 where, paste(names(analytic_models()), collapse = ", "), item$model))
  }
  if (item$kind == "table_notation") check_notation_rows(item$notation, where)
  if (item$kind == "improvement_frequency") frequency_bins(unlist(item$bins))
  if (item$kind == "table_model") {
    if (!item$table %in% names(analytic_tables())) {
      stop(sprintf("%s: table must be one of %s (found %s)",
                   where, paste(names(analytic_tables()), collapse = ", "), item$table))
    }
    item_model_table(item, where)
  }
  if (item$kind == "theory_vs_x") {
    if (!is.list(item$theory) || is.null(names(item$theory))) {
      stop(sprintf("%s: `theory` must map series to closed forms of validation_models()", where))
    }
    unknown <- setdiff(unlist(item$theory), names(validation_models()))
    if (length(unknown) > 0) {
      stop(sprintf("%s: theory must name closed forms of validation_models() (%s; unknown: %s)", where,
                   paste(names(validation_models()), collapse = ", "), paste(unknown, collapse = ", ")))
    }
  }
  invisible(item)
}

check_notation_rows <- function(rows, where) {
  ok <- is.list(rows) && length(rows) > 0 && all(purrr::map_lgl(rows, function(row) {
    is.list(row) && identical(sort(names(row)), c("description", "symbol")) && all(purrr::map_lgl(row, is.character))
  }))
  if (!ok) stop(sprintf("%s: `notation` must be a list of rows, each `symbol` and `description` (text)", where))
  invisible(rows)
}

#' The tables items of kind table_model can name: table -> a function of the
#' item's `paper_rows` (the paper's printed rows) returning the table to show,
#' computed from analysis/R beside the paper's values.
analytic_tables <- function() {
  list(`voice-quality` = voice_quality_table)
}

#' The table of a table_model item (stops, naming the item, when its
#' `paper_rows` do not fit the table's function).
item_model_table <- function(item, where = item$id) {
  tryCatch(analytic_tables()[[item$table]](item$paper_rows),
           error = function(e) stop(sprintf("%s: %s", where, conditionMessage(e)), call. = FALSE))
}

#' The metrics an item shows, as selectors (analysis/R/metrics.R): its
#' `metrics:` list (each entry `metric`, the keys, an optional `label`), or
#' the one `metric` with the keys given beside it.
item_selectors <- function(item, where = item$id) {
  if (!is.null(item$metrics)) {
    return(purrr::imap(item$metrics, function(entry, i) {
      if (!is.list(entry)) {
        stop(sprintf("%s: metrics[%d] must be a mapping with `metric` (and the part it is about, a `label`)", where, i))
      }
      metric_selector(entry, sprintf("%s: metrics[%d]", where, i))
    }))
  }
  list(metric_selector(item[intersect(c("metric", metric_key_columns), names(item))], where))
}

#' Stop unless every claim's `figure` is an item of the spec or one of its
#' `claim_sections` (the page shows a claim under that item or section only).
check_claim_figures <- function(claims, spec) {
  known <- c(purrr::map_chr(spec$items, "id"), purrr::map_chr(spec$claim_sections %||% list(), "id"))
  figures <- purrr::map_chr(claims, "figure")
  unknown <- unique(figures[!figures %in% known])
  if (length(unknown) > 0) {
    stop(sprintf(paste0("claims of %s: `figure` must be an item id of analysis/papers/%s.yaml ",
                        "or an id of its claim_sections (unknown: %s)"),
                 spec$key, spec$key, paste(unknown, collapse = ", ")))
  }
  invisible(claims)
}

#' Claims on a per-bin metric (useful_bps) with the bins of their figure, a
#' useful_vs_sessions item (`group`, `edges`, `deadline_s`): the claim is
#' tested on the bins the figure shows, written once.
with_figure_bins <- function(claims, spec) {
  items <- purrr::set_names(spec$items, purrr::map_chr(spec$items, "id"))
  purrr::map(claims, function(claim) {
    if (!identical(claim$metric, "useful_bps")) return(claim)
    item <- items[[claim$figure]]
    if (is.null(item) || !identical(item$kind, "useful_vs_sessions") || !identical(claim$band, item$band)) {
      stop(sprintf(paste("claim %s: a claim on useful_bps (per bin of sessions) must be about a useful_vs_sessions",
                         "item of the same band, whose bins it is tested on (%s is not)"), claim$id, claim$figure))
    }
    claim$bins <- item[c("group", "edges", "deadline_s")]
    claim
  })
}

#' The name of an item's figure table: the last part of its id (fig2, emu-ratio).
item_file <- function(item) {
  sub(".*/", "", item$id)
}

#' The items of a paper spec that produce a figure table.
figure_items <- function(spec) {
  purrr::keep(spec$items, function(item) item$kind %in% figure_kinds)
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
  check_claim_figures(claims, spec)
  claims <- with_figure_bins(claims, spec)
  items <- figure_items(spec)
  scenarios <- unique(c(
    unlist(purrr::map(spec$items, "scenario")),
    unlist(purrr::map(spec$items, function(item) purrr::map(item$also, "scenario"))),
    unlist(purrr::map(claims, "scenario"))
  ))
  if (is.null(backends)) {
    backends <- sort(unique(unlist(purrr::map(scenarios, function(s) list_backends(results_dir, s)))))
  }
  # a paper with an analytic model is analysed without runs too: its model
  # items in full, its run items empty and their claims "not comparable"
  has_analytic_items <- any(purrr::map_lgl(items, function(item) item$kind %in% kinds_without_runs))
  if (length(backends) == 0 && length(scenarios) > 0 && !has_analytic_items) {
    stop(sprintf("%s: no results for any scenario of %s (looked for %s)",
                 results_dir, paper,
                 paste(file.path(results_dir, scenarios, "<backend>", "runs.csv.gz"), collapse = ", ")))
  }
  # only the metrics the items and claims read (the rest took most of an analysis's time)
  wanted <- metrics_named(c(spec$items, claims))
  loaded <- list()
  for (backend in backends) {
    for (scenario in scenarios) {
      # a backend runs only the scenarios that list it (mininet: the emulation ones)
      if (!scenario %in% list_scenarios_of_backend(results_dir, scenarios, backend)) next
      results <- read_scenario_results(results_dir, scenario, backend)
      if (!any(results$runs$valid)) {
        # nothing to measure: the figures and claims show no results for it
        warning(sprintf(paste0("every run of %s on %s failed the backend's fidelity checks: ",
                               "its figures and claims have no %s results"),
                        scenario, backend, backend))
        next
      }
      loaded[[backend]][[scenario]] <- list(
        results = results,
        metrics = compute_run_metrics(results, warmup_s = scenario_warmup_s(spec, scenario),
                                      metrics = wanted[[scenario]] %||% character()),
        sweep_vars = results$sweep_vars
      )
    }
  }
  model_rows <- memoise_by_name(function(model) analytic_models()[[model]]())
  figures <- purrr::map(items, function(item) {
    if (item$kind %in% kinds_without_runs) {
      return(model_figure_table(item, model_rows(item$model)))
    }
    if (item$kind == "backend_ratio_vs_x") {
      return(summarise_backend_ratio_vs_x(item, loaded))
    }
    table <- purrr::map_dfr(backends, function(backend) {
      data <- loaded[[backend]][[item$scenario]]
      if (is.null(data)) NULL else summarise_figure_with_also(item, data, loaded[[backend]])
    })
    if (nrow(table) == 0) empty_summary() else table
  })
  names(figures) <- purrr::map_chr(items, item_file)
  # a paper with no runs (its analytic model only, or none of its scenarios
  # run) has the model's verdicts
  verdicts <- purrr::map_dfr(if (length(backends) == 0) model_backend else backends, function(backend) {
    evaluate_claims(claims, loaded[[backend]]) |>
      dplyr::mutate(backend = backend)
  })
  list(figures = figures, claims = verdicts)
}

# The `backend` of tables computed from a paper's analytic model, not from runs.
model_backend <- "model"

#' The analytic models items of kind model_vs_x can name: model -> a function
#' returning every figure row of that model (analysis/R/model-*.R).
analytic_models <- function() {
  list(`ncq-journal` = function() dplyr::bind_rows(ncq_journal_figure_data()),
       `srd-schedule` = function() srd_schedule_figure_data())
}

#' The columns of a model figure table, in order: exact values (ci_lo = ci_hi
#' = mean), one curve per series and reading of the paper's text.
model_columns <- function() {
  c("figure", "metric", "series", "reading", "x", "x_variable", "mean", "ci_lo", "ci_hi", "unit", "method", "backend")
}

#' The figure table of a model_vs_x item: its model's rows (`all_rows`,
#' every figure's) for the item's id.
model_figure_table <- function(item, all_rows = analytic_models()[[item$model]]()) {
  rows <- all_rows[all_rows$figure == item$id, ]
  if (nrow(rows) == 0) {
    stop(sprintf("figure %s: model %s computes no rows for it (figures it computes: %s)", item$id, item$model,
                 paste(unique(all_rows$figure), collapse = ", ")))
  }
  rows$backend <- model_backend
  dplyr::select(rows, dplyr::all_of(model_columns()))
}

#' The scenarios (of `scenarios`) with collected results for `backend`.
list_scenarios_of_backend <- function(results_dir, scenarios, backend) {
  purrr::keep(scenarios, function(s) backend %in% list_backends(results_dir, s))
}

#' A summary table with no rows (a figure no backend has results for).
empty_summary <- function() {
  tibble::tibble(figure = character(), selector = integer(), metric = character(), group = character(),
                 cls = integer(), queue = character(), band = integer(), reason = character(),
                 series = character(), x = numeric(),
                 n = integer(), mean = numeric(), sd = numeric(), ci_lo = numeric(), ci_hi = numeric(),
                 backend = character(), x_variable = character(), n_censored = integer(), method = character())
}

#' The per-run rows of each metric an item shows, with `selector`, the
#' metric's position in the item's list (1 for a one-metric item).
#'
#' @param require_all Stop when a metric has no rows (else it is left out).
select_item_metrics <- function(item, metrics, require_all = TRUE) {
  purrr::imap_dfr(item_selectors(item), function(selector, i) {
    where <- sprintf("figure %s", item$id)
    rows <- select_metric_rows(metrics, selector, where)
    if (nrow(rows) == 0 && require_all) {
      found <- dplyr::distinct(with_metric_keys(metrics), dplyr::across(dplyr::all_of(c("metric", metric_key_columns))))
      computed <- purrr::pmap_chr(found, function(...) metric_selector_id(purrr::discard(list(...), is.na)))
      stop(sprintf("%s: %s is not computed for %s (computed: %s)", where, metric_selector_id(selector), item$scenario,
                   paste(unique(computed), collapse = ", ")))
    }
    dplyr::mutate(rows, selector = i)
  })
}

#' Paired ratios between two backends (`numerator` / `denominator`, e.g.
#' mininet / ns3) of per-run metrics, per series, vs a sweep variable. Both
#' backends ran the same jobs, so runs pair by series, sweep values and seed;
#' runs a backend marked invalid are left out (compute_run_metrics).
#'
#' When a side has no results the table is empty: `describe_backend_comparison()`
#' says which side is missing (the report shows that instead of a plot).
summarise_backend_ratio_vs_x <- function(item, loaded) {
  num <- loaded[[item$numerator]][[item$scenario]]
  den <- loaded[[item$denominator]][[item$scenario]]
  if (is.null(num) || is.null(den)) {
    message(sprintf("figure %s: no %s / %s ratio: %s has no results for %s", item$id, item$numerator,
                    item$denominator, paste(c(item$numerator, item$denominator)[c(is.null(num), is.null(den))],
                                            collapse = " and "), item$scenario))
    return(empty_summary())
  }
  check_sweep_variable(item, den, item$x)
  # the numerator (the emulator) may have no valid run at all; the
  # denominator's rows check the item's metrics exist
  runs <- dplyr::bind_rows(select_item_metrics(item, num$metrics, require_all = FALSE),
                           select_item_metrics(item, den$metrics))
  table <- purrr::map_dfr(sort(unique(runs$series)), function(label) {
    # compare_paired pairs two "series": here the two backends of one series
    per_backend <- dplyr::filter(runs, .data$series == label) |>
      dplyr::mutate(series = .data$backend)
    if (!all(c(item$numerator, item$denominator) %in% per_backend$series)) {
      return(NULL)
    }
    compare_paired(per_backend, item$numerator, item$denominator, by = c(item$x, selector_columns())) |>
      dplyr::filter(.data$contrast == "ratio") |>
      dplyr::mutate(series = label)
  })
  if (nrow(table) == 0) {
    return(empty_summary())
  }
  table |>
    dplyr::mutate(n_censored = NA_integer_, figure = item$id,
                  backend = paste0(item$numerator, "/", item$denominator)) |>
    dplyr::rename(x = dplyr::all_of(item$x)) |>
    dplyr::mutate(x = as.numeric(.data$x), x_variable = item$x) |>
    dplyr::select(dplyr::all_of(summary_columns()))
}

#' One figure's summary table for one backend's results of its scenario.
summarise_figure <- function(item, scenario_data) {
  table <- switch(item$kind,
    metric_vs_x = summarise_metric_vs_x(item, scenario_data),
    tasks_over_time = summarise_tasks_over_time(item, scenario_data),
    paired_ratio_vs_x = summarise_paired_ratio_vs_x(item, scenario_data),
    metric_by_series = summarise_metric_by_series(item, scenario_data),
    improvement_frequency = summarise_improvement_freq(item, scenario_data),
    tcp_worst_flow = summarise_tcp_worst_flow(item, scenario_data),
    theory_vs_x = summarise_theory_vs_x(item, scenario_data),
    time_series = summarise_time_series(item, scenario_data),
    useful_vs_sessions = summarise_useful_vs_sessions(item, scenario_data),
    stop(sprintf("figure %s: kind `%s` must be one of %s", item$id, item$kind,
                 paste(setdiff(figure_kinds, "backend_ratio_vs_x"), collapse = ", ")))
  )
  table |>
    with_metric_keys() |>
    dplyr::mutate(figure = item$id) |>
    dplyr::select(dplyr::all_of(summary_columns()))
}

#' One figure's table, with the series of the scenarios its `also` names
#' beside its own (each `{scenario, suffix}`: the same summary of that
#' scenario, its series labelled with the suffix), e.g. the same sweep run
#' without the TCP handshake.
summarise_figure_with_also <- function(item, scenario_data, loaded_backend) {
  table <- summarise_figure(item, scenario_data)
  for (extra in item$also %||% list()) {
    other <- loaded_backend[[extra$scenario]]
    if (is.null(other)) next
    # the reference (e.g. processor sharing) is drawn once, from the item's own scenario
    beside <- item
    beside$reference_metric <- NULL
    table <- dplyr::bind_rows(table, summarise_figure(beside, other) |>
                                dplyr::mutate(series = paste0(.data$series, extra$suffix)))
  }
  table
}

check_sweep_variable <- function(item, scenario_data, variable) {
  if (!variable %in% scenario_data$sweep_vars) {
    stop(sprintf("figure %s: `%s` must be a sweep variable of %s (found: %s)", item$id, variable,
                 item$scenario, paste(scenario_data$sweep_vars, collapse = ", ")))
  }
}

summarise_metric_vs_x <- function(item, scenario_data) {
  check_sweep_variable(item, scenario_data, item$x)
  runs <- select_item_metrics(item, scenario_data$metrics)
  reference <- item$reference_metric
  if (!is.null(reference)) {
    # a discipline-independent reference (the same tasks and start times in
    # every series at a seed): drawn once, from the first series, as its own line
    ref_item <- item
    ref_item$metric <- reference$metric
    ref_item$metrics <- NULL
    ref_runs <- select_item_metrics(ref_item, scenario_data$metrics)
    ref_runs <- ref_runs[ref_runs$series == sort(unique(ref_runs$series))[[1]], ]
    ref_runs$series <- reference$label
    runs <- dplyr::bind_rows(runs, ref_runs)
  }
  runs |>
    summarise_over_seeds(c("backend", "series", item$x, selector_columns())) |>
    dplyr::rename(x = dplyr::all_of(item$x)) |>
    dplyr::mutate(x = as.numeric(.data$x), x_variable = item$x)
}

#' A metric of the series `theory` names against a sweep variable, as
#' metric_vs_x (mean over seeds, 95% t-interval), and beside it each closed
#' form the item names for that series (validation_models(), evaluated at
#' each sweep value for the scenario as the backend ran it): rows with no
#' interval, `method` "closed form: <its label>".
summarise_theory_vs_x <- function(item, scenario_data) {
  simulated <- summarise_metric_vs_x(item, scenario_data) |>
    dplyr::filter(.data$series %in% names(item$theory))
  scenario <- scenario_data$results$scenario
  models <- validation_models()
  cells <- dplyr::distinct(simulated, .data$backend, .data$series, .data$selector, .data$metric, .data$group, .data$x)
  theory <- purrr::map_dfr(seq_len(nrow(cells)), function(i) {
    cell <- cells[i, ]
    purrr::map_dfr(unlist(item$theory[[cell$series]]), function(model) {
      dplyr::mutate(cell, n = NA_integer_, sd = NA_real_, ci_lo = NA_real_, ci_hi = NA_real_,
                    mean = validation_theory_wait_s(model, scenario, cell$series, cell$group, cell$x, cell$backend),
                    x_variable = item$x, n_censored = NA_integer_,
                    method = paste("closed form:", models[[model]]$label))
    })
  })
  dplyr::bind_rows(simulated, theory)
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
                     metric = "tasks_completed", selector = 1L, value = .data$tasks_completed) |>
    summarise_over_seeds(c("backend", "series", "time_s", "metric", "selector")) |>
    dplyr::mutate(n_censored = NA_integer_) |>
    dplyr::rename(x = "time_s") |>
    dplyr::mutate(x_variable = "time_s")
}

#' The TCP state of the worst traced flow of each series at the point `at`
#' (metric-tcp-state.R): one row per sample and quantity, `x` the time since
#' the flow started, `mean` the value (one flow: n = 1, no interval), and
#' `method` naming the flow, its run and its completion time.
summarise_tcp_worst_flow <- function(item, scenario_data) {
  results <- scenario_data$results
  if (is.null(results$tcp)) {
    stop(sprintf("figure %s: %s has no tcp table (its trace.tcp and trace.collect must name tcp)", item$id,
                 item$scenario))
  }
  valid_runs <- dplyr::filter(results$runs, .data$valid)
  for (variable in names(item$at)) {
    check_sweep_variable(item, scenario_data, variable)
    valid_runs <- valid_runs[valid_runs[[variable]] == item$at[[variable]], ]
  }
  if (nrow(valid_runs) == 0) {
    stop(sprintf("figure %s: no valid run of %s at %s", item$id, item$scenario, describe_point(item$at)))
  }
  flows <- dplyr::semi_join(results$flows, valid_runs, by = run_key_columns)
  tcp <- dplyr::semi_join(results$tcp, valid_runs, by = run_key_columns)
  worst <- worst_traced_flows(flows, tcp)
  method <- worst |>
    dplyr::transmute(.data$series, method = sprintf(
      "%s: the worst of the traced flows of %d run(s) is flow %d of seed %d, %s %.2f s",
      .data$series, .data$runs, .data$flow_id, .data$seed,
      ifelse(.data$completed == 1, "completed in", "not completed, censored at"), .data$fct_s))
  tcp_state_of_flows(tcp, worst) |>
    dplyr::left_join(method, by = "series") |>
    dplyr::transmute(.data$backend, .data$series, x = .data$time_s, metric = .data$quantity,
                     selector = match(.data$quantity, names(tcp_state_quantities)),
                     n = 1L, mean = .data$value, sd = NA_real_, ci_lo = NA_real_, ci_hi = NA_real_,
                     n_censored = NA_integer_, x_variable = "time_s", method = .data$method)
}

summarise_paired_ratio_vs_x <- function(item, scenario_data) {
  check_sweep_variable(item, scenario_data, item$x)
  runs <- select_item_metrics(item, scenario_data$metrics)
  treatments <- setdiff(sort(unique(runs$series)), item$baseline)
  purrr::map_dfr(treatments, function(treatment) {
    compare_paired(runs, treatment, item$baseline, by = c("backend", item$x, selector_columns())) |>
      dplyr::filter(.data$contrast == "ratio") |>
      dplyr::mutate(series = treatment)
  }) |>
    dplyr::mutate(n_censored = NA_integer_) |>
    dplyr::rename(x = dplyr::all_of(item$x)) |>
    dplyr::mutate(x = as.numeric(.data$x), x_variable = item$x)
}

#' Several per-run metrics side by side, per series, at one point: `x` is the
#' metric's position in `item$metrics` (1, 2, ...), as `selector`.
summarise_metric_by_series <- function(item, scenario_data) {
  runs <- select_item_metrics(item, scenario_data$metrics)
  if (!is.null(item$series)) {
    # the scenario's series, valid runs or not (a series whose runs were all
    # invalid has no metrics: no rows, not an error)
    missing <- setdiff(unlist(item$series), c(runs$series, scenario_data$results$runs$series))
    if (length(missing) > 0) {
      stop(sprintf("figure %s: series %s must be series of %s", item$id, paste(missing, collapse = ", "),
                   item$scenario))
    }
    runs <- dplyr::filter(runs, .data$series %in% unlist(item$series))
  }
  for (variable in scenario_data$sweep_vars) {
    if (length(unique(runs[[variable]])) > 1) {
      stop(sprintf("figure %s: metric_by_series needs one sweep point, %s has several values of %s",
                   item$id, item$scenario, variable))
    }
  }
  runs |>
    summarise_over_seeds(c("backend", "series", selector_columns())) |>
    dplyr::mutate(x = as.numeric(.data$selector), x_variable = "metric")
}

#' A frequency table of the per-run change of a metric, treatment against
#' baseline paired by seed (the NCQ journal's Scenario 4: "the percentage of
#' performance improvement/decrease of each measure, using as a reference
#' point the experimental results of a scenario using DropTail"): `x` is the
#' interval's number in `frequency_bins(item$bins)`, `mean` the share of the
#' runs in it (percent), `ci_lo`/`ci_hi` its exact 95% interval, `n` the
#' paired runs. One sweep point.
summarise_improvement_freq <- function(item, scenario_data) {
  runs <- select_item_metrics(item, scenario_data$metrics)
  for (variable in scenario_data$sweep_vars) {
    if (length(unique(runs[[variable]])) > 1) {
      stop(sprintf("figure %s: improvement_frequency needs one sweep point, %s has several values of %s",
                   item$id, item$scenario, variable))
    }
  }
  by <- c("backend", selector_columns())
  changes <- paired_change_pct(runs, item$treatment, item$baseline, by)
  changes |>
    dplyr::group_by(dplyr::across(dplyr::all_of(by))) |>
    dplyr::group_modify(function(cell, key) frequency_table(cell$change_pct, unlist(item$bins))) |>
    dplyr::ungroup() |>
    dplyr::transmute(dplyr::across(dplyr::all_of(by)), series = item$treatment, x = as.numeric(.data$bin),
                     n = .data$n, mean = .data$share_pct, sd = NA_real_, ci_lo = .data$ci_lo, ci_hi = .data$ci_hi,
                     n_censored = NA_integer_, x_variable = "change_pct_bin", method = method_frequency)
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

#' Read a figure table written by `write_paper_analysis()`, typed as written
#' (an item of a kind without runs has the model's columns).
read_item_table <- function(path, item) {
  if (!item$kind %in% kinds_without_runs) {
    return(read_figure_table(path))
  }
  types <- readr::cols(
    figure = readr::col_character(), metric = readr::col_character(), series = readr::col_character(),
    reading = readr::col_character(), x = readr::col_double(), x_variable = readr::col_character(),
    mean = readr::col_double(), ci_lo = readr::col_double(), ci_hi = readr::col_double(),
    unit = readr::col_character(), method = readr::col_character(), backend = readr::col_character()
  )
  dplyr::select(read_typed_csv(path, types$cols), dplyr::all_of(model_columns()))
}

#' Read a figure table written by `write_paper_analysis()`, typed as written.
read_figure_table <- function(path) {
  types <- readr::cols(
    figure = readr::col_character(), selector = readr::col_integer(), metric = readr::col_character(),
    group = readr::col_character(), cls = readr::col_integer(), queue = readr::col_character(),
    band = readr::col_integer(), reason = readr::col_character(), series = readr::col_character(),
    x = readr::col_double(),
    n = readr::col_integer(), mean = readr::col_double(), sd = readr::col_double(),
    ci_lo = readr::col_double(), ci_hi = readr::col_double(), backend = readr::col_character(),
    x_variable = readr::col_character(), n_censored = readr::col_integer(), method = readr::col_character()
  )
  table <- read_typed_csv(path, types$cols)
  dplyr::select(table, dplyr::all_of(summary_columns()))
}

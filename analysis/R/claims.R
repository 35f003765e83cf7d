# Claims: each entry of analysis/claims/<paper>.yaml states one claim of the
# paper verbatim, the paper's value, and how to test it against our runs
# (`comparison`). Verdicts are computed here from the data, never typed; the
# rules are `verdict_rules` below, which the report's "How verdicts are
# computed" page prints (reports/verdicts.qmd).
#
# Every statistical verdict rests on one-sided t-tests of per-seed values at
# level `verdict_alpha`: a comparison between two series pairs their runs by
# seed (and sweep values) and tests the per-seed contrasts; the tests at the
# points of a sweep (or the comparisons of one claim) form one family,
# adjusted by Holm's step-down method before anything counts as shown.
# "inconclusive" (no test decides) is not "not reproduced" (a test shows the
# opposite, or the interval excludes the claimed magnitude).
#
# Comparison kinds:
#   ratio_at       paired ratio treatment/baseline at one sweep point vs `expected` (a magnitude)
#   difference_at  paired difference treatment − baseline at one point vs `expected` (a magnitude)
#   direction      treatment `relation` (< or >) baseline (or each of several baselines), at every point
#   no_worse       non-inferiority: treatment not worse than baseline by more than `tolerance` (relative)
#   equivalent     equivalence by two one-sided tests (TOST): the paired ratio within 1 ± `margin`
#                  (of one treatment, or of each of several), or one series' mean within `value` × (1 ± `margin`)
#   share_of_runs  the share of paired runs whose change 100·(treatment/baseline − 1) % lies in
#                  (`above`, `at_most`] vs the paper's share `expected` (%), ± `tolerance_pp`
#                  (a frequency-table claim; judged at `min_runs` paired runs or more, default 10)
#   at_least       the mean of the metric ≥ `threshold` for the given series at every point
#   at_most        the same with ≤; `over: every_run` judges each run (a bound, no statistics)
#   trend          metric `decreasing`/`increasing` in the sweep variable, per series
#   order_changes  the order of the `series` changes across the points (sweep values, or the bins of a
#                  per-bin metric): one series above another at one point and below it at another
#   theory         the metric of one series agrees with a closed form (`model`, validation_models())
#                  within 1 ± `margin` at every point of the sweep variable `x` (TOST on the per-seed
#                  ratios to the closed form)
#   qualitative    a statement we do not test numerically (`reason`)
#   not_comparable a statement our runs cannot test (`reason`)
# Beside the kind, a claim may give
#   same_as        the id of a claim that tests the same sentence the same way: this entry
#                  shows that verdict and is counted once (summaries count the referenced one)
#   requires       {metric, <keys>, series, min, at}: a demonstration's defining rule must have fired
#                  (in every run the claim is tested on: at the comparison's `at`, or the requires' own)
#                  (the metric ≥ min, default 1, in every run of those series), else "not reproduced"
#   times_s        with metric tasks_completed: the times t at which tasks completed by t are compared
#   bins           with metric useful_bps (per bin of sessions, not per run): {group, edges, deadline_s},
#                  taken by analyze_paper() from the claim's figure (a useful_vs_sessions item); the
#                  bins (`sessions`) are then the points

verdicts <- c("reproduced", "partly", "inconclusive", "not reproduced", "qualitative", "not comparable")

comparison_kinds <- c("ratio_at", "difference_at", "direction", "no_worse", "equivalent", "share_of_runs",
                      "at_least", "at_most", "trend", "order_changes", "theory", "model_value", "qualitative",
                      "not_comparable")
# Kinds tested on a paper's analytic model, not on runs (no metric, no scenario).
model_comparison_kinds <- "model_value"

# The level of every test behind a verdict, and the multiplicity correction
# applied to each claim's family of tests (stats::p.adjust's name).
verdict_alpha <- 0.05
multiplicity_method <- "holm"

#' The verdict rule of each comparison kind, as the report prints it: what is
#' tested, and when each verdict is given. (A function: the files of
#' analysis/R are sourced in any order.)
verdict_rules <- function() {
  a <- format(verdict_alpha)
  tibble::tribble(
    ~kind, ~test, ~reproduced, ~partly, ~inconclusive, ~not_reproduced,
    "direction",
    sprintf(paste("At each sweep point, a one-sided paired t-test of the per-seed differences treatment − baseline",
                  "(with several baselines, one per baseline and point); Holm across the family; a point holds (or",
                  "is against) when its adjusted p < %s on the claimed (or the opposite) side."), a),
    "holds at ≥ min_share of the points (default 80%), against at none",
    "holds at one point or more and at more points than against",
    "no point holds or is against",
    "against at one point or more, and at least as often as it holds",
    "ratio_at / difference_at",
    sprintf(paste("At the claim's point, a one-sided paired t-test of the per-seed ratios (differences) against no",
                  "effect (p < %s), and the magnitude: our mean effect, or with `compare: best` the per-seed best",
                  "over the sweep (the papers report single runs), within ± tolerance of the paper's effect. Both",
                  "numbers are reported; the verdict names the one compared."), a),
    "significant on the paper's side and the compared magnitude within tolerance",
    "significant on the paper's side, magnitude outside the tolerance",
    "not significant either way, and the 95% interval still reaches the tolerance band of the paper's effect",
    "significant on the opposite side, or the 95% interval excludes the paper's effect with its tolerance",
    "no_worse",
    sprintf(paste("Non-inferiority: at each point, a one-sided paired t-test that the per-seed ratio",
                  "treatment/baseline is better than 1 ± tolerance (the worse side; margin stated in the claim), and",
                  "the opposite test; Holm across the points, p < %s."), a),
    "shown at every point",
    "shown at some points, worse than the margin at none",
    "shown at no point, worse than the margin at none",
    "worse than the margin at one point or more",
    "equivalent",
    sprintf(paste("Equivalence by two one-sided tests (TOST): at each point (and for each treatment, when several)",
                  "the per-seed ratio treatment/baseline (or one series' values against `value`) lies within 1 ±",
                  "margin (value × (1 ± margin)); the TOST p-value is the larger of the two one-sided ones. Outside:",
                  "the one-sided test beyond the nearer bound, Bonferroni ×2. Holm across the points and treatments,",
                  "p < %s."), a),
    "equivalent at every point",
    "equivalent at some points, outside at none",
    "equivalent at no point, outside at none",
    "outside the margin at one point or more",
    "share_of_runs",
    paste("A frequency-table claim (“more than 100% improvement for the 38% of the runs”): the runs of treatment and",
          "baseline paired by seed, each pair's change 100·(treatment/baseline − 1) %, the share of the pairs whose",
          "change lies in the claim's interval (above, at_most], with its exact (Clopper–Pearson) 95% interval;",
          "compared with the paper's share ± tolerance (percentage points, stated in the claim). No verdict but",
          "inconclusive below min_runs pairs (default 10)."),
    "our share within the paper's ± tolerance (and at least min_runs pairs)",
    "—",
    "our share outside the band but its 95% interval reaches it, or fewer than min_runs pairs",
    "the 95% interval of our share misses the paper's share ± tolerance",
    "at_least / at_most",
    sprintf(paste("At each series × point cell, a one-sided t-test of the per-seed values against the threshold;",
                  "Holm across the cells, p < %s. With `over: every_run` (a bound): every run's value is compared,",
                  "no statistics."), a),
    "shown in every cell (every run within the bound)",
    "shown in some cells, the opposite in none",
    "shown in no cell, the opposite in none",
    "the opposite shown in one cell or more (one run beyond a bound)",
    "trend",
    sprintf(paste("Per series, the least-squares slope of the per-run values on the sweep variable, one-sided t-test",
                  "on its sign; Holm across the series, p < %s."), a),
    "the claimed sign in every series",
    "the claimed sign in some series, the opposite in none",
    "no series decides",
    "the opposite sign in one series or more",
    "order_changes",
    sprintf(paste("For each pair of the series and each point (sweep value or bin), one-sided paired t-tests of the",
                  "per-seed differences both ways; Holm across every test of the claim; a series is shown above",
                  "another at a point when its adjusted p < %s."), a),
    "one pair is shown in one order at a point and in the other order at another point",
    "—",
    "no pair reverses, and no series is shown above every other at every point",
    "one series is shown above every other series at every point (the order never changes)",
    "theory",
    sprintf(paste("At each sweep point, equivalence of one series' per-seed values, as ratios to a closed form of",
                  "queueing theory (the validation page), within 1 ± margin by two one-sided tests (TOST); outside:",
                  "the one-sided test beyond the nearer bound, Bonferroni ×2; Holm across the points, p < %s. Beside",
                  "it, at every point: the pointwise 95%% interval's half-width within the margin, and the closed form",
                  "inside the simultaneous 95%% interval (Bonferroni over the points)."), a),
    "equivalent at every point, every half-width within the margin, the closed form inside every simultaneous interval",
    "equivalent at some points and outside at none, or at every point but failing a check beside",
    "equivalent at no point, outside at none",
    "outside the margin at one point or more",
    "model_value",
    paste("A value the paper states from its own equations (e.g. a percentage at one utilisation), computed exactly",
          "from our transcription of those equations (no statistics) under the printed reading and under every other",
          "reading of what the paper leaves ambiguous (design/catalogue.yaml); a reading matches within the claim's",
          "tolerance (the paper prints whole numbers)."),
    "the printed reading matches",
    paste("a reading that changes one ambiguous choice matches (named); readings changing two or more are reported",
          "but decide nothing"),
    "—",
    "no reading changing at most one choice matches",
    "qualitative / not_comparable",
    "No test: a description, an explanation, or a statement our runs cannot test; the reason is shown.",
    "—", "—", "—", "—"
  )
}

#' Read and check a claims YAML file.
#'
#' @return A list of claims (each a list with id, figure, claim, paper_value,
#'   metric, scenario, comparison).
read_claims <- function(path) {
  if (!file.exists(path)) {
    stop(sprintf("%s: file not found", path))
  }
  doc <- yaml::read_yaml(path)
  if (is.null(doc$claims) || length(doc$claims) == 0) {
    stop(sprintf("%s: must hold a non-empty `claims` list", path))
  }
  ids <- purrr::map_chr(doc$claims, function(claim) claim$id %||% NA_character_)
  if (anyDuplicated(ids)) {
    stop(sprintf("%s: claim ids must be unique (repeated: %s)",
                 path, paste(unique(ids[duplicated(ids)]), collapse = ", ")))
  }
  purrr::iwalk(doc$claims, function(claim, i) check_claim(claim, sprintf("%s: claims[%d]", path, i)))
  check_claim_references(doc$claims, path)
  doc$claims
}

check_claim <- function(claim, where) {
  # an entry that repeats another's test (same_as) has no comparison of its own
  required <- c("id", "figure", "claim", "paper_value", if (is.null(claim$same_as)) "comparison")
  missing <- setdiff(required, names(claim))
  if (length(missing) > 0) {
    stop(sprintf("%s: missing field(s) %s", where, paste(missing, collapse = ", ")))
  }
  if (!is.null(claim$same_as)) {
    if (!is.null(claim$comparison) || !is.null(claim$metric)) {
      stop(sprintf(paste("%s (%s): an entry with same_as repeats that claim's test: it must give no comparison or",
                         "metric of its own"),
                   where, claim$id))
    }
    return(invisible(claim))
  }
  kind <- claim$comparison$kind %||% ""
  if (!kind %in% comparison_kinds) {
    stop(sprintf("%s (%s): comparison.kind must be one of %s",
                 where, claim$id, paste(comparison_kinds, collapse = ", ")))
  }
  needs <- switch(kind,
    ratio_at = , difference_at = c("treatment", "baseline", "at", "expected", "tolerance"),
    direction = c("treatment", "baseline", "relation"),
    no_worse = c("treatment", "baseline", "tolerance", "better"),
    equivalent = if (is.null(claim$comparison$value)) {
      c("treatment", "baseline", "margin")
    } else {
      c("series", "value", "margin")
    },
    share_of_runs = c("treatment", "baseline", "above", "expected", "tolerance_pp"),
    at_least = , at_most = c("series", "threshold"),
    trend = c("series", "relation", "x"),
    order_changes = "series",
    model_value = c("model", "series"),
    qualitative = , not_comparable = "reason"
  )
  missing <- setdiff(needs, names(claim$comparison))
  if (length(missing) > 0) {
    stop(sprintf("%s (%s): comparison of kind %s must give %s", where, claim$id, kind, paste(missing, collapse = ", ")))
  }
  control <- claim$comparison$control
  if (!is.null(control) && (kind != "theory" || !identical(control, "offered_load"))) {
    stop(sprintf(paste("%s (%s): comparison.control is for a theory comparison and must be offered_load (the one",
                       "control variate whose expectation the scenario fixes; found %s in a %s comparison)"),
                 where, claim$id, paste(control, collapse = ", "), kind))
  }
  compare <- claim$comparison$compare %||% "mean"
  if (!compare %in% c("mean", "best")) {
    stop(sprintf("%s (%s): comparison.compare must be mean or best (found %s)", where, claim$id, compare))
  }
  if (kind %in% model_comparison_kinds) {
    if (!claim$comparison$model %in% names(model_value_tables())) {
      stop(sprintf("%s (%s): comparison.model must be one of %s (found %s)", where, claim$id,
                   paste(names(model_value_tables()), collapse = ", "), claim$comparison$model))
    }
  } else if (!kind %in% c("qualitative", "not_comparable")) {
    for (field in c("metric", "scenario")) {
      if (is.null(claim[[field]])) {
        stop(sprintf("%s (%s): a %s comparison must name its `%s`", where, claim$id, kind, field))
      }
    }
    claim_selector(claim, sprintf("%s (%s)", where, claim$id))
    if (identical(claim$metric, "tasks_completed") && is.null(claim$comparison$times_s)) {
      stop(sprintf("%s (%s): a claim on tasks_completed must give comparison.times_s (the times t compared)",
                   where, claim$id))
    }
  }
  if (!is.null(claim$requires)) {
    if (is.null(claim$requires$series)) {
      stop(sprintf("%s (%s): `requires` must name the `series` whose runs must exercise the rule", where, claim$id))
    }
    metric_selector(claim$requires[intersect(c("metric", metric_key_columns), names(claim$requires))],
                    sprintf("%s (%s): requires", where, claim$id))
  }
  invisible(claim)
}

#' The metric a claim is tested on: `metric` and the keys beside it
#' (analysis/R/metrics.R), e.g. `metric: loss_ratio` with `group: data-high`.
claim_selector <- function(claim, where = claim$id) {
  metric_selector(claim[intersect(c("metric", metric_key_columns), names(claim))], where)
}

#' Stop unless every `same_as` names another claim of the file that is not
#' itself a reference (a duplicate points at the one test).
check_claim_references <- function(claims, where = "claims") {
  ids <- purrr::map_chr(claims, "id")
  purrr::walk(claims, function(claim) {
    target <- claim$same_as
    if (is.null(target)) return()
    if (!target %in% ids || identical(target, claim$id)) {
      stop(sprintf("%s (%s): same_as must name another claim of the file (found %s)", where, claim$id, target))
    }
    if (!is.null(claims[[match(target, ids)]]$same_as)) {
      stop(sprintf("%s (%s): same_as must name the claim that holds the test, not another reference (%s)",
                   where, claim$id, target))
    }
  })
  invisible(claims)
}

#' Evaluate every claim against per-run metrics.
#'
#' @param claims Claims from `read_claims()`.
#' @param metrics_by_scenario Named list, scenario id -> list(metrics = long
#'   per-run table from `compute_run_metrics()`, sweep_vars = character, and
#'   `results` (for tasks_completed claims)).
#' @return A tibble: claim_id, figure, claim, paper_value, ours, verdict,
#'   method, same_as (NA, or the claim whose test this entry repeats).
evaluate_claims <- function(claims, metrics_by_scenario) {
  check_claim_references(claims)
  # a model's stated values are computed once for all the claims on them
  model_table <- memoise_by_name(function(model) model_value_tables()[[model]]())
  outcomes <- purrr::map(claims, function(entry) {
    if (!is.null(entry$same_as)) NULL else evaluate_claim(entry, metrics_by_scenario, model_table)
  })
  names(outcomes) <- purrr::map_chr(claims, "id")
  purrr::map_dfr(claims, function(entry) {
    outcome <- outcomes[[entry$id]] %||% outcomes[[entry$same_as]]
    method <- paste(c(entry$operationalisation, outcome$method), collapse = " ")
    if (!is.null(entry$same_as)) {
      method <- sprintf("Same test as %s (counted once, there). %s", entry$same_as, method)
    }
    tibble::tibble(
      claim_id = entry$id,
      figure = entry$figure,
      claim = entry$claim,
      paper_value = entry$paper_value,
      ours = outcome$ours,
      verdict = outcome$verdict,
      method = method,
      same_as = entry$same_as %||% NA_character_
    )
  })
}

#' Verdict counts of an evaluated claims table, each test once (entries that
#' repeat another's test, `same_as`, are not counted).
count_verdicts <- function(evaluated) {
  counted <- if ("same_as" %in% names(evaluated)) {
    evaluated[is.na(evaluated$same_as) | evaluated$same_as == "NA", ]
  } else {
    evaluated
  }
  counted |>
    dplyr::mutate(verdict = factor(.data$verdict, levels = verdicts)) |>
    dplyr::count(.data$verdict, .drop = FALSE)
}

claim_outcome <- function(verdict, ours, method) {
  stopifnot(verdict %in% verdicts)
  list(verdict = verdict, ours = ours, method = method)
}

#' Evaluate one claim: list(verdict, ours, method).
evaluate_claim <- function(claim, metrics_by_scenario,
                           model_table = function(model) model_value_tables()[[model]]()) {
  comparison <- claim$comparison
  kind <- comparison$kind
  if (kind == "qualitative") {
    return(claim_outcome("qualitative", "—", comparison$reason))
  }
  if (kind == "not_comparable") {
    return(claim_outcome("not comparable", "—", comparison$reason))
  }
  if (kind == "model_value") {
    return(evaluate_model_value(claim, model_table(comparison$model)))
  }
  data <- metrics_by_scenario[[claim$scenario]]
  if (is.null(data)) {
    return(claim_outcome("not comparable", "—", sprintf(paste(
      "No results for scenario %s: this reproduction ran none of its jobs (its profile or the backends run",
      "leave it out)."), claim$scenario)))
  }
  selector <- claim_selector(claim)
  sweep_vars <- data$sweep_vars
  if (identical(claim$metric, "tasks_completed")) {
    metrics <- tasks_completed_runs(data$results, unlist(comparison$times_s), sweep_vars)
    sweep_vars <- c(sweep_vars, "time_s")
  } else if (identical(claim$metric, "useful_bps")) {
    metrics <- useful_bins_runs(data$results, claim, sweep_vars)
    sweep_vars <- c(sweep_vars, "sessions")
  } else {
    metrics <- select_metric_rows(data$metrics, selector, sprintf("claim %s", claim$id))
  }
  if (nrow(metrics) == 0) {
    return(claim_outcome("not comparable", "—", sprintf("Metric %s is not computed for %s.",
                                                         metric_selector_id(selector), claim$scenario)))
  }
  # texts name the metric with its part (avg_fct_s[group=noncongestive])
  claim$metric_id <- metric_selector_id(selector)
  sweep <- metrics
  metrics <- filter_at_point(metrics, comparison$at)
  if (nrow(metrics) == 0) {
    return(claim_outcome("not comparable", "—",
                         sprintf("Sweep point %s is not in the results of %s.",
                                 describe_point(comparison$at), claim$scenario)))
  }
  if (!is.null(claim$requires)) {
    fired <- check_rule_fired(claim, data)
    if (!is.null(fired)) {
      return(fired)
    }
  }
  if (kind == "theory") {
    return(evaluate_theory(claim, metrics, data$results$scenario, data$metrics))
  }
  evaluate <- switch(kind,
    ratio_at = evaluate_effect_at,
    difference_at = evaluate_effect_at,
    direction = evaluate_direction,
    no_worse = evaluate_no_worse,
    equivalent = evaluate_equivalent,
    share_of_runs = evaluate_share_of_runs,
    at_least = evaluate_threshold,
    at_most = evaluate_threshold,
    trend = evaluate_trend,
    order_changes = evaluate_order_changes
  )
  evaluate(claim, metrics, sweep_vars, sweep)
}

#' Tasks completed by each time of `times_s`, per run, as a long per-run
#' metric table with `time_s` beside the sweep variables (valid runs only).
tasks_completed_runs <- function(results, times_s, sweep_vars) {
  if (is.null(results)) {
    stop("tasks completed: the claim needs the scenario's collected results (flows and runs)")
  }
  valid_runs <- dplyr::filter(results$runs, .data$valid)
  flows <- results$flows |>
    dplyr::filter(.data$app == "bulk") |>
    dplyr::semi_join(valid_runs, by = run_key_columns)
  count_tasks_completed(flows, c(run_key_columns, sweep_vars), sort(times_s)) |>
    dplyr::transmute(dplyr::across(dplyr::all_of(c(run_key_columns, sweep_vars, "time_s"))),
                     metric = "tasks_completed", value = as.numeric(.data$tasks_completed), n_censored = 0L) |>
    with_metric_keys()
}

#' The useful throughput of a claim's band per run and bin of sessions
#' (metric useful_bps; the bins are the claim's `bins`, its figure's), as a
#' long per-run metric table with `sessions` beside the sweep variables
#' (valid runs only).
useful_bins_runs <- function(results, claim, sweep_vars) {
  bins <- claim$bins
  if (is.null(results) || is.null(bins$group) || is.null(bins$edges) || is.null(claim$band)) {
    stop(sprintf(paste("claim %s: useful_bps is per bin of sessions: the claim needs a `band`, its `bins` (group,",
                       "edges, deadline_s: its figure's) and the scenario's packets and flows"), claim$id))
  }
  valid_runs <- dplyr::filter(results$runs, .data$valid)
  packets <- dplyr::semi_join(results$packets, valid_runs, by = run_key_columns)
  flows <- dplyr::semi_join(results$flows, valid_runs, by = run_key_columns)
  by <- c(run_key_columns, sweep_vars)
  summarise_useful_throughput(packets, flows, by, band = as.integer(claim$band), group = bins$group,
                              edges = as.integer(unlist(bins$edges)), end_s = min(valid_runs$sim_end_s),
                              deadline_s = as.numeric(bins$deadline_s %||% 0.05)) |>
    dplyr::transmute(dplyr::across(dplyr::all_of(c(by, "sessions"))), metric = "useful_bps",
                     band = as.integer(claim$band), value = .data$useful_bps, n_censored = 0L) |>
    with_metric_keys()
}

#' NULL when the claim's defining rule fired in every run of the series its
#' `requires` names; else the "not reproduced" outcome saying where it did not.
check_rule_fired <- function(claim, data) {
  needed <- claim$requires
  selector <- metric_selector(needed[intersect(c("metric", metric_key_columns), names(needed))], claim$id)
  series <- unlist(needed$series)
  minimum <- needed$min %||% 1
  # the runs the claim is tested on: at its point, when it names one
  metrics <- filter_at_point(data$metrics, needed$at %||% claim$comparison$at)
  rows <- select_metric_rows(metrics, selector, sprintf("claim %s: requires", claim$id)) |>
    dplyr::filter(.data$series %in% .env$series)
  runs <- metrics |>
    dplyr::filter(.data$series %in% .env$series) |>
    dplyr::distinct(dplyr::across(dplyr::all_of(run_key_columns)))
  fired <- dplyr::left_join(runs, rows[c(run_key_columns, "value")], by = run_key_columns)
  fired$value[is.na(fired$value)] <- 0
  missed <- sum(fired$value < minimum)
  rule <- sprintf("%s ≥ %s in every run of %s", metric_selector_id(selector), minimum, paste(series, collapse = ", "))
  if (nrow(fired) > 0 && missed == 0) {
    return(NULL)
  }
  claim_outcome("not reproduced",
                sprintf("the defining rule did not fire in %d of %d runs (%s)", missed, nrow(fired), rule),
                sprintf("A demonstration must exercise its rule: %s is required before the claim is tested.", rule))
}

filter_at_point <- function(metrics, at) {
  for (variable in names(at)) {
    if (!variable %in% names(metrics)) {
      return(metrics[0, ])
    }
    metrics <- metrics[!is.na(metrics[[variable]]) & metrics[[variable]] == at[[variable]], ]
  }
  metrics
}

describe_point <- function(at) {
  if (length(at) == 0) {
    return("all points")
  }
  paste(names(at), unlist(at), sep = " = ", collapse = ", ")
}

format_number <- function(x, metric) {
  scale <- if (grepl("_bps$", metric)) 1e-6 else 1
  unit <- if (grepl("_bps$", metric)) " Mb/s" else if (grepl("_s$", metric)) " s" else ""
  # "fg" with "#" keeps 3 significant digits (0.0500) but leaves a bare point on large integers (8727.)
  digits <- sub("\\.$", "", formatC(x * scale, digits = 3, format = "fg", flag = "#"))
  ifelse(is.na(x), "NA", paste0(digits, unit))
}

format_interval <- function(summary, metric) {
  sprintf("%s (95%% CI %s to %s; n = %d)", format_number(summary$mean, metric),
          format_number(summary$ci_lo, metric), format_number(summary$ci_hi, metric), summary$n)
}

format_p <- function(p) {
  ifelse(is.na(p), "NA", ifelse(p < 0.001, "< 0.001", formatC(p, digits = 2, format = "fg")))
}

# The family of tests of one claim: one row per cell (point, baseline, ...)
# with the per-seed values' summary and the two one-sided p-values, `p_for`
# (the claim's side) and `p_against`, Holm-adjusted across the rows into
# `holds` and `against`.
adjust_family <- function(cells) {
  cells$p_for_adj <- holm(cells$p_for)
  cells$p_against_adj <- holm(cells$p_against)
  cells$holds <- !is.na(cells$p_for_adj) & cells$p_for_adj < verdict_alpha
  cells$against <- !is.na(cells$p_against_adj) & cells$p_against_adj < verdict_alpha
  cells
}

# reproduced / partly / inconclusive / not reproduced from a family's cells,
# where every cell must hold (`required`: how many must).
family_verdict <- function(cells, required = nrow(cells)) {
  holds <- sum(cells$holds)
  against <- sum(cells$against)
  if (holds >= required && against == 0) {
    "reproduced"
  } else if (against > 0 && against >= holds) {
    "not reproduced"
  } else if (holds > 0) {
    "partly"
  } else {
    "inconclusive"
  }
}

family_method <- function(n) {
  sprintf("%d test(s), Holm-adjusted (α = %s)", n, format(verdict_alpha))
}

#' Per-seed paired contrasts of treatment vs baseline, one row per seed and
#' cell, with the contrast (`difference` or `ratio`) as `effect`.
paired_effects <- function(metrics, treatment, baseline, by, contrast) {
  pairs <- pair_by_seed(metrics, treatment, baseline, by = by)
  pairs$effect <- pairs[[contrast]]
  pairs
}

#' Summary and one-sided p-values of `effect` in each cell of `by`, against
#' `null` on the claimed `side` ("greater"/"less") and the opposite one.
test_cells <- function(effects, by, null, side) {
  opposite <- if (side == "greater") "less" else "greater"
  effects |>
    dplyr::group_by(dplyr::across(dplyr::all_of(by))) |>
    dplyr::summarise(
      t_interval(.data$effect),
      p_for = one_sided_p(.data$effect, null, side),
      p_against = one_sided_p(.data$effect, null, opposite),
      .groups = "drop"
    )
}

# ratio_at / difference_at: the paired contrast at one point, and the
# magnitude. The paper's effect is `expected - 1` for a ratio and `expected`
# for a difference. See verdict_rules().
evaluate_effect_at <- function(claim, metrics, sweep_vars, sweep) {
  comparison <- claim$comparison
  is_ratio <- comparison$kind == "ratio_at"
  contrast <- if (is_ratio) "ratio" else "difference"
  null_value <- if (is_ratio) 1 else 0
  paper_effect <- comparison$expected - null_value
  side <- if (paper_effect > 0) "greater" else "less"
  effects <- paired_effects(metrics, comparison$treatment, comparison$baseline, sweep_vars, contrast)
  cell <- test_cells(effects, sweep_vars, null_value, side)
  if (nrow(cell) != 1 || cell$n < 2) {
    return(claim_outcome("not comparable", "—",
      sprintf("Fewer than two seeds pair %s with %s at %s.",
              comparison$treatment, comparison$baseline, describe_point(comparison$at))))
  }
  # the per-seed best over the sweep: the single run most in the paper's direction
  everywhere <- paired_effects(sweep, comparison$treatment, comparison$baseline, sweep_vars, contrast)
  everywhere <- everywhere[!is.na(everywhere$effect), ]
  best <- everywhere[if (side == "greater") which.max(everywhere$effect) else which.min(everywhere$effect), ]
  compare <- comparison$compare %||% "mean"
  compared <- if (compare == "best") best$effect else cell$mean
  band <- comparison$tolerance * abs(paper_effect)
  within <- abs(compared - comparison$expected) <= band
  significant <- cell$p_for < verdict_alpha
  opposite <- cell$p_against < verdict_alpha
  excludes_paper <- if (side == "greater") {
    cell$ci_hi < comparison$expected - band
  } else {
    cell$ci_lo > comparison$expected + band
  }
  verdict <- if (significant && within) {
    "reproduced"
  } else if (significant) {
    "partly"
  } else if (opposite || excludes_paper) {
    "not reproduced"
  } else {
    "inconclusive"
  }
  unit_metric <- if (is_ratio) "ratio" else claim$metric
  percent <- function(x) if (is_ratio) sprintf(" (%+.1f%%)", 100 * (x - 1)) else ""
  best_at <- describe_point(as.list(best[sweep_vars]))
  ours <- sprintf(
    "%s %s/%s at %s: mean %s%s, one-sided p %s; per-seed best over the sweep %s%s (%s, seed %s); compared: %s",
    contrast, comparison$treatment, comparison$baseline, describe_point(comparison$at),
    format_interval(cell, unit_metric), percent(cell$mean), format_p(cell$p_for),
    format_number(best$effect, unit_metric), percent(best$effect), best_at, best$seed,
    if (compare == "best") "the per-seed best" else "the mean")
  method <- sprintf(paste(
    "Paired by seed: %s of %s at %s, one-sided t-test against %s (α = %s). Magnitude: %s compared with the paper's",
    "%s ± %.0f%% of its effect (the paper reports single runs; the per-seed best over the sweep is shown beside our",
    "mean). Reproduced if significant and within; partly if only significant; not reproduced if the opposite is",
    "significant or the interval excludes the paper's effect with its tolerance; else inconclusive."),
    contrast, claim$metric_id, describe_point(comparison$at), null_value, format(verdict_alpha),
    if (compare == "best") "the per-seed best over the sweep" else "our mean",
    format_number(comparison$expected, unit_metric), 100 * comparison$tolerance)
  claim_outcome(verdict, ours, method)
}

# direction: treatment `relation` baseline (each baseline when several) at
# every point; one family of paired one-sided tests. See verdict_rules().
evaluate_direction <- function(claim, metrics, sweep_vars, sweep) {
  comparison <- claim$comparison
  relation <- match.arg(comparison$relation, c("<", ">"))
  side <- if (relation == "<") "less" else "greater"
  min_share <- comparison$min_share %||% 0.8
  baselines <- unlist(comparison$baseline)
  cells <- purrr::map_dfr(baselines, function(baseline) {
    paired_effects(metrics, comparison$treatment, baseline, sweep_vars, "difference") |>
      test_cells(sweep_vars, 0, side) |>
      dplyr::mutate(baseline = baseline)
  }) |>
    dplyr::filter(.data$n >= 2)
  if (nrow(cells) == 0) {
    return(claim_outcome("not comparable", "—", "No point has two or more paired seeds."))
  }
  cells <- adjust_family(cells)
  n_cells <- nrow(cells)
  required <- ceiling(min_share * n_cells)
  verdict <- family_verdict(cells, required)
  unit <- if (length(sweep_vars) > 0) "points" else "comparisons"
  per_baseline <- purrr::map_chr(baselines, function(baseline) {
    mine <- cells[cells$baseline == baseline, ]
    sprintf("%s %s %s at %d/%d %s (opposite at %d); mean difference %s to %s", comparison$treatment, relation, baseline,
            sum(mine$holds), nrow(mine), if (length(sweep_vars) > 0) unit else "point", sum(mine$against),
            format_number(min(mine$mean), claim$metric), format_number(max(mine$mean), claim$metric))
  })
  ours <- paste0(paste(per_baseline, collapse = "; "), sprintf(" (Holm-adjusted, α = %s)", format(verdict_alpha)))
  method <- sprintf(paste(
    "%s at %s, paired by seed: one-sided t-test of the per-seed differences at each point%s; %s. Reproduced if it",
    "holds in ≥ %.0f%% of the tests (%d of %d) and the opposite in none; partly if it holds in more tests than the",
    "opposite; not reproduced if the opposite holds as often or more; inconclusive if no test decides."),
    claim$metric_id, describe_point(comparison$at),
    if (length(baselines) > 1) sprintf(" and baseline (%s)", paste(baselines, collapse = ", ")) else "",
    family_method(n_cells), 100 * min_share, required, n_cells)
  claim_outcome(verdict, ours, method)
}

# no_worse: non-inferiority of the paired ratio with margin `tolerance`.
evaluate_no_worse <- function(claim, metrics, sweep_vars, sweep) {
  comparison <- claim$comparison
  better <- match.arg(comparison$better, c("lower", "higher"))
  bound <- if (better == "lower") 1 + comparison$tolerance else 1 - comparison$tolerance
  side <- if (better == "lower") "less" else "greater"
  cells <- paired_effects(metrics, comparison$treatment, comparison$baseline, sweep_vars, "ratio") |>
    test_cells(sweep_vars, bound, side) |>
    dplyr::filter(.data$n >= 2)
  if (nrow(cells) == 0) {
    return(claim_outcome("not comparable", "—", "No point has two or more paired seeds."))
  }
  cells <- adjust_family(cells)
  verdict <- family_verdict(cells)
  ours <- sprintf("no worse than %s by > %.0f%% shown at %d/%d points, worse at %d; ratio %s/%s %s to %s",
                  comparison$baseline, 100 * comparison$tolerance, sum(cells$holds), nrow(cells), sum(cells$against),
                  comparison$treatment, comparison$baseline,
                  formatC(min(cells$mean), digits = 3, format = "fg"),
                  formatC(max(cells$mean), digits = 3, format = "fg"))
  method <- sprintf(paste(
    "Non-inferiority of %s (%s is better) at %s, paired by seed: one-sided t-test that the per-seed ratio is %s than",
    "%s (margin %.0f%%, stated in the claim) at each point; %s. Reproduced if shown at every point; partly at some,",
    "worse at none; not reproduced if worse than the margin at a point; inconclusive otherwise."),
    claim$metric_id, better, describe_point(comparison$at), if (better == "lower") "lower" else "higher",
    format(bound), 100 * comparison$tolerance, family_method(nrow(cells)))
  claim_outcome(verdict, ours, method)
}

# equivalent: TOST of the paired ratio within 1 ± margin, or of one series'
# values within value × (1 ± margin).
evaluate_equivalent <- function(claim, metrics, sweep_vars, sweep) {
  comparison <- claim$comparison
  margin <- comparison$margin
  against_value <- !is.null(comparison$value)
  if (against_value) {
    series <- unlist(comparison$series)
    values <- dplyr::filter(metrics, .data$series %in% .env$series) |>
      dplyr::mutate(effect = .data$value)
    by <- c("series", sweep_vars)
    centre <- comparison$value
  } else {
    # one treatment, or several against the one baseline (a family); those
    # a profile does not run are left out, and named
    treatments <- intersect(unlist(comparison$treatment), unique(metrics$series))
    if (length(treatments) == 0) {
      return(claim_outcome("not comparable", "—",
                           sprintf("No runs of %s.", paste(unlist(comparison$treatment), collapse = ", "))))
    }
    values <- purrr::map_dfr(treatments, function(treatment) {
      paired_effects(metrics, treatment, comparison$baseline, sweep_vars, "ratio") |>
        dplyr::mutate(treatment_series = .env$treatment)
    })
    by <- c(sweep_vars, if (length(treatments) > 1) "treatment_series")
    centre <- 1
  }
  lower <- centre * (1 - margin)
  upper <- centre * (1 + margin)
  cells <- values |>
    dplyr::group_by(dplyr::across(dplyr::all_of(by))) |>
    dplyr::summarise(
      t_interval(.data$effect),
      p_for = tost_p(.data$effect, lower, upper),
      p_against = min(1, 2 * min(one_sided_p(.data$effect, lower, "less"),
                                 one_sided_p(.data$effect, upper, "greater"))),
      .groups = "drop"
    ) |>
    dplyr::filter(.data$n >= 2)
  if (nrow(cells) == 0) {
    return(claim_outcome("not comparable", "—", "No cell has two or more seeds."))
  }
  cells <- adjust_family(cells)
  verdict <- family_verdict(cells)
  what <- if (against_value) {
    sprintf("%s of %s", claim$metric_id, paste(unlist(comparison$series), collapse = ", "))
  } else {
    untested <- setdiff(unlist(comparison$treatment), treatments)
    sprintf("ratio %s/%s%s", paste(treatments, collapse = ", "), comparison$baseline,
            if (length(untested) > 0) sprintf(" (%s not run)", paste(untested, collapse = ", ")) else "")
  }
  ours <- sprintf("%s within [%s, %s] (TOST) at %d/%d %s, outside at %d; mean %s to %s (95%% CI from %s to %s)",
                  what, format(signif(lower, 3)), format(signif(upper, 3)), sum(cells$holds), nrow(cells),
                  if (against_value || length(treatments) > 1) "cells" else "points", sum(cells$against),
                  formatC(min(cells$mean), digits = 3, format = "fg"),
                  formatC(max(cells$mean), digits = 3, format = "fg"),
                  formatC(min(cells$ci_lo), digits = 3, format = "fg"),
                  formatC(max(cells$ci_hi), digits = 3, format = "fg"))
  method <- sprintf(paste(
    "Equivalence of %s at %s by two one-sided tests (TOST) with the margin ±%.0f%% stated in the claim%s; %s.",
    "Reproduced if equivalent at every point; partly at some, outside at none; not reproduced if outside the margin",
    "at a point (one-sided test beyond the nearer bound, Bonferroni ×2); inconclusive otherwise."),
    what, describe_point(comparison$at), 100 * margin,
    if (against_value) sprintf(" around %s", format(comparison$value)) else ", on the per-seed paired ratios",
    family_method(nrow(cells)))
  claim_outcome(verdict, ours, method)
}

# share_of_runs: the share of the paired runs whose percent change lies in
# (above, at_most], against the paper's share ± tolerance_pp. See verdict_rules().
evaluate_share_of_runs <- function(claim, metrics, sweep_vars, sweep) {
  comparison <- claim$comparison
  above <- comparison$above
  at_most <- comparison$at_most %||% Inf
  if (!is.numeric(above) || !is.numeric(at_most) || above >= at_most) {
    stop(sprintf("claim %s: share_of_runs needs numbers above < at_most (percent changes)", claim$id))
  }
  min_runs <- comparison$min_runs %||% 10
  changes <- paired_change_pct(metrics, comparison$treatment, comparison$baseline, sweep_vars)
  changes <- changes[!is.na(changes$change_pct), ]
  n <- nrow(changes)
  if (n == 0) {
    return(claim_outcome("not comparable", "—", sprintf("No run of %s pairs with one of %s.", comparison$treatment,
                                                         comparison$baseline)))
  }
  k <- sum(changes$change_pct > above & changes$change_pct <= at_most)
  share <- 100 * k / n
  ci <- clopper_pearson_pct(k, n)
  band <- comparison$expected + c(-1, 1) * comparison$tolerance_pp
  interval <- if (is.infinite(at_most)) sprintf("> %g%%", above) else sprintf("in (%g%%, %g%%]", above, at_most)
  verdict <- if (n >= min_runs && abs(share - comparison$expected) <= comparison$tolerance_pp) {
    "reproduced"
  } else if (n >= min_runs && (ci$hi < band[[1]] || ci$lo > band[[2]])) {
    "not reproduced"
  } else {
    "inconclusive"
  }
  ours <- sprintf(paste("change of %s %s/%s %s in %d of %d paired runs: %.0f%% (95%% CI %.0f%% to %.0f%%); paper",
                        "%g%%; median change %+.1f%%"),
                  claim$metric_id, comparison$treatment, comparison$baseline, interval, k, n, share, ci$lo, ci$hi,
                  comparison$expected, stats::median(changes$change_pct))
  method <- sprintf(paste(
    "Runs of %s and %s paired by seed (the same applications); per pair the change 100·(%s/%s − 1) %% of %s; the",
    "share of pairs %s with its exact (Clopper–Pearson) 95%% interval. Reproduced if the share is within %g",
    "percentage points of the paper's %g%%; not reproduced if the interval misses that band; else (or below %d",
    "pairs) inconclusive."),
    comparison$treatment, comparison$baseline, comparison$treatment, comparison$baseline, claim$metric_id, interval,
    comparison$tolerance_pp, comparison$expected, min_runs)
  claim_outcome(verdict, ours, method)
}

# at_least / at_most: per series × point cell, a one-sided t-test against the
# threshold; with `over: every_run` (at_most), a bound on every run.
evaluate_threshold <- function(claim, metrics, sweep_vars, sweep) {
  comparison <- claim$comparison
  series <- unlist(comparison$series)
  at_least <- comparison$kind == "at_least"
  sign <- if (at_least) "≥" else "≤"
  over <- match.arg(comparison$over %||% "mean", c("mean", "every_run"))
  selected <- dplyr::filter(metrics, .data$series %in% .env$series)
  if (nrow(selected) == 0) {
    return(claim_outcome("not comparable", "—", sprintf("No runs of series %s.", paste(series, collapse = ", "))))
  }
  if (over == "every_run") {
    holds <- if (at_least) selected$value >= comparison$threshold else selected$value <= comparison$threshold
    worst <- selected[if (at_least) which.min(selected$value) else which.max(selected$value), ]
    verdict <- if (all(holds)) "reproduced" else "not reproduced"
    ours <- sprintf("%s %s in %d/%d runs; %s %s (%s, seed %s)", sign, comparison$threshold, sum(holds), length(holds),
                    if (at_least) "smallest" else "largest", format_number(worst$value, claim$metric),
                    worst$series, worst$seed)
    method <- sprintf(paste("%s of every run of %s: a bound, judged run by run without statistics. Reproduced if",
                            "every run is %s %s; not reproduced if one run is not."),
                      claim$metric_id, paste(series, collapse = ", "), sign, comparison$threshold)
    return(claim_outcome(verdict, ours, method))
  }
  side <- if (at_least) "greater" else "less"
  cells <- selected |>
    dplyr::mutate(effect = .data$value) |>
    test_cells(c("series", sweep_vars), comparison$threshold, side) |>
    dplyr::filter(.data$n >= 2)
  if (nrow(cells) == 0) {
    return(claim_outcome("not comparable", "—", "No cell has two or more seeds."))
  }
  cells <- adjust_family(cells)
  verdict <- family_verdict(cells)
  extreme <- cells[if (at_least) which.min(cells$mean) else which.max(cells$mean), ]
  ours <- sprintf("mean %s %s shown in %d/%d series×points, the opposite in %d; %s %s (%s)",
                  sign, comparison$threshold, sum(cells$holds), nrow(cells), sum(cells$against),
                  if (at_least) "lowest" else "highest", format_interval(extreme, claim$metric), extreme$series)
  method <- sprintf(paste(
    "%s of %s; one-sided t-test of each series × point cell's per-seed values against %s; %s. Reproduced if shown in",
    "every cell; partly in some, the opposite in none; not reproduced if the opposite is shown in a cell;",
    "inconclusive otherwise."),
    claim$metric_id, paste(series, collapse = ", "), comparison$threshold, family_method(nrow(cells)))
  claim_outcome(verdict, ours, method)
}

# theory: a series' metric against a closed form at every sweep point, as
# equivalence (TOST) of the per-seed ratios value / closed form within
# 1 ± margin: agreement to within the margin is what a validation shows (an
# exact-equality test rejects any model at a large enough sample). Two
# checks of precision and bias join it (issue 15's acceptance): at every
# point the pointwise 95% interval's half-width is at most the margin, and
# the closed form lies inside the simultaneous 95% interval (Bonferroni over
# the claim's points: with pointwise intervals, a perfect simulator misses
# one of 10 independent points 40% of the time). Equivalent everywhere but
# failing either check is `partly`, and the text says which point.
evaluate_theory <- function(claim, metrics, scenario, all_metrics = NULL) {
  comparison <- claim$comparison
  series <- comparison$series
  margin <- as.numeric(comparison$margin)
  control <- comparison$control
  selected <- dplyr::filter(metrics, .data$series == .env$series)
  if (nrow(selected) == 0 || is.null(scenario)) {
    return(claim_outcome("not comparable", "—", sprintf("No runs of series %s (or no scenario.json).", series)))
  }
  group <- claim$group %||% NA_character_
  points <- dplyr::distinct(selected, .data$backend, x = .data[[comparison$x]])
  points$theory <- purrr::map2_dbl(points$x, points$backend, function(x, backend) {
    validation_theory_wait_s(comparison$model, scenario, series, group, as.numeric(x), backend)
  })
  runs <- selected |>
    dplyr::mutate(x = .data[[comparison$x]]) |>
    dplyr::inner_join(points, by = c("backend", "x")) |>
    dplyr::mutate(ratio = .data$value / .data$theory)
  if (!is.null(control)) {
    # the control variate: a per-run metric whose expectation the scenario fixes (validation_control_expected)
    if (!is.null(all_metrics)) require_computed(all_metrics, control, sprintf("claim %s: control", claim$id))
    controls <- dplyr::filter(all_metrics %||% metrics[0, ], .data$metric == .env$control) |>
      dplyr::select(dplyr::all_of(run_key_columns), control = "value")
    runs <- dplyr::inner_join(runs, controls, by = run_key_columns)
    points$control_expected <- purrr::map2_dbl(points$x, points$backend, function(x, backend) {
      validation_offered_load(scenario, as.numeric(x), backend)
    })
    runs <- dplyr::inner_join(runs, points[c("backend", "x", "control_expected")], by = c("backend", "x"))
  }
  cells <- runs |>
    dplyr::group_by(.data$backend, .data$x, .data$theory) |>
    dplyr::group_modify(function(d, key) {
      if (is.null(control)) {
        n <- nrow(d)
        return(tibble::tibble(n = n, ratio = mean(d$ratio), se = stats::sd(d$ratio) / sqrt(n), df = n - 1))
      }
      cv <- control_variate_mean(d$ratio, d$control, dplyr::first(d$control_expected))
      tibble::tibble(n = cv$n, ratio = cv$estimate, se = cv$se, df = cv$df)
    }) |>
    dplyr::ungroup() |>
    dplyr::filter(!is.na(.data$se), .data$df >= 1)
  if (nrow(cells) == 0) {
    needed <- if (is.null(control)) 2 else 3
    return(claim_outcome("not comparable", "—", sprintf("No point has %d or more seeds.", needed)))
  }
  quantile <- stats::qt(1 - (1 - confidence_level) / 2, cells$df)
  cells <- dplyr::mutate(cells,
    mean = .data$ratio * .data$theory,
    ci_lo = (.data$ratio - quantile * .data$se) * .data$theory,
    ci_hi = (.data$ratio + quantile * .data$se) * .data$theory,
    p_for = purrr::pmap_dbl(list(.data$ratio, .data$se, .data$df), function(r, se, df) {
      max(t_p_value(r, se, df, 1 - margin, "greater"), t_p_value(r, se, df, 1 + margin, "less"))
    }),
    p_against = purrr::pmap_dbl(list(.data$ratio, .data$se, .data$df), function(r, se, df) {
      min(1, 2 * min(t_p_value(r, se, df, 1 - margin, "less"), t_p_value(r, se, df, 1 + margin, "greater")))
    }))
  cells <- adjust_family(cells)
  verdict <- family_verdict(cells)
  inside <- cells$ci_lo <= cells$theory & cells$theory <= cells$ci_hi
  halfwidth <- (cells$ci_hi - cells$ci_lo) / 2 / abs(cells$mean)
  simultaneous <- stats::qt(1 - (1 - confidence_level) / (2 * nrow(cells)), cells$df) * cells$se
  inside_all <- abs(cells$ratio - 1) <= simultaneous
  precise <- halfwidth <= margin
  shortfall <- c(
    if (!all(precise)) {
      sprintf("the pointwise half-width exceeds ±%s%% at %s = %s", format(100 * margin), comparison$x,
              paste(format(cells$x[!precise]), collapse = ", "))
    },
    if (!all(inside_all)) {
      sprintf("the closed form lies outside the simultaneous 95%% interval at %s = %s", comparison$x,
              paste(format(cells$x[!inside_all]), collapse = ", "))
    }
  )
  if (verdict == "reproduced" && length(shortfall) > 0) {
    verdict <- "partly"
  }
  worst <- cells[which.max(abs(cells$ratio - 1)), ]
  ours <- sprintf(paste("within ±%s%% of the closed form (TOST) at %d/%d points, outside at %d; largest gap",
                        "%+.2f%% (%s = %s: %s vs %s); the closed form inside the pointwise 95%% interval at %d/%d",
                        "points and inside the simultaneous one at %d/%d; half-widths %.1f%% to %.1f%%%s"),
                  format(100 * margin), sum(cells$holds), nrow(cells), sum(cells$against), 100 * (worst$ratio - 1),
                  comparison$x, format(worst$x), format_number(worst$mean, claim$metric),
                  format_number(worst$theory, claim$metric), sum(inside), nrow(cells), sum(inside_all), nrow(cells),
                  100 * min(halfwidth), 100 * max(halfwidth),
                  if (length(shortfall) > 0) paste0("; ", paste(shortfall, collapse = "; ")) else "")
  method <- sprintf(paste(
    "%s of %s against %s at each %s: equivalence of the per-seed ratios value / closed form within 1 ± %s by two",
    "one-sided tests (TOST)%s; %s. Reproduced if equivalent at every point, with every pointwise 95%% half-width",
    "within the margin and the closed form inside every simultaneous 95%% interval (Bonferroni over the points);",
    "partly if equivalent at some points and outside at none, or equivalent at all but failing either check; not",
    "reproduced if outside the margin at a point (one-sided test beyond the nearer bound, Bonferroni ×2);",
    "inconclusive otherwise."),
    claim$metric_id, series, validation_models()[[comparison$model]]$label, comparison$x,
    format(margin), if (is.null(control)) "" else paste(
      ", their mean at each point estimated with the run's offered_load as a control variate (its expectation the",
      "nominal load on the wire; the regression-adjusted estimator of Lavenberg & Welch 1981, n − 2 degrees of",
      "freedom)"), family_method(nrow(cells)))
  claim_outcome(verdict, ours, method)
}

# trend: least-squares slope of the per-run metric on the sweep variable, per
# series; one-sided test of its sign, Holm across the series.
evaluate_trend <- function(claim, metrics, sweep_vars, sweep) {
  comparison <- claim$comparison
  relation <- match.arg(comparison$relation, c("decreasing", "increasing"))
  series <- unlist(comparison$series)
  slopes <- purrr::map_dfr(series, function(label) {
    runs <- dplyr::filter(metrics, .data$series == label)
    if (length(unique(runs[[comparison$x]])) < 3) {
      return(NULL)
    }
    fit <- stats::lm(stats::reformulate(comparison$x, "value"), data = runs)
    row <- summary(fit)$coefficients[comparison$x, ]
    df <- fit$df.residual
    interval <- stats::confint(fit, comparison$x, level = confidence_level)
    increasing_p <- stats::pt(row[["t value"]], df, lower.tail = FALSE)
    decreasing_p <- stats::pt(row[["t value"]], df, lower.tail = TRUE)
    tibble::tibble(series = label, slope = unname(row[["Estimate"]]), ci_lo = interval[1, 1], ci_hi = interval[1, 2],
                   p_for = if (relation == "increasing") increasing_p else decreasing_p,
                   p_against = if (relation == "increasing") decreasing_p else increasing_p)
  })
  if (nrow(slopes) == 0) {
    return(claim_outcome("not comparable", "—", sprintf("Fewer than three values of %s.", comparison$x)))
  }
  slopes <- adjust_family(slopes)
  verdict <- family_verdict(slopes)
  ours <- paste(sprintf("%s: slope %s per unit of %s (95%% CI %s to %s)", slopes$series,
                        format_number(slopes$slope, claim$metric), comparison$x,
                        format_number(slopes$ci_lo, claim$metric), format_number(slopes$ci_hi, claim$metric)),
                collapse = "; ")
  method <- sprintf(paste("Least-squares slope of per-run %s on %s per series, one-sided t-test of its sign; %s.",
                          "Reproduced if %s in every series; partly in some, the opposite in none; not reproduced if",
                          "the opposite in one; inconclusive otherwise."),
                    claim$metric_id, comparison$x, family_method(nrow(slopes)), relation)
  claim_outcome(verdict, ours, method)
}

# ---- values stated from a paper's own model ---------------------------------

#' The stated values of each analytic model, under every reading: model ->
#' a function returning one row per stated value and reading, with `figure`,
#' `series`, `stated_pct`, `reading` ("printed" for the paper's printed
#' reading), `value_pct`, `tolerance_pp` and `match`.
model_value_tables <- function() {
  list(`ncq-journal` = function() ncq_journal_stated_percentages())
}

#' Verdict of a model_value claim: reproduced when the printed reading gives
#' the stated value; partly when a reading that changes one ambiguous choice
#' does; else not reproduced. Readings that change two or more choices are
#' reported but decide nothing: among the hundreds of combinations some
#' would match by chance.
evaluate_model_value <- function(claim, table) {
  comparison <- claim$comparison
  rows <- table[table$figure == claim$figure & table$series == comparison$series, ]
  if (nrow(rows) == 0) {
    stop(sprintf("claim %s: model %s states no value for figure %s, series %s", claim$id, comparison$model,
                 claim$figure, comparison$series))
  }
  printed <- rows[rows$reading == "printed", ]
  if (nrow(printed) != 1) {
    stop(sprintf("claim %s: model %s must give one printed reading for %s, series %s (found %d)", claim$id,
                 comparison$model, claim$figure, comparison$series, nrow(printed)))
  }
  # choices a reading changes from the printed one ("a=x+b=y": two)
  rows$changes <- ifelse(rows$reading == "printed", 0L, lengths(strsplit(rows$reading, "+", fixed = TRUE)))
  matching <- rows$reading[rows$match & rows$changes == 1]
  combined <- rows$reading[rows$match & rows$changes > 1]
  rows <- rows[order(round(rows$abs_error_pp, 2), rows$changes), ] # ties within 0.01 pp: the fewest changes
  nearest <- rows[1, ]
  ours <- sprintf("%+.1f%% (printed reading)", printed$value_pct)
  tolerance <- sprintf("within %g percentage point(s) of the stated %+g%%", printed$tolerance_pp, printed$stated_pct)
  method <- sprintf("Exact, from the paper's equations at u = %g; %d readings computed; a reading matches %s.",
                    printed$u %||% NA, nrow(rows), tolerance)
  also <- if (length(combined) > 0) {
    sprintf(" Readings changing two or more choices, which decide nothing: %d match (e.g. %s).", length(combined),
            paste(utils::head(combined, 2), collapse = "; "))
  } else {
    ""
  }
  if (isTRUE(printed$match)) {
    return(claim_outcome("reproduced", ours, method))
  }
  if (length(matching) > 0) {
    return(claim_outcome("partly", ours, sprintf(paste("%s The printed reading does not; changing one choice, %d",
                                                       "reading(s) do: %s.%s"),
                                                 method, length(matching), paste(matching, collapse = "; "), also)))
  }
  claim_outcome("not reproduced", ours, sprintf(paste("%s No reading changing one choice does; the nearest reading",
                                                      "is %s with %+.1f%%.%s"),
                                                method, nearest$reading, nearest$value_pct, also))
}

#' `f(name)`, computed once per name for the life of the returned function.
memoise_by_name <- function(f) {
  cache <- list()
  function(name) {
    if (is.null(cache[[name]])) cache[[name]] <<- f(name)
    cache[[name]]
  }
}

# order_changes: for each pair of series and each point, one-sided paired
# t-tests of the per-seed differences both ways, Holm across all of them;
# reproduced when a pair is shown in both orders at different points, not
# reproduced when one series is shown above every other at every point.
# See verdict_rules().
evaluate_order_changes <- function(claim, metrics, sweep_vars, sweep) {
  series <- unlist(claim$comparison$series)
  if (length(series) < 2) {
    stop(sprintf("claim %s: order_changes needs two series or more", claim$id))
  }
  cells <- purrr::map_dfr(utils::combn(series, 2, simplify = FALSE), function(pair) {
    paired_effects(metrics, pair[[1]], pair[[2]], sweep_vars, "difference") |>
      test_cells(sweep_vars, 0, "greater") |>
      dplyr::mutate(first = pair[[1]], second = pair[[2]])
  }) |>
    dplyr::filter(.data$n >= 2)
  if (nrow(cells) == 0) {
    return(claim_outcome("not comparable", "—", "No point has two or more paired seeds."))
  }
  # p_for: first above second; p_against: first below; one family of both sides
  adjusted <- holm(c(cells$p_for, cells$p_against))
  cells$above <- !is.na(adjusted[seq_len(nrow(cells))]) & adjusted[seq_len(nrow(cells))] < verdict_alpha
  cells$below <- !is.na(adjusted[-seq_len(nrow(cells))]) & adjusted[-seq_len(nrow(cells))] < verdict_alpha
  point_of <- function(rows) {
    if (length(sweep_vars) == 0) rep("the run", nrow(rows)) else do.call(paste, c(rows[sweep_vars], sep = "/"))
  }
  cells$point <- point_of(cells)
  pairs <- dplyr::summarise(dplyr::group_by(cells, .data$first, .data$second),
                            reverses = any(.data$above) && any(.data$below),
                            above_at = paste(.data$point[.data$above], collapse = ", "),
                            below_at = paste(.data$point[.data$below], collapse = ", "), .groups = "drop")
  # the series shown above every other at each point (none where no series is)
  points <- unique(cells$point)
  best <- purrr::map_chr(points, function(pt) {
    here <- cells[cells$point == pt, ]
    wins <- purrr::keep(series, function(s) {
      all((here$first == s & here$above) | (here$second == s & here$below) | (here$first != s & here$second != s))
    })
    if (length(wins) == 1) wins else NA_character_
  })
  verdict <- if (any(pairs$reverses)) {
    "reproduced"
  } else if (!anyNA(best) && length(unique(best)) == 1) {
    "not reproduced"
  } else {
    "inconclusive"
  }
  where <- if (length(sweep_vars) == 0) "" else sprintf(" (%s)", paste(sweep_vars, collapse = "/"))
  ours <- paste0(paste(sprintf("%s above %s at %s; below at %s", pairs$first, pairs$second,
                               dplyr::if_else(pairs$above_at == "", "none", pairs$above_at),
                               dplyr::if_else(pairs$below_at == "", "none", pairs$below_at)), collapse = "; "),
                 sprintf("; best%s: %s", where,
                         paste(sprintf("%s %s", points, dplyr::coalesce(best, "none shown")), collapse = ", ")))
  method <- sprintf(paste(
    "%s of %s, paired by seed: at each point%s and for each pair, one-sided t-tests of the per-seed differences",
    "both ways; %s. Reproduced if a pair is shown in one order at a point and in the other at another; not",
    "reproduced if one series is shown above every other at every point; inconclusive otherwise."),
    claim$metric_id, paste(series, collapse = ", "), where, family_method(2 * nrow(cells)))
  claim_outcome(verdict, ours, method)
}

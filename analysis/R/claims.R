# Claims: each entry of analysis/claims/<paper>.yaml states one claim of the
# paper verbatim, the paper's value, and how to test it against our runs
# (`comparison`). Verdicts are computed here from the data, never typed.
#
# Comparison kinds (the verdict rule for each is in `evaluate_claim()`):
#   ratio_at       paired ratio treatment/baseline at one sweep point vs `expected`
#   difference_at  paired difference treatment − baseline at one point vs `expected`
#   direction      treatment `relation` (< or >) baseline, judged at every point
#   no_worse       treatment not worse than baseline by more than `tolerance` at any point
#   at_least       mean of the metric ≥ `threshold` for the given series at every point
#   at_most        the same with ≤; `over: every_run` judges each run, not the mean (a bound)
#   trend          metric `decreasing`/`increasing` in the sweep variable, per series
#   qualitative    a statement we do not test numerically (`reason`)
#   not_comparable a statement our runs cannot test (`reason`)

verdicts <- c("reproduced", "partly", "not reproduced", "qualitative", "not comparable")

comparison_kinds <- c("ratio_at", "difference_at", "direction", "no_worse",
                      "at_least", "at_most", "trend", "qualitative", "not_comparable")

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
    stop(sprintf("%s: claim ids must be unique (repeated: %s)", path, paste(unique(ids[duplicated(ids)]), collapse = ", ")))
  }
  purrr::iwalk(doc$claims, function(claim, i) check_claim(claim, sprintf("%s: claims[%d]", path, i)))
  doc$claims
}

check_claim <- function(claim, where) {
  required <- c("id", "figure", "claim", "paper_value", "comparison")
  missing <- setdiff(required, names(claim))
  if (length(missing) > 0) {
    stop(sprintf("%s: missing field(s) %s", where, paste(missing, collapse = ", ")))
  }
  kind <- claim$comparison$kind %||% ""
  if (!kind %in% comparison_kinds) {
    stop(sprintf("%s (%s): comparison.kind must be one of %s", where, claim$id, paste(comparison_kinds, collapse = ", ")))
  }
  needs <- switch(kind,
    ratio_at = , difference_at = c("treatment", "baseline", "at", "expected", "tolerance"),
    direction = c("treatment", "baseline", "relation"),
    no_worse = c("treatment", "baseline", "tolerance", "better"),
    at_least = , at_most = c("series", "threshold"),
    trend = c("series", "relation", "x"),
    qualitative = , not_comparable = "reason"
  )
  missing <- setdiff(needs, names(claim$comparison))
  if (length(missing) > 0) {
    stop(sprintf("%s (%s): comparison of kind %s must give %s", where, claim$id, kind, paste(missing, collapse = ", ")))
  }
  if (!kind %in% c("qualitative", "not_comparable")) {
    for (field in c("metric", "scenario")) {
      if (is.null(claim[[field]])) {
        stop(sprintf("%s (%s): a %s comparison must name its `%s`", where, claim$id, kind, field))
      }
    }
    claim_selector(claim, sprintf("%s (%s)", where, claim$id))
  }
  invisible(claim)
}

#' The metric a claim is tested on: `metric` and the keys beside it
#' (analysis/R/metrics.R), e.g. `metric: loss_ratio` with `group: data-high`.
claim_selector <- function(claim, where = claim$id) {
  metric_selector(claim[intersect(c("metric", metric_key_columns), names(claim))], where)
}

#' Evaluate every claim against per-run metrics.
#'
#' @param claims Claims from `read_claims()`.
#' @param metrics_by_scenario Named list, scenario id -> list(metrics = long
#'   per-run table from `compute_run_metrics()`, sweep_vars = character).
#' @return A tibble: claim_id, figure, claim, paper_value, ours, verdict, method.
evaluate_claims <- function(claims, metrics_by_scenario) {
  purrr::map_dfr(claims, function(entry) {
    outcome <- evaluate_claim(entry, metrics_by_scenario)
    tibble::tibble(
      claim_id = entry$id,
      figure = entry$figure,
      claim = entry$claim,
      paper_value = entry$paper_value,
      ours = outcome$ours,
      verdict = outcome$verdict,
      method = paste(c(entry$operationalisation, outcome$method), collapse = " ")
    )
  })
}

claim_outcome <- function(verdict, ours, method) {
  stopifnot(verdict %in% verdicts)
  list(verdict = verdict, ours = ours, method = method)
}

#' Evaluate one claim: list(verdict, ours, method).
evaluate_claim <- function(claim, metrics_by_scenario) {
  comparison <- claim$comparison
  kind <- comparison$kind
  if (kind == "qualitative") {
    return(claim_outcome("qualitative", "—", comparison$reason))
  }
  if (kind == "not_comparable") {
    return(claim_outcome("not comparable", "—", comparison$reason))
  }
  data <- metrics_by_scenario[[claim$scenario]]
  if (is.null(data)) {
    return(claim_outcome("not comparable", "—", sprintf("No results for scenario %s.", claim$scenario)))
  }
  selector <- claim_selector(claim)
  metrics <- select_metric_rows(data$metrics, selector, sprintf("claim %s", claim$id))
  if (nrow(metrics) == 0) {
    return(claim_outcome("not comparable", "—", sprintf("Metric %s is not computed for %s.",
                                                         metric_selector_id(selector), claim$scenario)))
  }
  # texts name the metric with its part (avg_fct_s[group=noncongestive])
  claim$metric_id <- metric_selector_id(selector)
  metrics <- filter_at_point(metrics, comparison$at)
  if (nrow(metrics) == 0) {
    return(claim_outcome("not comparable", "—", sprintf("Sweep point %s is not in the results of %s.", describe_point(comparison$at), claim$scenario)))
  }
  evaluate <- switch(kind,
    ratio_at = evaluate_effect_at,
    difference_at = evaluate_effect_at,
    direction = evaluate_direction,
    no_worse = evaluate_no_worse,
    at_least = evaluate_at_least,
    at_most = evaluate_at_most,
    trend = evaluate_trend
  )
  evaluate(claim, metrics, data$sweep_vars)
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
  ifelse(is.na(x), "NA", paste0(formatC(x * scale, digits = 3, format = "fg", flag = "#"), unit))
}

format_interval <- function(summary, metric) {
  sprintf("%s (95%% CI %s to %s; n = %d)", format_number(summary$mean, metric),
          format_number(summary$ci_lo, metric), format_number(summary$ci_hi, metric), summary$n)
}

# ratio_at / difference_at: the paired contrast at one point. The paper's
# effect is `expected - 1` for a ratio and `expected` for a difference.
#   reproduced      the 95% CI excludes "no effect" on the paper's side and the
#                   mean effect is within ±tolerance (relative) of the paper's
#   partly          the CI excludes "no effect" on the paper's side, magnitude outside
#   not reproduced  otherwise (no significant effect, or the opposite one)
evaluate_effect_at <- function(claim, metrics, sweep_vars) {
  comparison <- claim$comparison
  is_ratio <- comparison$kind == "ratio_at"
  contrast <- if (is_ratio) "ratio" else "difference"
  null_value <- if (is_ratio) 1 else 0
  summary <- compare_paired(metrics, comparison$treatment, comparison$baseline, by = sweep_vars) |>
    dplyr::filter(.data$contrast == .env$contrast)
  if (nrow(summary) != 1 || summary$n < 2) {
    return(claim_outcome("not comparable", "—",
      sprintf("Fewer than two seeds pair %s with %s at %s.", comparison$treatment, comparison$baseline, describe_point(comparison$at))))
  }
  paper_effect <- comparison$expected - null_value
  side <- sign(paper_effect)
  significant <- if (side > 0) summary$ci_lo > null_value else summary$ci_hi < null_value
  within <- abs(summary$mean - comparison$expected) <= comparison$tolerance * abs(paper_effect)
  verdict <- if (significant && within) "reproduced" else if (significant) "partly" else "not reproduced"
  unit_metric <- if (is_ratio) "ratio" else claim$metric
  ours <- sprintf("%s %s/%s at %s: %s", contrast, comparison$treatment, comparison$baseline,
                  describe_point(comparison$at), format_interval(summary, unit_metric))
  if (is_ratio) {
    ours <- sprintf("%s, i.e. %+.1f%%", ours, 100 * (summary$mean - 1))
  }
  method <- sprintf(
    "%s of %s at %s; %s. Reproduced if the CI excludes %s on the paper's side and the mean lies within ±%.0f%% of the paper's effect (%s); partly if only the direction holds.",
    contrast, claim$metric_id, describe_point(comparison$at), summary$method, null_value,
    100 * comparison$tolerance, format_number(comparison$expected, unit_metric))
  claim_outcome(verdict, ours, method)
}

# direction: at each point, does the paired-difference CI lie on the claimed
# side of 0 (holds) or the other (contradicted)?
#   reproduced      holds at ≥ min_share of the points and contradicted at none
#   partly          holds at more points than it is contradicted, but fewer than min_share
#   not reproduced  otherwise
evaluate_direction <- function(claim, metrics, sweep_vars) {
  comparison <- claim$comparison
  relation <- match.arg(comparison$relation, c("<", ">"))
  min_share <- comparison$min_share %||% 0.8
  summary <- compare_paired(metrics, comparison$treatment, comparison$baseline, by = sweep_vars) |>
    dplyr::filter(.data$contrast == "difference", .data$n >= 2)
  if (nrow(summary) == 0) {
    return(claim_outcome("not comparable", "—", "No point has two or more paired seeds."))
  }
  holds <- if (relation == "<") summary$ci_hi < 0 else summary$ci_lo > 0
  against <- if (relation == "<") summary$ci_lo > 0 else summary$ci_hi < 0
  n_points <- nrow(summary)
  verdict <- if (sum(holds) >= ceiling(min_share * n_points) && !any(against)) {
    "reproduced"
  } else if (sum(holds) > sum(against)) {
    "partly"
  } else {
    "not reproduced"
  }
  ours <- sprintf("%s %s %s at %d/%d points (opposite at %d); mean difference %s to %s",
                  comparison$treatment, relation, comparison$baseline, sum(holds), n_points, sum(against),
                  format_number(min(summary$mean), claim$metric), format_number(max(summary$mean), claim$metric))
  method <- sprintf(
    "%s at %s; %s. A point holds when the CI excludes 0 on the claimed side. Reproduced if it holds at ≥ %.0f%% of the points and the opposite holds at none; partly if it holds at more points than the opposite.",
    claim$metric_id, describe_point(comparison$at), summary$method[[1]], 100 * min_share)
  claim_outcome(verdict, ours, method)
}

# no_worse: the treatment is not worse than the baseline by more than
# `tolerance` (relative) at a point when the paired-ratio CI's worse end stays
# within 1 ± tolerance.
#   reproduced      at every point; partly: at half or more; not reproduced: otherwise
evaluate_no_worse <- function(claim, metrics, sweep_vars) {
  comparison <- claim$comparison
  better <- match.arg(comparison$better, c("lower", "higher"))
  summary <- compare_paired(metrics, comparison$treatment, comparison$baseline, by = sweep_vars) |>
    dplyr::filter(.data$contrast == "ratio", .data$n >= 2)
  if (nrow(summary) == 0) {
    return(claim_outcome("not comparable", "—", "No point has two or more paired seeds."))
  }
  holds <- if (better == "lower") {
    summary$ci_hi <= 1 + comparison$tolerance
  } else {
    summary$ci_lo >= 1 - comparison$tolerance
  }
  n_points <- nrow(summary)
  verdict <- if (all(holds)) "reproduced" else if (sum(holds) >= n_points / 2) "partly" else "not reproduced"
  ours <- sprintf("no worse than %s by > %.0f%% at %d/%d points; ratio %s/%s %s to %s",
                  comparison$baseline, 100 * comparison$tolerance, sum(holds), n_points,
                  comparison$treatment, comparison$baseline,
                  formatC(min(summary$mean), digits = 3, format = "fg"), formatC(max(summary$mean), digits = 3, format = "fg"))
  method <- sprintf(
    "%s (%s is better) at %s; %s. A point holds when the CI's worse end is within %.0f%% of the baseline. Reproduced at every point, partly at half or more.",
    claim$metric_id, better, describe_point(comparison$at), summary$method[[1]], 100 * comparison$tolerance)
  claim_outcome(verdict, ours, method)
}

# at_least: the mean over seeds is ≥ threshold in every (series, point) cell.
#   reproduced at every cell; partly at half or more; not reproduced otherwise.
evaluate_at_least <- function(claim, metrics, sweep_vars) {
  comparison <- claim$comparison
  series <- unlist(comparison$series)
  summary <- metrics |>
    dplyr::filter(.data$series %in% .env$series) |>
    summarise_over_seeds(c("series", sweep_vars))
  if (nrow(summary) == 0) {
    return(claim_outcome("not comparable", "—", sprintf("No runs of series %s.", paste(series, collapse = ", "))))
  }
  holds <- summary$mean >= comparison$threshold
  verdict <- if (all(holds)) "reproduced" else if (mean(holds) >= 0.5) "partly" else "not reproduced"
  lowest <- summary[which.min(summary$mean), ]
  ours <- sprintf("mean ≥ %s in %d/%d series×points; lowest %s (%s, %s)",
                  comparison$threshold, sum(holds), nrow(summary), format_interval(lowest, claim$metric),
                  lowest$series, describe_point(as.list(lowest[sweep_vars])))
  method <- sprintf("%s of %s; %s. Reproduced if the mean reaches %s in every cell, partly in half or more.",
                    claim$metric_id, paste(series, collapse = ", "), summary$method[[1]], comparison$threshold)
  claim_outcome(verdict, ours, method)
}

# at_most: the mean over seeds is ≤ threshold in every (series, point) cell;
# with `over: every_run`, every run's value is (a bound, not an average).
#   reproduced at every cell (run); partly at half or more; not reproduced otherwise.
evaluate_at_most <- function(claim, metrics, sweep_vars) {
  comparison <- claim$comparison
  series <- unlist(comparison$series)
  over <- match.arg(comparison$over %||% "mean", c("mean", "every_run"))
  selected <- dplyr::filter(metrics, .data$series %in% .env$series)
  if (nrow(selected) == 0) {
    return(claim_outcome("not comparable", "—", sprintf("No runs of series %s.", paste(series, collapse = ", "))))
  }
  if (over == "every_run") {
    holds <- selected$value <= comparison$threshold
    worst <- selected[which.max(selected$value), ]
    ours <- sprintf("≤ %s in %d/%d runs; largest %s (%s, seed %s)", comparison$threshold, sum(holds), length(holds),
                    format_number(worst$value, claim$metric), worst$series, worst$seed)
    method <- sprintf("%s of every run of %s. Reproduced if every run stays within %s, partly if half or more do.",
                      claim$metric_id, paste(series, collapse = ", "), comparison$threshold)
  } else {
    summary <- summarise_over_seeds(selected, c("series", sweep_vars))
    holds <- summary$mean <= comparison$threshold
    worst <- summary[which.max(summary$mean), ]
    ours <- sprintf("mean ≤ %s in %d/%d series×points; highest %s (%s)", comparison$threshold, sum(holds),
                    nrow(summary), format_interval(worst, claim$metric), worst$series)
    method <- sprintf("%s of %s; %s. Reproduced if the mean stays within %s in every cell, partly in half or more.",
                      claim$metric_id, paste(series, collapse = ", "), summary$method[[1]], comparison$threshold)
  }
  verdict <- if (all(holds)) "reproduced" else if (mean(holds) >= 0.5) "partly" else "not reproduced"
  claim_outcome(verdict, ours, method)
}

# trend: least-squares slope of the per-run metric on the sweep variable, per
# series, with a 95% t-interval.
#   reproduced if the CI lies on the claimed side of 0 for every series;
#   partly for some; not reproduced for none.
evaluate_trend <- function(claim, metrics, sweep_vars) {
  comparison <- claim$comparison
  relation <- match.arg(comparison$relation, c("decreasing", "increasing"))
  series <- unlist(comparison$series)
  slopes <- purrr::map_dfr(series, function(label) {
    runs <- dplyr::filter(metrics, .data$series == label)
    if (length(unique(runs[[comparison$x]])) < 3) {
      return(NULL)
    }
    fit <- stats::lm(stats::reformulate(comparison$x, "value"), data = runs)
    interval <- stats::confint(fit, comparison$x, level = confidence_level)
    tibble::tibble(series = label, slope = unname(stats::coef(fit)[comparison$x]),
                   ci_lo = interval[1, 1], ci_hi = interval[1, 2])
  })
  if (nrow(slopes) == 0) {
    return(claim_outcome("not comparable", "—", sprintf("Fewer than three values of %s.", comparison$x)))
  }
  holds <- if (relation == "decreasing") slopes$ci_hi < 0 else slopes$ci_lo > 0
  verdict <- if (all(holds)) "reproduced" else if (any(holds)) "partly" else "not reproduced"
  ours <- paste(sprintf("%s: slope %s per unit of %s (95%% CI %s to %s)", slopes$series,
                        format_number(slopes$slope, claim$metric), comparison$x,
                        format_number(slopes$ci_lo, claim$metric), format_number(slopes$ci_hi, claim$metric)),
                collapse = "; ")
  method <- sprintf("Least-squares slope of per-run %s on %s per series, 95%% t-interval; reproduced if %s (CI excludes 0) for every series, partly for some.",
                    claim$metric_id, comparison$x, relation)
  claim_outcome(verdict, ours, method)
}

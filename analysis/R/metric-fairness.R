# Fairness Index (ncq-conf §4.1, "derived from the formula given in [4]").
#
# The paper prints (sum x_i)^2 / (n * sum x_i), which simplifies to the mean
# throughput and is not bounded by 1. We implement the index it cites,
# Jain's (Chiu & Jain [4]): (sum x_i)^2 / (n * sum x_i^2), in (0, 1], over
# each flow's goodput (the paper names "Throughput_i"; per-flow goodput is
# the throughput the application sees).

#' Jain's fairness index.
#'
#' @param x Non-negative per-flow rates.
#' @return `(sum(x))^2 / (n * sum(x^2))`; NA when every rate is zero (0/0).
jain_index <- function(x) {
  if (length(x) == 0) {
    stop("fairness: at least one flow's rate must be given")
  }
  if (!is.numeric(x) || any(is.na(x)) || any(x < 0)) {
    stop("fairness: rates must be numeric, non-negative and not NA")
  }
  if (all(x == 0)) {
    return(NA_real_)
  }
  sum(x)^2 / (length(x) * sum(x^2))
}

#' Jain's index over the per-flow goodputs of each run.
#'
#' @param flows Per-flow table (see `add_flow_goodput()`).
#' @param by Columns naming a run.
summarise_fairness <- function(flows, by) {
  flows |>
    add_flow_goodput() |>
    dplyr::group_by(dplyr::across(dplyr::all_of(by))) |>
    dplyr::summarise(fairness_jain = jain_index(.data$flow_goodput_bps), .groups = "drop")
}

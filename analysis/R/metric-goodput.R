# Goodput (ncq-conf §4.1): Goodput = Original_Data / Time, where Original_Data
# is the number of bytes delivered to the receiving application (no
# retransmissions, no headers) and Time the time the delivery took.
# System Goodput = sum(Goodput_i) / n: despite its name, a per-flow mean.

#' Goodput of each flow in bit/s.
#'
#' @param bytes Bytes delivered in order to the receiving application.
#' @param duration_s Time the delivery took, in seconds.
#' @return `8 * bytes / duration_s`.
goodput_bps <- function(bytes, duration_s) {
  if (!is.numeric(bytes) || !is.numeric(duration_s)) {
    stop("goodput: `bytes` and `duration_s` must be numeric")
  }
  if (length(bytes) != length(duration_s)) {
    stop("goodput: `bytes` and `duration_s` must have the same length")
  }
  if (any(is.na(bytes)) || any(bytes < 0)) {
    stop("goodput: `bytes` must be non-negative and not NA")
  }
  if (any(is.na(duration_s)) || any(duration_s <= 0)) {
    stop("goodput: `duration_s` must be positive and not NA")
  }
  8 * bytes / duration_s
}

#' System Goodput: the mean of the per-flow goodputs (sum / n).
system_goodput_bps <- function(goodput) {
  if (length(goodput) == 0) {
    stop("system goodput: at least one flow's goodput must be given")
  }
  if (any(is.na(goodput)) || any(goodput < 0)) {
    stop("system goodput: per-flow goodputs must be non-negative and not NA")
  }
  sum(goodput) / length(goodput)
}

#' Add each flow's goodput, recomputed from the trace's raw columns.
#'
#' A flow that did not complete delivered `bytes_delivered` bytes between
#' `start_s` and the run's end (`sim_end_s`), as in docs/traces.md.
#'
#' @param flows Per-flow table with `bytes_delivered`, `start_s`, `end_s`
#'   and the run's `sim_end_s`.
add_flow_goodput <- function(flows) {
  require_columns(flows, c("bytes_delivered", "start_s", "end_s", "sim_end_s"), "flow goodput")
  dplyr::mutate(
    flows,
    flow_goodput_bps = goodput_bps(
      .data$bytes_delivered,
      dplyr::coalesce(.data$end_s, .data$sim_end_s) - .data$start_s
    )
  )
}

#' System Goodput of each run.
#'
#' @param flows Per-flow table (see `add_flow_goodput()`).
#' @param by Columns naming a run.
summarise_system_goodput <- function(flows, by) {
  flows |>
    add_flow_goodput() |>
    dplyr::group_by(dplyr::across(dplyr::all_of(by))) |>
    dplyr::summarise(system_goodput_bps = system_goodput_bps(.data$flow_goodput_bps), .groups = "drop")
}

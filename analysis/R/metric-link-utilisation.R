# Utilisation of the link a traced queue feeds (rbaqm Fig. 9: "Reducing the
# maximum queue size gave diminishing returns since the utilisation was
# significantly lowered"; the price of a low backlog in the sensitivity of
# RB-AQM's open values): the IP bits that left the queue over what the link
# could have sent in the same time, from the packet events (packets table).

#' Share of a link's capacity that a stream of departures used.
#'
#' @param len_bytes IP length of each departure in the interval.
#' @param rate_bps The link's rate, one number > 0.
#' @param duration_s The interval's length (s), > 0.
#' @return 8 x sum(len_bytes) / (rate_bps x duration_s).
link_utilisation <- function(len_bytes, rate_bps, duration_s) {
  if (!is.numeric(rate_bps) || length(rate_bps) != 1 || is.na(rate_bps) || !(rate_bps > 0)) {
    stop("link utilisation: rate_bps must be one number > 0")
  }
  if (!is.numeric(duration_s) || length(duration_s) != 1 || is.na(duration_s) || !(duration_s > 0)) {
    stop("link utilisation: the interval must last > 0 s")
  }
  8 * sum(as.numeric(len_bytes)) / (rate_bps * duration_s)
}

#' Link utilisation of each traced queue per run, over the dequeues from
#' `warmup_s` to the run's end.
#'
#' @param packets Collected packets table (`time_s`, `queue`, `event`, `len_bytes`).
#' @param by Columns naming a run.
#' @param ends The runs' ends: a table of `by` and `sim_end_s`.
#' @param rate_bps The rate of the link the queue feeds (a dumbbell's bottleneck).
#' @param warmup_s Dequeues before this time are left out, and so is the time.
#' @return `by`, `queue`, `link_utilisation`.
summarise_link_utilisation <- function(packets, by, ends, rate_bps, warmup_s = 0) {
  require_columns(packets, c(by, "time_s", "queue", "event", "len_bytes"), "link utilisation")
  require_columns(ends, c(by, "sim_end_s"), "link utilisation")
  packets |>
    dplyr::filter(.data$event == "deq", .data$time_s >= warmup_s) |>
    dplyr::inner_join(dplyr::select(ends, dplyr::all_of(c(by, "sim_end_s"))), by = by) |>
    dplyr::group_by(dplyr::across(dplyr::all_of(c(by, "queue")))) |>
    dplyr::summarise(link_utilisation = link_utilisation(.data$len_bytes, rate_bps,
                                                         dplyr::first(.data$sim_end_s) - warmup_s),
                     .groups = "drop")
}

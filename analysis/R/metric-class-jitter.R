# Jitter against class number (rbaqm Fig. 2: "This particular WFQ variant
# minimizes the jitter of higher priority classes, lower class number"): per
# run, each band's jitter, the standard deviation of the sojourns of its
# dequeued packets at a traced queue, and the least-squares slope of the
# bands' jitter on the band number (> 0: jitter grows with the class number).

#' Per run and traced queue, the slope of each band's sojourn standard
#' deviation on the band number, over the dequeues at or after `warmup_s`
#' (bands with two dequeues or more; NA with fewer than two such bands).
#'
#' @param packets Collected packets table (`time_s`, `queue`, `event`, `band`, `sojourn_s`).
#' @param by Columns naming a run.
#' @return `by`, `queue`, `jitter_class_slope_s`.
summarise_jitter_class_slope <- function(packets, by, warmup_s = 0) {
  require_columns(packets, c(by, "time_s", "queue", "event", "band", "sojourn_s"), "class jitter")
  packets |>
    dplyr::filter(.data$event == "deq", .data$time_s >= warmup_s) |>
    dplyr::group_by(dplyr::across(dplyr::all_of(c(by, "queue", "band")))) |>
    dplyr::filter(dplyr::n() >= 2) |>
    dplyr::summarise(jitter_s = stats::sd(.data$sojourn_s), .groups = "drop") |>
    dplyr::group_by(dplyr::across(dplyr::all_of(c(by, "queue")))) |>
    dplyr::summarise(jitter_class_slope_s = if (dplyr::n() >= 2) {
      least_squares_slope(as.numeric(.data$band), .data$jitter_s)
    } else {
      NA_real_
    }, .groups = "drop")
}

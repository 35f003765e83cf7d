# Total backlog of a traced queue over time (rbaqm Figs. 5 and 7: "the
# total number of packets backlogged for all classes", "with the thick black
# line being the average backlog measured over 300 packets"): the periodic
# samples summed over bands, and the mean of the backlog the last n
# arriving packets found (from the packet events; scenarios/rbaqm/
# defaults.yaml, assumption rate-window).

#' The total backlog each arriving packet finds, from a queue's packet events
#' in the order they happened: +1 on `enq`, -1 on `deq` and on a head drop (a
#' `drop` with a sojourn); an arrival is an `enq` or a drop on arrival (a
#' `drop` without a sojourn), and finds the backlog before it.
#'
#' @param event `enq`, `deq`, `drop` (and `mark`, which changes nothing), in order.
#' @param sojourn_s The events' sojourns (NA except on `deq` and head drops).
#' @return For each event, the backlog it found if it is an arrival, else NA.
backlog_at_arrivals <- function(event, sojourn_s) {
  step <- dplyr::case_when(
    event == "enq" ~ 1L,
    event == "deq" ~ -1L,
    event == "drop" & !is.na(sojourn_s) ~ -1L,
    TRUE ~ 0L
  )
  after <- cumsum(step)
  if (any(after < 0)) {
    stop("backlog: more departures than arrivals (the events must be one queue's, in order, from the start)")
  }
  before <- after - step
  arrival <- event == "enq" | (event == "drop" & is.na(sojourn_s))
  dplyr::if_else(arrival, as.numeric(before), NA_real_)
}

#' Trailing mean over the last n values (over all of them while fewer than n).
#'
#' @param x Numeric vector without NA.
#' @param n Window, a whole number >= 1.
trailing_mean <- function(x, n) {
  if (!is.numeric(n) || length(n) != 1 || n < 1 || n != round(n)) {
    stop("trailing mean: n must be a whole number >= 1")
  }
  sums <- cumsum(c(0, x))
  i <- seq_along(x)
  from <- pmax(0, i - n)
  (sums[i + 1] - sums[from + 1]) / (i - from)
}

#' Total backlog of a traced queue per run at each sample time, and the mean
#' backlog found by the last `n_pkts` arrivals before that time.
#'
#' @param queues Collected queues table (`time_s`, `queue`, `band`, `backlog_pkts`).
#' @param packets Collected packets table of the same runs (`seq`, `time_s`,
#'   `queue`, `event`, `sojourn_s`).
#' @param by Columns naming a run.
#' @param n_pkts Arrivals averaged (the paper's 300).
#' @return `by`, `queue`, `time_s`, `backlog_pkts` (summed over bands),
#'   `backlog_avg_pkts` (NA before the first arrival).
summarise_backlog_series <- function(queues, packets, by, n_pkts = 300) {
  require_columns(queues, c(by, "time_s", "queue", "band", "backlog_pkts"), "backlog series")
  require_columns(packets, c(by, "seq", "time_s", "queue", "event", "sojourn_s"), "backlog series")
  total <- queues |>
    dplyr::group_by(dplyr::across(dplyr::all_of(c(by, "queue", "time_s")))) |>
    dplyr::summarise(backlog_pkts = sum(.data$backlog_pkts), .groups = "drop")
  arrivals <- packets |>
    dplyr::arrange(dplyr::across(dplyr::all_of(c(by, "queue"))), .data$seq) |>
    dplyr::group_by(dplyr::across(dplyr::all_of(c(by, "queue")))) |>
    dplyr::mutate(found = backlog_at_arrivals(.data$event, .data$sojourn_s)) |>
    dplyr::filter(!is.na(.data$found)) |>
    dplyr::mutate(avg = trailing_mean(.data$found, n_pkts)) |>
    dplyr::ungroup()
  total |>
    dplyr::group_by(dplyr::across(dplyr::all_of(c(by, "queue")))) |>
    dplyr::group_modify(function(samples, key) {
      rows <- dplyr::inner_join(arrivals, key, by = names(key))
      # the average as it stood at each sample: that of the last arrival at or before it
      at <- findInterval(samples$time_s, rows$time_s)
      dplyr::mutate(samples, backlog_avg_pkts = dplyr::if_else(at > 0, rows$avg[pmax(at, 1)], NA_real_))
    }) |>
    dplyr::ungroup()
}

#' Time-average total backlog (all bands) of each traced queue per run, over
#' the samples at or after `warmup_s` (equally spaced samples: their mean).
#'
#' @return `by`, `queue`, `total_backlog_pkts`.
summarise_total_backlog <- function(queues, by, warmup_s = 0) {
  require_columns(queues, c(by, "time_s", "queue", "band", "backlog_pkts"), "total backlog")
  kept <- dplyr::filter(queues, .data$time_s >= warmup_s)
  if (nrow(kept) == 0) stop(sprintf("total backlog: no queue sample at or after the warm-up (%g s)", warmup_s))
  kept |>
    dplyr::group_by(dplyr::across(dplyr::all_of(c(by, "queue", "time_s")))) |>
    dplyr::summarise(total = sum(.data$backlog_pkts), .groups = "drop") |>
    dplyr::group_by(dplyr::across(dplyr::all_of(c(by, "queue")))) |>
    dplyr::summarise(total_backlog_pkts = mean(.data$total), .groups = "drop")
}

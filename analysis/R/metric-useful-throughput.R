# Useful real-time throughput (rbaqm Fig. 9): "the amount of packets, in
# Mbps, which are delivered with less than 50ms queuing delay in the
# Diffserv queue ... the TCP packet retransmissions are considered as new
# packets": the IP bytes of a band's dequeues whose sojourn is below the
# deadline, per second, in bins of the run (scenarios/rbaqm/3.yaml,
# assumption useful-throughput).

#' Useful rate of one stream of departures over an interval.
#'
#' @param sojourn_s Each departure's time in the queue (s).
#' @param len_bytes Each departure's IP length.
#' @param deadline_s A departure counts when its sojourn is below this.
#' @param duration_s The interval's length (s), > 0.
#' @return 8 x (bytes of the departures within the deadline) / duration_s, bit/s.
useful_rate_bps <- function(sojourn_s, len_bytes, deadline_s, duration_s) {
  if (!(duration_s > 0)) stop("useful throughput: the interval must last > 0 s")
  if (any(is.na(sojourn_s))) stop("useful throughput: every departure needs its sojourn_s")
  8 * sum(as.numeric(len_bytes[sojourn_s < deadline_s])) / duration_s
}

#' The bins of a run by the number of sessions of a group that have started:
#' bin "a-b" runs from the a-th session's start to the b-th's (the last bin
#' to `end_s`).
#'
#' @param start_s The group's flows' start times in one run.
#' @param edges Session counts, increasing, at most length(start_s).
#' @param end_s The run's end.
#' @return A tibble: `sessions` (the bin's lower edge), `bin` ("a-b"), `from_s`, `to_s`.
session_bins <- function(start_s, edges, end_s) {
  starts <- sort(start_s)
  if (length(edges) < 2 || is.unsorted(edges, strictly = TRUE) || max(edges) > length(starts) || min(edges) < 1) {
    stop(sprintf("session bins: edges must increase from 1 to at most the %d sessions", length(starts)))
  }
  from <- starts[edges[-length(edges)]]
  to <- c(starts[edges[-c(1, length(edges))]], if (max(edges) == length(starts)) end_s else starts[max(edges)])
  tibble::tibble(sessions = edges[-length(edges)], bin = paste(edges[-length(edges)], edges[-1], sep = "-"),
                 from_s = from, to_s = to)
}

#' Useful throughput of one band per run and session bin.
#'
#' @param packets Collected packets table (`time_s`, `event`, `band`, `len_bytes`, `sojourn_s`).
#' @param flows Collected flows table of the same runs (`start_s`, `group`).
#' @param by Columns naming a run.
#' @param band The band (class) counted.
#' @param group The group whose sessions make the bins.
#' @param edges,end_s As session_bins().
#' @param deadline_s The paper's 50 ms.
#' @return `by`, `sessions`, `bin`, `useful_bps`.
summarise_useful_throughput <- function(packets, flows, by, band, group, edges, end_s, deadline_s = 0.05) {
  require_columns(packets, c(by, "time_s", "event", "band", "len_bytes", "sojourn_s"), "useful throughput")
  require_columns(flows, c(by, "group", "start_s"), "useful throughput")
  sent <- dplyr::filter(packets, .data$event == "deq", .data$band == .env$band)
  flows |>
    dplyr::filter(.data$group == .env$group) |>
    dplyr::group_by(dplyr::across(dplyr::all_of(by))) |>
    dplyr::group_modify(function(sessions, key) {
      bins <- session_bins(sessions$start_s, edges, end_s)
      rows <- dplyr::inner_join(sent, key, by = names(key))
      bins$useful_bps <- purrr::map2_dbl(bins$from_s, bins$to_s, function(from, to) {
        inside <- rows$time_s >= from & rows$time_s < to
        useful_rate_bps(rows$sojourn_s[inside], rows$len_bytes[inside], deadline_s, to - from)
      })
      bins
    }) |>
    dplyr::ungroup()
}

#' Useful throughput of every band of every traced queue per run, with the
#' paper's 50 ms deadline, over the dequeues from `warmup_s` to the run's
#' last event.
#'
#' @param packets Collected packets table (`time_s`, `queue`, `event`, `band`, `len_bytes`, `sojourn_s`).
#' @param end_s The runs' end, per run: a table of `by` and `sim_end_s`.
#' @return `by`, `queue`, `band`, `useful_50ms_bps`.
summarise_useful_50ms <- function(packets, by, ends, warmup_s = 0) {
  require_columns(packets, c(by, "time_s", "queue", "event", "band", "len_bytes", "sojourn_s"), "useful throughput")
  require_columns(ends, c(by, "sim_end_s"), "useful throughput")
  packets |>
    dplyr::filter(.data$event == "deq", .data$time_s >= warmup_s) |>
    dplyr::inner_join(dplyr::select(ends, dplyr::all_of(c(by, "sim_end_s"))), by = by) |>
    dplyr::group_by(dplyr::across(dplyr::all_of(c(by, "queue", "band")))) |>
    dplyr::summarise(useful_50ms_bps = useful_rate_bps(.data$sojourn_s, .data$len_bytes, 0.05,
                                                       dplyr::first(.data$sim_end_s) - warmup_s),
                     .groups = "drop")
}

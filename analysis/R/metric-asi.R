# Application Satisfaction Index (ASI), NCQ journal paper §5.2.2: how far each
# node's (or traffic class's) delay is from the delay its share of the data
# would justify. The paper (Section 5.2.2, before Fig. 14) prints
#
#   ASI = 1 - | sum_{i=1..n} Delay_i - (Data_i / TotalData) Delay_max | / (n Delay_max)
#
# with n the number of active nodes or of traffic classes, Data_i the data
# node i delivered to the receiving application, TotalData the sum over the
# nodes, Delay_i node i's average queuing delay and Delay_max "the maximum
# queuing delay of the system", and says ASI "ranges from 0 to 1" and
# "captures the deviation of the actual delay and the expected delay per
# flow".
#
# Read literally (one absolute value around the whole sum) the deviations of
# opposite sign cancel, so the index says nothing about each flow; the text's
# per-flow deviation and its range [0, 1] fit one absolute value per term:
#
#   ASI = 1 - sum_{i=1..n} | Delay_i - (Data_i / TotalData) Delay_max | / (n Delay_max)
#
# That per-term reading is qlab's (design/catalogue.yaml, ncq-journal fig16c,
# formula_plain_alternative_reading; issue 15); the printed one is
# `reading = "as_printed"`. With every Delay_i in [0, Delay_max] each term is
# at most Delay_max, so the per-term ASI lies in [0, 1]. Which units are the n
# (nodes, flows or classes) is the caller's choice: the paper leaves it open
# (fig16c `ambiguities`).
#
# The per-run metric `asi` (analysis/R/metrics.R) applies it to the flows of
# a UDP group with their queueing delays on a dumbbell (analysis/R/
# metric-voip.R); `asi_oneway` to a voip group's calls with their one-way
# delays, on any topology (`summarise_group_asi()`, below; the NCQ journal's
# Scenario 4, a graph, has no latency without queueing to subtract).

#' The ASI of one system.
#'
#' @param delay_s Each unit's (node's or class's) average queuing delay, s.
#' @param data_bytes Each unit's data delivered to the receiving application.
#' @param delay_max_s The system's maximum queuing delay, s: at least every `delay_s`.
#' @param reading "per_term" (an absolute value per unit, qlab's) or
#'   "as_printed" (one around the sum).
#' @return A number in [0, 1]; the printed reading is never below the
#'   per-term one (|sum| <= sum of |terms|), and equals it when no two
#'   deviations have opposite signs.
application_satisfaction_index <- function(delay_s, data_bytes, delay_max_s, reading = c("per_term", "as_printed")) {
  reading <- match.arg(reading)
  n <- length(delay_s)
  if (n == 0) {
    stop("ASI: at least one unit (node or class) must be given")
  }
  if (length(data_bytes) != n) {
    stop(sprintf("ASI: data_bytes must have one value per unit of delay_s (%d, found %d)", n, length(data_bytes)))
  }
  if (!is.numeric(delay_s) || any(is.na(delay_s)) || any(delay_s < 0)) {
    stop("ASI: delay_s must be numeric, >= 0 and not NA")
  }
  if (!is.numeric(data_bytes) || any(is.na(data_bytes)) || any(data_bytes < 0) || sum(data_bytes) == 0) {
    stop("ASI: data_bytes must be numeric, >= 0, not NA, and not all zero (TotalData divides)")
  }
  if (!is.numeric(delay_max_s) || length(delay_max_s) != 1 || is.na(delay_max_s) || delay_max_s <= 0) {
    stop("ASI: delay_max_s (the system's maximum queuing delay) must be one number > 0")
  }
  if (any(delay_s > delay_max_s)) {
    stop(sprintf("ASI: every delay_s must be at most delay_max_s = %g s (largest found: %g s)",
                 delay_max_s, max(delay_s)))
  }
  deviation_s <- delay_s - data_bytes / sum(data_bytes) * delay_max_s
  total_s <- switch(reading,
    per_term = sum(abs(deviation_s)),
    as_printed = abs(sum(deviation_s))
  )
  1 - total_s / (n * delay_max_s)
}

#' The ASI of each system (run, or run and group) of a table of units.
#'
#' @param units One row per unit (node, flow or class) with `delay_s`,
#'   `data_bytes` and `delay_max_s` (the same within a system).
#' @param by Columns naming a system.
#' @inheritParams application_satisfaction_index
#' @return `by` and `asi`.
summarise_asi <- function(units, by, reading = c("per_term", "as_printed")) {
  reading <- match.arg(reading)
  require_columns(units, c(by, "delay_s", "data_bytes", "delay_max_s"), "ASI")
  units |>
    dplyr::group_by(dplyr::across(dplyr::all_of(by))) |>
    dplyr::summarise(
      asi = {
        if (dplyr::n_distinct(.data$delay_max_s) != 1) {
          stop("ASI: delay_max_s must be the same for every unit of a system")
        }
        application_satisfaction_index(.data$delay_s, .data$data_bytes, .data$delay_max_s[[1]], reading)
      },
      .groups = "drop"
    )
}

#' The ASI of each run's flows of one UDP group, a node per flow (the NCQ
#' journal's "ASI of VoIP Application", Figs. 16(c) and 20(b)): Delay_i the
#' flow's mean one-way delay (the trace's delay from send to receive: queueing
#' plus the path's fixed propagation and transmission), Data_i its bytes
#' delivered, Delay_max the largest one-way delay of any datagram of the group
#' in the run; per-term reading. A flow that received nothing has no delay and
#' no data: it is not an active node and is left out.
#'
#' @param flows Per-flow table with `group`, `rx_packets`, `bytes_delivered`,
#'   `delay_mean_s`, `delay_max_s`.
#' @param by Columns naming a run.
#' @param group A UDP traffic group (e.g. "voip").
#' @return `by`, `asi`; a run where no flow of the group received anything has no row.
summarise_group_asi <- function(flows, by, group) {
  require_columns(flows, c(by, "group", "rx_packets", "bytes_delivered", "delay_mean_s", "delay_max_s"), "ASI")
  if (!is.character(group) || length(group) != 1 || is.na(group)) {
    stop("ASI: `group` must be one traffic group name")
  }
  flows |>
    dplyr::filter(.data$group == .env$group, !is.na(.data$rx_packets), .data$rx_packets > 0) |>
    dplyr::group_by(dplyr::across(dplyr::all_of(by))) |>
    dplyr::mutate(delay_s = .data$delay_mean_s, data_bytes = .data$bytes_delivered,
                  delay_max_s = max(.data$delay_max_s)) |>
    dplyr::ungroup() |>
    summarise_asi(by)
}

#' The ASI of each run's system with its traffic classes as the units (the
#' NCQ journal's "ASI for the System", Fig. 15(a); n = the classes, which the
#' journal allows): a class is a traffic group; Delay_i the mean queueing
#' delay (sojourn) of the group's packets dequeued at the traced queue (the
#' gateway's: the one queue every class crosses), Data_i the bytes the
#' group's flows delivered, Delay_max the largest sojourn of any of those
#' packets; per-term reading. Packets of no flow (flow_id NA) and events
#' before `warmup_s` are left out; a group with no dequeued packet is no unit.
#'
#' @param packets Packets table (`flow_id`, `time_s`, `queue`, `event`, `sojourn_s`) of one traced queue.
#' @param flows Per-flow table with `flow_id`, `group`, `bytes_delivered`.
#' @param by Columns naming a run (in both tables).
#' @param warmup_s Events before this time are left out.
#' @return `by`, `asi`; a run without queueing (every sojourn 0) has asi NA.
summarise_class_asi <- function(packets, flows, by, warmup_s = 0) {
  require_columns(packets, c(by, "flow_id", "time_s", "queue", "event", "sojourn_s"), "class ASI")
  require_columns(flows, c(by, "flow_id", "group", "bytes_delivered"), "class ASI")
  if (dplyr::n_distinct(packets$queue) > 1) {
    stop("class ASI: the runs must trace one queue (found ", paste(unique(packets$queue), collapse = ", "), ")")
  }
  data <- flows |>
    dplyr::group_by(dplyr::across(dplyr::all_of(c(by, "group")))) |>
    dplyr::summarise(data_bytes = sum(.data$bytes_delivered), .groups = "drop")
  units <- packets |>
    dplyr::filter(.data$event == "deq", !is.na(.data$flow_id), .data$time_s >= warmup_s) |>
    dplyr::inner_join(dplyr::select(flows, dplyr::all_of(c(by, "flow_id", "group"))), by = c(by, "flow_id")) |>
    dplyr::group_by(dplyr::across(dplyr::all_of(c(by, "group")))) |>
    dplyr::summarise(delay_s = mean(.data$sojourn_s), max_s = max(.data$sojourn_s), .groups = "drop") |>
    dplyr::inner_join(data, by = c(by, "group")) |>
    dplyr::group_by(dplyr::across(dplyr::all_of(by))) |>
    dplyr::mutate(delay_max_s = max(.data$max_s)) |>
    dplyr::ungroup()
  queued <- dplyr::filter(units, .data$delay_max_s > 0)
  asi <- if (nrow(queued) > 0) summarise_asi(queued, by)
  none <- dplyr::distinct(dplyr::filter(units, .data$delay_max_s <= 0), dplyr::across(dplyr::all_of(by)))
  dplyr::bind_rows(asi, dplyr::mutate(none, asi = NA_real_))
}

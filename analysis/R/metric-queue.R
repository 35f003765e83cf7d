# The traced queues themselves (the disciplines page): backlog per band from
# the periodic samples (queues table) and sojourn times per band from the
# packet events (packets table), after a warm-up. A run may trace several
# queues (`queue`, `LINK:NODE`: a parking lot's hops), so every value is per
# run, queue and band.

#' Time-average backlog of each band of each queue of each run, over the samples at or
#' after `warmup_s` (the samples are equally spaced, so the mean of the
#' samples is the time average).
#'
#' @param queues Collected queues table (`time_s`, `queue`, `band`, `backlog_pkts`).
#' @param by Columns naming a run.
#' @return `by`, `queue`, `band`, `mean_backlog_pkts`, `samples`.
summarise_band_backlog <- function(queues, by, warmup_s = 0) {
  require_columns(queues, c(by, "time_s", "queue", "band", "backlog_pkts"), "band backlog")
  kept <- dplyr::filter(queues, .data$time_s >= warmup_s)
  if (nrow(kept) == 0) {
    stop(sprintf("band backlog: no queue sample at or after the warm-up (%g s)", warmup_s))
  }
  kept |>
    dplyr::group_by(dplyr::across(dplyr::all_of(c(by, "queue", "band")))) |>
    dplyr::summarise(mean_backlog_pkts = mean(.data$backlog_pkts), samples = dplyr::n(), .groups = "drop")
}

#' Sojourn times of the packets each band of each queue sent, per run: the 99th
#' percentile (type 1, the smallest sojourn with at least 99% of the packets
#' at or below it) and the maximum, over dequeues at or after `warmup_s`.
#'
#' @param packets Collected packets table (`time_s`, `queue`, `event`, `band`, `sojourn_s`).
#' @return `by`, `queue`, `band`, `sojourn_p99_s`, `sojourn_max_s`, `sent`.
summarise_band_sojourn <- function(packets, by, warmup_s = 0) {
  require_columns(packets, c(by, "time_s", "queue", "event", "band", "sojourn_s"), "band sojourn")
  sent <- dplyr::filter(packets, .data$event == "deq", .data$time_s >= warmup_s)
  if (any(is.na(sent$sojourn_s))) {
    stop("band sojourn: every dequeue event needs its sojourn_s")
  }
  sent |>
    dplyr::group_by(dplyr::across(dplyr::all_of(c(by, "queue", "band")))) |>
    dplyr::summarise(
      sojourn_p99_s = unname(stats::quantile(.data$sojourn_s, 0.99, type = 1)),
      sojourn_max_s = max(.data$sojourn_s),
      sent = dplyr::n(),
      .groups = "drop"
    )
}

# The drop reasons of the discipline core's shared enum (docs/traces.md).
drop_reasons <- c("overflow", "aqm", "precedence_local", "precedence_cross", "delay")

#' Drops of each band of each queue of each run by reason (every reason of
#' `drop_reasons`, 0 when none), and the band's drop ratio: drops over the
#' packets that arrived at it (admitted, or dropped on arrival: a drop
#' without a sojourn), over events at or after `warmup_s`.
#'
#' @param packets Collected packets table (`time_s`, `queue`, `event`, `band`, `sojourn_s`, `reason`).
#' @return A list: `drops` (`by`, `queue`, `band`, `reason`, `dropped_pkts`)
#'   and `ratios` (`by`, `queue`, `band`, `drop_ratio`).
summarise_band_drops <- function(packets, by, warmup_s = 0) {
  require_columns(packets, c(by, "time_s", "queue", "event", "band", "sojourn_s", "reason"), "band drops")
  kept <- dplyr::filter(packets, .data$time_s >= warmup_s)
  unknown <- setdiff(unique(kept$reason[kept$event == "drop"]), drop_reasons)
  if (length(unknown) > 0) {
    stop(sprintf("band drops: drop reasons must be among %s (found %s)", paste(drop_reasons, collapse = ", "),
                 paste(unknown, collapse = ", ")))
  }
  cells <- c(by, "queue", "band")
  bands <- dplyr::distinct(kept, dplyr::across(dplyr::all_of(cells)))
  drops <- kept |>
    dplyr::filter(.data$event == "drop") |>
    dplyr::count(dplyr::across(dplyr::all_of(c(cells, "reason"))), name = "dropped_pkts")
  drops <- tidyr::expand_grid(bands, reason = drop_reasons) |>
    dplyr::left_join(drops, by = c(cells, "reason")) |>
    dplyr::mutate(dropped_pkts = dplyr::coalesce(.data$dropped_pkts, 0L))
  ratios <- kept |>
    dplyr::group_by(dplyr::across(dplyr::all_of(cells))) |>
    dplyr::summarise(
      arrived = sum(.data$event == "enq") + sum(.data$event == "drop" & is.na(.data$sojourn_s)),
      dropped = sum(.data$event == "drop"),
      .groups = "drop"
    ) |>
    dplyr::mutate(drop_ratio = dplyr::if_else(.data$arrived > 0, .data$dropped / .data$arrived, NA_real_)) |>
    dplyr::select(-"arrived", -"dropped")
  list(drops = drops, ratios = ratios)
}

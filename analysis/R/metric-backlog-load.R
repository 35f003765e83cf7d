# Backlog against load within a run (rbaqm Fig. 7: "note how backlog
# increases with increasing traffic load"; "With increased traffic load,
# the feedback signal P(t) must also increase to control the sources, and
# since P(t) is coupled with backlog, the backlog must also increase"): in
# each phase of a run's schedule (an interval in which the same sources are
# active, as metric-phase-share.R's phases), the time-average total backlog
# over the second half of the phase (after TCP and the AQM settle) against
# the number of sources active in it; per run, the least-squares slope, in
# packets per source. The same for a band's drop ratio (rbaqm Fig. 8: "at
# 50sec, when Class 2 traffic is switched on, ... Class 1 becomes a
# bottlenecked class": its drops rise with the load).

#' Least-squares slope of y on x.
#'
#' @param x,y Numeric vectors of one length; x takes two values or more.
#' @return The slope, sum((x - mean x)(y - mean y)) / sum((x - mean x)^2).
least_squares_slope <- function(x, y) {
  if (length(x) != length(y) || anyNA(x) || anyNA(y)) {
    stop("backlog slope: x and y must have one length and no NA")
  }
  if (length(unique(x)) < 2) {
    stop("backlog slope: the sources active must take two values or more")
  }
  centred <- x - mean(x)
  sum(centred * (y - mean(y))) / sum(centred^2)
}

#' The phases of a schedule of sources: maximal intervals in which the same
#' groups are active, with the number of sources active in each (phases with
#' none are left out: nothing loads the queue there).
#'
#' @param groups A tibble: `start_s`, `stop_s`, `count` (sources of each group).
#' @return A tibble: `from_s`, `to_s`, `sources`.
source_phases <- function(groups) {
  require_columns(groups, c("start_s", "stop_s", "count"), "source phases")
  edges <- sort(unique(c(groups$start_s, groups$stop_s)))
  purrr::map_dfr(seq_len(length(edges) - 1), function(k) {
    mid <- (edges[k] + edges[k + 1]) / 2
    active <- groups$start_s <= mid & groups$stop_s > mid
    tibble::tibble(from_s = edges[k], to_s = edges[k + 1], sources = sum(groups$count[active]))
  }) |>
    dplyr::filter(.data$sources > 0)
}

#' The groups of a scenario for source_phases(): each traffic group's start
#' (start_offset_s), stop (stop_s, else the run's duration) and count; NULL
#' when the schedule does not change the number of sources (no slope), or a
#' group's count or times are not one number each (drawn per seed).
scenario_source_groups <- function(scenario) {
  groups <- scenario$workload$groups
  scalar <- function(x) is.null(x) || (is.numeric(x) && length(x) == 1)
  fixed <- purrr::map_lgl(groups, function(g) {
    is.numeric(g$count) && length(g$count) == 1 && scalar(g$start_offset_s) && scalar(g$stop_s)
  })
  if (length(groups) == 0 || !all(fixed)) {
    return(NULL)
  }
  table <- purrr::map_dfr(groups, function(g) {
    tibble::tibble(start_s = as.numeric(g$start_offset_s %||% 0),
                   stop_s = as.numeric(g$stop_s %||% scenario$duration_s), count = as.numeric(g$count))
  })
  if (length(unique(source_phases(table)$sources)) < 2) NULL else table
}

#' Per run and traced queue, the slope of the phases' time-average total
#' backlog (second half of each phase, queue samples) on their sources.
#'
#' @param queues Collected queues table (`time_s`, `queue`, `band`, `backlog_pkts`).
#' @param by Columns naming a run.
#' @param phases From source_phases(): two source counts or more.
#' @return `by`, `queue`, `backlog_slope_pkts_per_source`.
summarise_backlog_load_slope <- function(queues, by, phases) {
  require_columns(queues, c(by, "time_s", "queue", "band", "backlog_pkts"), "backlog slope")
  total <- queues |>
    dplyr::group_by(dplyr::across(dplyr::all_of(c(by, "queue", "time_s")))) |>
    dplyr::summarise(backlog = sum(.data$backlog_pkts), .groups = "drop")
  total |>
    dplyr::group_by(dplyr::across(dplyr::all_of(c(by, "queue")))) |>
    dplyr::group_modify(function(samples, key) {
      means <- purrr::pmap_dbl(phases, function(from_s, to_s, sources) {
        inside <- samples$time_s >= (from_s + to_s) / 2 & samples$time_s < to_s
        if (!any(inside)) NA_real_ else mean(samples$backlog[inside])
      })
      kept <- !is.na(means)
      # a run whose samples miss all but one load has no slope
      slope <- if (length(unique(phases$sources[kept])) < 2) {
        NA_real_
      } else {
        least_squares_slope(phases$sources[kept], means[kept])
      }
      tibble::tibble(backlog_slope_pkts_per_source = slope)
    }) |>
    dplyr::ungroup()
}

#' Per run, traced queue and band, the slope of the band's drop ratio in
#' each phase (second half; drops over the packets that arrived at the band,
#' as summarise_band_drops()) on the sources active (phases where the band
#' had no arrival are left out; NA with fewer than two loads left).
#'
#' @param packets Collected packets table (`time_s`, `queue`, `event`, `band`, `sojourn_s`).
#' @param by Columns naming a run.
#' @param phases From source_phases().
#' @return `by`, `queue`, `band`, `drop_ratio_slope_per_source`.
summarise_drop_load_slope <- function(packets, by, phases) {
  require_columns(packets, c(by, "time_s", "queue", "event", "band", "sojourn_s"), "drop ratio slope")
  packets |>
    dplyr::group_by(dplyr::across(dplyr::all_of(c(by, "queue", "band")))) |>
    dplyr::group_modify(function(events, key) {
      ratios <- purrr::pmap_dbl(phases, function(from_s, to_s, sources) {
        inside <- events$time_s >= (from_s + to_s) / 2 & events$time_s < to_s
        drop <- inside & events$event == "drop"
        arrived <- sum(inside & events$event == "enq") + sum(drop & is.na(events$sojourn_s))
        if (arrived == 0) NA_real_ else sum(drop) / arrived
      })
      kept <- !is.na(ratios)
      slope <- if (length(unique(phases$sources[kept])) < 2) {
        NA_real_
      } else {
        least_squares_slope(phases$sources[kept], ratios[kept])
      }
      tibble::tibble(drop_ratio_slope_per_source = slope)
    }) |>
    dplyr::ungroup()
}

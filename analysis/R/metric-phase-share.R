# Fair allocation between classes switched on and off (rbaqm Figs. 4 and 8:
# "the magnitude of the flow rate from each class is proportional to its
# minimum rate W when the traffic from different classes is switched on and
# off"; "RB control allocates bandwidth fairly, despite ... UDP"): in each
# phase of a run (an interval in which the same classes are active), each
# class's rate against its weighted fair share, eq. (5) of the paper: the
# classes whose demand is below their W-proportional share keep their
# demand, the others share the rest in proportion to W.

#' Weighted max-min fair shares (eq. 5 applied until no class changes side).
#'
#' @param weights W of each active class (> 0).
#' @param demands Each class's demand (Inf for a saturated TCP class).
#' @param capacity What the classes share.
#' @return Each class's fair share.
weighted_fair_shares <- function(weights, demands, capacity) {
  if (length(weights) != length(demands) || any(weights <= 0)) {
    stop("fair shares: one weight > 0 and one demand per class")
  }
  share <- numeric(length(weights))
  open <- rep(TRUE, length(weights))
  left <- capacity
  # each round fixes at least one class, so at most length(weights) rounds
  for (round in seq_along(weights)) {
    fair <- weights * left / sum(weights[open])
    below <- open & demands < fair
    if (!any(below)) {
      share[open] <- fair[open]
      break
    }
    share[below] <- demands[below]
    left <- left - sum(demands[below])
    open <- open & !below
  }
  share
}

#' The phases of a run: maximal intervals in which the same classes are
#' active, from each class's start and stop times.
#'
#' @param classes A tibble: `cls`, `start_s`, `stop_s`.
#' @return A tibble: `from_s`, `to_s`, `active` (a list of the classes active).
class_phases <- function(classes) {
  edges <- sort(unique(c(classes$start_s, classes$stop_s)))
  purrr::map_dfr(seq_len(length(edges) - 1), function(k) {
    mid <- (edges[k] + edges[k + 1]) / 2
    active <- sort(classes$cls[classes$start_s <= mid & classes$stop_s > mid])
    tibble::tibble(from_s = edges[k], to_s = edges[k + 1], active = list(active))
  })
}

#' Per run, the largest relative deviation of a class's rate from its fair
#' share, over the phases with two classes or more and their active classes,
#' each measured over the second half of its phase (after TCP and the AQMs
#' settle): max |rate_i / F_i - 1|, the shares F of weighted_fair_shares()
#' of what all active classes sent in that half.
#'
#' @param packets Collected packets table (`time_s`, `event`, `band`, `len_bytes`).
#' @param by Columns naming a run.
#' @param classes `cls`, `start_s`, `stop_s`, `demand_bps` (Inf for TCP).
#' @param weights_of A function of a series name: the W of each class (band order).
#' @return `by`, `phase_share_max_dev`.
summarise_phase_share <- function(packets, by, classes, weights_of) {
  require_columns(packets, c(by, "time_s", "event", "band", "len_bytes"), "phase share")
  phases <- dplyr::filter(class_phases(classes), lengths(.data$active) >= 2)
  if (nrow(phases) == 0) stop("phase share: no phase with two classes or more")
  sent <- dplyr::filter(packets, .data$event == "deq")
  sent |>
    dplyr::group_by(dplyr::across(dplyr::all_of(by))) |>
    dplyr::group_modify(function(rows, key) {
      weights <- weights_of(key$series)
      devs <- purrr::pmap_dbl(phases, function(from_s, to_s, active) {
        from <- (from_s + to_s) / 2
        inside <- rows$time_s >= from & rows$time_s < to_s
        bytes <- purrr::map_dbl(active, function(cls) sum(as.numeric(rows$len_bytes[inside & rows$band == cls])))
        rates <- 8 * bytes / (to_s - from)
        demand <- classes$demand_bps[match(active, classes$cls)]
        fair <- weighted_fair_shares(weights[active + 1], demand, sum(rates))
        max(abs(rates / fair - 1))
      })
      tibble::tibble(phase_share_max_dev = max(devs))
    }) |>
    dplyr::ungroup()
}

#' The classes of a scenario for summarise_phase_share(): each traffic
#' group's class, start (its start_offset_s), stop (its stop_s, else the
#' run's duration) and demand (a CBR group's rate x count, in IP bits; Inf
#' for TCP). Groups of one class are merged (earliest start, latest stop).
scenario_classes <- function(scenario) {
  purrr::imap_dfr(scenario$workload$groups, function(g, name) {
    app <- g$app %||% "bulk"
    tibble::tibble(cls = as.integer(g$cls %||% 0), start_s = as.numeric(g$start_offset_s %||% 0),
                   stop_s = as.numeric(g$stop_s %||% scenario$duration_s),
                   demand_bps = if (app == "cbr") as.numeric(g$rate_bps) * as.numeric(g$count) else Inf)
  }) |>
    dplyr::group_by(.data$cls) |>
    dplyr::summarise(start_s = min(.data$start_s), stop_s = max(.data$stop_s), demand_bps = sum(.data$demand_bps),
                     .groups = "drop")
}

# Energy Potential (EP), ncq-journal §5.2.2 (Fig. 14(c)), after [24]:
#
#   EP = 1 - ( a (Throughput - Goodput) / Throughput_max
#            + b (Throughput_max - Throughput) / Throughput_max )
#
# The journal gives neither a, b nor Throughput_max ("the maximum Throughput
# for the given channel conditions"); it says EP locates "the Goodput as a
# point within a line that starts from 0 and ends at Throughput_max". With
# a = b = 1 EP is exactly that point, Goodput / Throughput_max, whatever the
# Throughput; qlab takes a = b = 1 and, per flow, Throughput_max the rate
# the flow offers (bytes_goal over its sending time), Throughput the rate of
# the payload it sent (tx_packets x seg_bytes) and Goodput the rate of the
# payload delivered (scenarios/ncq-journal/sensors.yaml, assumption
# energy-potential). The function takes any a and b.

#' The EP constants qlab uses (assumption energy-potential).
energy_potential_weights <- c(a = 1, b = 1)

#' Energy Potential of one or more flows.
#'
#' @param throughput_bps Rate of the data sent (retransmissions included).
#' @param goodput_bps Rate of the data delivered.
#' @param throughput_max_bps The largest throughput the channel allows (> 0).
#' @param a,b The weights of wasted and of unused throughput.
#' @return EP per flow (1 when Goodput = Throughput = Throughput_max).
energy_potential <- function(throughput_bps, goodput_bps, throughput_max_bps,
                             a = energy_potential_weights[["a"]], b = energy_potential_weights[["b"]]) {
  if (!is.numeric(throughput_max_bps) || any(is.na(throughput_max_bps)) || any(throughput_max_bps <= 0)) {
    stop("Energy Potential: throughput_max_bps must be numeric, > 0 and not NA")
  }
  if (!is.numeric(throughput_bps) || !is.numeric(goodput_bps) || any(throughput_bps < 0, na.rm = TRUE) ||
        any(goodput_bps < 0, na.rm = TRUE)) {
    stop("Energy Potential: throughput_bps and goodput_bps must be numeric and >= 0")
  }
  1 - (a * (throughput_bps - goodput_bps) / throughput_max_bps +
         b * (throughput_max_bps - throughput_bps) / throughput_max_bps)
}

#' Mean Energy Potential of each run's UDP flows of one traffic group.
#'
#' Per flow: time = end_s - start_s (its sending time), Throughput =
#' tx_packets x seg_bytes x 8 / time, Goodput = bytes_delivered x 8 / time,
#' Throughput_max = bytes_goal x 8 / time (what it offers).
#'
#' @param flows Per-flow table (docs/traces.md) with `group`, `app`,
#'   `seg_bytes`, `bytes_goal`, `bytes_delivered`, `tx_packets`, `start_s`, `end_s`.
#' @param by Columns naming a run.
#' @param group A traffic group of UDP flows.
#' @return `by` and `energy_potential` (the mean over the group's flows that
#'   offered data); a run without such a flow has no row.
summarise_energy_potential <- function(flows, by, group) {
  require_columns(flows, c(by, "group", "app", "seg_bytes", "bytes_goal", "bytes_delivered", "tx_packets",
                           "start_s", "end_s"), "Energy Potential")
  if (!is.character(group) || length(group) != 1 || is.na(group)) {
    stop("Energy Potential: `group` must be one traffic group name")
  }
  flows |>
    dplyr::filter(.data$group == .env$group, .data$app %in% udp_apps, .data$bytes_goal > 0,
                  !is.na(.data$end_s), .data$end_s > .data$start_s) |>
    dplyr::mutate(
      time_s = .data$end_s - .data$start_s,
      ep = energy_potential(
        throughput_bps = .data$tx_packets * .data$seg_bytes * 8 / .data$time_s,
        goodput_bps = .data$bytes_delivered * 8 / .data$time_s,
        throughput_max_bps = .data$bytes_goal * 8 / .data$time_s
      )
    ) |>
    dplyr::group_by(dplyr::across(dplyr::all_of(by))) |>
    dplyr::summarise(energy_potential = mean(.data$ep), .groups = "drop")
}

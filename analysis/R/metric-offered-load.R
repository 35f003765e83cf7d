# The load a run's Poisson streams actually offered a dumbbell's bottleneck:
# the validation scenarios' control variate (claims.R, evaluate_theory). A
# Poisson stream sends for a fixed window (end_s - start_s, the plan's
# on-period), so the datagrams it sends, and with exponential sizes their
# lengths, are random; a run that happened to offer more work than the
# nominal load waits longer. Its expectation is known exactly (the nominal
# load on the wire, model-validation.R), which is what a control variate
# needs.
#
#   offered_load = sum over the run's poisson flows of
#                  8 (bytes_goal + (28 + framing) tx_packets) / (C (end_s - start_s))
#
# bytes_goal is the payload of the datagrams a poisson flow sent
# (docs/jobs.md), 28 the IPv4 + UDP headers, framing the backend's bytes
# per packet on the wire (bottleneck_framing_bytes), C the bottleneck's rate.

#' Offered load on the wire of each run's Poisson streams.
#'
#' @param flows Per-flow table with `by`, `backend`, `app`, `bytes_goal`,
#'   `tx_packets`, `start_s`, `end_s`.
#' @param by Columns naming a run.
#' @param scenario The resolved scenario (a dumbbell's `bottleneck_rate_bps`).
#' @return `by`, `offered_load`; no rows unless the topology is a dumbbell
#'   whose rate no sweep varies, or for a backend whose framing is not known.
summarise_offered_load <- function(flows, by, scenario) {
  require_columns(flows, c(by, "backend", "app", "bytes_goal", "tx_packets", "start_s", "end_s"), "offered load")
  empty <- dplyr::mutate(flows[0, intersect(by, names(flows))], offered_load = numeric())
  topology <- scenario$topology
  paths <- unlist(purrr::map(scenario$sweep %||% list(), function(sw) c(sw$path, unlist(sw$also), names(sw$with))))
  if (!identical(topology$kind, "dumbbell") || any(grepl("^topology\\.", paths))) return(empty)
  capacity_bps <- as.numeric(topology$bottleneck_rate_bps)
  streams <- dplyr::filter(flows, .data$app == "poisson", .data$backend %in% names(bottleneck_framing_bytes))
  if (nrow(streams) == 0) return(empty)
  window_s <- streams$end_s - streams$start_s
  if (any(is.na(window_s) | window_s <= 0)) {
    stop("offered load: every poisson flow must have an on-period (end_s after start_s)")
  }
  streams |>
    dplyr::mutate(framing = unname(bottleneck_framing_bytes[.data$backend]),
                  bits = 8 * (.data$bytes_goal + (udp_header_bytes + .data$framing) * .data$tx_packets),
                  load = .data$bits / (capacity_bps * (.data$end_s - .data$start_s))) |>
    dplyr::group_by(dplyr::across(dplyr::all_of(by))) |>
    dplyr::summarise(offered_load = sum(.data$load), .groups = "drop")
}

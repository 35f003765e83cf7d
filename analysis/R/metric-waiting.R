# Waiting time at a dumbbell's bottleneck, from the one-way delays of UDP
# datagrams (docs/traces.md): the validation page's metric, compared there
# with queueing theory's closed forms (analysis/R/model-validation.R).

#' Bytes a backend's links add to each IP packet on the wire: ns-3's
#' point-to-point links a 2-byte PPP header (PointToPointNetDevice; the
#' ns-3 runner's header says so), ns-2's none (a packet's size is its IP
#' length). A backend not listed here has no waiting-time metric: its
#' framing (Ethernet, a NIC's) is not a constant qlab knows.
link_framing_bytes <- c(ns3 = 2, ns2 = 0)

#' The time a datagram of `ip_bytes` spends on the wire across a dumbbell
#' when it never waits: its transmission on the sender's access link, the
#' bottleneck and the receiver's access link, and their propagation delays.
#'
#' @param access_rate_bps,access_delay_s The group's access links (the
#'   topology's unless the group sets its own).
dumbbell_path_latency_s <- function(ip_bytes, framing_bytes, bottleneck_rate_bps, bottleneck_delay_s,
                                    access_rate_bps, access_delay_s) {
  bits <- 8 * (ip_bytes + framing_bytes)
  2 * (bits / access_rate_bps + access_delay_s) + bits / bottleneck_rate_bps + bottleneck_delay_s
}

#' Mean waiting time of each UDP group's datagrams at a dumbbell's
#' bottleneck, per run: the group's mean one-way delay (over every received
#' datagram) minus the path latency of its datagrams
#' (`dumbbell_path_latency_s()`, with the backend's `link_framing_bytes`).
#' Exact when the bottleneck is the only queue a datagram can wait in (the
#' validation scenarios' 100 Gb/s access links make the others negligible).
#'
#' @param flows Per-flow table with `backend`, `app`, `group`, `seg_bytes`
#'   (UDP: the payload, IP length - 28), `rx_packets`, `delay_mean_s`.
#' @param by Columns naming a run.
#' @param scenario The resolved scenario (its `topology` and `workload`).
#' @return `by`, `group`, `wait_mean_s`; no rows unless the topology is a
#'   dumbbell and the backend's framing is known.
summarise_bottleneck_wait <- function(flows, by, scenario) {
  require_columns(flows, c(by, "backend", "app", "group", "seg_bytes", "rx_packets", "delay_mean_s"),
                  "bottleneck waiting time")
  empty <- dplyr::mutate(flows[0, intersect(c(by, "group"), names(flows))], wait_mean_s = numeric())
  topology <- scenario$topology
  if (!identical(topology$kind, "dumbbell")) return(empty)
  udp <- dplyr::filter(flows, .data$app %in% udp_apps, .data$backend %in% names(link_framing_bytes),
                       .data$rx_packets > 0)
  if (nrow(udp) == 0) return(empty)
  groups <- scenario$workload$groups
  group_field <- function(group, field, default) {
    vapply(group, function(g) as.numeric(groups[[g]][[field]] %||% default), numeric(1))
  }
  udp |>
    dplyr::mutate(latency_s = dumbbell_path_latency_s(
      ip_bytes = .data$seg_bytes + 28,
      framing_bytes = unname(link_framing_bytes[.data$backend]),
      bottleneck_rate_bps = as.numeric(topology$bottleneck_rate_bps),
      bottleneck_delay_s = as.numeric(topology$bottleneck_delay_s),
      access_rate_bps = group_field(.data$group, "access_rate_bps", topology$access_rate_bps),
      access_delay_s = group_field(.data$group, "access_delay_s", topology$access_delay_s))) |>
    dplyr::group_by(dplyr::across(dplyr::all_of(c(by, "group")))) |>
    dplyr::summarise(wait_mean_s = sum((.data$delay_mean_s - .data$latency_s) * .data$rx_packets) /
                       sum(.data$rx_packets), .groups = "drop")
}

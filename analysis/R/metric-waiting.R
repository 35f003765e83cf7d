# Waiting time at a dumbbell's bottleneck, from the one-way delays of UDP
# datagrams (docs/traces.md): the validation page's metric, compared there
# with queueing theory's closed forms (analysis/R/model-validation.R).

#' Bytes a backend's links add to each IP packet on the wire: ns-3's
#' point-to-point links a 2-byte PPP header (PointToPointNetDevice; the
#' ns-3 runner's header says so), ns-2's none (a packet's size is its IP
#' length). A backend not listed here has no waiting-time metric: its
#' framing (Ethernet, a NIC's) is not a constant qlab knows.
link_framing_bytes <- c(ns3 = 2, ns2 = 0)

#' Bytes a backend adds to each IP packet at a dumbbell's bottleneck, which
#' its service time counts: the links' framing where every link has it
#' (`link_framing_bytes`), and in Mininet qlab-emu's link model, which adds
#' the same 2 bytes as ns-3's PPP header (`LINK_OVERHEAD_BYTES` of
#' disciplines/emu/qlab_mn_run.py, which tests/test_mininet.py checks
#' against this) while its veths add a framing qlab does not model.
bottleneck_framing_bytes <- c(link_framing_bytes, mininet = 2)

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

#' The latency without queueing of each UDP group's datagrams on a dumbbell
#' (`dumbbell_path_latency_s()`), per backend (its `link_framing_bytes`) and
#' datagram size, from the resolved topology and the group's own access
#' links; NULL when the topology is not a dumbbell or a sweep varies the
#' topology, a group's access links or its datagram size (the latency would
#' then differ between points).
#'
#' @param scenario The resolved scenario (scenario.json: `topology`,
#'   `workload`, `sweep`).
#' @param flows Per-flow table with `backend`, `app`, `group`, `seg_bytes`
#'   (UDP: the payload, IP length - 28).
#' @return `backend`, `group`, `seg_bytes`, `pkt_bytes`, `latency_s` (no row
#'   for a backend whose framing is not known), or NULL.
dumbbell_latency_table <- function(scenario, flows) {
  topology <- scenario$topology
  if (!identical(topology$kind, "dumbbell")) return(NULL)
  paths <- unlist(purrr::map(scenario$sweep %||% list(), function(sw) c(sw$path, unlist(sw$also))))
  if (any(grepl("^topology\\.|\\.access_(rate_bps|delay_s)$|\\.pkt_bytes$", paths))) return(NULL)
  groups <- scenario$workload$groups
  group_field <- function(group, field) {
    vapply(group, function(g) as.numeric(groups[[g]][[field]] %||% topology[[field]]), numeric(1), USE.NAMES = FALSE)
  }
  flows |>
    dplyr::filter(.data$app %in% udp_apps, .data$backend %in% names(link_framing_bytes)) |>
    dplyr::distinct(.data$backend, .data$group, .data$seg_bytes) |>
    dplyr::mutate(
      pkt_bytes = .data$seg_bytes + udp_header_bytes,
      latency_s = dumbbell_path_latency_s(
        ip_bytes = .data$pkt_bytes,
        framing_bytes = unname(link_framing_bytes[.data$backend]),
        bottleneck_rate_bps = as.numeric(topology$bottleneck_rate_bps),
        bottleneck_delay_s = as.numeric(topology$bottleneck_delay_s),
        access_rate_bps = group_field(.data$group, "access_rate_bps"),
        access_delay_s = group_field(.data$group, "access_delay_s")))
}

#' IPv4 + UDP headers: a UDP flow's seg_bytes is its IP length less these (docs/traces.md).
udp_header_bytes <- 28

#' Mean waiting time of each UDP group's datagrams at a dumbbell's
#' bottleneck, per run: the group's mean one-way delay (over every received
#' datagram) minus the latency of its datagrams without queueing
#' (`dumbbell_latency_table()`). Exact when the bottleneck is the only queue
#' a datagram can wait in (the validation scenarios' 100 Gb/s access links
#' make the others negligible).
#'
#' @param flows Per-flow table with `backend`, `app`, `group`, `seg_bytes`,
#'   `rx_packets`, `delay_mean_s`.
#' @param by Columns naming a run.
#' @param scenario The resolved scenario.
#' @return `by`, `group`, `wait_mean_s`; no rows unless
#'   `dumbbell_latency_table()` gives the latencies.
summarise_bottleneck_wait <- function(flows, by, scenario) {
  require_columns(flows, c(by, "backend", "app", "group", "seg_bytes", "rx_packets", "delay_mean_s"),
                  "bottleneck waiting time")
  empty <- dplyr::mutate(flows[0, intersect(c(by, "group"), names(flows))], wait_mean_s = numeric())
  latency <- dumbbell_latency_table(scenario, flows)
  if (is.null(latency) || nrow(latency) == 0) return(empty)
  flows |>
    dplyr::filter(.data$rx_packets > 0) |>
    dplyr::inner_join(latency, by = c("backend", "group", "seg_bytes")) |>
    dplyr::group_by(dplyr::across(dplyr::all_of(c(by, "group")))) |>
    dplyr::summarise(wait_mean_s = sum((.data$delay_mean_s - .data$latency_s) * .data$rx_packets) /
                       sum(.data$rx_packets), .groups = "drop")
}

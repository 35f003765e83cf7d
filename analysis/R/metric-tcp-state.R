# The TCP state of the worst flow (issue: artefacts like a lost SYN followed
# by an RTO back-off are shown, not inferred).
#
# A run's `tcp` table (docs/traces.md, `tcp.csv.gz`) samples the sender's TCP
# state of the bulk flows its plan's `trace.tcp` lists. The worst flow of a
# set of runs is the traced bulk flow with the longest completion time
# (censored at its run's end, as the completion-time metrics are): the flow
# that sets a figure's "worst time".

#' The worst traced bulk flow of each series.
#'
#' @param flows Flow rows (load.R's flows table, with `sim_end_s`) of the runs
#'   to search, with the run key columns.
#' @param tcp The same runs' tcp rows.
#' @return One row per series: the run key columns, `flow_id`, `start_s`,
#'   `seg_bytes`, `fct_s` (censored), `completed`, and `runs` (how many runs
#'   were searched).
worst_traced_flows <- function(flows, tcp) {
  require_columns(flows, c(run_key_columns, "flow_id", "app", "start_s", "end_s", "sim_end_s", "seg_bytes",
                           "completed"), "worst traced flow")
  require_columns(tcp, c(run_key_columns, "flow_id"), "worst traced flow")
  traced <- dplyr::distinct(tcp, dplyr::across(dplyr::all_of(c(run_key_columns, "flow_id"))))
  candidates <- flows |>
    dplyr::filter(.data$app == "bulk") |>
    dplyr::semi_join(traced, by = c(run_key_columns, "flow_id")) |>
    dplyr::mutate(fct_s = completion_time_s(.data$start_s, .data$end_s, .data$sim_end_s))
  if (nrow(candidates) == 0) {
    stop("worst traced flow: no bulk flow of these runs has TCP state samples (the scenario's trace.tcp)")
  }
  candidates |>
    dplyr::group_by(.data$series) |>
    dplyr::mutate(runs = dplyr::n_distinct(.data$seed, .data$point)) |>
    # ties: the lowest seed, then the lowest flow id, so the choice is stable
    dplyr::arrange(dplyr::desc(.data$fct_s), .data$seed, .data$flow_id, .by_group = TRUE) |>
    dplyr::slice(1) |>
    dplyr::ungroup() |>
    dplyr::select(dplyr::all_of(c(run_key_columns, "flow_id", "start_s", "seg_bytes", "fct_s", "completed", "runs")))
}

# What the worst-flow figure draws: one panel per quantity, in this order.
tcp_state_quantities <- c(
  cwnd_segments = "congestion window (segments)",
  rto_s = "retransmission timeout (s)",
  retransmissions = "segments and SYNs sent again (cumulative)"
)

#' The TCP state over time of the given flows, in long form.
#'
#' @param worst Rows of `worst_traced_flows()`.
#' @return Rows `series`, `seed`, `flow_id`, `time_s` (since the flow's
#'   start), `quantity` (a name of `tcp_state_quantities`), `value`.
tcp_state_of_flows <- function(tcp, worst) {
  require_columns(tcp, c(run_key_columns, "flow_id", "time_s", "cwnd_bytes", "rto_s", "retx_packets",
                         "syn_retx_packets"), "tcp state")
  tcp |>
    dplyr::inner_join(dplyr::select(worst, dplyr::all_of(c(run_key_columns, "flow_id", "start_s", "seg_bytes"))),
                      by = c(run_key_columns, "flow_id")) |>
    dplyr::arrange(.data$series, .data$time_s) |>
    dplyr::transmute(.data$backend, .data$series, .data$seed, .data$flow_id,
                     time_s = .data$time_s - .data$start_s,
                     cwnd_segments = .data$cwnd_bytes / .data$seg_bytes,
                     rto_s = .data$rto_s,
                     retransmissions = .data$retx_packets + .data$syn_retx_packets) |>
    tidyr::pivot_longer(dplyr::all_of(names(tcp_state_quantities)), names_to = "quantity", values_to = "value")
}

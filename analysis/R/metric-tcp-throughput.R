# TCP throughput in packets per second (cqaqm §IV: "for each TCP flow, the
# throughput is defined as the number of packets acknowledged divided by the
# total simulation time"): a flow's in-order delivered bytes over its segment
# size, over the time from its start to the run's end (its goodput's time,
# add_flow_goodput()). The paper's Gain ("the ratio of the realized
# throughput to the throughput achieved in the case of no Preemption") is the
# paired ratio of a group's tcp_throughput_pps, CQ-AQM over no Preemption at
# the same seed; its System Efficiency ("the average throughput of all P-L
# flows relative to the throughput achieved in the absence of Preemption")
# the same ratio of the mean over every TCP flow (the metric without a
# group): both are compare_paired()'s ratio (analysis/R/stats.R), shown by
# the paired_ratio_vs_x items of analysis/papers/cqaqm.yaml.

#' Throughput of each TCP flow in packets per second.
#'
#' @param bytes Bytes delivered in order to the receiving application.
#' @param seg_bytes The flow's segment payload (MSS), bytes.
#' @param duration_s Time from the flow's start to the run's end, seconds.
#' @return `bytes / seg_bytes / duration_s`: segments delivered per second.
tcp_throughput_pps <- function(bytes, seg_bytes, duration_s) {
  if (!is.numeric(bytes) || !is.numeric(seg_bytes) || !is.numeric(duration_s)) {
    stop("TCP throughput: `bytes`, `seg_bytes` and `duration_s` must be numeric")
  }
  if (length(bytes) != length(seg_bytes) || length(bytes) != length(duration_s)) {
    stop("TCP throughput: `bytes`, `seg_bytes` and `duration_s` must have the same length")
  }
  if (any(is.na(bytes) | bytes < 0)) {
    stop("TCP throughput: `bytes` must be non-negative and not NA")
  }
  if (any(is.na(seg_bytes) | seg_bytes <= 0) || any(is.na(duration_s) | duration_s <= 0)) {
    stop("TCP throughput: `seg_bytes` and `duration_s` must be positive and not NA")
  }
  bytes / seg_bytes / duration_s
}

#' Mean TCP throughput per flow (pps) of each run, per group of bulk flows
#' and over all of them (`group` NA: the System Efficiency's "all P-L flows").
#'
#' @param flows Per-flow table (`app`, `group`, `seg_bytes`, `bytes_delivered`,
#'   `start_s`, `end_s`, `sim_end_s`).
#' @param by Columns naming a run.
#' @return `by`, `group`, `tcp_throughput_pps`, `n_flows` (a sweep variable may be called flows).
summarise_tcp_throughput <- function(flows, by) {
  require_columns(flows, c(by, "app", "group", "seg_bytes", "bytes_delivered", "start_s", "end_s", "sim_end_s"),
                  "TCP throughput")
  bulk <- dplyr::filter(flows, .data$app == "bulk")
  bulk$pps <- tcp_throughput_pps(bulk$bytes_delivered, bulk$seg_bytes,
                                 dplyr::coalesce(bulk$end_s, bulk$sim_end_s) - bulk$start_s)
  per <- function(df, keys) {
    df |>
      dplyr::group_by(dplyr::across(dplyr::all_of(keys))) |>
      dplyr::summarise(tcp_throughput_pps = mean(.data$pps), n_flows = dplyr::n(), .groups = "drop")
  }
  dplyr::bind_rows(per(bulk, c(by, "group")), dplyr::mutate(per(bulk, by), group = NA_character_))
}

# Loss and delay of each traffic class at the traced queue (cqaqm §IV, "as
# seen by the arriving packets"): a class is a traffic group, one (P-L, QoS)
# pair of one application. "Loss ... the number of packets discarded by the
# queue management divided by the total number of packets offered to the
# queue management"; "Delay ... the time the packet completed service within
# the packet scheduler, including any necessary queuing delays, minus the
# time the packet was received by the scheduler": the packet's sojourn in
# the discipline plus its own transmission at the link's rate. Propagation
# is not included, as in the paper. From the packet events after a warm-up,
# per traced queue.

#' Delay of each dequeued packet: sojourn plus transmission.
#'
#' @param sojourn_s Time in the discipline, seconds.
#' @param len_bytes IP length, bytes.
#' @param rate_bps The link's rate, bit/s.
#' @return `sojourn_s + 8 * len_bytes / rate_bps`.
scheduler_delay_s <- function(sojourn_s, len_bytes, rate_bps) {
  if (any(is.na(sojourn_s) | sojourn_s < 0) || any(is.na(len_bytes) | len_bytes <= 0)) {
    stop("scheduler delay: `sojourn_s` must be non-negative and `len_bytes` positive, not NA")
  }
  if (!length(rate_bps) %in% c(1, length(sojourn_s)) || any(is.na(rate_bps) | rate_bps <= 0)) {
    stop("scheduler delay: `rate_bps` must be one positive rate, or one per packet")
  }
  sojourn_s + 8 * len_bytes / rate_bps
}

#' The type-1 quantile (an observed value: the smallest x with at least a
#' share `prob` of the values at or below it) of `x`, NA for no values.
delay_quantile <- function(x, prob) {
  if (length(x) == 0) NA_real_ else unname(stats::quantile(x, prob, type = 1))
}

#' Loss ratio and delay of each traffic group of each run at each traced
#' queue, from the packet events at or after `warmup_s`: the mean delay
#' (sojourn plus transmission) and its 50th, 95th and 99th percentiles over
#' the group's packets that left the queue (type 1: each an observed
#' packet's delay; the benchmark's sensor reports).
#'
#' @param packets Packet events (`by`, `flow_id`, `time_s`, `queue`, `event`,
#'   `sojourn_s`, `len_bytes`): a drop without a sojourn was dropped on arrival.
#' @param flows Per-flow table (`by`, `flow_id`, `group`).
#' @param by Columns naming a run (the run key columns among them).
#' @param rate_bps The traced links' rate (a dumbbell's bottleneck): one
#'   number, or a table of the runs (`by`, `capacity_bps`) when a sweep sets it
#'   (add_bottleneck_capacity()).
#' @return `by`, `queue`, `group`, `queue_loss_ratio`, `queue_delay_mean_s`,
#'   `queue_delay_p50_s`, `queue_delay_p95_s`, `queue_delay_p99_s`,
#'   `queue_wait_mean_s` (the mean sojourn alone: the validation's wait where
#'   the queue's own clock measures it, qlab-emu's), `offered`.
summarise_group_queue <- function(packets, flows, by, rate_bps, warmup_s = 0) {
  require_columns(packets, c(by, "flow_id", "time_s", "queue", "event", "sojourn_s", "len_bytes"),
                  "group loss and delay")
  require_columns(flows, c(by, "flow_id", "group"), "group loss and delay")
  kept <- dplyr::filter(packets, .data$time_s >= warmup_s, !is.na(.data$flow_id)) |>
    dplyr::inner_join(dplyr::select(flows, dplyr::all_of(c(by, "flow_id", "group"))), by = c(by, "flow_id"))
  if (is.data.frame(rate_bps)) {
    require_columns(rate_bps, c(by, "capacity_bps"), "group loss and delay rates")
    kept <- dplyr::inner_join(kept, dplyr::select(rate_bps, dplyr::all_of(c(by, "capacity_bps"))), by = by)
  } else {
    kept$capacity_bps <- rep(rate_bps, nrow(kept))
  }
  # each dequeued packet's delay, once
  left <- kept$event == "deq"
  kept$delay_s <- rep(NA_real_, nrow(kept))
  kept$delay_s[left] <- scheduler_delay_s(kept$sojourn_s[left], kept$len_bytes[left], kept$capacity_bps[left])
  kept |>
    dplyr::group_by(dplyr::across(dplyr::all_of(c(by, "queue", "group")))) |>
    dplyr::summarise(
      offered = sum(.data$event == "enq") + sum(.data$event == "drop" & is.na(.data$sojourn_s)),
      dropped = sum(.data$event == "drop"),
      queue_delay_mean_s = if (any(.data$event == "deq")) mean(.data$delay_s[.data$event == "deq"]) else NA_real_,
      queue_delay_p50_s = delay_quantile(.data$delay_s[.data$event == "deq"], 0.5),
      queue_delay_p95_s = delay_quantile(.data$delay_s[.data$event == "deq"], 0.95),
      queue_delay_p99_s = delay_quantile(.data$delay_s[.data$event == "deq"], 0.99),
      queue_wait_mean_s = if (any(.data$event == "deq")) mean(.data$sojourn_s[.data$event == "deq"]) else NA_real_,
      .groups = "drop"
    ) |>
    dplyr::mutate(queue_loss_ratio = dplyr::if_else(.data$offered > 0, .data$dropped / .data$offered, NA_real_)) |>
    dplyr::select(-"dropped")
}

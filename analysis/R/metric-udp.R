# UDP flows (apps cbr, onoff, voip, poisson; docs/traces.md): loss and one-way delay
# per traffic group.

#' Loss ratio and one-way delay of each group of UDP flows in each run.
#'
#' loss_ratio = sum(lost_packets) / sum(tx_packets) over the group's flows;
#' delay_mean_s is the mean over every received datagram (the flows' means
#' weighted by rx_packets); delay_max_s the largest.
#'
#' @param flows Per-flow table with `app`, `group`, `tx_packets`,
#'   `rx_packets`, `lost_packets`, `delay_mean_s`, `delay_max_s`.
#' @param by Columns naming a run.
#' @return `by`, `group`, `loss_ratio`, `delay_mean_s`, `delay_max_s`.
summarise_udp_groups <- function(flows, by) {
  require_columns(flows, c(by, "app", "group", "tx_packets", "rx_packets", "lost_packets",
                           "delay_mean_s", "delay_max_s"), "UDP groups")
  udp <- dplyr::filter(flows, .data$app %in% udp_apps)
  if (any(is.na(udp$rx_packets) | is.na(udp$lost_packets))) {
    stop("UDP groups: rx_packets and lost_packets must be given for every UDP flow")
  }
  udp |>
    dplyr::group_by(dplyr::across(dplyr::all_of(c(by, "group")))) |>
    dplyr::summarise(
      loss_ratio = if (sum(.data$tx_packets) > 0) sum(.data$lost_packets) / sum(.data$tx_packets) else NA_real_,
      delay_mean_s = if (sum(.data$rx_packets) > 0) {
        sum(.data$delay_mean_s * .data$rx_packets, na.rm = TRUE) / sum(.data$rx_packets)
      } else {
        NA_real_
      },
      delay_max_s = if (sum(.data$rx_packets) > 0) max(.data$delay_max_s, na.rm = TRUE) else NA_real_,
      .groups = "drop"
    )
}

udp_apps <- c("cbr", "onoff", "voip", "poisson")

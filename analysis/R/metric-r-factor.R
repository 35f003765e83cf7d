# The R-factor of a group of VoIP calls, as the NCQ journal paper rates them
# (Section 5.2.3, eq. (22), used for Figs. 17 and 20(a)): each call's R from
# its mouth-to-ear delay and its loss, by the paper's own formula
# (`r_factor_ncq_journal_eq22()`, metric-emodel.R: Cole & Rosenbluth's
# simplified E-model, 94.2 - Id(d) - 30 ln(1 + 15 e) for G.711), then the
# mean over the group's calls.
#
#   d = the call's mean one-way network delay + 10 ms
#
# The 10 ms are the paper's: "we introduce extra delay of 10ms because of
# the G.711 voice encoding (according to [8])". No jitter buffer is modelled
# (the paper names none), and e counts the datagrams that never arrived
# (none is discarded late). A call that received no datagram has no delay to
# rate: it gets R = 0, the bottom of the scale (MOS 1), rather than being
# left out, which would flatter a run that silenced calls.

#' The mean R (the paper's eq. (22)) of each run's calls of one UDP group.
#'
#' @param flows Per-flow table with `group`, `tx_packets`, `lost_packets`,
#'   `rx_packets` and `delay_mean_s` (UDP flows: docs/traces.md).
#' @param by Columns naming a run.
#' @param group A UDP traffic group (e.g. "voip").
#' @param codec_delay_s Encoding delay added to the network delay (G.711: 10 ms).
#' @return `by`, `r_factor` (mean over the calls) and `n_calls`; a run with
#'   no call of the group (or no datagram sent) has no row.
summarise_group_r_factor <- function(flows, by, group, codec_delay_s = 0.010) {
  require_columns(flows, c(by, "group", "tx_packets", "rx_packets", "lost_packets", "delay_mean_s"), "R-factor")
  if (!is.character(group) || length(group) != 1 || is.na(group)) {
    stop("R-factor: `group` must be one traffic group name")
  }
  calls <- dplyr::filter(flows, .data$group == .env$group, .data$tx_packets > 0)
  if (any(is.na(calls$lost_packets))) {
    stop(sprintf("R-factor: group %s must be UDP calls (lost_packets given for every flow)", group))
  }
  calls |>
    dplyr::mutate(
      received = .data$rx_packets > 0,
      call_r = ifelse(
        .data$received,
        r_factor_ncq_journal_eq22(1000 * (dplyr::coalesce(.data$delay_mean_s, 0) + codec_delay_s),
                                  .data$lost_packets / .data$tx_packets),
        0
      )
    ) |>
    dplyr::group_by(dplyr::across(dplyr::all_of(by))) |>
    dplyr::summarise(r_factor = mean(.data$call_r), n_calls = dplyr::n(), .groups = "drop")
}

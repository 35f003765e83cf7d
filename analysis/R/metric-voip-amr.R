# VoIP quality of AMR 12.2 kbit/s calls (srd paper, Section 5, Figs. 4(a)
# and 5(a); its tool [10] rates AMR calls by the E-model): R and MOS of a
# group of calls from its mean one-way delay and loss (summarise_udp_groups(),
# metric-udp.R), as voip_r_factor()/voip_mos() (metric-voip.R) do for the
# NCQ journal's G.711 calls, with AMR 12.2's Ie = 5 and Bpl = 10
# (emodel_codecs(), metric-emodel.R, which cites them).
#
# Mouth-to-ear delay: the mean one-way network delay plus 25 ms of codec
# delay, AMR's 20 ms frame and its 5 ms look-ahead (3GPP TS 26.090); no
# playout buffer (none is stated: no datagram is discarded late), random
# loss (scenarios/srd/voip.yaml, assumption amr-emodel).

#' AMR 12.2's algorithmic delay: one 20 ms frame and 5 ms of look-ahead.
amr_codec_delay_s <- 0.025

#' R-factor and MOS of each group of VoIP calls (app voip) of each run, rated
#' as AMR 12.2 calls.
#'
#' @param flows Per-flow table (`summarise_udp_groups()`'s columns).
#' @param by Columns naming a run.
#' @return `by`, `group`, `voip_r_factor_amr`, `voip_mos_amr`; no row for
#'   groups of other applications; NA where a group received nothing.
summarise_voip_quality_amr <- function(flows, by) {
  require_columns(flows, c(by, "app", "group"), "AMR VoIP quality")
  calls <- dplyr::filter(flows, .data$app == "voip")
  summarise_udp_groups(calls, by) |>
    dplyr::transmute(
      dplyr::across(dplyr::all_of(c(by, "group"))),
      voip_r_factor_amr = voip_r_factor(.data$delay_mean_s, .data$loss_ratio, amr_codec_delay_s, "amr_12_2"),
      voip_mos_amr = voip_mos(.data$delay_mean_s, .data$loss_ratio, amr_codec_delay_s, "amr_12_2")
    )
}

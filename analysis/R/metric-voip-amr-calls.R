# Average MOS over the calls of a group of AMR 12.2 kbit/s calls (srd paper,
# Section 5.2's transient and VoIP-population experiments): each call rated
# by the E-model from its own mean one-way delay and loss, as
# voip_mos_amr rates a whole group (metric-voip-amr.R: AMR 12.2's Ie = 5
# and Bpl = 10, 25 ms of codec delay, no playout buffer), then the mean over
# the calls. The paper's "average MOS" is read as this mean over calls
# (its tool [10] rates each call): with calls that arrive and leave at
# random times (scenarios/srd/transient.yaml) the calls see different
# loads, and a group's pooled delay and loss would weigh the long calls
# more.
#
# A call that sent nothing (tx_packets 0) is left out; a call that sent but
# received nothing is rated MOS 1, the scale's floor (G.107 Annex B's MOS
# for R <= 0): it was unusable, and leaving it out would flatter the group.

#' MOS of each AMR 12.2 call from its own delay and loss; 1 for a call
#' that received nothing (`delay_mean_s` NA, `loss_ratio` 1).
voip_call_mos_amr <- function(delay_mean_s, loss_ratio) {
  if (length(delay_mean_s) != length(loss_ratio)) {
    stop("AMR call MOS: delay_mean_s and loss_ratio must have one value per call")
  }
  if (any(is.na(loss_ratio) | loss_ratio < 0 | loss_ratio > 1)) {
    stop("AMR call MOS: loss_ratio must be a number in [0, 1] for every call")
  }
  silent <- is.na(delay_mean_s)
  if (any(silent & loss_ratio < 1)) {
    stop("AMR call MOS: a call with no mean delay must have lost everything (loss_ratio 1)")
  }
  mos <- rep(1, length(loss_ratio))
  mos[!silent] <- voip_mos(delay_mean_s[!silent], loss_ratio[!silent], amr_codec_delay_s, "amr_12_2")
  mos
}

#' Mean over the calls of each VoIP group (app voip) of each run of their
#' own AMR 12.2 MOS.
#'
#' @param flows Per-flow table: `by`, `app`, `group`, `tx_packets`,
#'   `lost_packets`, `delay_mean_s`.
#' @param by Columns naming a run.
#' @return `by`, `group`, `voip_mos_amr_calls`, `calls` (the calls rated).
summarise_voip_calls_amr <- function(flows, by) {
  require_columns(flows, c(by, "app", "group", "tx_packets", "lost_packets", "delay_mean_s"),
                  "AMR VoIP quality per call")
  flows |>
    dplyr::filter(.data$app == "voip", .data$tx_packets > 0) |>
    dplyr::mutate(mos = voip_call_mos_amr(.data$delay_mean_s, .data$lost_packets / .data$tx_packets)) |>
    dplyr::group_by(dplyr::across(dplyr::all_of(c(by, "group")))) |>
    dplyr::summarise(voip_mos_amr_calls = mean(.data$mos), calls = dplyr::n(), .groups = "drop")
}

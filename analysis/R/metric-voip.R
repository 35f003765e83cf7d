# VoIP calls' quality and fairness per run (NCQ journal paper, Scenario 3,
# Figs. 16(c) and 17): the E-model's R-factor and MOS of a group of VoIP
# calls from the group's one-way delay and loss (summarise_udp_groups(),
# metric-udp.R), and the Application Satisfaction Index over its calls
# (metric-asi.R) from their queueing delays.
#
# The mouth-to-ear delay a call's listener hears is the network's one-way
# delay plus the codec's: the journal adds "extra delay of 10ms because of
# the G.711 voice encoding" (Section 5.2.3, after Cole & Rosenbluth), and
# states no playout (jitter) buffer, so none is added and no datagram is
# discarded late: the loss is the network's (scenarios/ncq-journal/voip.yaml,
# assumption emodel-mouth-to-ear). Calls are rated as G.711 with packet-loss
# concealment (emodel_codecs(); assumption emodel-codec).

#' Codec delay the journal adds to the network's one-way delay (G.711, 10 ms).
voip_codec_delay_s <- 0.010
#' The codec of `emodel_codecs()` the calls are rated as.
voip_codec <- "g711_plc"

#' R-factor of calls from their mean one-way network delay and loss ratio.
#'
#' @param delay_mean_s Mean one-way network delay of the received datagrams, s.
#' @param loss_ratio Datagrams lost / sent, in [0, 1].
#' @param codec_delay_s Added to the network delay (encoding, packetisation), s.
#' @param codec A codec of `emodel_codecs()`.
#' @return R (`emodel_r_factor()`, the simplified delay impairment) at the
#'   mouth-to-ear delay `1000 (delay_mean_s + codec_delay_s)` ms; NA where the
#'   delay or the loss is NA (no datagram sent or received).
voip_r_factor <- function(delay_mean_s, loss_ratio, codec_delay_s = voip_codec_delay_s, codec = voip_codec) {
  if (length(delay_mean_s) != length(loss_ratio)) {
    stop("VoIP R-factor: delay_mean_s and loss_ratio must have one value per group of calls")
  }
  if (!is.numeric(codec_delay_s) || length(codec_delay_s) != 1 || is.na(codec_delay_s) || codec_delay_s < 0) {
    stop("VoIP R-factor: codec_delay_s must be one number >= 0 (seconds)")
  }
  known <- !is.na(delay_mean_s) & !is.na(loss_ratio)
  r <- rep(NA_real_, length(delay_mean_s))
  r[known] <- emodel_r_factor(1000 * (delay_mean_s[known] + codec_delay_s), loss_ratio[known], codec)
  r
}

#' MOS of calls (G.107 Annex B, `mos_from_r()`) from the same inputs as
#' `voip_r_factor()`; NA where R is.
voip_mos <- function(delay_mean_s, loss_ratio, codec_delay_s = voip_codec_delay_s, codec = voip_codec) {
  r <- voip_r_factor(delay_mean_s, loss_ratio, codec_delay_s, codec)
  mos <- rep(NA_real_, length(r))
  mos[!is.na(r)] <- mos_from_r(r[!is.na(r)])
  mos
}

#' R-factor and MOS of each group of VoIP calls (app voip) of each run.
#'
#' @param flows Per-flow table (`summarise_udp_groups()`'s columns).
#' @param by Columns naming a run.
#' @return `by`, `group`, `voip_r_factor`, `voip_mos`; no row for groups of
#'   other applications.
summarise_voip_quality <- function(flows, by) {
  require_columns(flows, c(by, "app", "group"), "VoIP quality")
  calls <- dplyr::filter(flows, .data$app == "voip")
  summarise_udp_groups(calls, by) |>
    dplyr::transmute(
      dplyr::across(dplyr::all_of(c(by, "group"))),
      voip_r_factor = voip_r_factor(.data$delay_mean_s, .data$loss_ratio),
      voip_mos = voip_mos(.data$delay_mean_s, .data$loss_ratio)
    )
}

#' The ASI of each UDP group of each run over its flows (the group's calls).
#'
#' Units are the group's flows that received a datagram: Delay_i a flow's
#' mean queueing delay (its mean one-way delay less its datagrams' latency
#' without queueing, `dumbbell_latency_table()`, at least 0), Data_i its
#' bytes delivered, Delay_max the group's largest queueing delay (its
#' largest one-way delay less that latency);
#' `application_satisfaction_index()`, per-term reading.
#'
#' @param flows Per-flow table with `app`, `group`, `seg_bytes`, `rx_packets`,
#'   `bytes_delivered`, `delay_mean_s`, `delay_max_s`.
#' @param by Columns naming a run.
#' @param latency `dumbbell_latency_table()`'s table (backend, group, seg_bytes, latency_s).
#' @return `by`, `group`, `asi` (NA when no datagram queued: Delay_max 0).
summarise_udp_asi <- function(flows, by, latency) {
  require_columns(flows, c(by, "app", "group", "seg_bytes", "rx_packets", "bytes_delivered",
                           "delay_mean_s", "delay_max_s"), "UDP ASI")
  require_columns(latency, c("backend", "group", "seg_bytes", "latency_s"), "UDP ASI latencies")
  units <- flows |>
    dplyr::filter(.data$app %in% udp_apps, .data$rx_packets > 0) |>
    dplyr::inner_join(dplyr::select(latency, "backend", "group", "seg_bytes", "latency_s"),
                      by = c("backend", "group", "seg_bytes")) |>
    dplyr::group_by(dplyr::across(dplyr::all_of(c(by, "group")))) |>
    dplyr::mutate(
      delay_s = pmax(.data$delay_mean_s - .data$latency_s, 0),
      data_bytes = .data$bytes_delivered,
      delay_max_s = max(.data$delay_max_s - .data$latency_s, 0)
    ) |>
    dplyr::ungroup()
  queued <- dplyr::filter(units, .data$delay_max_s > 0)
  # (a summary of zero rows would still evaluate the ASI once, on no unit)
  asi <- if (nrow(queued) > 0) summarise_asi(queued, c(by, "group"))
  none <- dplyr::distinct(dplyr::filter(units, .data$delay_max_s <= 0), dplyr::across(dplyr::all_of(c(by, "group"))))
  dplyr::bind_rows(asi, dplyr::mutate(none, asi = NA_real_))
}

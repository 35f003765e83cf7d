# The E-model (ITU-T G.107): a call's transmission rating factor R from its
# one-way mouth-to-ear delay and packet loss, and the MOS estimated from R.
# Used by the NCQ journal paper (Scenario 3, Table 2, Figs. 17 and 19-20) and
# meant for any VoIP metric (the S-RD and sensor scenarios).
#
#   R = R0 - Is - Id - Ie,eff + A                       (G.107 §3.1)
#
# With every G.107 parameter at its default, R0 - Is (and the delay-free part
# of Id) come to R = 93.2; this file keeps that sum as one baseline
# (`emodel_default_r`) and subtracts the two impairments a network causes:
# the delay impairment Id and the effective equipment impairment Ie,eff (the
# codec's Ie raised by packet loss), then adds the advantage factor A (0 by
# default).
#
# Sources (each fact checked against a second one; the brief's list of facts
# is the first):
#  * ITU-T Rec. G.107 (03/2005), "The E-model, a computational model for use
#    in transmission planning": §3.1 R, §3.4 Id (Idd), §3.5 Ie,eff, §3.7
#    default values, Annex B (MOS from R). Text found at
#    https://studylib.net/doc/25585379/itu-t-g.107-03.2005 and
#    https://www.itu.int/dms_pubrec/itu-t/rec/g/T-REC-G.107-200503-S!!TOC-HTM-E.htm
#    (table of contents).
#  * ITU-T Rec. G.113 Appendix I (provisional planning values of Ie and Bpl):
#    https://www.itu.int/dms_pubrec/itu-t/rec/g/T-REC-G.113-200102-S!!TOC-HTM-E.htm
#  * Second sources: sipmon 0.1.5, src/analyze/mos.rs
#    (https://docs.rs/crate/sipmon/latest/source/src/analyze/mos.rs): the
#    baseline 93.2, Ie,eff = Ie + (95 - Ie) Ppl / (Ppl/BurstR + Bpl), the
#    simplified Id = 0.024 d + 0.11 (d - 177.3) H(d - 177.3), the MOS
#    polynomial and G.711 with PLC (Ie 0, Bpl 25.1). A Stack Overflow question
#    quoting G.113 (stackoverflow.com/questions/40040117, read at
# nolint start: line_length_linter. (a URL)
#    https://kiwix.lema.org/stackoverflow.com_en_all_2023-11/questions/40040117/how-to-calculate-effective-equipment-impairment-value-ie-eff)
# nolint end
#    gives the same Ie,eff formula. Telektronikk's "Internet Traffic Engineering" issue
#    (https://issuhub.com/view/index?id=4972&pageIndex=329) measured about 25
#    R units lost per percent of loss for G.711 without PLC and about 4 with
#    PLC at low loss: the slopes 95/Bpl of the Ie,eff formula are 22.1
#    (Bpl 4.3) and 3.8 (Bpl 25.1); the test file checks this.
#  * R. G. Cole and J. H. Rosenbluth, "Voice over IP performance monitoring",
#    ACM SIGCOMM CCR 31(2), 2001 (the ncq-journal paper's [8]): the
#    simplified Id above, a fit to G.107's delay impairment.
#
# The NCQ journal paper (eq. (22) and the MOS mapping after it, Section
# 5.2.3) misprints the MOS mapping as 1 + 0.035 R + 7e-6 (100 - R): the
# R (R - 60) factor of G.107 Annex B is missing. Its own Table 2 follows
# G.107 (e.g. R = 90 -> 4.34, which the printed expression puts at 4.15), so
# qlab uses G.107 (`mos_from_r()`); the printed expression is kept as
# `mos_as_printed_ncq_journal()` only to show the misprint beside Table 2
# (design/catalogue.yaml, ncq-journal/table2 and fig17b, `ambiguities`).
# Its eq. (22) is Cole & Rosenbluth's whole R, with alpha = 94.2 instead of
# G.107's 93.2 and a logarithmic loss impairment for G.711
# (`r_factor_ncq_journal_eq22()`).
#
# The per-run metrics voip_r_factor and voip_mos (analysis/R/metrics.R)
# call these functions through analysis/R/metric-voip.R, which says how a
# run's delays become the mouth-to-ear delay.

#' R with every G.107 parameter at its default and no impairment (G.107
#' §3.7; Cole & Rosenbluth round it to 94.2 in their fit, see above).
emodel_default_r <- 93.2

#' Codecs' equipment impairment Ie and packet-loss robustness Bpl, after
#' ITU-T G.113 Appendix I (Bpl for random loss, 10 ms G.711 packets).
#'
#'  * G.711 without packet-loss concealment: Ie 0, Bpl 4.3;
#'  * G.711 with the PLC of G.711 Appendix I: Ie 0, Bpl 25.1 (second
#'    source: sipmon, above);
#'  * GSM-EFR (bit-exact with AMR's 12.2 kbit/s mode): Ie 5, Bpl 10 (the
#'    AMR 12.2 calls of the srd paper, issue 17).
#'    No second source was found for Bpl 4.3 beyond the Telektronikk slope
#'    check above. For AMR 12.2 / GSM-EFR's Ie = 5 the second source is the
#'    same Telektronikk issue, Table 3 ("Tolerable mean one-way
#'    mouth-to-ear delay ... when there is no packet loss", perfect echo
#'    control; https://fliphtml5.com/cuwft/dvva/Internet_Traffic_Engineering/330):
#'    R falls to 70 at 400 ms for G.711 and at 342 ms for both "ETSI GSM-EFR
#'    12.2" and "3GPP AMR 12.2" (one codec to the E-model), and G.107's
#'    delay impairment Idd is 24.07 at 400 ms and 19.06 at 342 ms, so Ie =
#'    24.07 - 19.06 = 5.0 (tests/testthat/test-metric-emodel.R checks it).
#'    For its Bpl of 10 no second source with the number was found: the
#'    same issue only says GSM-EFR's concealment "does not perform so well
#'    as the PLC techniques of the other considered codecs", i.e. a smaller
#'    Bpl than G.711 with PLC (25.1); 10 is G.113 Appendix I's value as the
#'    issues (15, 17) list it. That AMR 12.2 is bit-exact with GSM-EFR:
#'    3GPP TS 26.071 (AMR's mode 7, "AMR 12.2 kbps (GSM-EFR)" in codec
#'    tables such as opencore-amr's).
emodel_codecs <- function() {
  tibble::tribble(
    ~codec, ~ie, ~bpl, ~description,
    "g711", 0, 4.3, "G.711, no packet-loss concealment",
    "g711_plc", 0, 25.1, "G.711 with packet-loss concealment (G.711 Appendix I)",
    "amr_12_2", 5, 10, "AMR 12.2 kbit/s / GSM-EFR"
  )
}

#' The row of a codec in `emodel_codecs()`.
emodel_codec <- function(codec) {
  codecs <- emodel_codecs()
  if (!is.character(codec) || length(codec) != 1 || !codec %in% codecs$codec) {
    stop(sprintf("E-model: codec must be one of %s (found %s)", paste(codecs$codec, collapse = ", "),
                 paste(format(codec), collapse = ", ")))
  }
  codecs[codecs$codec == codec, ]
}

#' Delay impairment Id, the simplification of Cole & Rosenbluth (2001):
#' Id = 0.024 d + 0.11 (d - 177.3) H(d - 177.3), d the one-way mouth-to-ear
#' delay in ms and H the unit step.
#'
#' The default of `delay_impairment()`: Cole & Rosenbluth fitted it to
#' G.107's whole delay impairment under default settings (talker echo
#' included, which grows with the delay); it is the delay term of the
#' paper's eq. (22), so our R rates calls as the paper rated them; and it
#' needs no echo parameters, which the paper does not give.
delay_impairment_simplified <- function(delay_ms) {
  emodel_check_delay(delay_ms)
  0.024 * delay_ms + 0.11 * (delay_ms - 177.3) * (delay_ms > 177.3)
}

#' Delay impairment of G.107 §3.4 reduced to its absolute-delay term Idd,
#' with the echo terms Idte and Idle at their default-condition values
#' (folded into `emodel_default_r`):
#' Idd = 0 for Ta <= 100 ms, else 25 {(1 + X^6)^(1/6) - 3 (1 + (X/3)^6)^(1/6) + 2},
#' X = lg(Ta / 100) / lg 2.
#'
#' Lower than the simplification below 300 ms: it leaves out the talker-echo
#' impairment's growth with delay, which Cole & Rosenbluth's fit includes.
delay_impairment_g107_idd <- function(delay_ms) {
  emodel_check_delay(delay_ms)
  # X = 0 up to 100 ms, where the bracket is 1 - 3 + 2 = 0
  x <- log10(pmax(delay_ms, 100) / 100) / log10(2)
  25 * ((1 + x^6)^(1 / 6) - 3 * (1 + (x / 3)^6)^(1 / 6) + 2)
}

#' The delay impairment Id under one of the two models (see each).
delay_impairment <- function(delay_ms, model = c("simplified", "g107_idd")) {
  model <- match.arg(model)
  switch(model,
    simplified = delay_impairment_simplified(delay_ms),
    g107_idd = delay_impairment_g107_idd(delay_ms)
  )
}

#' Effective equipment impairment (G.107 §3.5):
#' Ie,eff = Ie + (95 - Ie) Ppl / (Ppl / BurstR + Bpl), Ppl in percent.
#'
#' @param packet_loss_ratio Packets lost / sent, in [0, 1] (Ppl = 100 times it).
#' @param ie,bpl The codec's Ie and Bpl (`emodel_codecs()`).
#' @param burst_ratio BurstR: 1 for random (independent) loss, > 1 for bursty.
effective_equipment_impairment <- function(packet_loss_ratio, ie, bpl, burst_ratio = 1) {
  emodel_check_loss(packet_loss_ratio)
  if (!is.numeric(ie) || any(is.na(ie)) || any(ie < 0 | ie > 95)) {
    stop("E-model: ie (the codec's equipment impairment) must be numeric in [0, 95]")
  }
  if (!is.numeric(bpl) || any(is.na(bpl)) || any(bpl <= 0)) {
    stop("E-model: bpl (the codec's packet-loss robustness) must be numeric and > 0")
  }
  if (!is.numeric(burst_ratio) || any(is.na(burst_ratio)) || any(burst_ratio < 1)) {
    stop("E-model: burst_ratio must be numeric and >= 1 (1: random loss)")
  }
  ppl <- 100 * packet_loss_ratio
  ie + (95 - ie) * ppl / (ppl / burst_ratio + bpl)
}

#' The transmission rating factor R of calls (G.107 §3.1, defaults but for
#' the delay and the loss): R = 93.2 - Id - Ie,eff + A.
#'
#' @param delay_ms One-way mouth-to-ear delay (network, codec, jitter buffer), ms.
#' @param packet_loss_ratio Packets lost (or discarded late) / sent, in [0, 1].
#' @param codec A codec of `emodel_codecs()`.
#' @param burst_ratio BurstR (1: random loss).
#' @param delay_model `delay_impairment()`'s model; "simplified" by default (see there).
#' @param advantage The advantage factor A (G.107 §3.6; 0 for wired calls).
#' @return R, not clipped (it may leave [0, 100]; `mos_from_r()` saturates).
emodel_r_factor <- function(delay_ms, packet_loss_ratio, codec = "g711_plc", burst_ratio = 1,
                            delay_model = c("simplified", "g107_idd"), advantage = 0) {
  delay_model <- match.arg(delay_model)
  row <- emodel_codec(codec)
  if (!is.numeric(advantage) || length(advantage) != 1 || is.na(advantage) || advantage < 0 || advantage > 20) {
    stop("E-model: advantage (A) must be one number in [0, 20] (G.107 §3.6)")
  }
  emodel_default_r - delay_impairment(delay_ms, delay_model) -
    effective_equipment_impairment(packet_loss_ratio, row$ie, row$bpl, burst_ratio) + advantage
}

#' The MOS estimated from R (G.107 Annex B): 1 for R < 0, 4.5 for R > 100,
#' else 1 + 0.035 R + R (R - 60) (100 - R) 7e-6 (continuous at 0 and 100).
mos_from_r <- function(r) {
  if (!is.numeric(r) || any(is.na(r))) stop("E-model: r must be numeric and not NA")
  mos <- 1 + 0.035 * r + r * (r - 60) * (100 - r) * 7e-6
  dplyr::case_when(r < 0 ~ 1, r > 100 ~ 4.5, TRUE ~ mos)
}

#' The MOS mapping as the NCQ journal paper prints it (Section 5.2.3):
#' 1 + 0.035 R + 7e-6 (100 - R) for 0 < R < 100. A misprint (the R (R - 60)
#' factor is missing; its Table 2 follows G.107): only to show it.
mos_as_printed_ncq_journal <- function(r) {
  if (!is.numeric(r) || any(is.na(r))) stop("E-model: r must be numeric and not NA")
  dplyr::case_when(r < 0 ~ 1, r > 100 ~ 4.5, TRUE ~ 1 + 0.035 * r + 7e-6 * (100 - r))
}

#' R as the NCQ journal paper defines it, eq. (22) (Cole & Rosenbluth's):
#' R = 94.2 - Id(d) - gamma1 - gamma2 ln(1 + gamma3 e), G.711: gamma = (0, 30, 15),
#' Id the simplification above, e the loss ratio.
r_factor_ncq_journal_eq22 <- function(delay_ms, packet_loss_ratio) {
  emodel_check_loss(packet_loss_ratio)
  94.2 - delay_impairment_simplified(delay_ms) - 0 - 30 * log(1 + 15 * packet_loss_ratio)
}

#' The speech-quality categories of R (ITU-T G.109 (09/1999), five
#' categories "tied to the ratings given by ... G.107", abstract at
#' https://downloadscodes.org/131832-ITU-G-109-1999.html; the NCQ journal
#' paper's Table 2 prints the same bands and names): lower bound (inclusive)
#' and upper bound of each band, and its name. Below 50 G.109 does not
#' recommend the connection.
voice_quality_bands <- function() {
  tibble::tribble(
    ~r_low, ~r_high, ~rating,
    90, 100, "Best",
    80, 90, "High",
    70, 80, "Medium",
    60, 70, "Low",
    50, 60, "Poor"
  )
}

#' The category of each R (`voice_quality_bands()`); a bound belongs to the
#' band above it, R >= 100 is "Best" and R < 50 "Not recommended".
rate_voice_quality <- function(r) {
  if (!is.numeric(r) || any(is.na(r))) stop("E-model: r must be numeric and not NA")
  bands <- voice_quality_bands()
  band <- findInterval(r, rev(bands$r_low))
  ifelse(band == 0, "Not recommended", rev(bands$rating)[pmax(band, 1)])
}

#' A table relating R bands to MOS, as the NCQ journal paper's Table 2 does,
#' computed here beside the paper's printed rows: for each of the paper's
#' R bands, the band's G.109 category, the MOS of G.107 (`mos_from_r()`) and
#' of the paper's printed mapping at its bounds, and whether ours agree with
#' the paper's MOS to the two decimals it prints (within 0.005).
#'
#' @param paper_rows The paper's rows: each `r_low`, `r_high`, `rating`,
#'   `mos_low`, `mos_high` (a list of lists, as a paper spec gives them).
voice_quality_table <- function(paper_rows) {
  fields <- c("r_low", "r_high", "rating", "mos_low", "mos_high")
  ok <- is.list(paper_rows) && length(paper_rows) > 0 &&
    all(purrr::map_lgl(paper_rows, function(row) is.list(row) && setequal(names(row), fields)))
  if (!ok) {
    stop(sprintf("paper_rows must be a list of rows, each with %s", paste0("`", fields, "`", collapse = ", ")))
  }
  paper <- purrr::map_dfr(paper_rows, tibble::as_tibble)
  if (!is.numeric(paper$r_low) || !is.numeric(paper$r_high) || any(paper$r_low >= paper$r_high)) {
    stop("paper_rows: r_low and r_high must be numbers with r_low < r_high")
  }
  # the paper prints MOS to two decimals
  agrees <- function(ours, printed) abs(ours - printed) <= 0.005 + 1e-9
  paper |>
    dplyr::transmute(
      r_low = .data$r_low, r_high = .data$r_high,
      rating_paper = .data$rating,
      rating_g109 = rate_voice_quality((.data$r_low + .data$r_high) / 2),
      mos_low_paper = .data$mos_low, mos_high_paper = .data$mos_high,
      mos_low = mos_from_r(.data$r_low), mos_high = mos_from_r(.data$r_high),
      mos_low_printed_formula = mos_as_printed_ncq_journal(.data$r_low),
      mos_high_printed_formula = mos_as_printed_ncq_journal(.data$r_high),
      agrees = agrees(.data$mos_low, .data$mos_low_paper) & agrees(.data$mos_high, .data$mos_high_paper) &
        .data$rating_g109 == .data$rating_paper
    )
}

#' R and MOS of each call (one row per call or per group of calls).
#'
#' @param calls A table with `delay_ms` (mouth-to-ear) and `packet_loss_ratio`.
#' @inheritParams emodel_r_factor
#' @return `calls` with `r_factor`, `mos` and `rating`.
add_emodel_rating <- function(calls, codec = "g711_plc", burst_ratio = 1, delay_model = "simplified") {
  require_columns(calls, c("delay_ms", "packet_loss_ratio"), "E-model")
  calls |>
    dplyr::mutate(
      r_factor = emodel_r_factor(.data$delay_ms, .data$packet_loss_ratio, codec, burst_ratio, delay_model),
      mos = mos_from_r(.data$r_factor),
      rating = rate_voice_quality(.data$r_factor)
    )
}

emodel_check_delay <- function(delay_ms) {
  if (!is.numeric(delay_ms) || any(is.na(delay_ms)) || any(delay_ms < 0)) {
    stop("E-model: delay_ms (one-way mouth-to-ear delay) must be numeric, >= 0 and not NA")
  }
}

emodel_check_loss <- function(packet_loss_ratio) {
  if (!is.numeric(packet_loss_ratio) || any(is.na(packet_loss_ratio)) ||
      any(packet_loss_ratio < 0 | packet_loss_ratio > 1)) {
    stop("E-model: packet_loss_ratio must be numeric in [0, 1] and not NA (lost / sent, not percent)")
  }
}

test_that("MOS from R follows G.107 Annex B, worked by hand", {
  # at R of 93.2: 1 + 3.262 + 93.2 * 33.2 * 6.8 * 7e-6 = 4.262 + 0.1472858 = 4.4092858
  expect_equal(mos_from_r(93.2), 4.4092858, tolerance = 1e-7)
  expect_equal(round(mos_from_r(emodel_default_r), 2), 4.41)
  # the bounds of the NCQ journal paper's Table 2
  expect_equal(mos_from_r(90), 1 + 3.15 + 90 * 30 * 10 * 7e-6) # that is 4.339
  expect_equal(mos_from_r(80), 4.024) # from 3.8 + 80 * 20 * 20 * 7e-6
  expect_equal(mos_from_r(70), 3.597) # from 3.45 + 70 * 10 * 30 * 7e-6
  expect_equal(mos_from_r(60), 3.1) # the cubic term is zero at R = 60
  expect_equal(mos_from_r(50), 2.575) # from 2.75 - 50 * 10 * 50 * 7e-6
})

test_that("MOS saturates at 1 below R = 0 and 4.5 above R = 100, continuously", {
  expect_equal(mos_from_r(c(-20, -1e-9, 0)), c(1, 1, 1))
  expect_equal(mos_from_r(c(100, 100 + 1e-9, 150)), c(4.5, 4.5, 4.5))
  expect_equal(mos_from_r(1e-9), 1, tolerance = 1e-9)
  expect_error(mos_from_r(NA_real_), "r must be numeric")
})

test_that("the paper's printed MOS mapping is the misprint the catalogue describes", {
  # catalogue: the printed formula gives 3.80014 at R = 80, Table 2 says 4.03
  expect_equal(mos_as_printed_ncq_journal(80), 3.80014)
  expect_false(isTRUE(all.equal(mos_as_printed_ncq_journal(80), mos_from_r(80))))
})

test_that("with no loss Ie,eff is the codec's Ie", {
  expect_equal(effective_equipment_impairment(0, ie = 0, bpl = 4.3), 0)
  expect_equal(effective_equipment_impairment(0, ie = 5, bpl = 10), 5)
  expect_equal(emodel_r_factor(0, 0, codec = "g711"), 93.2)
  expect_equal(emodel_r_factor(0, 0, codec = "amr_12_2"), 88.2)
})

test_that("G.711 at 2 % random loss, worked by hand", {
  # Ppl = 2, BurstR = 1: no PLC 95 * 2 / (2 + 4.3) = 190 / 6.3; with PLC 190 / 27.1
  expect_equal(effective_equipment_impairment(0.02, ie = 0, bpl = 4.3), 190 / 6.3)
  expect_equal(effective_equipment_impairment(0.02, ie = 0, bpl = 25.1), 190 / 27.1)
  expect_equal(emodel_r_factor(0, 0.02, codec = "g711"), 93.2 - 190 / 6.3) # 63.04
  # bursty loss hurts more: BurstR = 2 gives 190 / (1 + 4.3)
  expect_equal(effective_equipment_impairment(0.02, ie = 0, bpl = 4.3, burst_ratio = 2), 190 / 5.3)
  # all packets lost: Ie,eff -> 95 - (95 - Ie) * Bpl / (100 + Bpl) for random loss
  expect_equal(effective_equipment_impairment(1, ie = 0, bpl = 4.3), 9500 / 104.3)
})

test_that("the loss slopes agree with Telektronikk's measured ~25 (no PLC) and ~4 (PLC) R per % loss", {
  slope <- function(codec) {
    row <- emodel_codec(codec)
    effective_equipment_impairment(1e-5, row$ie, row$bpl) / 1e-3 # R per percent, near zero loss
  }
  expect_equal(slope("g711"), 95 / 4.3, tolerance = 1e-3) # 22.1
  expect_equal(slope("g711_plc"), 95 / 25.1, tolerance = 1e-3) # 3.8
})

test_that("the simplified delay impairment at 150 and 300 ms, worked by hand", {
  expect_equal(delay_impairment_simplified(150), 3.6) # from 0.024 * 150
  expect_equal(delay_impairment_simplified(300), 7.2 + 0.11 * 122.7) # that is 20.697
  expect_equal(delay_impairment_simplified(177.3), 0.024 * 177.3) # the step starts after 177.3
  expect_equal(emodel_r_factor(150, 0, codec = "g711"), 89.6)
})

test_that("G.107's Idd is zero up to 100 ms and matches a hand computation above", {
  expect_equal(delay_impairment_g107_idd(c(0, 50, 100)), c(0, 0, 0))
  # Ta = 150: X = lg 1.5 / lg 2 = 0.5849625, Idd = 0.1635312
  expect_equal(delay_impairment_g107_idd(150), 0.1635312, tolerance = 1e-6)
  # Ta = 300: X = lg 3 / lg 2 = 1.5849625, Idd = 14.7606947
  expect_equal(delay_impairment_g107_idd(300), 14.7606947, tolerance = 1e-6)
  expect_equal(delay_impairment(300, "g107_idd"), delay_impairment_g107_idd(300))
  expect_equal(delay_impairment(300), delay_impairment_simplified(300))
})

test_that("the paper's eq. (22) is Cole & Rosenbluth's R (alpha 94.2, logarithmic loss term)", {
  expect_equal(r_factor_ncq_journal_eq22(0, 0), 94.2)
  expect_equal(r_factor_ncq_journal_eq22(300, 0.02), 94.2 - 20.697 - 30 * log(1.3))
})

test_that("R is rated by G.109's bands, a bound belonging to the band above", {
  expect_equal(rate_voice_quality(c(100, 93.2, 90, 89.99, 80, 75, 60, 50, 49.99, -3)),
               c("Best", "Best", "Best", "High", "High", "Medium", "Low", "Poor", "Not recommended",
                 "Not recommended"))
})

test_that("bad inputs stop with a message naming the argument", {
  expect_error(emodel_r_factor(100, -0.01), "packet_loss_ratio must be numeric in \\[0, 1\\]")
  expect_error(emodel_r_factor(100, 2), "packet_loss_ratio")
  expect_error(emodel_r_factor(-1, 0), "delay_ms")
  expect_error(emodel_r_factor(100, 0, codec = "g729"), "codec must be one of g711, g711_plc, amr_12_2")
  expect_error(emodel_r_factor(100, 0, burst_ratio = 0.5), "burst_ratio")
  expect_error(emodel_r_factor(100, 0, advantage = 30), "advantage")
  expect_error(emodel_r_factor(100, 0, delay_model = "linear"), "should be one of")
  expect_error(effective_equipment_impairment(0.1, ie = 0, bpl = 0), "bpl")
})

test_that("the wrapper rates each call", {
  calls <- tibble::tibble(call = 1:2, delay_ms = c(150, 300), packet_loss_ratio = c(0, 0.02))
  rated <- add_emodel_rating(calls, codec = "g711")
  expect_equal(rated$r_factor, c(89.6, 93.2 - 20.697 - 190 / 6.3))
  expect_equal(rated$mos, mos_from_r(rated$r_factor))
  expect_equal(rated$rating, c("High", "Not recommended")) # 42.3
  expect_error(add_emodel_rating(tibble::tibble(delay_ms = 1)), "packet_loss_ratio")
})

test_that("the R-to-MOS table checks a paper's rows bound by bound", {
  rows <- list(list(r_low = 90, r_high = 100, rating = "Best", mos_low = 4.34, mos_high = 4.5),
               list(r_low = 80, r_high = 90, rating = "High", mos_low = 4.03, mos_high = 4.34))
  table <- voice_quality_table(rows)
  expect_equal(table$mos_low, c(4.339, 4.024))
  expect_equal(table$rating_g109, c("Best", "High"))
  # 4.339 rounds to 4.34; 4.024 is not the printed 4.03
  expect_equal(table$agrees, c(TRUE, FALSE))
  expect_equal(table$mos_low_printed_formula, c(1 + 3.15 + 7e-5, 3.80014))
  expect_error(voice_quality_table(list(list(r_low = 90))), "each with `r_low`")
  expect_error(voice_quality_table(list(list(r_low = 90, r_high = 80, rating = "x", mos_low = 1, mos_high = 2))),
               "r_low < r_high")
})

test_that("AMR 12.2's Ie = 5 agrees with the tolerable delays of Telektronikk's Table 3", {
  # R = 70 at 400 ms for G.711 and at 342 ms for AMR 12.2 (no loss, perfect
  # echo control): with G.107's Idd the two R differ by less than 0.1
  g711 <- emodel_r_factor(400, 0, codec = "g711", delay_model = "g107_idd")
  amr <- emodel_r_factor(342, 0, codec = "amr_12_2", delay_model = "g107_idd")
  expect_equal(delay_impairment_g107_idd(400), 24.07, tolerance = 0.001)
  expect_equal(delay_impairment_g107_idd(342), 19.06, tolerance = 0.001)
  expect_lt(abs(g711 - amr), 0.1)
  # an Ie of 0 or 10 would not: the bound would move by 5 R units
  expect_gt(abs(g711 - (amr + 5)), 4.9)
})

test_that("AMR 12.2's Ie,eff at 1 % and 5 % random loss, worked by hand", {
  # Ie,eff = 5 + 90 Ppl / (Ppl + 10): 1 % -> 5 + 90 / 11 = 13.1818; 5 % -> 5 + 450 / 15 = 35
  expect_equal(effective_equipment_impairment(0.01, ie = 5, bpl = 10), 5 + 90 / 11)
  expect_equal(effective_equipment_impairment(0.05, ie = 5, bpl = 10), 35)
  expect_equal(emodel_r_factor(0, 0.05, codec = "amr_12_2"), 93.2 - 35)
  # with the simplified delay impairment at 100 ms: Id = 2.4, R = 93.2 - 2.4 - 35 = 55.8
  expect_equal(emodel_r_factor(100, 0.05, codec = "amr_12_2"), 55.8)
})

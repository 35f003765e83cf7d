# AMR 12.2 calls' R and MOS (srd Figs. 4(a), 5(a)), worked by hand.

test_that("a group of AMR calls is rated with Ie 5, Bpl 10 and 25 ms of codec delay", {
  flows <- make_flows(series = "s", seed = 1L, flow_id = 0:2, app = c("voip", "voip", "bulk"),
                      group = c("voip", "voip", "r"), tx_packets = c(100, 100, 10),
                      rx_packets = c(99, 99, NA), lost_packets = c(1, 1, NA),
                      delay_mean_s = c(0.1, 0.1, NA), delay_max_s = c(0.2, 0.2, NA))
  got <- summarise_voip_quality_amr(flows, c("series", "seed"))
  # loss 2 / 200 = 1 % (Ppl 1): Ie,eff = 5 + 90 * 1 / (1 + 10) = 13.181818;
  # d = 100 + 25 = 125 ms: Id = 0.024 * 125 = 3; R = 93.2 - 3 - 13.181818 = 77.018182
  expect_equal(got$group, "voip")
  expect_equal(got$voip_r_factor_amr, 77.018182, tolerance = 1e-7)
  # MOS = 1 + 0.035 R + R (R - 60) (100 - R) 7e-6
  #     = 1 + 2.695636 + 77.018182 * 17.018182 * 22.981818 * 7e-6 = 3.695636 + 0.210857 = 3.906494
  expect_equal(got$voip_mos_amr, 3.906494, tolerance = 1e-6)
})

test_that("AMR calls rate below G.711 with PLC at the same delay and loss", {
  flows <- make_flows(series = "s", seed = 1L, flow_id = 0L, app = "voip", group = "voip",
                      tx_packets = 100, rx_packets = 95, lost_packets = 5, delay_mean_s = 0.05, delay_max_s = 0.1)
  amr <- summarise_voip_quality_amr(flows, c("series", "seed"))
  g711 <- summarise_voip_quality(flows, c("series", "seed"))
  # 5 % loss: AMR Ie,eff = 35, G.711 PLC 95 * 5 / 30.1 = 15.78; and 15 ms more codec delay
  expect_equal(amr$voip_r_factor_amr, 93.2 - 0.024 * 75 - 35)
  expect_lt(amr$voip_mos_amr, g711$voip_mos)
})

test_that("a group that received nothing has no rating, and other apps none at all", {
  flows <- make_flows(series = "s", seed = 1L, flow_id = 0:1, app = c("voip", "cbr"), group = c("voip", "cbr"),
                      tx_packets = c(10, 10), rx_packets = c(0, 10), lost_packets = c(10, 0),
                      delay_mean_s = c(NA, 0.01), delay_max_s = c(NA, 0.01))
  got <- summarise_voip_quality_amr(flows, c("series", "seed"))
  expect_equal(nrow(got), 1)
  expect_true(is.na(got$voip_mos_amr))
})

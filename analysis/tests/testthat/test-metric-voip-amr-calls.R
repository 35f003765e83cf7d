# The mean over calls of each AMR 12.2 call's MOS (srd transient and
# population experiments), worked by hand.

test_that("each call is rated from its own delay and loss, then the calls are averaged", {
  flows <- make_flows(series = "s", seed = 1L, flow_id = 0:3, app = c("voip", "voip", "voip", "bulk"),
                      group = c("voip", "voip", "voip", "r"), tx_packets = c(100, 100, 0, 10),
                      rx_packets = c(99, 100, 0, NA), lost_packets = c(1, 0, 0, NA),
                      delay_mean_s = c(0.1, 0.025, NA, NA), delay_max_s = c(0.2, 0.05, NA, NA))
  got <- summarise_voip_calls_amr(flows, c("series", "seed"))
  # call 0: 1 % loss, 125 ms: Ie,eff = 5 + 90 * 1 / 11 = 13.181818, Id = 3, R = 77.018182,
  #   MOS = 1 + 0.035 R + R (R - 60) (100 - R) 7e-6 = 3.906494 (test-metric-voip-amr.R)
  # call 1: no loss, 50 ms: R = 93.2 - 1.2 - 5 = 87,
  #   MOS = 1 + 3.045 + 87 x 27 x 13 x 7e-6, i.e. 4.045 + 0.213759 = 4.258759
  # call 2 sent nothing: left out
  expect_equal(got$group, "voip")
  expect_equal(got$calls, 2L)
  expect_equal(got$voip_mos_amr_calls, (3.906494 + 4.258759) / 2, tolerance = 1e-6)
  # not the group's pooled rating: 0.5 % loss at 75 ms would give more
  pooled <- summarise_voip_quality_amr(flows, c("series", "seed"))$voip_mos_amr
  expect_gt(pooled, got$voip_mos_amr_calls)
})

test_that("a call that received nothing counts as MOS 1", {
  flows <- make_flows(series = "s", seed = 1L, flow_id = 0:1, app = "voip", group = "voip",
                      tx_packets = c(50, 100), rx_packets = c(0, 100), lost_packets = c(50, 0),
                      delay_mean_s = c(NA, 0.025), delay_max_s = c(NA, 0.05))
  got <- summarise_voip_calls_amr(flows, c("series", "seed"))
  expect_equal(got$voip_mos_amr_calls, (1 + 4.258759) / 2, tolerance = 1e-6)
})

test_that("inconsistent calls are refused with what must hold", {
  expect_error(voip_call_mos_amr(NA_real_, 0.5), "must have lost everything")
  expect_error(voip_call_mos_amr(0.1, 1.5), "in \\[0, 1\\]")
  expect_error(voip_call_mos_amr(c(0.1, 0.2), 0), "one value per call")
})

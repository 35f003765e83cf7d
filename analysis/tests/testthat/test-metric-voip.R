# VoIP quality (R-factor, MOS) and the ASI of a group of calls, worked by hand.

test_that("the R-factor adds the codec's 10 ms and rates G.711 with PLC", {
  # d = 40 + 10 = 50 ms: Id = 0.024 * 50 = 1.2 (below 177.3 ms, no second term);
  # loss 1%: Ppl = 1, Ie,eff = 0 + 95 * 1 / (1 / 1 + 25.1) = 95 / 26.1 = 3.639847;
  # hand-worked: R is 93.2 minus 1.2 minus 3.639847, 88.360153
  expect_equal(voip_r_factor(0.040, 0.01), 93.2 - 1.2 - 95 / 26.1)
  expect_equal(voip_r_factor(0.040, 0.01), 88.360153, tolerance = 1e-8)
  # d = 200 + 10 = 210 ms: Id = 0.024 * 210 + 0.11 * (210 - 177.3) = 5.04 + 3.597 = 8.637;
  # no loss: R = 93.2 - 8.637 = 84.563
  expect_equal(voip_r_factor(0.200, 0), 84.563)
  # without the codec's delay: d = 40 ms, Id = 0.96
  expect_equal(voip_r_factor(0.040, 0, codec_delay_s = 0), 92.24)
  # G.711 without PLC (Bpl 4.3): Ie,eff = 95 * 1 / (1 + 4.3) = 17.924528
  expect_equal(voip_r_factor(0.040, 0.01, codec = "g711"), 93.2 - 1.2 - 95 / 5.3)
  expect_equal(voip_r_factor(c(NA, 0.040), c(0.1, NA)), c(NA_real_, NA_real_))
  expect_error(voip_r_factor(0.04, c(0, 0)), "one value per group")
  expect_error(voip_r_factor(0.04, 0, codec_delay_s = -1), "codec_delay_s must be one number >= 0")
})

test_that("the MOS follows G.107 Annex B from that R", {
  # R = 84.563: 1 + 0.035 R + R (R - 60) (100 - R) 7e-6
  #   = 1 + 2.959705 + 84.563 * 24.563 * 15.437 * 7e-6 = 1 + 2.959705 + 0.224452 = 4.184157
  expect_equal(voip_mos(0.200, 0), 4.184157, tolerance = 1e-6)
  # a huge delay: R < 0, MOS 1
  expect_equal(voip_mos(2, 0.5), 1)
  expect_equal(voip_mos(NA_real_, 0), NA_real_)
})

test_that("a group's R and MOS come from its calls' pooled delay and loss", {
  flows <- make_flows(series = "s", seed = 1L, flow_id = 0:2, app = c("voip", "voip", "cbr"),
                      group = c("voice", "voice", "sensor"), tx_packets = c(100, 100, 10),
                      rx_packets = c(90, 100, 10), lost_packets = c(10, 0, 0),
                      delay_mean_s = c(0.03, 0.05, 0.01), delay_max_s = c(0.1, 0.1, 0.01))
  got <- summarise_voip_quality(flows, c("series", "seed"))
  # loss 10 / 200 = 0.05 (Ppl 5); mean delay (0.03 * 90 + 0.05 * 100) / 190 = 0.0405263 s;
  # d = 50.5263 ms, Id = 1.212632; Ie,eff = 95 * 5 / (5 + 25.1) = 15.780731;
  # R = 93.2 - 1.212632 - 15.780731 = 76.206637 (the cbr group is not rated)
  expect_equal(got$group, "voice")
  expect_equal(got$voip_r_factor, 76.206637, tolerance = 1e-7)
  expect_equal(got$voip_mos, mos_from_r(got$voip_r_factor))
})

test_that("the ASI of a group of calls compares each call's queueing delay with its share of the data", {
  base <- tibble::tibble(backend = "ns3", group = "voice", seg_bytes = 92L, latency_s = 0.012288)
  flows <- make_flows(series = "s", seed = 1L, flow_id = 0:1, app = "voip", group = "voice", seg_bytes = 92L,
                      rx_packets = c(30, 10), bytes_delivered = c(3000, 1000),
                      delay_mean_s = 0.012288 + c(0.010, 0.020), delay_max_s = 0.012288 + c(0.040, 0.030))
  # queueing delays 10 and 20 ms, Delay_max 40 ms; shares 3/4 and 1/4 expect 30 and 10 ms;
  # |10 - 30| + |20 - 10| = 30 ms; ASI = 1 - 30 / (2 * 40) = 0.625
  got <- summarise_udp_asi(flows, c("series", "seed"), base)
  expect_equal(got$asi, 0.625)
  # a group whose datagrams never queued: Delay_max 0, no ASI
  idle <- dplyr::mutate(flows, delay_mean_s = 0.012288, delay_max_s = 0.012288)
  expect_equal(summarise_udp_asi(idle, c("series", "seed"), base)$asi, NA_real_)
})

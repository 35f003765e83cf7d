# The load a run's Poisson streams offered the bottleneck (analysis/R/metric-offered-load.R).

offered_scenario <- function(kind = "dumbbell", sweep = list()) {
  list(topology = list(kind = kind, bottleneck_rate_bps = 2e6), sweep = sweep, workload = list(groups = list()))
}

test_that("offered load: the bits sent on the wire over the rate and the window, summed over a run's streams", {
  flows <- make_flows(series = "fifo", seed = c(1L, 1L, 2L), flow_id = c(0L, 1L, 0L), app = "poisson",
                      bytes_goal = c(1222 * 100, 97 * 10, 1222 * 90), tx_packets = c(100, 10, 90),
                      start_s = 0, end_s = c(1, 1, 1))
  load <- summarise_offered_load(flows, c("backend", "series", "seed"), offered_scenario())
  # seed 1: 100 x 1252 + 10 x 127 bytes on the wire (IP length + ns-3's 2-byte PPP header) in 1 s at 2 Mb/s
  expect_equal(load$offered_load[load$seed == 1], 8 * (100 * 1252 + 10 * 127) / 2e6)
  expect_equal(load$offered_load[load$seed == 2], 8 * 90 * 1252 / 2e6)
  # a window of its own per flow: 2 s halves the load; ns-2 adds no framing
  longer <- dplyr::mutate(flows[3, ], end_s = 2, backend = "ns2")
  expect_equal(summarise_offered_load(longer, c("backend", "seed"), offered_scenario())$offered_load,
               8 * 90 * 1250 / 2e6 / 2)
})

test_that("offered load: only poisson flows, on a dumbbell of one rate, on a backend of known framing", {
  flows <- make_flows(series = "s", seed = 1L, flow_id = 0:1, app = c("poisson", "cbr"), bytes_goal = 1222,
                      tx_packets = 1, start_s = 0, end_s = 1)
  expect_equal(summarise_offered_load(flows, c("series", "seed"), offered_scenario())$offered_load,
               8 * 1252 / 2e6)
  expect_equal(nrow(summarise_offered_load(flows, "seed", offered_scenario("parking_lot"))), 0)
  swept <- offered_scenario(sweep = list(c = list(path = "topology.bottleneck_rate_bps", values = list(1e6, 2e6))))
  expect_equal(nrow(summarise_offered_load(flows, "seed", swept)), 0)
  expect_equal(nrow(summarise_offered_load(dplyr::mutate(flows, backend = "testbed"), "seed", offered_scenario())), 0)
  # qlab-emu's bottleneck model frames as ns-3 does (2 bytes)
  emu <- summarise_offered_load(dplyr::mutate(flows, backend = "mininet"), "seed", offered_scenario())
  expect_equal(emu$offered_load, 8 * 1252 / 2e6)
  expect_error(summarise_offered_load(dplyr::mutate(flows, end_s = 0), "seed", offered_scenario()),
               "end_s after start_s")
})

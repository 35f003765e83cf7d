test_that("EP is 1 - (a (T - G) + b (Tmax - T)) / Tmax, by hand", {
  # T = 800, G = 600, Tmax = 1000: a = b = 1 gives 1 - (200 + 200) / 1000 = 0.6 = G / Tmax
  expect_equal(energy_potential(800, 600, 1000), 0.6)
  # a = 0.5, b = 0.25: 1 - (0.5 * 200 + 0.25 * 200) / 1000 = 0.85
  expect_equal(energy_potential(800, 600, 1000, a = 0.5, b = 0.25), 0.85)
  # everything delivered at the largest rate: 1; nothing sent: 1 - b
  expect_equal(energy_potential(1000, 1000, 1000), 1)
  expect_equal(energy_potential(0, 0, 1000, a = 1, b = 0.4), 0.6)
  expect_equal(energy_potential(c(800, 1000), c(600, 500), c(1000, 1000)), c(0.6, 0.5))
})

test_that("bad inputs are refused naming what is wrong", {
  expect_error(energy_potential(1, 1, 0), "throughput_max_bps must be numeric, > 0")
  expect_error(energy_potential(-1, 1, 1), "must be numeric and >= 0")
})

test_that("a group's EP is the mean over its UDP flows, each over its own sending time", {
  flows <- make_flows(
    series = "a", seed = 1L,
    group = c("sensors", "sensors", "congestive", "sensors"),
    app = c("cbr", "cbr", "bulk", "cbr"),
    seg_bytes = c(36, 36, 1000, 36),
    bytes_goal = c(3600, 3600, 1e8, 0),
    bytes_delivered = c(3600, 2880, 5e6, 0),
    tx_packets = c(100, 100, 6000, 0),
    start_s = c(2, 4, 0, 2),
    end_s = c(12, 8, NA, 12)
  )
  # flow 1: everything delivered: 1; flow 2: 2880 of 3600 bytes, all sent: 0.8;
  # the bulk flow and the flow that offered nothing are left out: mean 0.9
  ep <- summarise_energy_potential(flows, c("series", "seed"), "sensors")
  expect_equal(ep$energy_potential, 0.9)
  expect_equal(nrow(summarise_energy_potential(flows, c("series", "seed"), "congestive")), 0L)
  expect_error(summarise_energy_potential(flows, "series", NA_character_), "one traffic group name")
})

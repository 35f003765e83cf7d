test_that("goodput is 8 * bytes / time", {
  # 1 MB in 8 s: 8e6 bit / 8 s = 1e6 bit/s; 10 kB in 0.5 s: 80e3 / 0.5 = 160e3 bit/s
  expect_equal(goodput_bps(c(1e6, 1e4), c(8, 0.5)), c(1e6, 1.6e5))
})

test_that("goodput refuses negative bytes and non-positive durations", {
  expect_error(goodput_bps(-1, 1), "`bytes` must be non-negative")
  expect_error(goodput_bps(1, 0), "`duration_s` must be positive")
  expect_error(goodput_bps(1:2, 1), "same length")
})

test_that("system goodput is the per-flow mean (sum / n)", {
  # (1 + 2 + 6) Mb/s / 3 = 3 Mb/s
  expect_equal(system_goodput_bps(c(1e6, 2e6, 6e6)), 3e6)
  expect_error(system_goodput_bps(numeric()), "at least one flow")
})

test_that("the wrapper uses the run end for flows that did not complete", {
  flows <- make_flows(
    series = "a", seed = 1L,
    bytes_delivered = c(1e6, 5e5),
    start_s = c(0, 2),
    end_s = c(4, NA),
    sim_end_s = 12
  )
  # flow 1: 8e6 bit / 4 s = 2e6; flow 2: 4e6 bit / (12 - 2) s = 4e5; mean 1.2e6
  result <- summarise_system_goodput(flows, c("series", "seed"))
  expect_equal(result$system_goodput_bps, 1.2e6)
})

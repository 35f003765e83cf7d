test_that("window rates: bytes of each window x 8 / window, empty windows 0, a partial last window left out", {
  # windows of 0.5 s over 1.7 s: [0, .5) [.5, 1) [1, 1.5); 1.6 is in the partial window
  rates <- window_rate_bps(c(0.1, 0.2, 1.0, 1.49, 1.6), c(1000, 500, 1000, 250, 9999), 0.5, 1.7)
  expect_equal(rates$time_s, c(0, 0.5, 1))
  expect_equal(rates$rate_bps, c(8 * 1500 / 0.5, 0, 8 * 1250 / 0.5))
  expect_error(window_rate_bps(1, 1, 0, 2), "window_s")
  expect_error(window_rate_bps(1, 1, 5, 2), "at least one window")
})

test_that("class rates count departures only, per band, every band given gets every window", {
  packets <- tibble::tibble(series = "rb", seed = 1L, queue = "bottleneck:L",
                            time_s = c(0.1, 0.2, 0.3, 1.2, 1.3), event = c("enq", "deq", "drop", "deq", "deq"),
                            band = c(0L, 0L, 0L, 0L, 1L), len_bytes = 1000L)
  rates <- summarise_class_rates(packets, c("series", "seed"), bands = 0:2, window_s = 1, end_s = 2)
  expect_equal(nrow(rates), 6)
  expect_equal(rates$rate_bps[rates$band == 0], c(8000, 8000))
  expect_equal(rates$rate_bps[rates$band == 1], c(0, 8000))
  expect_equal(rates$rate_bps[rates$band == 2], c(0, 0))
  expect_error(summarise_class_rates(dplyr::select(packets, -"len_bytes"), "seed", 0, 1, 2), "len_bytes")
})

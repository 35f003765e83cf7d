test_that("a group's R is the mean of its calls' eq. (22) R, 10 ms of encoding added", {
  flows <- tibble::tibble(
    seed = c(1L, 1L, 1L, 1L), group = c("voip", "voip", "voip", "ftp"),
    tx_packets = c(100, 200, 50, 10), rx_packets = c(90, 200, 0, NA), lost_packets = c(10, 0, 50, NA),
    delay_mean_s = c(0.090, 0.190, NA, NA)
  )
  # call 1: d = 100 ms, Id = 2.4, e = 0.1: 30 ln(2.5) = 27.4887 -> 64.3113
  # call 2: d = 200 ms, Id = 4.8 + 0.11 * 22.7 = 7.297, e = 0 -> 86.903
  # call 3: nothing received -> 0
  result <- summarise_group_r_factor(flows, "seed", "voip")
  expect_equal(result$n_calls, 3L)
  expect_equal(result$r_factor, (64.3113 + 86.903 + 0) / 3, tolerance = 1e-5)
  two <- summarise_group_r_factor(flows[1:2, ], "seed", "voip")
  expect_equal(two$r_factor, (64.3113 + 86.903) / 2, tolerance = 1e-5)
  expect_error(summarise_group_r_factor(flows, "seed", "ftp"), "must be UDP calls")
})

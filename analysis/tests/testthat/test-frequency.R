test_that("frequency bins are right-closed intervals around the inner edges", {
  bins <- frequency_bins(c(0, 50, 100))
  expect_equal(bins$lo, c(-Inf, 0, 50, 100))
  expect_equal(bins$hi, c(0, 50, 100, Inf))
  expect_equal(bins$label, c("≤ 0%", "(0%, 50%]", "(50%, 100%]", "> 100%"))
  expect_error(frequency_bins(c(50, 0)), "increasing")
})

test_that("a frequency table counts each run once, with shares and exact intervals", {
  # 10 runs: 0 and -5 in the first bin, 50 (closed above) in the second, 100.1 in the last
  change <- c(-5, 0, 10, 20, 50, 60, 70, 99, 100, 100.1, NA)
  table <- frequency_table(change, c(0, 50, 100))
  expect_equal(table$runs, c(2L, 3L, 4L, 1L))
  expect_equal(table$n, rep(10L, 4))
  expect_equal(table$share_pct, c(20, 30, 40, 10))
  # Clopper-Pearson for 1 of 10 by hand: qbeta(0.025, 1, 10) and qbeta(0.975, 2, 9)
  expect_equal(table$ci_lo[[4]], 100 * 0.0025285, tolerance = 1e-4)
  expect_equal(table$ci_hi[[4]], 100 * 0.4450161, tolerance = 1e-4)
})

test_that("Clopper-Pearson reaches 0 and 100 exactly at the ends", {
  ci <- clopper_pearson_pct(c(0, 5), c(5, 5))
  expect_equal(ci$lo[[1]], 0)
  expect_equal(ci$hi[[2]], 100)
  # 0 of 5: the upper bound 1 - 0.025^(1/5)
  expect_equal(ci$hi[[1]], 100 * (1 - 0.025^(1 / 5)), tolerance = 1e-9)
  expect_error(clopper_pearson_pct(6, 5), "between 0 and n")
})

test_that("per-run changes pair the runs by seed", {
  df <- tibble::tibble(series = rep(c("dt", "ncq"), each = 3), seed = c(1, 2, 3, 3, 2, 1),
                       value = c(10, 20, 40, 20, 30, 5))
  changes <- paired_change_pct(df, "ncq", "dt", character()) |> dplyr::arrange(.data$seed)
  expect_equal(changes$change_pct, c(-50, 50, -50))
})

test_that("a time series' caption names the seeds' quantile band, not a t-interval", {
  series <- tibble::tibble(n = c(5L, 5L), method = method_seed_quantiles, ci_lo = c(1, 2), ci_hi = c(3, 4),
                           n_censored = NA_integer_)
  text <- figure_caption(series, "Fig. 4", "rates", from_paper = TRUE)
  expect_match(text, "ribbons span the seeds' 2.5% to 97.5% quantiles", fixed = TRUE)
  expect_false(grepl("t-interval", text, fixed = TRUE))
  means <- dplyr::mutate(series, method = method_seeds)
  expect_match(figure_caption(means, "Fig. 9", "useful", from_paper = TRUE), "95% t-intervals", fixed = TRUE)
})

test_that("the t-interval matches a hand computation", {
  x <- c(2, 4, 6, 8)
  # mean 5, sd = sqrt(20 / 3), half-width = qt(0.975, 3) * sd / 2
  # where qt(0.975, 3) is 3.182446
  half <- 3.182446 * sqrt(20 / 3) / 2
  result <- t_interval(x)
  expect_equal(result$n, 4L)
  expect_equal(result$mean, 5)
  expect_equal(result$sd, sqrt(20 / 3))
  expect_equal(result$ci_lo, 5 - half, tolerance = 1e-6)
  expect_equal(result$ci_hi, 5 + half, tolerance = 1e-6)
})

test_that("one seed gives a mean without an interval", {
  result <- t_interval(3)
  expect_equal(result$mean, 3)
  expect_true(is.na(result$ci_lo))
})

test_that("summarise_over_seeds groups by the given columns and names its method", {
  df <- tibble::tibble(series = rep(c("a", "b"), each = 3), flows = 10, seed = rep(1:3, 2),
                       value = c(1, 2, 3, 10, 10, 10))
  result <- summarise_over_seeds(df, c("series", "flows"))
  expect_equal(result$mean, c(2, 10))
  expect_equal(result$sd, c(1, 0))
  expect_match(result$method[[1]], "95% t-interval")
})

paired_data <- tibble::tibble(
  series = rep(c("base", "treat"), each = 4),
  flows = 10,
  metric = "m",
  seed = c(1L, 2L, 3L, 4L, 4L, 3L, 2L, 1L),
  value = c(10, 20, 30, 40, 44, 33, 22, 11)
)

test_that("pairing matches runs by seed, not by row order", {
  pairs <- pair_by_seed(paired_data, "treat", "base", c("flows", "metric")) |> arrange(seed)
  expect_equal(pairs$difference, c(1, 2, 3, 4))
  expect_equal(pairs$ratio, rep(1.1, 4))
})

test_that("paired differences and ratios get t-intervals on the per-seed values", {
  result <- compare_paired(paired_data, "treat", "base", c("flows", "metric"))
  difference <- filter(result, contrast == "difference")
  ratio <- filter(result, contrast == "ratio")
  # differences 1..4: mean 2.5, sd sqrt(5/3)
  expect_equal(difference$mean, 2.5)
  expect_equal(difference$ci_hi, 2.5 + qt(0.975, 3) * sqrt(5 / 3) / 2)
  expect_equal(ratio$mean, 1.1)
  expect_equal(ratio$sd, 0)
  expect_match(ratio$method, "per-seed ratios")
})

test_that("unpaired seeds are left out and a missing series is an error", {
  unpaired <- bind_rows(paired_data, tibble::tibble(series = "base", flows = 10, metric = "m", seed = 9L, value = 1))
  expect_equal(nrow(pair_by_seed(unpaired, "treat", "base", c("flows", "metric"))), 4)
  expect_error(pair_by_seed(paired_data, "nope", "base", "flows"), "series `nope` must be present")
})

test_that("backend ratios pair the same job's runs across backends, per series", {
  metrics <- function(backend, factor) {
    tibble::tibble(scenario = "p/s", backend = backend, series = rep(c("a", "b"), each = 3),
                   point = "x", seed = rep(1:3, 2), flows = 10, metric = "system_goodput_bps",
                   value = c(1, 2, 4, 10, 20, 40) * factor, n_censored = 0L)
  }
  loaded <- list(mininet = list(`p/s` = list(metrics = metrics("mininet", 1.5), sweep_vars = "flows")),
                 ns3 = list(`p/s` = list(metrics = metrics("ns3", 1), sweep_vars = "flows")))
  item <- list(id = "f", scenario = "p/s", numerator = "mininet", denominator = "ns3",
               metrics = list(list(metric = "system_goodput_bps")), x = "flows")
  table <- summarise_backend_ratio_vs_x(item, loaded)
  expect_equal(table$series, c("a", "b"))
  expect_equal(table$mean, c(1.5, 1.5))
  expect_equal(table$n, c(3L, 3L))
  expect_equal(unique(table$backend), "mininet/ns3")
  # a backend without the scenario gives an empty table, not an error
  expect_equal(nrow(summarise_backend_ratio_vs_x(item, loaded["ns3"])), 0)
})

test_that("control variate: the intercept at the control's expectation, with n - 2 degrees of freedom", {
  # y = 1 + 2 (x - 0.5) exactly, but for a residual: the fitted line's intercept at x = 0.5
  x <- c(0.4, 0.5, 0.6, 0.45, 0.55)
  y <- 1 + 2 * (x - 0.5) + c(0.01, -0.01, 0, 0.005, -0.005)
  cv <- control_variate_mean(y, x, 0.5)
  fit <- stats::lm(y ~ I(x - 0.5))
  expect_equal(cv$estimate, unname(stats::coef(fit)[[1]]))
  expect_equal(cv$slope, unname(stats::coef(fit)[[2]]))
  expect_equal(cv$se, summary(fit)$coefficients[1, 2])
  expect_equal(cv$df, 3)
  # the control's departures explain most of y's spread: a far narrower interval than the plain mean's
  expect_lt(cv$se, stats::sd(y) / sqrt(5) / 10)
  # by hand: mean(y) - slope (mean(x) - 0.5)
  expect_equal(cv$estimate, mean(y) - cv$slope * (mean(x) - 0.5))
  expect_true(is.na(control_variate_mean(1:2, c(0.1, 0.2), 0)$estimate))
  expect_error(control_variate_mean(1:3, 1:2, 0), "one length")
  expect_error(control_variate_mean(1:3, 1:3, NA_real_), "known expectation")
})

test_that("t p-value: a t statistic's one-sided tail, and a zero standard error by side", {
  expect_equal(t_p_value(1.1, 0.05, 4, 1, "greater"), stats::pt(2, 4, lower.tail = FALSE))
  expect_equal(t_p_value(1.1, 0.05, 4, 1, "less"), stats::pt(2, 4))
  expect_equal(t_p_value(1.1, 0, 4, 1, "greater"), 0)
  expect_equal(t_p_value(1.1, 0, 4, 1, "less"), 1)
})

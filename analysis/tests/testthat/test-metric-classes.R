test_that("class goodput sums the flows of a class and shares sum to one", {
  flows <- make_flows(
    series = "w", seed = 1L, cls = c(0L, 0L, 1L),
    bytes_delivered = c(1e6, 1e6, 1e6), start_s = 0, end_s = NA, sim_end_s = 8
  )
  # each flow: 8e6 bit / 8 s = 1 Mb/s; class 0: 2 Mb/s (2/3), class 1: 1 Mb/s (1/3)
  shares <- summarise_class_goodput(flows, c("series", "seed"))
  expect_equal(shares$class_goodput_bps, c(2e6, 1e6))
  expect_equal(shares$share, c(2 / 3, 1 / 3))
})

test_that("weight lists are read like the core reads them", {
  expect_equal(parse_weight_list("3000:2000:1000", 3), c(3000, 2000, 1000))
  expect_equal(parse_weight_list("500", 3), c(500, 500, 500))
  expect_error(parse_weight_list("3:2", 3), "expected 1 or 3 values")
  expect_error(parse_weight_list("3:x", 2), "positive numbers")
})

test_that("shares are compared with W_k / sum W, per series", {
  shares <- tibble::tibble(series = c("a", "a", "b", "b"), seed = 1L, cls = c(0L, 1L, 0L, 1L),
                           share = c(0.6, 0.4, 0.5, 0.5))
  weights <- function(series) if (series == "a") c(3, 1) else NULL
  ratios <- relate_shares_to_weights(shares, weights)
  expect_equal(ratios$series, c("a", "a")) # b has no weights
  expect_equal(ratios$w_share, c(0.75, 0.25))
  expect_equal(ratios$share_ratio, c(0.8, 1.6))
})

test_that("run metrics include per-class shares and their deviation from W", {
  results <- list(
    flows = make_flows(series = "w", seed = 1L, cls = c(0L, 1L), app = "bulk",
                       bytes_delivered = c(3e6, 1e6), start_s = 0, end_s = NA, sim_end_s = 8),
    runs = tibble::tibble(scenario = "test/s", backend = "ns3", series = "w", point = "p", seed = 1L, valid = TRUE),
    sweep_vars = character(),
    scenario = list(series = list(w = list(params = list(classes = 2, weights_bytes = "1:1"))))
  )
  metrics <- compute_run_metrics(results)
  value <- function(name, cls = NA) metrics$value[metrics$metric == name & (metrics$cls %in% cls)]
  expect_equal(value("goodput_share", 0L), 0.75)
  expect_equal(value("class_goodput_bps", 1L), 1e6) # 8e6 bit / 8 s
  expect_equal(value("share_ratio", 1L), 0.5)
  expect_equal(value("share_ratio_max_dev"), 0.5)
})

test_that("the share deviation is the largest |share_ratio - 1| of a run", {
  ratios <- tibble::tibble(series = "a", seed = c(1L, 1L, 1L, 2L, 2L), cls = c(0L, 1L, 2L, 0L, 1L),
                           share_ratio = c(0.9, 1.3, 0.95, 1, 1))
  deviation <- summarise_share_deviation(ratios, c("series", "seed"))
  expect_equal(deviation$share_ratio_max_dev, c(0.3, 0))
  expect_error(summarise_share_deviation(dplyr::mutate(ratios, share_ratio = NA_real_), c("series", "seed")),
               "must be known")
})

test_that("per-flow goodput of a class over class 0's", {
  # class 0: two flows of 1 and 3 Mb/s (mean 2); class 1: one flow of 4 Mb/s
  flows <- tibble::tibble(run = 1L, cls = c(0L, 0L, 1L), bytes_delivered = c(1e6, 3e6, 4e6) / 8,
                          start_s = 0, end_s = 1, sim_end_s = 10)
  out <- summarise_per_flow_ratio(flows, "run")
  expect_equal(out$cls, 1L)
  expect_equal(out$per_flow_goodput_ratio, 2)
})

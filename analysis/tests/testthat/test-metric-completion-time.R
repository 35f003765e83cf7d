test_that("completion time is end - start, censored at the run end", {
  expect_equal(completion_time_s(c(0, 1, 2), c(3, 6, NA), 10), c(3, 5, 8))
})

test_that("average and worst completion times are mean and maximum", {
  times <- c(3, 5, 8)
  expect_equal(average_completion_time_s(times), 16 / 3)
  expect_equal(worst_completion_time_s(times), 8)
  expect_error(worst_completion_time_s(numeric()), "at least one task")
  expect_error(average_completion_time_s(c(1, NA)), "not NA")
})

test_that("an end before the start is refused", {
  expect_error(completion_time_s(5, 4, 10), "must not precede its start")
})

test_that("the wrapper summarises a group and counts censored tasks", {
  flows <- make_flows(
    series = "a", seed = 1L,
    group = c("congestive", "congestive", "noncongestive", "noncongestive"),
    start_s = c(0, 1, 0.5, 2),
    end_s = c(4, NA, 1.5, 4),
    sim_end_s = 20
  )
  all <- summarise_completion_time(flows, c("series", "seed"))
  # times 4, 19, 1, 2: mean 26 / 4 = 6.5, worst 19 (censored)
  expect_equal(all$avg_fct_s, 6.5)
  expect_equal(all$worst_fct_s, 19)
  expect_equal(all$n_censored, 1L)
  small <- summarise_completion_time(flows, c("series", "seed"), group = "noncongestive")
  expect_equal(small$avg_fct_s, 1.5)
  expect_equal(small$worst_fct_s, 2)
  expect_equal(small$n_censored, 0L)
})

test_that("completion time by size: each task in its bucket, a bucket without tasks has no row", {
  flows <- make_flows(
    series = "a", seed = 1L,
    group = c("web", "web", "web", "bulk"),
    bytes_goal = c(9999, 10000, 99999, 1e9),
    start_s = c(0, 1, 2, 0),
    end_s = c(1, 3, NA, NA),
    sim_end_s = 10
  )
  web <- summarise_fct_by_size(flows, c("series", "seed"), group = "web")
  expect_equal(web$metric, c("avg_fct_lt10k_s", "avg_fct_10k_100k_s"))
  # 9,999 bytes: 1 s; 10,000 and 99,999 bytes: 2 s and 8 s (censored at the run's end)
  expect_equal(web$avg_fct_s, c(1, 5))
  expect_equal(web$n_censored, c(0L, 1L))
  all <- summarise_fct_by_size(flows, c("series", "seed"))
  expect_equal(all$metric, c("avg_fct_lt10k_s", "avg_fct_10k_100k_s", "avg_fct_ge100k_s"))
  expect_equal(all$avg_fct_s[[3]], 10)
  expect_equal(fct_size_buckets$metric, c("avg_fct_lt10k_s", "avg_fct_10k_100k_s", "avg_fct_ge100k_s"))
  expect_true(all(fct_size_buckets$metric %in% metric_registry$name))
})

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

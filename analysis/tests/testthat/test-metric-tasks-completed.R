test_that("tasks completed counts ends at or before each grid time", {
  ends <- c(2, NA, 0.5, 2, 7)
  # t = 0: none; 1: {0.5}; 2: {0.5, 2, 2}; 5: same; 10: all four that ended
  expect_equal(tasks_completed(ends, c(0, 1, 2, 5, 10)), c(0L, 1L, 3L, 3L, 4L))
})

test_that("no completed task gives zero everywhere", {
  expect_equal(tasks_completed(c(NA_real_, NA_real_), c(0, 1)), c(0L, 0L))
})

test_that("the time grid must be sorted", {
  expect_error(tasks_completed(1, c(2, 1)), "sorted in increasing order")
})

test_that("the time grid runs from 0 to the latest run end", {
  expect_equal(time_grid_s(c(5, 10), n_points = 3), c(0, 5, 10))
  expect_error(time_grid_s(c(0)), "must be positive")
})

test_that("the wrapper gives one row per run and grid time", {
  flows <- make_flows(series = "a", seed = c(1L, 1L, 2L), end_s = c(1, 3, 2))
  counts <- count_tasks_completed(flows, c("series", "seed"), c(0, 2, 4))
  expect_equal(counts$tasks_completed[counts$seed == 1], c(0L, 1L, 2L))
  expect_equal(counts$tasks_completed[counts$seed == 2], c(0L, 1L, 1L))
})

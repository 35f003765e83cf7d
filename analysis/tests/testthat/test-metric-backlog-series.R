test_that("arrivals find the backlog before them; head drops leave, arrival drops do not enter", {
  event <- c("enq", "enq", "drop", "deq", "enq", "drop", "mark", "enq")
  sojourn <- c(NA, NA, NA, 0.1, NA, 0.3, NA, NA)
  # backlog after each: 1 2 2 1 2 1 1 2; arrivals are events 1, 2, 3 (arrival drop), 5, 8
  expect_equal(backlog_at_arrivals(event, sojourn), c(0, 1, 2, NA, 1, NA, NA, 1))
  expect_error(backlog_at_arrivals(c("deq"), 0.1), "more departures than arrivals")
})

test_that("trailing mean over the last n values", {
  expect_equal(trailing_mean(c(2, 4, 6, 8), 2), c(2, 3, 5, 7))
  expect_equal(trailing_mean(c(2, 4, 6, 8), 300), c(2, 3, 4, 5))
  expect_error(trailing_mean(1, 0), "whole number")
})

test_that("the backlog series sums the bands per sample and carries the last arrival's average", {
  queues <- tibble::tibble(seed = 1L, queue = "x:L", time_s = c(0, 0, 1, 1, 2, 2), band = rep(c(0L, 1L), 3),
                           backlog_pkts = c(0, 0, 2, 1, 0, 0))
  packets <- tibble::tibble(seed = 1L, queue = "x:L", seq = 0:5, time_s = c(0.2, 0.4, 0.6, 0.8, 1.5, 1.6),
                            event = c("enq", "enq", "enq", "deq", "deq", "enq"),
                            sojourn_s = c(NA, NA, NA, 0.6, 1.1, NA))
  # arrivals find 0, 1, 2 (by t = 1) and 1 at 1.6; n = 2: averages 0, 0.5, 1.5, 1.5
  series <- summarise_backlog_series(queues, packets, "seed", n_pkts = 2)
  expect_equal(series$backlog_pkts, c(0, 3, 0))
  expect_equal(series$backlog_avg_pkts, c(NA, 1.5, 1.5))
})

test_that("total backlog: the mean over samples after the warm-up of the sum over bands", {
  queues <- tibble::tibble(seed = 1L, queue = "x:L", time_s = c(0, 0, 1, 1, 2, 2), band = rep(c(0L, 1L), 3),
                           backlog_pkts = c(50, 50, 2, 1, 4, 1))
  expect_equal(summarise_total_backlog(queues, "seed", warmup_s = 1)$total_backlog_pkts, 4) # the mean of 3 and 5
  expect_error(summarise_total_backlog(queues, "seed", warmup_s = 3), "no queue sample")
})

test_that("band backlog is the mean of the samples after the warm-up", {
  queues <- tibble::tibble(series = "s", seed = 1L, time_s = c(0, 0, 1, 1, 2, 2), band = c(0L, 1L, 0L, 1L, 0L, 1L),
                           backlog_pkts = c(50, 50, 2, 10, 4, 20))
  backlog <- summarise_band_backlog(queues, c("series", "seed"), warmup_s = 1)
  expect_equal(backlog$mean_backlog_pkts, c(3, 15))
  expect_equal(backlog$samples, c(2L, 2L))
  expect_error(summarise_band_backlog(queues, c("series", "seed"), warmup_s = 5), "no queue sample")
})

test_that("band sojourn: 99th percentile (type 1) and maximum of the dequeues after the warm-up", {
  packets <- tibble::tibble(series = "s", seed = 1L, time_s = c(0.5, seq(1, 100)), event = "deq", band = 0L,
                            sojourn_s = c(9, seq(0.001, 0.1, by = 0.001)))
  packets <- dplyr::bind_rows(packets, tibble::tibble(series = "s", seed = 1L, time_s = 50, event = "drop",
                                                      band = 0L, sojourn_s = 5))
  sojourn <- summarise_band_sojourn(packets, c("series", "seed"), warmup_s = 1)
  # 100 dequeues 1..100 ms: the smallest value with >= 99% at or below it is 99 ms
  expect_equal(sojourn$sojourn_p99_s, 0.099)
  expect_equal(sojourn$sojourn_max_s, 0.1) # the 9 s before the warm-up and the drop do not count
  expect_equal(sojourn$sent, 100L)
})

test_that("band backlog is the mean of the samples after the warm-up, per queue and band", {
  queues <- tibble::tibble(series = "s", seed = 1L, time_s = c(0, 0, 1, 1, 2, 2), queue = "bottleneck:L",
                           band = c(0L, 1L, 0L, 1L, 0L, 1L), backlog_pkts = c(50, 50, 2, 10, 4, 20))
  backlog <- summarise_band_backlog(queues, c("series", "seed"), warmup_s = 1)
  expect_equal(backlog$mean_backlog_pkts, c(3, 15))
  expect_equal(backlog$samples, c(2L, 2L))
  expect_error(summarise_band_backlog(queues, c("series", "seed"), warmup_s = 5), "no queue sample")
})

test_that("the backlogs of two traced queues are kept apart", {
  # a parking lot's first two hops, sampled at the same times: band 0 of
  # hop1 holds 2 and 4 packets, band 0 of hop2 holds 10 and 30
  queues <- tibble::tibble(series = "s", seed = 1L, time_s = c(1, 1, 2, 2),
                           queue = c("hop1:r0", "hop2:r1", "hop1:r0", "hop2:r1"), band = 0L,
                           backlog_pkts = c(2, 10, 4, 30))
  backlog <- summarise_band_backlog(queues, c("series", "seed"))
  expect_equal(backlog$queue, c("hop1:r0", "hop2:r1"))
  expect_equal(backlog$mean_backlog_pkts, c(3, 20))
  expect_error(summarise_band_backlog(dplyr::select(queues, -"queue"), c("series", "seed")), "`queue`")
})

test_that("band sojourn: 99th percentile (type 1) and maximum of the dequeues after the warm-up", {
  packets <- tibble::tibble(series = "s", seed = 1L, time_s = c(0.5, seq(1, 100)), queue = "bottleneck:L",
                            event = "deq", band = 0L, sojourn_s = c(9, seq(0.001, 0.1, by = 0.001)))
  packets <- dplyr::bind_rows(packets, tibble::tibble(series = "s", seed = 1L, time_s = 50, queue = "bottleneck:L",
                                                      event = "drop", band = 0L, sojourn_s = 5))
  sojourn <- summarise_band_sojourn(packets, c("series", "seed"), warmup_s = 1)
  # 100 dequeues 1..100 ms: the smallest value with >= 99% at or below it is 99 ms
  expect_equal(sojourn$sojourn_p99_s, 0.099)
  expect_equal(sojourn$sojourn_max_s, 0.1) # the 9 s before the warm-up and the drop do not count
  expect_equal(sojourn$sent, 100L)
})

test_that("band sojourn is per queue: a slow second hop does not raise the first's", {
  packets <- tibble::tibble(series = "s", seed = 1L, time_s = c(1, 2, 3, 4), event = "deq", band = 0L,
                            queue = c("hop1:r0", "hop2:r1", "hop1:r0", "hop2:r1"),
                            sojourn_s = c(0.001, 0.2, 0.003, 0.4))
  sojourn <- summarise_band_sojourn(packets, c("series", "seed"))
  expect_equal(sojourn$queue, c("hop1:r0", "hop2:r1"))
  expect_equal(sojourn$sojourn_max_s, c(0.003, 0.4))
})

test_that("run metrics carry the queue and band of each queue metric", {
  results <- list(
    flows = make_flows(series = "s", seed = 1L, app = "bulk", cls = 0L, bytes_delivered = 1e6, start_s = 0,
                       end_s = 1, sim_end_s = 2),
    runs = tibble::tibble(scenario = "test/s", backend = "ns3", series = "s", point = "p", seed = 1L, valid = TRUE),
    sweep_vars = character(),
    queues = tibble::tibble(scenario = "test/s", backend = "ns3", series = "s", point = "p", seed = 1L,
                            time_s = c(1, 1), queue = c("hop1:r0", "hop2:r1"), band = 0L, backlog_pkts = c(4, 8))
  )
  metrics <- compute_run_metrics(results)
  backlog <- dplyr::filter(metrics, .data$metric == "mean_backlog_pkts")
  expect_equal(backlog$queue, c("hop1:r0", "hop2:r1"))
  expect_equal(backlog$band, c(0L, 0L))
  expect_equal(backlog$value, c(4, 8))
  # the other metrics are about the whole run: no queue
  expect_true(all(is.na(metrics$queue[metrics$metric == "system_goodput_bps"])))
})

test_that("drops per band and reason, zero for the reasons that did not occur, and the drop ratio", {
  packets <- tibble::tibble(
    run = 1L, queue = "q", time_s = c(1, 1, 2, 3, 4, 5, 6),
    event = c("enq", "enq", "drop", "drop", "enq", "drop", "deq"),
    band = c(0L, 0L, 0L, 0L, 1L, 1L, 0L),
    sojourn_s = c(NA, NA, NA, 0.2, NA, NA, 0.1),
    reason = c(NA, NA, "overflow", "delay", NA, "precedence_cross", NA)
  )
  out <- summarise_band_drops(packets, "run")
  band0 <- out$drops[out$drops$band == 0, ]
  expect_equal(nrow(band0), length(drop_reasons))
  expect_equal(band0$dropped_pkts[band0$reason == "overflow"], 1L)
  expect_equal(band0$dropped_pkts[band0$reason == "delay"], 1L)
  expect_equal(band0$dropped_pkts[band0$reason == "aqm"], 0L)
  # band 0: 2 admitted + 1 dropped on arrival arrived; 2 dropped (one at the head)
  expect_equal(out$ratios$drop_ratio[out$ratios$band == 0], 2 / 3)
  # band 1: 1 admitted + 1 dropped on arrival; 1 dropped
  expect_equal(out$ratios$drop_ratio[out$ratios$band == 1], 1 / 2)
  # the warm-up leaves out earlier events
  expect_equal(summarise_band_drops(packets, "run", warmup_s = 4)$ratios$drop_ratio[1], NA_real_)
  bad <- packets
  bad$reason[3] <- "tired"
  expect_error(summarise_band_drops(bad, "run"), "drop reasons must be among")
})

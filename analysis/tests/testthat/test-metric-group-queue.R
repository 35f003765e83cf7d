test_that("scheduler delay is the sojourn plus the packet's transmission", {
  # a 500-byte packet at 1.5 Mb/s takes 8 * 500 / 1.5e6 = 2.6667 ms (the paper's 1/mu)
  expect_equal(scheduler_delay_s(c(0, 0.1), c(500, 68), 1.5e6), c(4000 / 1.5e6, 0.1 + 544 / 1.5e6))
  expect_error(scheduler_delay_s(-1, 500, 1.5e6), "non-negative")
  expect_error(scheduler_delay_s(0, 500, c(1, 2)), "one positive rate")
})

test_that("loss and delay per traffic group at the traced queue, after the warm-up", {
  flows <- make_flows(series = "s", seed = 1L, flow_id = 0:1, group = c("tcp-high", "tcp-low"))
  run <- function(...) {
    tibble::tibble(scenario = "test/s", backend = "ns3", point = "p", series = "s", seed = 1L,
                   queue = "bottleneck:L", ...)
  }
  packets <- run(
    flow_id = c(0L, 0L, 1L, 1L, 1L, 1L, 1L, NA, 1L),
    time_s = c(1, 1.01, 1, 1.02, 1.5, 1.6, 2, 2, 0.5),
    event = c("enq", "deq", "enq", "deq", "drop", "drop", "enq", "drop", "drop"),
    sojourn_s = c(NA, 0.01, NA, 0.02, NA, NA, NA, NA, NA),
    len_bytes = c(500, 500, 500, 500, 500, 500, 500, 40, 500)
  )
  by <- c("scenario", "backend", "point", "series", "seed")
  out <- summarise_group_queue(packets, flows, by, 1.5e6, warmup_s = 1)
  expect_equal(out$group, c("tcp-high", "tcp-low"))
  # tcp-high: 1 offered, none dropped; delay 10 ms + 2.6667 ms
  # tcp-low: 2 admitted + 2 dropped on arrival = 4 offered (the drop at 0.5 s is before
  # the warm-up; a packet of no flow is left out), loss 2/4; delay 20 ms + 2.6667 ms
  expect_equal(out$offered, c(1L, 4L))
  expect_equal(out$queue_loss_ratio, c(0, 0.5))
  expect_equal(out$queue_delay_mean_s, c(0.01, 0.02) + 4000 / 1.5e6)
  # the wait alone: the mean sojourn of what left the queue, no transmission
  expect_equal(out$queue_wait_mean_s, c(0.01, 0.02))
  # a second traced queue is kept apart
  two <- summarise_group_queue(dplyr::bind_rows(packets, dplyr::mutate(packets, queue = "other:R")), flows, by,
                               1.5e6, warmup_s = 1)
  expect_equal(two$queue, c("bottleneck:L", "bottleneck:L", "other:R", "other:R"))
  expect_equal(two$queue_loss_ratio, c(0, 0.5, 0, 0.5))
  # the rate per run, where a sweep sets it (a table of the runs)
  rates <- dplyr::distinct(packets, dplyr::across(dplyr::all_of(by))) |> dplyr::mutate(capacity_bps = 3e6)
  per_run <- summarise_group_queue(packets, flows, by, rates, warmup_s = 1)
  expect_equal(per_run$queue_delay_mean_s, c(0.01, 0.02) + 4000 / 3e6)
})

test_that("the delay percentiles of a group are observed packets' delays, after the warm-up", {
  flows <- make_flows(series = "s", seed = 1L, flow_id = 0:1, group = c("sensors", "lost"))
  # sensors: 100 packets that left with sojourns of 1, 2, ..., 100 ms (in shuffled order), 125 bytes at
  # 1 Mb/s (1 ms of transmission), and one of 500 ms before the warm-up; lost: dropped on arrival only
  sojourn_ms <- c(500, (seq_len(100) * 37) %% 101) # 37 k mod 101: 1..100 out of order
  packets <- tibble::tibble(scenario = "test/s", backend = "ns3", point = "p", series = "s", seed = 1L,
                            queue = "bottleneck:L", flow_id = c(rep(0L, 101), 1L),
                            time_s = c(0.5, rep(2, 100), 2), event = c(rep("deq", 101), "drop"),
                            sojourn_s = c(sojourn_ms / 1000, NA), len_bytes = 125)
  by <- c("scenario", "backend", "point", "series", "seed")
  out <- summarise_group_queue(packets, flows, by, 1e6, warmup_s = 1)
  sensors <- out[out$group == "sensors", ]
  # type 1: the 50th, 95th and 99th of the 100 sorted delays, each (k + 1) ms
  expect_equal(c(sensors$queue_delay_p50_s, sensors$queue_delay_p95_s, sensors$queue_delay_p99_s),
               c(0.051, 0.096, 0.100))
  expect_equal(sensors$queue_delay_mean_s, 0.0515)
  lost <- out[out$group == "lost", ]
  expect_true(is.na(lost$queue_delay_p50_s) && is.na(lost$queue_delay_p99_s))
  expect_equal(lost$queue_loss_ratio, 1)
})

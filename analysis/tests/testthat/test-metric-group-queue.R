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

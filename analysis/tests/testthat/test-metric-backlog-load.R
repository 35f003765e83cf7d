test_that("least-squares slope", {
  expect_equal(least_squares_slope(c(1, 2, 3), c(2, 4, 6)), 2)
  # points (0, 1), (0, 3), (2, 2): means x 2/3, y 2; sum dx dy = 0 + 0 + (4/3)(0) = 0
  expect_equal(least_squares_slope(c(0, 0, 2), c(1, 3, 2)), 0)
  expect_error(least_squares_slope(c(1, 1), c(1, 2)), "two values")
  expect_error(least_squares_slope(1:2, 1:3), "one length")
})

test_that("source phases count the sources active in each interval, none left out", {
  groups <- tibble::tibble(start_s = c(0, 10), stop_s = c(20, 30), count = c(8, 16))
  phases <- source_phases(groups)
  expect_equal(phases$from_s, c(0, 10, 20))
  expect_equal(phases$sources, c(8, 24, 16))
  gap <- source_phases(tibble::tibble(start_s = c(0, 10), stop_s = c(5, 20), count = c(1, 2)))
  expect_equal(gap$sources, c(1, 2)) # [5, 10) has no source
})

test_that("a scenario's source groups, NULL when the load never changes", {
  switched <- list(duration_s = 40, workload = list(groups = list(
    a = list(count = 8L, stop_s = 20), b = list(count = 16L, start_offset_s = 10))))
  expect_equal(scenario_source_groups(switched)$stop_s, c(20, 40))
  steady <- list(duration_s = 40, workload = list(groups = list(a = list(count = 8L), b = list(count = 2L))))
  expect_null(scenario_source_groups(steady))
  drawn <- list(duration_s = 40, workload = list(groups = list(a = list(count = list(min = 1, max = 3)))))
  expect_null(scenario_source_groups(drawn))
})

test_that("the backlog slope is over the second half of each phase, per run", {
  phases <- tibble::tibble(from_s = c(0, 10), to_s = c(10, 20), sources = c(8, 16))
  # two bands; second halves [5, 10) and [15, 20): totals 2 and 6 -> slope (6 - 2) / (16 - 8) = 0.5;
  # the first half of each phase (time 1, 11) is ignored
  queues <- tibble::tibble(seed = 1L, queue = "L:R", time_s = rep(c(1, 5, 9, 11, 15, 19), each = 2),
                           band = rep(0:1, 6), backlog_pkts = c(50, 50, 1, 1, 1, 1, 0, 0, 3, 3, 3, 3))
  slope <- summarise_backlog_load_slope(queues, "seed", phases)
  expect_equal(slope$backlog_slope_pkts_per_source, 0.5)
})

test_that("a run whose samples see one load only has no slope", {
  phases <- tibble::tibble(from_s = c(0, 10), to_s = c(10, 20), sources = c(8, 16))
  queues <- tibble::tibble(seed = 1L, queue = "L:R", time_s = c(6, 7), band = 0L, backlog_pkts = c(1, 2))
  expect_true(is.na(summarise_backlog_load_slope(queues, "seed", phases)$backlog_slope_pkts_per_source))
})

test_that("the drop ratio slope is per band, over the second half of each phase", {
  phases <- tibble::tibble(from_s = c(0, 10), to_s = c(10, 20), sources = c(2, 6))
  # band 0, second halves: [5, 10) two arrivals, none dropped (ratio 0); [15, 20) four arrivals (three enq
  # and a drop on arrival) and a head drop (with a sojourn: no arrival): 2 / 4 -> slope 0.5 / 4 = 0.125;
  # band 1 arrives in the first phase only: no slope. The events at 1 s (a first half) are ignored.
  packets <- tibble::tibble(seed = 1L, queue = "L:R",
                            time_s = c(1, 6, 7, 16, 16, 17, 18, 19, 6),
                            event = c("drop", "enq", "enq", "enq", "enq", "enq", "drop", "drop", "enq"),
                            band = c(0L, 0L, 0L, 0L, 0L, 0L, 0L, 0L, 1L),
                            sojourn_s = c(NA, NA, NA, NA, NA, NA, NA, 0.3, NA))
  slope <- summarise_drop_load_slope(packets, "seed", phases)
  expect_equal(slope$band, 0:1)
  expect_equal(slope$drop_ratio_slope_per_source, c(0.125, NA))
})

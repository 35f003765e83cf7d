test_that("processor sharing: one task alone takes size / rate", {
  expect_equal(processor_sharing_times_s(0, 8e6, 1e7), 0.8)
})

test_that("processor sharing: two equal tasks started together finish together at twice the time", {
  expect_equal(processor_sharing_times_s(c(0, 0), c(8e6, 8e6), 1e7), c(1.6, 1.6))
})

test_that("processor sharing: a task arriving later shares from its start", {
  # A (10 Mb) from 0, B (2 Mb) from 0.5 s at 10 Mb/s. A alone until 0.5 s (5 Mb
  # left); both at 5 Mb/s: B done after 0.4 s (at 0.9 s), A has 3 Mb left,
  # alone again: done at 0.9 + 0.3 = 1.2 s.
  times <- processor_sharing_times_s(c(0, 0.5), c(1e7, 2e6), 1e7)
  expect_equal(times, c(1.2, 0.4))
})

test_that("processor sharing: an idle gap between tasks is skipped", {
  expect_equal(processor_sharing_times_s(c(0, 5), c(1e6, 1e6), 1e7), c(0.1, 0.1))
})

test_that("wire bytes add 40 bytes of headers per segment", {
  expect_equal(wire_bytes(c(100000, 10000, 0), c(1000, 100, 1000)), c(104000, 14000, 0))
  expect_error(wire_bytes(1000, 0), "seg_bytes")
})

test_that("the worst time under processor sharing per run and per group", {
  flows <- tibble::tibble(run = 1L, group = c("big", "small"), start_s = c(0, 0.5),
                          bytes_goal = c(1200000, 240000), seg_bytes = 960L)
  # 960-byte segments are 1000 bytes on the wire: exactly 10 Mb and 2 Mb, the worked example above
  out <- summarise_processor_sharing(flows, "run", 1e7)
  expect_equal(out$ps_worst_fct_s[is.na(out$group)], 1.2)
  expect_equal(out$ps_worst_fct_s[out$group %in% "small"], 0.4)
})

test_that("a run column named capacity_bps (a sweep variable) does not mask the rate given", {
  flows <- tibble::tibble(series = "s", seed = 1L, capacity_bps = 5, start_s = 0, bytes_goal = 960, seg_bytes = 960L,
                          group = "g")
  # one 1000-byte wire packet (960 + 40) at 8000 bit/s takes 1 s; the column's 5 is not the rate
  got <- summarise_processor_sharing(flows, c("series", "seed", "capacity_bps"), 8000)
  expect_equal(got$ps_worst_fct_s[is.na(got$group)], 1)
})

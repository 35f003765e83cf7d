test_that("weighted fair shares: W-proportional, a class below its share keeps its demand (eq. 5)", {
  expect_equal(weighted_fair_shares(c(8, 4, 2), c(Inf, Inf, Inf), 1400), c(800, 400, 200))
  # class 4 of Scenario 2: 50 kb/s is below its 1/15 share of 1 Mb/s, the others share 950 kb/s 8:4:2
  expect_equal(weighted_fair_shares(c(8, 4, 2, 1), c(Inf, Inf, Inf, 5e4), 1e6),
               c(8 / 14 * 950000, 4 / 14 * 950000, 2 / 14 * 950000, 5e4))
  # a demand just above its share does not keep it
  expect_equal(weighted_fair_shares(c(1, 1), c(600, Inf), 1000), c(500, 500))
  expect_error(weighted_fair_shares(c(1, 0), c(1, 1), 1), "weight > 0")
})

test_that("phases are the intervals with the same classes active", {
  phases <- class_phases(tibble::tibble(cls = 0:2, start_s = c(0, 10, 20), stop_s = c(30, 40, 50)))
  expect_equal(phases$from_s, c(0, 10, 20, 30, 40))
  expect_equal(phases$active, list(0L, 0:1, 0:2, 1:2, 2L))
})

test_that("phase share: the worst class of the worst phase, over each phase's second half", {
  classes <- tibble::tibble(cls = 0:1, start_s = c(0, 0), stop_s = c(4, 4), demand_bps = Inf)
  # second half [2, 4): class 0 sends 3000 bytes, class 1 1000; W 1:1 -> fair 2000 each: |3/2 - 1| = 0.5
  packets <- tibble::tibble(series = "rb", seed = 1L, event = "deq", len_bytes = 1000L,
                            time_s = c(0.5, 2.1, 2.2, 2.3, 3.0), band = c(1L, 0L, 0L, 0L, 1L))
  dev <- summarise_phase_share(packets, c("series", "seed"), classes, function(series) c(1, 1))
  expect_equal(dev$phase_share_max_dev, 0.5)
  # with W 3:1 the same rates are exactly fair
  dev <- summarise_phase_share(packets, c("series", "seed"), classes, function(series) c(3, 1))
  expect_equal(dev$phase_share_max_dev, 0)
  expect_error(summarise_phase_share(packets, "seed", classes[1, ], function(s) 1), "two classes")
})

test_that("a scenario's classes: start, stop and a CBR group's demand", {
  scenario <- list(duration_s = 150, workload = list(groups = list(
    a = list(cls = 0L, count = 1L, app = "cbr", rate_bps = 8e5, stop_s = 149),
    b = list(cls = 1L, count = 16L, start_offset_s = 50))))
  classes <- scenario_classes(scenario)
  expect_equal(classes$start_s, c(0, 50))
  expect_equal(classes$stop_s, c(149, 150))
  expect_equal(classes$demand_bps, c(8e5, Inf))
})

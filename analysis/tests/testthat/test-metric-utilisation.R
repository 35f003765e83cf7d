# Link utilisation by class and group (srd Figs. 4(b), 6(a)-8(a)), worked by hand.

by <- c("series", "seed")

test_that("utilisation counts the dequeues after the warm-up over capacity x time", {
  packets <- tibble::tibble(
    series = "s", seed = 1L, queue = "bottleneck:L",
    time_s = c(1, 6, 7, 8, 9, 9.5),
    event = c("deq", "deq", "deq", "deq", "enq", "drop"),
    len_bytes = c(1000, 1000, 500, 250, 1000, 1000),
    flow_id = c(0L, 0L, 1L, NA, 1L, 1L)
  )
  flows <- tibble::tibble(series = "s", seed = 1L, flow_id = 0:2, cls = c(1L, 0L, 0L),
                          group = c("r-long", "web", "web"))
  runs <- tibble::tibble(series = "s", seed = 1L, capacity_bps = 1000, sim_end_s = 15)
  got <- summarise_link_utilisation(packets, flows, runs, by, warmup_s = 5)
  # 10 s after the warm-up at 1000 bit/s carry 10000 bits:
  # cls 1: 8 * 1000 / 10000 = 0.8 (the dequeue at 1 s is before the warm-up);
  # cls 0: 8 * 500 / 10000 = 0.4; all: 8 * 1750 / 10000 = 1.4 (the packet of no flow counts)
  value <- function(cls, group) {
    got$utilisation[(if (is.na(cls)) is.na(got$cls) else got$cls %in% cls) &
                      (if (is.na(group)) is.na(got$group) else got$group %in% group)]
  }
  expect_equal(value(1L, NA), 0.8)
  expect_equal(value(0L, NA), 0.4)
  expect_equal(value(NA, "web"), 0.4)
  expect_equal(value(NA, "r-long"), 0.8)
  expect_equal(value(NA, NA), 1.4)
  expect_equal(nrow(got), 5)
})

test_that("a class that sent nothing after the warm-up has utilisation 0", {
  packets <- tibble::tibble(series = "s", seed = 1L, queue = "q", time_s = c(1, 6), event = "deq",
                            len_bytes = 100, flow_id = c(1L, 0L))
  flows <- tibble::tibble(series = "s", seed = 1L, flow_id = 0:1, cls = 0:1, group = c("a", "b"))
  runs <- tibble::tibble(series = "s", seed = 1L, capacity_bps = 80, sim_end_s = 10)
  got <- summarise_link_utilisation(packets, flows, runs, by, warmup_s = 5)
  expect_equal(got$utilisation[got$cls %in% 1L & is.na(got$group)], 0)
  # 8 * 100 / (80 * 5) = 2 (over 1: the table says what the packets say)
  expect_equal(got$utilisation[got$cls %in% 0L & is.na(got$group)], 2)
})

test_that("bad runs are refused with what must hold", {
  packets <- tibble::tibble(series = "s", seed = 1L, queue = "q", time_s = 6, event = "deq",
                            len_bytes = 100, flow_id = 0L)
  flows <- tibble::tibble(series = "s", seed = 1L, flow_id = 0L, cls = 0L, group = "a")
  expect_error(summarise_link_utilisation(packets, flows, tibble::tibble(series = "s", seed = 1L, capacity_bps = 0,
                                                                         sim_end_s = 10), by),
               "capacity_bps must be > 0")
  expect_error(summarise_link_utilisation(packets, flows, tibble::tibble(series = "s", seed = 1L, capacity_bps = 1,
                                                                         sim_end_s = 4), by, warmup_s = 5),
               "end after the warm-up")
})

test_that("the capacity is the dumbbell's bottleneck rate, or the sweep variable that sets it", {
  runs <- tibble::tibble(series = "s", seed = 1:2, capacity = c(1e7, 3e7))
  fixed <- list(topology = list(kind = "dumbbell", bottleneck_rate_bps = 5e6), sweep = list())
  expect_equal(add_bottleneck_capacity(runs, fixed)$capacity_bps, c(5e6, 5e6))
  swept <- list(topology = list(kind = "dumbbell", bottleneck_rate_bps = 5e6),
                sweep = list(capacity = list(path = "series.srd.params.rate_bps",
                                             also = list("topology.bottleneck_rate_bps"))))
  expect_equal(add_bottleneck_capacity(runs, swept)$capacity_bps, c(1e7, 3e7))
  expect_null(add_bottleneck_capacity(runs, list(topology = list(kind = "graph"))))
  # a rate set alongside another swept value (the sweep's `with`)
  runs$load <- c(0.9, 0.5)
  alongside <- list(topology = list(kind = "dumbbell", bottleneck_rate_bps = 5e6),
                    sweep = list(load = list(path = "workload.poisson_load", values = list(0.5, 0.9),
                                             with = list(topology.bottleneck_rate_bps = list(2e6, 4e6)))))
  expect_equal(add_bottleneck_capacity(runs, alongside)$capacity_bps, c(4e6, 2e6))
})

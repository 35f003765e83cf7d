test_that("ASI matches a hand computation when every unit is below its share", {
  # shares 1/4, 3/4 of Delay_max = 0.1 s: expected 0.025, 0.075 s;
  # deviations -0.015, -0.025: 1 - 0.04 / (2 * 0.1) = 0.8 under both readings
  asi <- function(reading) application_satisfaction_index(c(0.01, 0.05), c(100, 300), 0.1, reading)
  expect_equal(asi("per_term"), 0.8)
  expect_equal(asi("as_printed"), 0.8)
})

test_that("the printed reading lets deviations of opposite sign cancel", {
  # expected 0.025 and 0.075 s, actual 0.05 and 0.05: deviations +0.025, -0.025
  expect_equal(application_satisfaction_index(c(0.05, 0.05), c(100, 300), 0.1), 1 - 0.05 / 0.2)
  expect_equal(application_satisfaction_index(c(0.05, 0.05), c(100, 300), 0.1, "as_printed"), 1)
})

test_that("ASI is 1 when each delay is its share of Delay_max and 0 at the worst case", {
  expect_equal(application_satisfaction_index(c(0.02, 0.08), c(1, 4), 0.1), 1)
  # one unit with all the data but no delay, one with no data but Delay_max
  expect_equal(application_satisfaction_index(c(0, 0.1), c(1, 0), 0.1), 0)
})

test_that("ASI refuses input outside its definition", {
  expect_error(application_satisfaction_index(numeric(), numeric(), 0.1), "at least one unit")
  expect_error(application_satisfaction_index(c(0.01, 0.02), 1, 0.1), "one value per unit")
  expect_error(application_satisfaction_index(-0.01, 1, 0.1), "delay_s must be numeric, >= 0")
  expect_error(application_satisfaction_index(0.01, 0, 0.1), "not all zero")
  expect_error(application_satisfaction_index(0.01, 1, 0), "delay_max_s")
  expect_error(application_satisfaction_index(0.2, 1, 0.1), "every delay_s must be at most delay_max_s")
  expect_error(application_satisfaction_index(0.01, 1, 0.1, "sum"), "should be one of")
})

test_that("the wrapper computes one ASI per system", {
  units <- tibble::tibble(seed = c(1, 1, 2, 2), delay_s = c(0.01, 0.05, 0.05, 0.05),
                          data_bytes = c(100, 300, 100, 300), delay_max_s = 0.1)
  expect_equal(summarise_asi(units, "seed")$asi, c(0.8, 0.75))
  expect_equal(summarise_asi(units, "seed", "as_printed")$asi, c(0.8, 1))
  units$delay_max_s[[2]] <- 0.2
  expect_error(summarise_asi(units, "seed"), "the same for every unit")
})

test_that("a VoIP group's ASI takes a node per call that received something", {
  flows <- tibble::tibble(
    seed = 1L, group = "voip",
    rx_packets = c(10, 30, 0), bytes_delivered = c(1000, 3000, 0),
    delay_mean_s = c(0.1, 0.2, NA), delay_max_s = c(0.3, 0.4, NA)
  )
  # Delay_max 0.4; expected delays 0.25 * 0.4 = 0.1 and 0.75 * 0.4 = 0.3:
  # deviations 0 and 0.1, ASI = 1 - 0.1 / (2 * 0.4) = 0.875
  expect_equal(summarise_group_asi(flows, "seed", "voip")$asi, 0.875)
})

test_that("the system's ASI has a unit per traffic class: its packets' mean sojourn at the queue, its data", {
  packets <- tibble::tibble(
    series = "ncq", seed = 1L, queue = "bottleneck:L",
    event = c("enq", "deq", "deq", "deq", "deq", "deq", "drop"),
    time_s = c(1, 1, 2, 3, 4, 0.5, 5),
    flow_id = c(1L, 1L, 1L, 2L, 2L, 2L, NA),
    sojourn_s = c(NA, 0.02, 0.04, 0.001, 0.003, 0.5, NA)
  )
  flows <- tibble::tibble(series = "ncq", seed = 1L, flow_id = c(1L, 2L, 3L),
                          group = c("ftp", "sensors", "ftp"), bytes_delivered = c(7e5, 1e5, 2e5))
  # after the 1 s warm-up: ftp 0.02 and 0.04 (mean 0.03), sensors 0.001 and 0.003 (mean 0.002);
  # Delay_max 0.04; data: ftp 9e5 of 1e6 (0.9), sensors 0.1;
  # |0.03 - 0.036| + |0.002 - 0.004| = 0.008; ASI = 1 - 0.008 / (2 * 0.04) = 0.9
  result <- summarise_class_asi(packets, flows, c("series", "seed"), warmup_s = 1)
  expect_equal(result$asi, 0.9)
  # no queueing at all: no ASI (Delay_max divides)
  still <- dplyr::mutate(packets, sojourn_s = ifelse(is.na(sojourn_s), NA, 0))
  expect_true(is.na(summarise_class_asi(still, flows, c("series", "seed"), warmup_s = 1)$asi))
  expect_error(summarise_class_asi(dplyr::mutate(packets, queue = c(rep("a", 3), rep("b", 4))), flows, "series"),
               "must trace one queue")
})

test_that("Jain's index is 1 for equal shares and 1/n for one flow taking all", {
  expect_equal(jain_index(c(3, 3, 3)), 1)
  expect_equal(jain_index(c(5, 0, 0, 0)), 1 / 4)
})

test_that("Jain's index matches a hand computation", {
  # x = (1, 2, 3): (6)^2 / (3 * 14) = 36 / 42
  expect_equal(jain_index(c(1, 2, 3)), 36 / 42)
})

test_that("Jain's index is not the printed formula (which is the mean)", {
  x <- c(1, 2, 3)
  printed <- sum(x)^2 / (length(x) * sum(x))
  expect_equal(printed, mean(x))
  expect_false(isTRUE(all.equal(jain_index(x), printed)))
})

test_that("Jain's index refuses negative rates and is NA when all are zero", {
  expect_error(jain_index(c(1, -1)), "non-negative")
  expect_error(jain_index(numeric()), "at least one flow")
  expect_true(is.na(jain_index(c(0, 0))))
})

test_that("the wrapper computes Jain's index over per-flow goodput", {
  flows <- make_flows(
    series = "a", seed = 1L,
    bytes_delivered = c(1e6, 1e6),
    start_s = c(0, 0),
    end_s = c(4, 8),
    sim_end_s = 10
  )
  # goodputs 2e6 and 1e6: (3e6)^2 / (2 * 5e12) = 0.9
  expect_equal(summarise_fairness(flows, c("series", "seed"))$fairness_jain, 0.9)
})

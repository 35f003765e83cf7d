test_that("average goodput of a group is the mean of its flows' goodputs", {
  flows <- make_flows(
    series = "a", seed = 1L,
    group = c("congestive", "congestive", "noncongestive", "noncongestive"),
    bytes_delivered = c(1e6, 1e6, 1e4, 5e3),
    start_s = c(0, 1, 0, 2),
    end_s = c(8, 5, 0.5, NA),
    sim_end_s = 12
  )
  # congestive: 8e6 / 8 = 1e6 and 8e6 / 4 = 2e6 bit/s, mean 1.5e6
  congestive <- summarise_group_goodput(flows, c("series", "seed"), "congestive")
  expect_equal(congestive$avg_goodput_bps, 1.5e6)
  expect_equal(congestive$n_flows, 2L)
  # non-congestive: 8e4 / 0.5 = 1.6e5; unfinished 4e4 / (12 - 2) = 4e3; mean 8.2e4
  small <- summarise_group_goodput(flows, c("series", "seed"), "noncongestive")
  expect_equal(small$avg_goodput_bps, 8.2e4)
})

test_that("each run is summarised on its own, and a run without the group has no row", {
  flows <- make_flows(
    series = c("a", "a", "b"), seed = 1L,
    group = c("noncongestive", "noncongestive", "congestive"),
    bytes_delivered = c(1e4, 1e4, 1e6),
    start_s = c(0, 0, 0),
    end_s = c(1, 2, 8),
    sim_end_s = 10
  )
  # run a: 8e4 / 1 and 8e4 / 2 bit/s, mean 6e4; run b has no non-congestive flow
  result <- summarise_group_goodput(flows, c("series", "seed"), "noncongestive")
  expect_equal(result$series, "a")
  expect_equal(result$avg_goodput_bps, 6e4)
})

test_that("a group must be named", {
  flows <- make_flows(series = "a", seed = 1L, bytes_delivered = 1, start_s = 0, end_s = 1, sim_end_s = 1)
  expect_error(summarise_group_goodput(flows, "series", NULL), "one traffic group name")
})

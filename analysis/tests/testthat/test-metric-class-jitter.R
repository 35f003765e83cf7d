test_that("class jitter: the slope of each band's sojourn standard deviation on the band", {
  # band 0 sojourns 1, 3 (sd sqrt(2)); band 1: 2, 6 (sd 2 sqrt(2)); band 2: one dequeue only (left out);
  # the drop and the dequeue before the warm-up are ignored
  packets <- tibble::tibble(seed = 1L, queue = "L:R", time_s = c(0.5, 1, 2, 3, 4, 5, 6),
                            event = c("deq", "deq", "deq", "deq", "deq", "drop", "deq"),
                            band = c(0L, 0L, 0L, 1L, 1L, 1L, 2L), sojourn_s = c(100, 1, 3, 2, 6, NA, 9))
  slope <- summarise_jitter_class_slope(packets, "seed", warmup_s = 1)
  expect_equal(slope$jitter_class_slope_s, sqrt(2))
  # one band only: no slope
  expect_true(is.na(summarise_jitter_class_slope(packets[packets$band == 0, ], "seed")$jitter_class_slope_s))
})

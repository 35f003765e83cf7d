test_that("link utilisation is the bits sent over what the link could send", {
  # 3 packets of 1000 bytes in 0.5 s on a 1 Mb/s link: 24000 / 500000 = 0.048
  expect_equal(link_utilisation(c(1000, 1000, 1000), 1e6, 0.5), 0.048)
  expect_equal(link_utilisation(numeric(), 1e6, 1), 0)
  expect_error(link_utilisation(1000, 0, 1), "rate_bps")
  expect_error(link_utilisation(1000, 1e6, 0), "> 0 s")
})

test_that("link utilisation per run and queue counts the dequeues from the warm-up to the run's end", {
  packets <- tibble::tibble(seed = c(1L, 1L, 1L, 1L, 2L), queue = "L:R", event = c("deq", "deq", "drop", "deq", "deq"),
                            time_s = c(0.5, 1.5, 1.6, 2.5, 1.2), len_bytes = 1000L)
  ends <- tibble::tibble(seed = 1:2, sim_end_s = c(5, 3))
  use <- summarise_link_utilisation(packets, "seed", ends, rate_bps = 8000, warmup_s = 1)
  # seed 1: two dequeues after 1 s (the drop is no departure), 16000 bits over 4 s at 8000 b/s = 0.5;
  # seed 2: one in 2 s = 0.5
  expect_equal(use$link_utilisation, c(0.5, 0.5))
  expect_equal(use$seed, 1:2)
})

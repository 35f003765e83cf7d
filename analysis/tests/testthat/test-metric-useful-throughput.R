test_that("useful rate counts the bytes that waited less than the deadline", {
  # 3 packets of 1000 bytes in 2 s, one waited 60 ms: 2000 bytes useful = 8000 bit/s
  expect_equal(useful_rate_bps(c(0.01, 0.06, 0.049), c(1000, 1000, 1000), 0.05, 2), 8000)
  expect_equal(useful_rate_bps(numeric(), numeric(), 0.05, 1), 0)
  expect_error(useful_rate_bps(NA, 1000, 0.05, 1), "sojourn")
})

test_that("session bins run from the a-th session's start to the b-th's, the last to the end", {
  bins <- session_bins(c(3, 0, 1, 2), c(1, 2, 4), end_s = 10)
  expect_equal(bins$bin, c("1-2", "2-4"))
  expect_equal(bins$from_s, c(0, 1))
  expect_equal(bins$to_s, c(1, 10))
  bins <- session_bins(c(0, 1, 2, 3), c(1, 3), end_s = 10)
  expect_equal(bins$to_s, 2) # the 3rd of 4 sessions starts at 2 s
  expect_error(session_bins(1:3, c(1, 5), 10), "edges")
})

test_that("useful throughput per run and bin counts one band's dequeues within the deadline", {
  flows <- tibble::tibble(seed = 1L, group = c("rt", "rt", "rt", "ftp"), start_s = c(0, 1, 2, 0))
  packets <- tibble::tibble(seed = 1L, time_s = c(0.5, 0.6, 1.5, 2.5, 2.6, 2.7), band = c(0L, 0L, 0L, 0L, 1L, 0L),
                            event = c("deq", "deq", "deq", "deq", "deq", "drop"), len_bytes = 1000L,
                            sojourn_s = c(0.01, 0.2, 0.02, 0.03, 0.01, NA))
  useful <- summarise_useful_throughput(packets, flows, "seed", band = 0L, group = "rt", edges = c(1, 2, 3),
                                        end_s = 4)
  # bin 1-2 = [0, 1): one useful packet in 1 s; bin 2-3 = [1, 4): two in 3 s
  expect_equal(useful$bin, c("1-2", "2-3"))
  expect_equal(useful$useful_bps, c(8000, 16000 / 3))
})

test_that("useful 50 ms throughput per run and band, from the warm-up to the run's end", {
  packets <- tibble::tibble(seed = 1L, queue = "x:L", time_s = c(0.5, 1.5, 2.5, 3.5), event = "deq",
                            band = c(0L, 0L, 0L, 1L), len_bytes = 1000L, sojourn_s = c(0.01, 0.01, 0.07, 0.01))
  useful <- summarise_useful_50ms(packets, "seed", tibble::tibble(seed = 1L, sim_end_s = 5), warmup_s = 1)
  # band 0 after 1 s: one of two packets within 50 ms, over 4 s
  expect_equal(useful$useful_50ms_bps, c(8000 / 4, 8000 / 4))
})

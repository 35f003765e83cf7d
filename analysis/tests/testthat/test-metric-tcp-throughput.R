test_that("TCP throughput is segments delivered per second of the flow's life", {
  # 460-byte segments: 46,000 bytes are 100 segments; over 10 s, 10 pps
  expect_equal(tcp_throughput_pps(c(46000, 0), c(460, 460), c(10, 4)), c(10, 0))
  expect_error(tcp_throughput_pps(46000, 0, 10), "positive")
  expect_error(tcp_throughput_pps(46000, 460, c(10, 20)), "same length")
  expect_error(tcp_throughput_pps(-1, 460, 10), "non-negative")
})

tcp_flows <- function(series, seed, pps) {
  # three 460-byte-segment TCP flows of 20 s (start 0, run end 20): one p=1, two p=0
  make_flows(series = series, seed = seed, flow_id = 0:2, app = "bulk", group = c("high", "low", "low"),
             seg_bytes = 460, bytes_delivered = pps * 460 * 20, start_s = 0, end_s = NA_real_, sim_end_s = 20)
}

test_that("per group and over every TCP flow, UDP flows left out", {
  flows <- dplyr::bind_rows(
    tcp_flows("nopreempt", 1L, c(40, 40, 40)),
    make_flows(series = "nopreempt", seed = 1L, flow_id = 3L, app = "onoff", group = "voice", seg_bytes = 40,
               bytes_delivered = 4e6, start_s = 0, end_s = 20, sim_end_s = 20)
  )
  out <- summarise_tcp_throughput(flows, c("series", "seed"))
  expect_equal(out$group, c("high", "low", NA))
  expect_equal(out$tcp_throughput_pps, c(40, 40, 40))
  expect_equal(out$n_flows, c(1L, 2L, 3L))
  # a sweep variable named flows (cqaqm/tcp) is a run key, kept as it is
  swept <- summarise_tcp_throughput(dplyr::mutate(flows, flows = 4L), c("series", "seed", "flows"))
  expect_equal(swept$flows, c(4L, 4L, 4L))
  expect_equal(nrow(swept), 3)
})

test_that("Gain and System Efficiency, worked by hand, are the paired ratios of the throughput", {
  # seed 1: without Preemption 40/40/40 pps; with it the p=1 flow 60, the p=0 flows 25 and 29
  # seed 2: without 40/38/42, with 64/26/24
  flows <- dplyr::bind_rows(tcp_flows("nopreempt", 1L, c(40, 40, 40)), tcp_flows("cqaqm", 1L, c(60, 25, 29)),
                            tcp_flows("nopreempt", 2L, c(40, 38, 42)), tcp_flows("cqaqm", 2L, c(64, 26, 24)))
  pps <- dplyr::rename(summarise_tcp_throughput(flows, c("series", "seed")), value = "tcp_throughput_pps")
  ratio <- function(g) {
    rows <- if (is.na(g)) pps[is.na(pps$group), ] else pps[pps$group %in% g, ]
    cmp <- compare_paired(rows, "cqaqm", "nopreempt", character())
    cmp$mean[cmp$contrast == "ratio"]
  }
  # Gain of p=1: 60/40 = 1.5 and 64/40 = 1.6, mean 1.55
  expect_equal(ratio("high"), 1.55)
  # Gain of p=0 (per-flow means): 27/40 = 0.675 and 25/40 = 0.625, mean 0.65
  expect_equal(ratio("low"), 0.65)
  # System Efficiency: (60+25+29)/3 over 40 = 0.95, (64+26+24)/3 over 40 = 0.95
  expect_equal(ratio(NA), 0.95)
})

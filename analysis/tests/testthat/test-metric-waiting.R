# Waiting time at a dumbbell's bottleneck (analysis/R/metric-waiting.R).

dumbbell <- function(...) {
  list(topology = list(kind = "dumbbell", bottleneck_rate_bps = 2e6, bottleneck_delay_s = 0.01,
                       access_rate_bps = 1e8, access_delay_s = 0.001),
       workload = list(groups = list(...)))
}

test_that("path latency: three transmissions and three propagation delays", {
  # 125 + 2 bytes: 1016 bits; 10.16 us per access link, 508 us on the bottleneck
  expect_equal(dumbbell_path_latency_s(125, 2, 2e6, 0.01, 1e8, 0.001), 2 * (1016 / 1e8 + 0.001) + 1016 / 2e6 + 0.01)
  expect_equal(dumbbell_path_latency_s(1250, 0, 2e6, 0, 1e11, 0), 1e4 / 2e6 + 2 * 1e4 / 1e11)
})

test_that("wait: the mean delay over received datagrams minus the path latency, per group and run", {
  flows <- make_flows(series = "s", seed = 1L, flow_id = 0:3,
                      group = c("small", "small", "large", "small"), app = "poisson",
                      seg_bytes = c(97L, 97L, 1222L, 97L), rx_packets = c(100, 300, 50, 10),
                      delay_mean_s = c(0.02, 0.03, 0.05, 0.02)) |>
    dplyr::mutate(backend = c("ns3", "ns3", "ns3", "ns2"))
  wait <- summarise_bottleneck_wait(flows, c("backend", "series", "seed"), dumbbell(small = list(), large = list()))
  small_ns3 <- dplyr::filter(wait, .data$backend == "ns3", .data$group == "small")
  latency_small <- dumbbell_path_latency_s(125, 2, 2e6, 0.01, 1e8, 0.001)
  expect_equal(small_ns3$wait_mean_s, (100 * 0.02 + 300 * 0.03) / 400 - latency_small)
  large <- dplyr::filter(wait, .data$group == "large")
  expect_equal(large$wait_mean_s, 0.05 - dumbbell_path_latency_s(1250, 2, 2e6, 0.01, 1e8, 0.001))
  # ns-2's links add no framing
  small_ns2 <- dplyr::filter(wait, .data$backend == "ns2")
  expect_equal(small_ns2$wait_mean_s, 0.02 - dumbbell_path_latency_s(125, 0, 2e6, 0.01, 1e8, 0.001))
})

test_that("a group's own access links count; other topologies and unknown framings give no rows", {
  flows <- make_flows(series = "s", seed = 1L, group = "far", app = "cbr", seg_bytes = 172L,
                      rx_packets = 10, delay_mean_s = 0.5)
  wait <- summarise_bottleneck_wait(flows, c("series", "seed"), dumbbell(far = list(access_delay_s = 0.1)))
  expect_equal(wait$wait_mean_s, 0.5 - dumbbell_path_latency_s(200, 2, 2e6, 0.01, 1e8, 0.1))
  parking <- list(topology = list(kind = "parking_lot"), workload = list(groups = list()))
  expect_equal(nrow(summarise_bottleneck_wait(flows, c("series", "seed"), parking)), 0)
  mininet <- dplyr::mutate(flows, backend = "mininet")
  expect_equal(nrow(summarise_bottleneck_wait(mininet, c("series", "seed"), dumbbell(far = list()))), 0)
})

test_that("latency table: per backend, group and size; the group's own access links; none when a sweep moves them", {
  dumbbell <- list(kind = "dumbbell", access_rate_bps = 1e7, access_delay_s = 0.001,
                   bottleneck_rate_bps = 1e7, bottleneck_delay_s = 0.01)
  flows <- make_flows(app = c("voip", "bulk"), group = c("voice", "data"), seg_bytes = c(92L, 1000L))
  scenario <- list(topology = dumbbell, workload = list(groups = list(voice = list(access_delay_s = 0.005))))
  # 120-byte datagrams + 2 bytes of PPP: 2 * 5 ms + 10 ms + 976 bits * (2 / 10 Mb/s + 1 / 10 Mb/s)
  expect_equal(dumbbell_latency_table(scenario, flows),
               tibble::tibble(backend = "ns3", group = "voice", seg_bytes = 92L, pkt_bytes = 120,
                              latency_s = 0.0202928))
  expect_null(dumbbell_latency_table(list(topology = list(kind = "parking_lot")), flows))
  swept <- c(scenario, list(sweep = list(rate = list(path = "topology.bottleneck_rate_bps", values = list(1e6)))))
  expect_null(dumbbell_latency_table(swept, flows))
  wait <- summarise_bottleneck_wait(dplyr::mutate(flows, rx_packets = 1, delay_mean_s = 0.1), "point", swept)
  expect_equal(nrow(wait), 0)
})

test_that("UDP groups: loss over datagrams sent, delay weighted by datagrams received", {
  flows <- make_flows(
    series = "s", seed = 1L, group = c("voice", "voice", "data", "bulk"),
    app = c("voip", "voip", "cbr", "bulk"),
    tx_packets = c(100, 300, 10, 50), rx_packets = c(100, 200, 0, NA), lost_packets = c(0, 100, 10, NA),
    delay_mean_s = c(0.01, 0.04, NA, NA), delay_max_s = c(0.02, 0.08, NA, NA)
  )
  groups <- summarise_udp_groups(flows, c("series", "seed"))
  expect_equal(groups$group, c("data", "voice")) # the bulk flow is not a UDP group
  voice <- groups[groups$group == "voice", ]
  expect_equal(voice$loss_ratio, 100 / 400)
  expect_equal(voice$delay_mean_s, (100 * 0.01 + 200 * 0.04) / 300)
  expect_equal(voice$delay_max_s, 0.08)
  data <- groups[groups$group == "data", ]
  expect_equal(data$loss_ratio, 1)
  expect_true(is.na(data$delay_mean_s)) # nothing arrived
})

test_that("a UDP flow without its counters is an error", {
  flows <- make_flows(series = "s", seed = 1L, app = "cbr", tx_packets = 10, rx_packets = NA,
                      lost_packets = NA, delay_mean_s = NA, delay_max_s = NA)
  expect_error(summarise_udp_groups(flows, c("series", "seed")), "rx_packets and lost_packets")
})

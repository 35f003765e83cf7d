# Two series, two seeds, three bulk flows per run; flow 2 of droptail seed 2
# never completes (censored at 30 s), flow 1 of ncq seed 1 is the slowest
# completed one. Flow 3 is not traced.
tcp_state_fixture <- function() {
  keys <- tidyr::expand_grid(series = c("droptail", "ncq"), seed = 1:2, flow_id = 1:3)
  flows <- keys |>
    dplyr::mutate(scenario = "test/s", backend = "ns3", point = "p", app = "bulk", seg_bytes = 1000,
                  start_s = 1, sim_end_s = 30, end_s = 4 + .data$flow_id,
                  # flow 3 (untraced) is the slowest of all: it must not be chosen
                  end_s = ifelse(.data$flow_id == 3, 29, .data$end_s))
  flows$end_s[flows$series == "droptail" & flows$seed == 2 & flows$flow_id == 2] <- NA
  flows$end_s[flows$series == "ncq" & flows$seed == 1 & flows$flow_id == 1] <- 12
  flows$completed <- as.integer(!is.na(flows$end_s))
  tcp <- dplyr::filter(keys, .data$flow_id != 3) |>
    tidyr::expand_grid(time_s = c(1, 2, 3)) |>
    dplyr::mutate(scenario = "test/s", backend = "ns3", point = "p",
                  cwnd_bytes = c(0, 2000, 4000)[match(.data$time_s, c(1, 2, 3))],
                  ssthresh_bytes = 4294967295, srtt_s = NA_real_, rto_s = 1,
                  retx_packets = c(0, 1, 3)[match(.data$time_s, c(1, 2, 3))], syn_retx_packets = 1,
                  state = "ESTABLISHED", ca_state = "open")
  list(flows = flows, tcp = tcp)
}

test_that("the worst traced flow per series: longest time, censored flows included, untraced flows ignored", {
  data <- tcp_state_fixture()
  worst <- worst_traced_flows(data$flows, data$tcp)
  expect_equal(worst$series, c("droptail", "ncq"))
  expect_equal(worst$seed, c(2L, 1L))
  expect_equal(worst$flow_id, c(2L, 1L))
  expect_equal(worst$fct_s, c(29, 11))      # censored at the run's end (30 - 1); 12 - 1
  expect_equal(worst$completed, c(0L, 1L))
  expect_equal(worst$runs, c(2L, 2L))
})

test_that("the worst traced flow refuses runs without TCP samples", {
  data <- tcp_state_fixture()
  expect_error(worst_traced_flows(data$flows, data$tcp[0, ]), "trace.tcp")
})

test_that("the TCP state of a flow: time since its start, window in segments, retransmissions with SYNs", {
  data <- tcp_state_fixture()
  state <- tcp_state_of_flows(data$tcp, worst_traced_flows(data$flows, data$tcp))
  one <- dplyr::filter(state, .data$series == "ncq")
  expect_equal(sort(unique(one$quantity)), sort(names(tcp_state_quantities)))
  expect_equal(one$time_s[one$quantity == "cwnd_segments"], c(0, 1, 2))
  expect_equal(one$value[one$quantity == "cwnd_segments"], c(0, 2, 4))
  expect_equal(one$value[one$quantity == "retransmissions"], c(1, 2, 4))
  expect_equal(unique(one$seed), 1L)
})

test_that("the worst-flow figure's summary names the flow and keeps n = 1 without intervals", {
  data <- tcp_state_fixture()
  runs <- dplyr::distinct(data$flows, .data$scenario, .data$backend, .data$series, .data$point, .data$seed) |>
    dplyr::mutate(flows = 3, valid = TRUE)
  scenario_data <- list(results = list(runs = runs, flows = data$flows, tcp = data$tcp), sweep_vars = "flows")
  item <- list(id = "qlab/x/worst", kind = "tcp_worst_flow", scenario = "test/s", at = list(flows = 3),
               x_label = "t")
  table <- summarise_tcp_worst_flow(item, scenario_data)
  expect_true(all(table$n == 1) && all(is.na(table$ci_lo)))
  expect_match(unique(table$method[table$series == "droptail"]), "flow 2 of seed 2, not completed")
  expect_equal(sort(unique(table$selector)), 1:3)
  expect_error(summarise_tcp_worst_flow(modifyList(item, list(at = list(flows = 7))), scenario_data),
               "no valid run")
  no_tcp <- scenario_data
  no_tcp$results$tcp <- NULL
  expect_error(summarise_tcp_worst_flow(item, no_tcp), "no tcp table")
})

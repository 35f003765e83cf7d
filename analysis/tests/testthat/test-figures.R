test_that("dumbbell parameters come from the resolved scenario as qlab collect writes it", {
  scenario <- jsonlite::fromJSON('{
    "topology": {"kind": "dumbbell", "access_rate_bps": 10000000, "access_delay_s": 0.001,
                 "bottleneck_rate_bps": 10000000, "bottleneck_delay_s": 0.01},
    "workload": {"flows": 50},
    "series": {"droptail": {"kind": "droptail", "params": {"limit_pkts": 100}},
               "ncq": {"kind": "ncq", "params": {"limit_pkts": 100, "thresh": 0.05}}},
    "sweep": {"flows": {"path": "workload.flows", "values": [10, 20, 100]}}
  }', simplifyVector = FALSE)
  p <- dumbbell_parameters(scenario)
  expect_equal(p$bottleneck_delay_s, 0.01)
  expect_equal(p$sink_rate_bps, 1e7)
  expect_equal(p$buffer_pkts, 100)
  expect_equal(p$n_sources, "10\u2013100")

  # different buffers per series: no single value to print; no sweep: the flow count
  scenario$series$ncq$params$limit_pkts <- 50
  scenario$sweep <- NULL
  p <- dumbbell_parameters(scenario)
  expect_null(p$buffer_pkts)
  expect_equal(p$n_sources, 50)
})

test_that("verdicts side by side: one row per claim in order, disagreements flagged, a missing side is NA", {
  claims <- tibble::tribble(
    ~claim_id, ~figure, ~verdict, ~backend,
    "b", "f2", "partly", "ns3",
    "a", "f1", "reproduced", "ns3",
    "b", "f2", "partly", "ns2",
    "a", "f1", "inconclusive", "ns2",
    "c", "f3", "qualitative", "ns3",
    "a", "f1", "not comparable", "mininet",
    "d", "f4", "reproduced", "ns3",
    "d", "f4", "not comparable", "ns2"
  )
  wide <- verdicts_by_backend(claims, c("ns3", "ns2"))
  expect_equal(wide$claim_id, c("b", "a", "c", "d"))
  expect_equal(wide$ns2, c("partly", "inconclusive", NA, "not comparable"))
  expect_equal(wide$agree, c(TRUE, FALSE, NA, NA))
  expect_false("mininet" %in% names(wide))
  expect_equal(names(verdicts_by_backend(claims[claims$backend == "ns3", ], c("ns3", "ns2")))[3:4], c("ns3", "ns2"))
})

test_that("TCP models: the plan's settings for every backend, each runner's own records beside them", {
  runs <- list(
    ns3 = list(versions = list(qlab = "0.1.0", ns3 = "3.37", `ns3-tcp-patches` = "handshake-karn")),
    ns2 = list(versions = list(qlab = "0.1.0", `ns-2` = "2.35", `ns-2-tcp` = "one-way Newreno"))
  )
  table <- tcp_models_of_runs(runs, list(variant = "NewReno", sack = FALSE, min_rto_ns = 2e8))
  expect_equal(names(table), c("setting", "ns3", "ns2"))
  expect_equal(table$ns3[table$setting == "plan: tcp.sack"], "false")
  expect_equal(table$ns2[table$setting == "plan: tcp.variant"], "NewReno")
  expect_equal(table$ns2[table$setting == "runner: ns-2-tcp"], "one-way Newreno")
  expect_true(is.na(table$ns2[table$setting == "runner: ns3-tcp-patches"]))
  expect_false(any(grepl("qlab", table$setting)))
})

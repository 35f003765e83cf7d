ratio_item <- list(id = "qlab/p/emu-ratio", kind = "backend_ratio_vs_x", scenario = "p/emu",
                   numerator = "mininet", denominator = "ns3")
all_item <- list(id = "qlab/p/emu-fct", kind = "metric_vs_x", all_backends = TRUE, scenario = "p/emu")
rows_of <- function(...) tibble::tibble(backend = as.character(c(...)), series = "ncq", x = 10, mean = 1)

test_that("only all_backends figures and backend ratios compare backends", {
  expect_true(compares_backends(ratio_item))
  expect_true(compares_backends(all_item))
  expect_false(compares_backends(list(kind = "metric_vs_x")))
})

test_that("with both sides the comparison is complete", {
  ratio <- describe_backend_comparison(ratio_item, c("ns3", "mininet"), c("mininet", "ns3"), rows_of("mininet/ns3"))
  expect_equal(ratio$status, "complete")
  expect_null(ratio$message)
  both <- describe_backend_comparison(all_item, c("ns3", "mininet"), c("mininet", "ns3"), rows_of("ns3", "mininet"))
  expect_equal(both$status, "complete")
  expect_equal(both$shown, c("ns3", "mininet"))
})

test_that("a ratio without its numerator's results is absent and says which side is missing", {
  ratio <- describe_backend_comparison(ratio_item, c("ns3", "mininet"), "ns3", rows_of()[0, ])
  expect_equal(ratio$status, "absent")
  expect_equal(ratio$missing, "mininet")
  expect_match(ratio$message, "the mininet / ns3 ratio needs both sides, and there are no mininet results for p/emu",
               fixed = TRUE)
})

test_that("a ratio with both sides but no valid pair is absent for that reason", {
  ratio <- describe_backend_comparison(ratio_item, c("ns3", "mininet"), c("mininet", "ns3"), rows_of()[0, ])
  expect_equal(ratio$status, "absent")
  expect_length(ratio$missing, 0)
  expect_match(ratio$message, "no valid mininet run pairs with a valid ns3 run")
})

test_that("an all-backends figure with one backend is one-sided and names the missing one", {
  one <- describe_backend_comparison(all_item, c("ns3", "mininet"), "ns3", rows_of("ns3"))
  expect_equal(one$status, "one_sided")
  expect_equal(one$shown, "ns3")
  expect_equal(one$missing, "mininet")
  expect_match(one$message, "ns3 only (no mininet results for p/emu)", fixed = TRUE)
  # results, but every mininet run invalid: not missing, yet not shown
  invalid <- describe_backend_comparison(all_item, c("ns3", "mininet"), c("ns3", "mininet"), rows_of("ns3"))
  expect_equal(invalid$status, "one_sided")
  expect_equal(invalid$no_valid_run, "mininet")
  expect_match(invalid$message, "no valid mininet run")
  none <- describe_backend_comparison(all_item, c("ns3", "mininet"), character(), rows_of()[0, ])
  expect_equal(none$status, "absent")
})

test_that("a three-way figure missing one side still compares the other two, and says so", {
  three <- c("ns3", "mininet", "testbed")
  partial <- describe_backend_comparison(all_item, three, c("ns3", "mininet"), rows_of("ns3", "mininet"))
  expect_equal(partial$status, "partial")
  expect_equal(partial$shown, c("ns3", "mininet"))
  expect_equal(partial$missing, "testbed")
  expect_match(partial$message, "Partial: ns3, mininet (no testbed results for p/emu).", fixed = TRUE)
  # with the third side's runs all invalid: partial too, for that reason
  invalid <- describe_backend_comparison(all_item, three, three, rows_of("ns3", "mininet"))
  expect_equal(invalid$status, "partial")
  expect_equal(invalid$no_valid_run, "testbed")
  # one side left is one-sided, whatever the number compared
  expect_equal(describe_backend_comparison(all_item, three, "ns3", rows_of("ns3"))$status, "one_sided")
  expect_equal(describe_backend_comparison(all_item, three, three, rows_of("ns3", "mininet", "testbed"))$status,
               "complete")
})

test_that("the backends to compare come from the scenario, which must list them", {
  expect_equal(compared_backends(all_item, list("ns3", "mininet")), c("ns3", "mininet"))
  expect_equal(compared_backends(ratio_item, NULL), c("mininet", "ns3"))
  expect_equal(compared_backends(all_item, NULL), character())
  unrun <- describe_backend_comparison(all_item, NULL, character(), rows_of()[0, ])
  expect_equal(unrun$status, "absent")
  expect_match(unrun$message, "p/emu did not run")
})

test_that("a backend ratio with a missing side is an empty table, not an error", {
  item <- c(ratio_item, list(metrics = list(list(metric = "system_goodput_bps")), x = "flows"))
  metrics <- tibble::tibble(scenario = "p/emu", backend = "ns3", series = "ncq", point = "x", seed = 1:3, flows = 10,
                            metric = "system_goodput_bps", value = 1, n_censored = 0L)
  loaded <- list(ns3 = list(`p/emu` = list(metrics = metrics, sweep_vars = "flows")))
  expect_message(table <- summarise_backend_ratio_vs_x(item, loaded), "mininet has no results for p/emu")
  expect_equal(nrow(table), 0)
  expect_equal(names(table), summary_columns())
})

test_that("each run's fidelity record becomes a row; a per-host figure its largest magnitude", {
  dir <- withr::local_tempdir()
  write_run <- function(point, seed, fidelity, valid = TRUE) {
    d <- file.path(dir, "p/emu/testbed", point, paste0("seed-", seed))
    dir.create(d, recursive = TRUE)
    jsonlite::write_json(list(series = "ncq", point = point, seed = seed, valid = valid, fidelity = fidelity),
                         file.path(d, "run.json"), auto_unbox = TRUE, null = "null")
  }
  write_run("ncq_flows-10", 2, list(clock_offset_ms = list(a = 1.5, b = -3.25), achieved_rate_bps = 9.9e6,
                                    clock_bound_ms = NULL, note = "text"), valid = FALSE)
  write_run("ncq_flows-10", 1, list(clock_offset_ms = list(a = 0.5), qdisc_sent_pkts = 400L))
  got <- run_fidelity(dir, "p/emu", "testbed")
  expect_equal(got$seed, c(1L, 2L))
  expect_equal(got$valid, c(TRUE, FALSE))
  expect_equal(got$clock_offset_ms, c(0.5, -3.25))
  expect_equal(got$achieved_rate_bps, c(NA, 9.9e6))
  expect_false(any(c("clock_bound_ms", "note") %in% names(got)))
  # a backend whose runs record no fidelity (ns-3): no rows
  expect_equal(nrow(run_fidelity(dir, "p/emu", "ns3")), 0)
})

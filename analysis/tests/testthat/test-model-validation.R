# The closed forms of the validation page (analysis/R/model-validation.R).

validation_scenario <- function() {
  list(topology = list(kind = "dumbbell", bottleneck_rate_bps = 2e6),
       workload = list(groups = list(
         noncongestive = list(app = "poisson", pkt_bytes = 125, packet_share = 0.1),
         congestive = list(app = "poisson", pkt_bytes = 1250, packet_share = 0.9))),
       series = list(fifo = list(kind = "droptail", params = list(limit_pkts = 1e6)),
                     priority = list(kind = "ncq", params = list(size_bytes = 130, thresh = 1))))
}

test_that("classes: the rates from the IP bytes, the service times on the wire", {
  classes <- validation_poisson_classes(validation_scenario(), 0.5, 2)
  # lambda = 0.5 * 2e6 / (8 * (0.1 * 125 + 0.9 * 1250)) = 1e6 / 9100 per second
  expect_equal(classes$group, c("noncongestive", "congestive"))
  expect_equal(sum(classes$lambda_per_s), 1e6 / 9100)
  expect_equal(classes$lambda_per_s[[1]] / sum(classes$lambda_per_s), 0.1)
  expect_equal(classes$service_s, 8 * c(127, 1252) / 2e6)
  expect_error(validation_poisson_classes(list(topology = list(), workload = list(groups = list())), 0.5, 0),
               "dumbbell")
})

test_that("no framing: the paper's Fig. 1 classes at u = 0.5 by hand", {
  s <- validation_scenario()
  # lambda = 1e6/9100 = 109.89/s; lambda1 = 10.989, lambda2 = 98.901; Ts1 = 0.5 ms, Ts2 = 5 ms
  lambda <- 1e6 / 9100
  es2 <- 0.1 * 0.0005^2 + 0.9 * 0.005^2
  pk <- lambda * es2 / (2 * (1 - 0.5))
  expect_equal(validation_theory_wait_s("mg1_fifo", s, "fifo", "congestive", 0.5, "ns2"), pk)
  expect_equal(validation_theory_wait_s("mg1_fifo", s, "fifo", "noncongestive", 0.5, "ns2"), pk)
  # eq. (9) as printed: rho * E[S] / (2 (1 - rho)), E[S] = 4.55 ms
  expect_equal(validation_theory_wait_s("ncq_journal_eq9", s, "fifo", "congestive", 0.5, "ns2"),
               0.5 * 0.00455 / (2 * 0.5))
  # Cobham: W0 = lambda E[S^2] / 2; rho1 = lambda1 Ts1
  w0 <- lambda * es2 / 2
  rho1 <- 0.1 * lambda * 0.0005
  expect_equal(validation_theory_wait_s("mg1_priority", s, "priority", "noncongestive", 0.5, "ns2"), w0 / (1 - rho1))
  expect_equal(validation_theory_wait_s("mg1_priority", s, "priority", "congestive", 0.5, "ns2"),
               w0 / ((1 - rho1) * (1 - 0.5)))
})

test_that("bad names are errors naming what is wrong", {
  s <- validation_scenario()
  expect_error(validation_theory_wait_s("mm1", s, "fifo", "congestive", 0.5, "ns3"), "model `mm1` must be one of")
  expect_error(validation_theory_wait_s("mg1_fifo", s, "fifo", "congestive", 0.5, "testbed"),
               "no bottleneck framing is known for backend `testbed`")
  # qlab-emu's link model in Mininet frames as ns-3 does: the same closed form
  expect_equal(validation_theory_wait_s("mg1_fifo", s, "fifo", "congestive", 0.5, "mininet"),
               validation_theory_wait_s("mg1_fifo", s, "fifo", "congestive", 0.5, "ns3"))
  expect_error(validation_theory_wait_s("mg1_fifo", s, "red", "congestive", 0.5, "ns3"), "no series `red`")
  expect_error(validation_theory_wait_s("mg1_priority", s, "fifo", "congestive", 0.5, "ns3"), "needs an ncq series")
})

test_that("a theory_vs_x table: the simulated points and each closed form beside them, and both plots", {
  scenario <- validation_scenario()
  runs <- tidyr::expand_grid(series = c("fifo", "priority"), group = c("noncongestive", "congestive"),
                             u = c(0.5, 0.9), seed = 1:3)
  truth <- purrr::pmap_dbl(runs, function(series, group, u, seed) {
    validation_theory_wait_s(if (series == "fifo") "mg1_fifo" else "mg1_priority", scenario, series, group, u, "ns3")
  })
  metrics <- runs |>
    dplyr::mutate(scenario = "validation/mg1", backend = "ns3", point = paste0(.data$series, "_u-", .data$u),
                  metric = "wait_mean_s", value = truth * (1 + (.data$seed - 2) * 0.001), n_censored = 0L) |>
    with_metric_keys()
  item <- list(id = "qlab/validation/mg1", label = "M/G/1", caption = "waits", kind = "theory_vs_x",
               scenario = "validation/mg1", x = "u", x_label = "u", y_label = "wait",
               metrics = list(list(metric = "wait_mean_s", group = "noncongestive"),
                              list(metric = "wait_mean_s", group = "congestive")),
               theory = list(fifo = list("mg1_fifo", "ncq_journal_eq9"), priority = list("mg1_priority")))
  check_item(item, "validation.yaml: items[1]")
  table <- summarise_theory_vs_x(item, list(metrics = metrics, sweep_vars = "u",
                                            results = list(scenario = scenario)))
  closed <- table[startsWith(table$method, "closed form"), ]
  # 2 groups x 2 loads: fifo 2 closed forms, priority 1; 8 simulated cells
  expect_equal(nrow(closed), 2 * 2 * 3)
  expect_equal(nrow(table) - nrow(closed), 8)
  sim <- dplyr::filter(table, .data$series == "priority", .data$group == "congestive", .data$x == 0.9,
                       !startsWith(.data$method, "closed form"))
  cobham <- dplyr::filter(closed, .data$series == "priority", .data$group == "congestive", .data$x == 0.9)
  expect_equal(sim$mean, cobham$mean) # the seeds' values are symmetric around the closed form
  expect_true(all(is.na(closed$ci_lo)) && all(is.na(closed$n)))
  expect_s3_class(plot_theory_vs_x(table, "u", "wait (ms)", 1000), "ggplot")
  expect_s3_class(plot_theory_ratio(table, "u"), "ggplot")
  bad <- item
  bad$theory <- list(fifo = list("mm1"))
  expect_error(check_item(bad, "validation.yaml: items[1]"), "unknown: mm1")
})

test_that("the theory verdict: equivalence within the margin at every point, outside it, or undecided", {
  scenario <- validation_scenario()
  claim <- list(id = "c", figure = "qlab/validation/mg1", metric = "wait_mean_s", group = "congestive",
                scenario = "validation/mg1",
                comparison = list(kind = "theory", series = "priority", model = "mg1_priority", x = "u", margin = 0.02))
  runs_at <- function(factors) {
    grid <- tidyr::expand_grid(u = c(0.3, 0.6), seed = seq_along(factors))
    grid$value <- purrr::map2_dbl(grid$u, grid$seed, function(u, seed) {
      validation_theory_wait_s("mg1_priority", scenario, "priority", "congestive", u, "ns3") * factors[[seed]]
    })
    metrics <- dplyr::mutate(grid, scenario = "validation/mg1", backend = "ns3", series = "priority",
                             point = paste0("priority_u-", .data$u), metric = "wait_mean_s", group = "congestive",
                             n_censored = 0L) |>
      with_metric_keys()
    list(`validation/mg1` = list(metrics = metrics, sweep_vars = "u", results = list(scenario = scenario)))
  }
  close <- evaluate_claim(claim, runs_at(c(0.999, 1, 1.001, 1.002, 0.998)))
  expect_equal(close$verdict, "reproduced")
  expect_match(close$ours, "within ±2% of the closed form \\(TOST\\) at 2/2 points")
  far <- evaluate_claim(claim, runs_at(c(1.049, 1.05, 1.051, 1.05, 1.05)))
  expect_equal(far$verdict, "not reproduced")
  wide <- evaluate_claim(claim, runs_at(c(0.9, 1.1, 0.95, 1.05)))
  expect_equal(wide$verdict, "inconclusive")
  # within the margin, but a bias of 1% that the simultaneous interval detects
  biased <- evaluate_claim(claim, runs_at(c(1.009, 1.010, 1.011, 1.010, 1.010)))
  expect_equal(biased$verdict, "partly")
  expect_match(biased$ours, "outside the simultaneous 95% interval at u = 0.3, 0.6")
  expect_match(close$ours, "inside the simultaneous one at 2/2")
  # equivalent, unbiased, but too few packets for a half-width within 2% at one point
  noisy <- runs_at(c(0.999, 1, 1.001, 1.002, 0.998))
  m <- noisy$`validation/mg1`$metrics
  at <- m$u == 0.6
  m$value[at] <- m$value[at] * c(0.983, 1.017, 0.983, 1.017, 1)
  noisy$`validation/mg1`$metrics <- m
  imprecise <- evaluate_claim(claim, noisy)
  expect_match(imprecise$ours, "half-width exceeds ±2% at u = 0.6")
  expect_equal(imprecise$verdict, "partly")
})

test_that("the theory verdict with the offered load as a control variate: noise the load explains is removed", {
  scenario <- validation_scenario()
  claim <- list(id = "c", figure = "qlab/validation/mg1", metric = "wait_mean_s", group = "congestive",
                scenario = "validation/mg1",
                comparison = list(kind = "theory", series = "fifo", model = "mg1_fifo", x = "u", margin = 0.02,
                                  control = "offered_load"))
  # each seed offered a little more or less than u; its wait follows its load (+5% per +0.01 of load), as
  # heavy-load runs do, plus a small residual: the plain mean's interval is wide, the adjusted one narrow
  departures <- c(-0.01, 0.005, 0.01, -0.005, 0, 0.0075, -0.0075, 0.0025)
  residual <- c(0.002, -0.001, 0, 0.001, -0.002, 0.001, 0, -0.001)
  grid <- tidyr::expand_grid(u = c(0.5, 0.9), seed = seq_along(departures))
  expected <- purrr::map_dbl(grid$u, function(u) validation_offered_load(scenario, u, "ns3"))
  theory <- purrr::map_dbl(grid$u, function(u) {
    validation_theory_wait_s("mg1_fifo", scenario, "fifo", "congestive", u, "ns3")
  })
  base <- dplyr::mutate(grid, scenario = "validation/mg1", backend = "ns3", series = "fifo",
                        point = paste0("fifo_u-", .data$u), n_censored = 0L)
  wait <- dplyr::mutate(base, metric = "wait_mean_s", group = "congestive",
                        value = theory * (1 + 5 * departures[.data$seed] + residual[.data$seed]))
  load <- dplyr::mutate(base, metric = "offered_load", group = NA_character_,
                        value = expected + departures[.data$seed])
  metrics <- with_metric_keys(dplyr::bind_rows(wait, load))
  data <- list(`validation/mg1` = list(metrics = metrics, sweep_vars = "u", results = list(scenario = scenario)))
  adjusted <- evaluate_claim(claim, data)
  expect_equal(adjusted$verdict, "reproduced")
  expect_match(adjusted$method, "control variate")
  plain <- claim
  plain$comparison$control <- NULL
  expect_equal(evaluate_claim(plain, data)$verdict, "inconclusive")
  wrong <- c(claim, list(claim = "W", paper_value = "PK"))
  wrong$comparison$control <- "delay_mean_s"
  expect_error(check_claim(wrong, "validation.yaml: claims[1]"), "must be offered_load")
})

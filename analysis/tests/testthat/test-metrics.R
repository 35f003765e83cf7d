# The metric registry (analysis/R/metrics.R) against the code that computes
# the metrics, their tests and the specs that name them.

test_that("registered names are unique, snake_case, with the unit in the name where there is one", {
  expect_false(anyDuplicated(metric_registry$name) > 0)
  expect_true(all(grepl("^[a-z][a-z0-9_]*$", metric_registry$name)))
  suffix_unit <- c(`_s$` = "s", `_bps$` = "bit/s", `_pkts$` = "packets")
  for (suffix in names(suffix_unit)) {
    named <- grepl(suffix, metric_registry$name)
    expect_equal(metric_registry$unit[named], rep(suffix_unit[[suffix]], sum(named)), label = suffix)
  }
  expect_true(all(unlist(strsplit(metric_registry$keys, " ")) %in% metric_key_columns))
})

test_that("every registered metric's function exists and a test-metric-*.R file tests it", {
  tests <- unlist(lapply(list.files(".", pattern = "^test-metric-.*\\.R$"), readLines))
  for (fn in unique(metric_registry$computed_by)) {
    expect_true(exists(fn, mode = "function"), label = sprintf("%s exists", fn))
    expect_true(any(grepl(paste0("\\b", fn, "\\("), tests)), label = sprintf("a test-metric-*.R file calls %s", fn))
  }
})

# A run with every kind of data: two classes with weights, bulk and UDP
# groups (the calls stop at 6 s: the load changes within the run), a queues
# and a packets table of two traced queues (two bands at the second).
every_kind_of_run <- function() {
  flows <- make_flows(series = "w", seed = 1L, flow_id = 0:4, cls = c(0L, 0L, 1L, 1L, 1L),
                      group = c("bulk", "bulk", "voice", "voice", "stream"),
                      app = c("bulk", "bulk", "voip", "voip", "poisson"),
                      bytes_delivered = 1e6, start_s = 0, end_s = c(2, NA, 4, 4, 4), sim_end_s = 8,
                      tx_packets = c(NA, NA, 100, 100, 1000), rx_packets = c(NA, NA, 90, 100, 1000),
                      lost_packets = c(NA, NA, 10, 0, 0), delay_mean_s = c(NA, NA, 0.01, 0.02, 0.02),
                      delay_max_s = c(NA, NA, 0.05, 0.03, 0.04), bytes_goal = c(5000, 50000, 1e6, 1e6, 1e6),
                      seg_bytes = 1000L)
  keys <- tibble::tibble(scenario = "test/s", backend = "ns3", series = "w", point = "p", seed = 1L)
  list(
    flows = flows,
    runs = dplyr::mutate(keys, valid = TRUE, sim_end_s = 8),
    sweep_vars = character(),
    scenario = list(series = list(w = list(params = list(classes = 2, weights_bytes = "1:1"))),
                    duration_s = 8,
                    workload = list(groups = list(bulk = list(cls = 0L, count = 2L),
                                                  voice = list(cls = 1L, count = 2L, app = "voip",
                                                               stop_s = 6),
                                                  stream = list(cls = 1L, count = 1L, app = "poisson"))),
                    topology = list(kind = "dumbbell", access_rate_bps = 1e7, access_delay_s = 0.001,
                                    bottleneck_rate_bps = 1e7, bottleneck_delay_s = 0.01)),
    queues = dplyr::bind_cols(keys, tibble::tibble(time_s = c(4, 4, 7, 7), queue = rep(c("hop1:r0", "hop2:r1"), 2),
                                                   band = 0L, backlog_pkts = c(3, 5, 1, 2))),
    packets = dplyr::bind_cols(keys, tibble::tibble(time_s = c(1, 1, 1, 2, 2, 3),
                                                    queue = c("hop1:r0", "hop2:r1", "hop2:r1", "hop2:r1", "hop2:r1",
                                                              "hop2:r1"),
                                                    event = c("deq", "deq", "drop", "deq", "deq", "deq"),
                                                    band = c(0L, 0L, 0L, 0L, 1L, 1L), len_bytes = 1000L,
                                                    flow_id = c(0L, 1L, 1L, 2L, 2L, 3L),
                                                    sojourn_s = c(0.01, 0.02, NA, 0.04, 0.01, 0.05),
                                                    reason = c(NA, NA, "overflow", NA, NA, NA)))
  )
}

# A wireless_dumbbell run (ncq-journal Scenario 2): FTP and a sensor group
# from the wireless nodes, the packet trace of the gateway's one queue.
wireless_run <- function() {
  flows <- make_flows(series = "n", seed = 1L, flow_id = 0:2, cls = 0L,
                      group = c("ftp", "sensors", "sensors"), app = c("bulk", "cbr", "cbr"),
                      bytes_delivered = c(1e6, 360, 324), start_s = c(0, 2, 2), end_s = c(NA, 7, 7), sim_end_s = 8,
                      tx_packets = c(900, 10, 10), rx_packets = c(NA, 10, 9), lost_packets = c(NA, 0, 1),
                      delay_mean_s = c(NA, 0.01, 0.03), delay_max_s = c(NA, 0.02, 0.05),
                      bytes_goal = c(1e8, 360, 360), seg_bytes = c(1000L, 36L, 36L))
  keys <- tibble::tibble(scenario = "test/s", backend = "ns3", series = "n", point = "p", seed = 1L)
  list(
    flows = flows,
    runs = dplyr::mutate(keys, valid = TRUE, sim_end_s = 8),
    sweep_vars = character(),
    scenario = list(series = list(n = list(kind = "ncq")), duration_s = 8,
                    workload = list(groups = list(ftp = list(count = 1L),
                                                  sensors = list(app = "cbr", from = "wireless", count = 2L))),
                    topology = list(kind = "wireless_dumbbell", access_rate_bps = 1e7, access_delay_s = 0.001,
                                    bottleneck_rate_bps = 1e7, bottleneck_delay_s = 0.01)),
    packets = dplyr::bind_cols(keys, tibble::tibble(time_s = 3, queue = "bottleneck:L", event = "deq", band = 0L,
                                                    len_bytes = c(1040L, 64L), flow_id = 0:1,
                                                    sojourn_s = c(0.02, 0.001), reason = NA_character_))
  )
}

test_that("every metric computed per run is registered, with the keys the registry gives it", {
  metrics <- dplyr::bind_rows(compute_run_metrics(every_kind_of_run()), compute_run_metrics(wireless_run()))
  per_run <- setdiff(metric_registry$name, series_metrics) # time series and per-bin values
  expect_true(all(series_metrics %in% metric_registry$name))
  expect_setequal(unique(metrics$metric), per_run)
  for (name in per_run) {
    rows <- metrics[metrics$metric == name, ]
    keyed <- metric_key_columns[purrr::map_lgl(metric_key_columns, function(k) any(!is.na(rows[[k]])))]
    # avg_fct_s / worst_fct_s also have the all-flows row (group NA)
    expect_equal(keyed, metric_keys(name), label = name)
  }
})

test_that("a spec's metric must be registered and may only name the keys it has", {
  expect_error(metric_selector(list(metric = "avg_fct_noncongestive_s"), "x.yaml: items[1]"),
               "x.yaml: items\\[1\\]: metric `avg_fct_noncongestive_s` must be registered")
  expect_error(metric_selector(list(metric = "system_goodput_bps", group = "a"), "w"),
               "has no `group` \\(its rows are keyed by nothing")
  expect_error(metric_selector(list(metric = "loss_ratio", band = 0), "w"), "keyed by `group`")
  selector <- metric_selector(list(metric = "mean_backlog_pkts", band = 0, label = "class 0"), "w")
  expect_equal(metric_selector_id(selector), "mean_backlog_pkts[band=0]")
})

test_that("a selector picks its part of the run; a key left out means over all of them", {
  metrics <- compute_run_metrics(every_kind_of_run())
  all_flows <- select_metric_rows(metrics, list(metric = "avg_fct_s"), "t")
  expect_equal(nrow(all_flows), 1)
  expect_true(is.na(all_flows$group))
  expect_equal(all_flows$value, 5) # tasks 2 s and 8 s (censored): mean 5
  voice <- select_metric_rows(metrics, list(metric = "loss_ratio", group = "voice"), "t")
  expect_equal(voice$value, 10 / 200)
  hop2 <- select_metric_rows(metrics, list(metric = "mean_backlog_pkts", band = 0, queue = "hop2:r1"), "t")
  expect_equal(hop2$value, (5 + 2) / 2) # its samples at 4 s and 7 s
  # two traced queues: a band alone does not say which
  expect_error(select_metric_rows(metrics, list(metric = "mean_backlog_pkts", band = 0), "figure f"),
               "figure f: metric `mean_backlog_pkts` is computed for several queues \\(hop1:r0, hop2:r1\\)")
  expect_equal(nrow(select_metric_rows(metrics, list(metric = "loss_ratio", group = "nobody"), "t")), 0)
})

test_that("every metric the paper specs and claims files name is registered", {
  papers <- sub("\\.yaml$", "", list.files(file.path("..", "..", "papers"), pattern = "\\.yaml$"))
  expect_true(length(papers) >= 2)
  for (paper in papers) {
    spec <- read_paper_spec(file.path("..", ".."), paper) # stops on an unregistered metric
    claims <- read_claims(file.path("..", "..", "claims", paste0(paper, ".yaml")))
    named <- c(unlist(purrr::map(figure_items(spec), function(item) {
      if (item$kind %in% kinds_without_metrics) character() else purrr::map_chr(item_selectors(item), "metric")
    })), unlist(purrr::map(claims, "metric")))
    expect_true(all(named %in% metric_registry$name), label = paper)
  }
})

test_that("a backend whose every run failed its fidelity checks gives no metrics, not an error", {
  results <- every_kind_of_run()
  results$runs$valid <- FALSE
  metrics <- expect_warning(compute_run_metrics(results), "failed the backend's fidelity checks")
  expect_equal(nrow(metrics), 0)
  expect_true(all(c("metric", metric_key_columns, "value", "series", "seed") %in% names(metrics)))
})

test_that("a metric asked for alone is what the whole computation gives for it", {
  per_run <- setdiff(metric_registry$name, series_metrics)
  for (run in list(every_kind_of_run(), wireless_run())) {
    all <- compute_run_metrics(run)
    expect_null(attr(all, "computed"))
    for (name in per_run) {
      alone <- compute_run_metrics(run, metrics = name)
      expect_equal(attr(alone, "computed"), name)
      attr(alone, "computed") <- NULL
      expected <- all[all$metric == name, ]
      expect_equal(alone, expected, ignore_attr = TRUE, label = name)
    }
  }
  # asking for nothing gives the typed empty table
  none <- compute_run_metrics(every_kind_of_run(), metrics = character())
  expect_equal(nrow(none), 0)
  expect_true(all(c("metric", metric_key_columns, "value", "series", "seed") %in% names(none)))
})

test_that("a metric left out of the computation is an error where it is read, not an empty selection", {
  metrics <- compute_run_metrics(every_kind_of_run(), metrics = c("avg_fct_s", "loss_ratio"))
  expect_equal(nrow(select_metric_rows(metrics, list(metric = "loss_ratio", group = "voice"), "t")), 1)
  expect_error(select_metric_rows(metrics, list(metric = "mean_backlog_pkts", band = 0), "figure f"),
               "figure f: metric `mean_backlog_pkts` was not computed: .*computed: avg_fct_s, loss_ratio")
  expect_error(compute_run_metrics(every_kind_of_run(), metrics = "avg_fct_noncongestive_s"),
               "`avg_fct_noncongestive_s` must be registered")
})

test_that("metrics_named finds every metric an entry names, for every scenario it names", {
  entries <- list(
    list(id = "f1", scenario = "p/a", metric = "avg_fct_s",
         also = list(list(scenario = "p/b", label = "b"))),
    list(id = "f2", scenario = "p/b", metrics = list(list(metric = "loss_ratio", group = "g"),
                                                     list(metric = "drop_ratio", band = 1L)),
         reference_metric = "system_goodput_bps"),
    list(id = "c1", scenario = "p/c", metric = "wait_mean_s",
         comparison = list(kind = "theory", control = "offered_load"),
         requires = list(metric = "dropped_pkts", reason = "aqm")),
    list(id = "c2", scenario = "p/c", metric = "tasks_completed", label = "metric: not a metric")
  )
  named <- metrics_named(entries)
  expect_setequal(names(named), c("p/a", "p/b", "p/c"))
  expect_setequal(named[["p/a"]], "avg_fct_s")
  expect_setequal(named[["p/b"]], c("avg_fct_s", "loss_ratio", "drop_ratio", "system_goodput_bps"))
  expect_setequal(named[["p/c"]], c("wait_mean_s", "offered_load", "dropped_pkts", "tasks_completed"))
})

test_that("metrics_named covers every metric each paper's items and claims read, per scenario", {
  papers <- sub("\\.yaml$", "", list.files(file.path("..", "..", "papers"), pattern = "\\.yaml$"))
  for (paper in papers) {
    spec <- read_paper_spec(file.path("..", ".."), paper)
    claims <- read_claims(file.path("..", "..", "claims", paste0(paper, ".yaml")))
    named <- metrics_named(c(spec$items, claims))
    for (item in figure_items(spec)) {
      if (item$kind %in% kinds_without_metrics) next
      for (selector in item_selectors(item)) {
        expect_true(selector$metric %in% named[[item$scenario]], label = sprintf("%s: %s", item$id, selector$metric))
      }
    }
    for (claim in claims) {
      if (is.null(claim$metric) || is.null(claim$scenario)) next
      expect_true(claim$metric %in% named[[claim$scenario]], label = sprintf("%s: %s", claim$id, claim$metric))
    }
  }
})

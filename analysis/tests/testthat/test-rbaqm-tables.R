test_that("a class table is generated from the scenario: class k = cls + 1, u and W per class, RTT from the delays", {
  scenario <- list(
    duration_s = 150,
    topology = list(access_delay_s = 0.0025, bottleneck_delay_s = 0.005),
    workload = list(groups = list(
      class2 = list(count = 16L, cls = 1L, start_offset_s = 50, stop_s = 149),
      class1 = list(count = 1L, cls = 0L, app = "cbr", rate_bps = 8e5),
      ramp = list(count = 450L, cls = 2L, start_spacing_s = 1, access_delay_s = 0.0075))),
    series = list(rb80 = list(params = list(u_ppm = "800000:950000:930000", weights_bytes = "1001:501:251")),
                  rb85 = list(params = list(u_ppm = "850000:950000:930000", weights_bytes = "1001:501:251"))))
  table <- scenario_class_table(scenario, c("rb80", "rb85"))
  expect_equal(table$Class, 1:3)
  expect_equal(table$`u_i Utilisation`, c("0.80, 0.85", "0.95", "0.93"))
  expect_equal(table$`W_i (bytes)`, c("1001", "501", "251"))
  # RTT = 2 x (2 x 2.5 + 5) ms = 20 ms; the ramp's own access delay: 2 x (2 x 7.5 + 5) = 40 ms
  expect_equal(table$Sources,
               c("1 UDP 20 ms RTT 0.8 Mbps", "16 TCP 20 ms RTT", "1-450 TCP (one more every 1 s) 40 ms RTT"))
  expect_equal(table$`Start (sec)`, c(0, 50, 0))
  expect_equal(table$`Stop (sec)`, c(150, 149, 150))
  expect_error(scenario_class_table(scenario, "wred"), "no series wred")
})

test_that("the sensitivity figure: a panel per metric, the series in the given order, the first as reference", {
  summary <- tidyr::expand_grid(series = c("u0.98", "rb", "h25"), selector = 1:2) |>
    dplyr::mutate(metric = c("total_backlog_pkts", "link_utilisation")[.data$selector],
                  mean = seq_len(dplyr::n()), ci_lo = .data$mean - 0.5, ci_hi = .data$mean + 0.5)
  plot <- plot_metric_by_variant(summary, "value", labels = c("backlog", "use"), order = c("rb", "h25", "u0.98"))
  built <- ggplot2::ggplot_build(plot)
  expect_equal(levels(plot$data$series), c("rb", "h25", "u0.98"))
  expect_equal(levels(plot$data$panel), c("backlog", "use"))
  # the dashed reference in each panel is rb's mean: rows 3 (selector 1) and 4 (selector 2)
  expect_equal(sort(built$data[[1]]$yintercept), c(3, 4))
  expect_error(plot_metric_by_variant(summary, "value", order = c("rb", "h25")), "u0.98 must be in the order")
})

test_that("a metric_by_series item may show some of its scenario's series", {
  metrics <- tidyr::expand_grid(series = c("rb", "h25", "wred"), seed = 1:3) |>
    dplyr::mutate(scenario = "rbaqm/s", backend = "ns3", point = "p", metric = "total_backlog_pkts",
                  queue = "L:R", value = .data$seed, n_censored = 0L) |>
    with_metric_keys()
  item <- list(id = "qlab/rbaqm/s", kind = "metric_by_series", scenario = "rbaqm/s", series = list("rb", "h25"),
               metrics = list(list(metric = "total_backlog_pkts")))
  table <- summarise_metric_by_series(item, list(metrics = metrics, sweep_vars = character()))
  expect_setequal(table$series, c("rb", "h25"))
  item$series <- list("rb", "tau10")
  expect_error(summarise_metric_by_series(item, list(metrics = metrics, sweep_vars = character())), "tau10")
})

test_that("a series none of whose runs is valid leaves no rows in a figure table, not an error", {
  # an emulation's only run of series rb failed its timing checks: only wred has metrics
  runs <- tibble::tibble(scenario = "rbaqm/emu", backend = "mininet", point = c("rb", "wred"), series = c("rb", "wred"),
                         seed = 1L, valid = c(FALSE, TRUE), sim_end_s = 22)
  metrics <- tibble::tibble(scenario = "rbaqm/emu", backend = "mininet", point = "wred", series = "wred", seed = 1L,
                            metric = "total_backlog_pkts", queue = "L:R", value = 7, n_censored = 0L) |>
    with_metric_keys()
  item <- list(id = "qlab/rbaqm/emu-summary", kind = "metric_by_series", scenario = "rbaqm/emu",
               series = list("rb", "wred"), metrics = list(list(metric = "total_backlog_pkts")))
  data <- list(metrics = metrics, sweep_vars = character(), results = list(runs = runs))
  table <- summarise_figure(item, data)
  expect_equal(unique(table$series), "wred")
  expect_equal(names(table), summary_columns())
  # a series the scenario does not have is still an error
  wrong <- item
  wrong$series <- list("rb", "tau10")
  expect_error(summarise_figure(wrong, data), "tau10")
  # a time series of rb alone: no rows, with the summary's columns, binding with another backend's
  series_item <- list(id = "qlab/rbaqm/emu-1a", kind = "time_series", scenario = "rbaqm/emu", series = list("rb"),
                      window_s = 1, metrics = list(list(metric = "class_rate_bps", band = 0L)))
  data$results$packets <- tibble::tibble()
  data$results$queues <- tibble::tibble()
  empty <- summarise_figure(series_item, data)
  expect_equal(nrow(empty), 0)
  expect_equal(names(empty), summary_columns())
  expect_equal(nrow(dplyr::bind_rows(empty, table)), nrow(table))
})

test_that("an all_backends time series has a row of panels per backend; one backend keeps a panel per series", {
  summary <- tidyr::expand_grid(backend = c("ns3", "mininet"), series = "rb", selector = 1:2, x = c(0.5, 1)) |>
    dplyr::mutate(metric = "class_rate_bps", mean = seq_len(dplyr::n()), ci_lo = .data$mean - 1,
                  ci_hi = .data$mean + 1)
  layout <- ggplot2::ggplot_build(plot_time_series(summary, "t", "rate", c("class 1", "class 2")))$layout$layout
  expect_equal(nrow(layout), 2)
  expect_setequal(as.character(layout$backend), c("ns3", "mininet"))
  one <- dplyr::filter(summary, .data$backend == "ns3")
  layout <- ggplot2::ggplot_build(plot_time_series(one, "t", "rate", c("class 1", "class 2")))$layout$layout
  expect_equal(nrow(layout), 1)
  expect_false("backend" %in% names(layout))
})

test_that("an all_backends panel of metrics shows each backend's value per series, with no reference line", {
  summary <- tidyr::expand_grid(backend = c("ns3", "mininet"), series = c("rb", "wred"), selector = 1:2) |>
    dplyr::mutate(metric = c("total_backlog_pkts", "link_utilisation")[.data$selector],
                  mean = seq_len(dplyr::n()), ci_lo = .data$mean - 0.5, ci_hi = .data$mean + 0.5)
  plot <- plot_metric_by_variant(summary, "value", labels = c("backlog", "use"), order = c("rb", "wred"))
  built <- ggplot2::ggplot_build(plot)
  expect_false(any(purrr::map_lgl(plot$layers, function(l) inherits(l$geom, "GeomHline"))))
  points <- built$data[[2]]
  expect_equal(nrow(points), 8)
  expect_equal(length(unique(points$colour)), 2)  # a colour per backend
  expect_equal(sort(points$y), as.numeric(1:8))
})

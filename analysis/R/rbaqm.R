# The RB-AQM paper's figures and tables (analysis/papers/rbaqm.yaml): time
# series over the seeds (kind time_series: Figs. 4-8), the useful
# throughput against the number of sessions (kind useful_vs_sessions: Fig.
# 9) and the parameter tables generated from the scenario files (kind
# table_scenario: Tables 1-3). The metrics are metric-class-rate.R,
# metric-backlog-series.R and metric-useful-throughput.R.

method_seed_quantiles <- "median over n seeds, band from the 2.5% to the 97.5% quantile of the seeds (type 7)"

#' One series' time series of a scenario, summarised over the seeds at each
#' time: the median and the 2.5%/97.5% quantiles. Item fields: `metrics`
#' (selectors: class_rate_bps with a `band`, or backlog_total_pkts /
#' backlog_avg_pkts), `window_s` (class rates), `n_pkts` (the backlog
#' average), optional `series` (the series shown; default every one).
summarise_time_series <- function(item, scenario_data) {
  results <- scenario_data$results
  if (is.null(results$packets) || is.null(results$queues)) {
    stop(sprintf("figure %s: %s must collect queues and packets (trace.collect)", item$id, item$scenario))
  }
  valid <- dplyr::filter(results$runs, .data$valid)
  if (!is.null(item$series)) valid <- dplyr::filter(valid, .data$series %in% unlist(item$series))
  # every run of this backend invalid (an emulation's timing): nothing to draw
  if (nrow(valid) == 0) return(empty_summary())
  packets <- dplyr::semi_join(results$packets, valid, by = run_key_columns)
  queues <- dplyr::semi_join(results$queues, valid, by = run_key_columns)
  selectors <- item_selectors(item)
  end_s <- min(valid$sim_end_s)
  # the two backlog selectors show two columns of one table: computed once
  backlog <- memoise_by_name(function(name) {
    summarise_backlog_series(queues, packets, run_key_columns, as.numeric(item$n_pkts %||% 300))
  })
  rows <- purrr::imap_dfr(selectors, function(sel, i) {
    per_run <- switch(sel$metric,
      class_rate_bps = summarise_class_rates(packets, run_key_columns, sel$band, as.numeric(item$window_s), end_s) |>
        dplyr::mutate(value = .data$rate_bps),
      backlog_total_pkts = backlog("series") |>
        dplyr::mutate(value = .data$backlog_pkts),
      backlog_avg_pkts = backlog("series") |>
        dplyr::mutate(value = .data$backlog_avg_pkts),
      stop(sprintf("figure %s: a time series shows class_rate_bps, backlog_total_pkts or backlog_avg_pkts (found %s)",
                   item$id, sel$metric))
    )
    per_run |>
      dplyr::filter(!is.na(.data$value)) |>
      dplyr::group_by(.data$backend, .data$series, .data$time_s) |>
      dplyr::summarise(n = dplyr::n(), mean = stats::median(.data$value), sd = stats::sd(.data$value),
                       ci_lo = unname(stats::quantile(.data$value, 0.025)),
                       ci_hi = unname(stats::quantile(.data$value, 0.975)), .groups = "drop") |>
      dplyr::mutate(selector = i, metric = sel$metric,
                    band = if (is.null(sel$band)) NA_integer_ else as.integer(sel$band))
  })
  rows |>
    dplyr::rename(x = "time_s") |>
    dplyr::mutate(x_variable = "time_s", n_censored = NA_integer_, method = method_seed_quantiles)
}

#' Fig. 9: the useful throughput of a band per bin of sessions started,
#' mean over the seeds with a 95% t-interval. Item fields: `band`, `group`
#' (the sessions), `edges` (session counts), `deadline_s`.
summarise_useful_vs_sessions <- function(item, scenario_data) {
  results <- scenario_data$results
  valid <- dplyr::filter(results$runs, .data$valid)
  if (nrow(valid) == 0) return(empty_summary())
  packets <- dplyr::semi_join(results$packets, valid, by = run_key_columns)
  flows <- dplyr::semi_join(results$flows, valid, by = run_key_columns)
  summarise_useful_throughput(packets, flows, run_key_columns, band = as.integer(item$band), group = item$group,
                              edges = as.integer(unlist(item$edges)), end_s = min(valid$sim_end_s),
                              deadline_s = as.numeric(item$deadline_s)) |>
    dplyr::mutate(value = .data$useful_bps, metric = "useful_bps", selector = 1L, band = as.integer(item$band)) |>
    summarise_over_seeds(c("backend", "series", "sessions", "metric", "selector", "band")) |>
    dplyr::rename(x = "sessions") |>
    dplyr::mutate(x = as.numeric(.data$x), x_variable = "sessions")
}

#' Per-class time series in one panel per series: each selector's median
#' as a line and its 2.5-97.5% band over the seeds as a ribbon; a
#' backlog_avg_pkts selector is drawn as the paper's thick black line. When
#' the table holds several backends (an `all_backends` item: the emulation
#' page's ns-3 and Mininet runs of the same jobs), a row of panels per
#' backend, the series across.
plot_time_series <- function(summary, x_label, y_label, labels, y_scale = 1) {
  require_columns(summary, c("series", "selector", "metric", "x", "mean", "ci_lo", "ci_hi"), "plot time series")
  summary <- dplyr::mutate(summary, what = factor(labels[.data$selector], levels = unique(labels)))
  avg <- dplyr::filter(summary, .data$metric == "backlog_avg_pkts")
  main <- dplyr::filter(summary, .data$metric != "backlog_avg_pkts")
  plot <- ggplot2::ggplot(main, ggplot2::aes(x = .data$x, y = .data$mean * y_scale)) +
    ggplot2::geom_ribbon(ggplot2::aes(ymin = .data$ci_lo * y_scale, ymax = .data$ci_hi * y_scale, fill = .data$what),
                         alpha = 0.25, colour = NA) +
    ggplot2::geom_line(ggplot2::aes(colour = .data$what), linewidth = 0.4)
  if (nrow(avg) > 0) {
    plot <- plot + ggplot2::geom_line(data = avg, colour = "black", linewidth = 1.1)
  }
  backends <- if ("backend" %in% names(summary)) unique(summary$backend) else character()
  facets <- if (length(backends) > 1) {
    ggplot2::facet_grid(rows = ggplot2::vars(.data$backend), cols = ggplot2::vars(.data$series))
  } else {
    ggplot2::facet_wrap(~ series, ncol = 1)
  }
  plot +
    facets +
    ggplot2::labs(x = x_label, y = y_label, colour = NULL, fill = NULL) +
    ggplot2::theme_bw() +
    ggplot2::theme(legend.position = "bottom")
}

#' A table of a scenario's classes as the paper's Tables 1-3 list them, from
#' the resolved scenario (scenario.json): class (the paper's numbering, cls
#' + 1), u_i and W_i of the named series (u in ppm, W in bytes, shown as the
#' paper's bits: 8 x bytes, less the byte rounding), the sources, the RTT
#' the topology gives them, and the start and stop times.
#'
#' @param scenario A resolved scenario (read_scenario_json()).
#' @param series The series whose u_i and W_i are shown, one or more (their u
#'   values are joined with ", " where they differ).
scenario_class_table <- function(scenario, series) {
  groups <- scenario$workload$groups
  topo <- scenario$topology
  params <- purrr::map(series, function(s) {
    p <- scenario$series[[s]]$params
    if (is.null(p)) stop(sprintf("class table: no series %s in the scenario", s))
    p
  })
  per_class <- function(value, cls) {
    parts <- strsplit(as.character(value), ":", fixed = TRUE)[[1]]
    as.numeric(if (length(parts) == 1) parts else parts[[cls + 1]])
  }
  purrr::imap_dfr(groups, function(g, name) {
    cls <- as.integer(g$cls %||% 0)
    u <- unique(purrr::map_dbl(params, function(p) per_class(p$u_ppm %||% 930000, cls) / 1e6))
    w <- unique(purrr::map_dbl(params, function(p) per_class(p$weights_bytes, cls)))
    delay <- as.numeric(g$access_delay_s %||% topo$access_delay_s)
    rtt_ms <- round(2 * (2 * delay + as.numeric(topo$bottleneck_delay_s)) * 1000)
    app <- g$app %||% "bulk"
    count <- as.integer(g$count)
    sources <- if (app == "bulk") {
      ramp <- as.numeric(g$start_spacing_s %||% 0)
      if (ramp > 0) sprintf("1-%d TCP (one more every %g s) %d ms RTT", count, ramp, rtt_ms)
      else sprintf("%d TCP %d ms RTT", count, rtt_ms)
    } else {
      sprintf("%d UDP %d ms RTT %g Mbps", count, rtt_ms, as.numeric(g$rate_bps) / 1e6)
    }
    tibble::tibble(Class = cls + 1L, `u_i Utilisation` = paste(format(u), collapse = ", "),
                   `W_i (bytes)` = paste(w, collapse = ", "), Sources = sources,
                   `Start (sec)` = as.numeric(g$start_offset_s %||% 0),
                   `Stop (sec)` = as.numeric(g$stop_s %||% scenario$duration_s))
  }) |>
    dplyr::arrange(.data$Class)
}

#' Print a table_scenario item (the report's tables): the class table of
#' its scenario as the runs resolved it, for the series the item names.
print_scenario_table <- function(ctx, item) {
  scenario <- ctx$scenarios[[item$scenario]]
  if (is.null(scenario)) {
    cat(sprintf("\n**Not generated: no scenario.json for %s in the results.**\n\n", item$scenario))
    return(invisible())
  }
  table <- scenario_class_table(scenario, unlist(item$series))
  caption <- sprintf(paste(
    "%s (paper): \u201c%s\u201d. qlab: generated from scenarios/%s.yaml as the runs resolved it (scenario.json;",
    "series %s): the paper's class k is cls k - 1; W in bytes (the paper's bits / 8, rounded up); the RTT from",
    "the topology's propagation delays; start = the class's first start (each source adds a draw from [0, %g s))."),
    item$label, item$caption, item$scenario, paste(unlist(item$series), collapse = ", "),
    as.numeric(scenario$workload$start_jitter_s %||% 0))
  print_html(html_table(table, caption = caption))
}

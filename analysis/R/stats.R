# Statistics over seeds. Each run (series x sweep point x seed) gives one
# value of a metric; we summarise the seeds of a point with the mean and a
# 95% Student t-interval, and compare two series by pairing runs that share
# the seed and the sweep values (common random numbers: same seed, same
# flow start times and task sizes).

confidence_level <- 0.95

method_seeds <- "mean over n seeds, 95% t-interval (mean ± qt(0.975, n-1)·sd/√n)"
method_paired_difference <- paste("paired by seed: mean of per-seed differences (treatment − baseline),",
                                  "95% t-interval on the differences")
method_paired_ratio <- "paired by seed: mean of per-seed ratios (treatment / baseline), 95% t-interval on the ratios"

#' Mean and 95% t-interval of a vector of per-seed values.
#'
#' @return A one-row tibble: n, mean, sd, ci_lo, ci_hi. With one value the
#'   sd and interval are NA (no spread can be estimated).
t_interval <- function(x, level = confidence_level) {
  if (!is.numeric(x)) {
    stop("t-interval: `x` must be numeric")
  }
  if (level <= 0 || level >= 1) {
    stop("t-interval: `level` must lie strictly between 0 and 1")
  }
  x <- x[!is.na(x)]
  n <- length(x)
  if (n == 0) {
    return(one_row(n = 0L, mean = NA_real_, sd = NA_real_, ci_lo = NA_real_, ci_hi = NA_real_))
  }
  centre <- mean(x)
  if (n == 1) {
    return(one_row(n = 1L, mean = centre, sd = NA_real_, ci_lo = NA_real_, ci_hi = NA_real_))
  }
  spread <- stats::sd(x)
  if (spread == 0) {
    # every seed gave the same value: an interval of width 0 (t.test refuses constant data)
    return(one_row(n = n, mean = centre, sd = 0, ci_lo = centre, ci_hi = centre))
  }
  test <- one_sample_t(x, conf_level = level)
  one_row(n = n, mean = centre, sd = spread, ci_lo = test$conf_int[[1]], ci_hi = test$conf_int[[2]])
}

#' A one-row tibble of named values (one each), as tibble::tibble() makes it
#' without its checks: those take about 0.5 ms a call, and a paper
#' summarises thousands of cells, a tibble each.
one_row <- function(...) {
  tibble::new_tibble(list(...), nrow = 1L)
}

#' The one-sample t-test of `x` (no NA, two values or more), computed as
#' stats::t.test() computes it, operation for operation, so that every value
#' is the same double: t.test() with broom::tidy() cost about 1 ms a call, and
#' a paper summarises and tests thousands of cells (ncq-conf: most of its CPU
#' time).
#'
#' @param mu The mean under the null hypothesis.
#' @param alternative "two.sided", "greater" or "less".
#' @param conf_level The confidence level of the interval.
#' @return A list: `statistic`, `df`, `p_value`, `conf_int` (two values).
one_sample_t <- function(x, mu = 0, alternative = "two.sided", conf_level = confidence_level) {
  nx <- length(x)
  mx <- mean(x)
  vx <- stats::var(x)
  if (nx < 2) stop("not enough 'x' observations")
  df <- nx - 1
  stderr <- sqrt(vx / nx)
  if (stderr < 10 * .Machine$double.eps * abs(mx)) stop("data are essentially constant")
  tstat <- (mx - mu) / stderr
  if (alternative == "less") {
    p_value <- stats::pt(tstat, df)
    cint <- c(-Inf, tstat + stats::qt(conf_level, df))
  } else if (alternative == "greater") {
    p_value <- stats::pt(tstat, df, lower.tail = FALSE)
    cint <- c(tstat - stats::qt(conf_level, df), Inf)
  } else {
    p_value <- 2 * stats::pt(-abs(tstat), df)
    alpha <- 1 - conf_level
    cint <- stats::qt(1 - alpha / 2, df)
    cint <- tstat + c(-cint, cint)
  }
  list(statistic = tstat, df = df, p_value = p_value, conf_int = mu + cint * stderr)
}

#' Summarise a long table of per-run values over seeds.
#'
#' @param df Long table with a `value` column (one row per run and metric).
#' @param by Columns that identify a summary cell (e.g. series, flows, metric).
#' @return `by` plus n, mean, sd, ci_lo, ci_hi, method (and n_censored summed
#'   over the seeds when `df` has it).
summarise_over_seeds <- function(df, by) {
  require_columns(df, c(by, "value"), "summarise over seeds")
  has_censored <- "n_censored" %in% names(df)
  df |>
    dplyr::group_by(dplyr::across(dplyr::all_of(by))) |>
    dplyr::summarise(
      t_interval(.data$value),
      n_censored = if (has_censored) sum(.data$n_censored, na.rm = TRUE) else NA_integer_,
      .groups = "drop"
    ) |>
    dplyr::mutate(method = method_seeds)
}

#' Pair the runs of two series that share the seed and the `by` values.
#'
#' @param df Long per-run table with `series`, `seed`, `value`.
#' @param treatment,baseline Series labels.
#' @param by Columns a pair must share besides the seed (sweep values, metric, backend).
#' @return One row per pair: `by`, seed, treatment, baseline, difference, ratio.
pair_by_seed <- function(df, treatment, baseline, by) {
  require_columns(df, c(by, "series", "seed", "value"), "pair by seed")
  for (label in c(treatment, baseline)) {
    if (!label %in% df$series) {
      stop(sprintf("pair by seed: series `%s` must be present in the data (found: %s)",
                   label, paste(unique(df$series), collapse = ", ")))
    }
  }
  keys <- c(by, "seed")
  pick <- function(label, name) {
    df |>
      dplyr::filter(.data$series == label) |>
      dplyr::select(dplyr::all_of(keys), value = "value") |>
      dplyr::rename(!!name := "value")
  }
  treated <- pick(treatment, "treatment")
  base <- pick(baseline, "baseline")
  if (anyDuplicated(treated[keys]) || anyDuplicated(base[keys])) {
    stop("pair by seed: each series must have at most one run per seed and `by` values")
  }
  dplyr::inner_join(treated, base, by = keys) |>
    dplyr::mutate(
      difference = .data$treatment - .data$baseline,
      ratio = dplyr::if_else(.data$baseline == 0, NA_real_, .data$treatment / .data$baseline)
    )
}

#' Paired comparison of two series at each `by` cell.
#'
#' @return `by` plus `contrast` ("difference" or "ratio"), n, mean, sd,
#'   ci_lo, ci_hi, method.
compare_paired <- function(df, treatment, baseline, by) {
  pairs <- pair_by_seed(df, treatment, baseline, by)
  by_cell <- dplyr::group_by(pairs, dplyr::across(dplyr::all_of(by)))
  differences <- by_cell |>
    dplyr::summarise(t_interval(.data$difference), .groups = "drop") |>
    dplyr::mutate(contrast = "difference", method = method_paired_difference)
  ratios <- by_cell |>
    dplyr::summarise(t_interval(.data$ratio), .groups = "drop") |>
    dplyr::mutate(contrast = "ratio", method = method_paired_ratio)
  out <- dplyr::bind_rows(differences, ratios) |>
    dplyr::mutate(treatment = treatment, baseline = baseline)
  # contrast right after the cell columns (first when there are none: one point)
  if (length(by) == 0) {
    dplyr::relocate(out, "contrast")
  } else {
    dplyr::relocate(out, "contrast", .after = dplyr::all_of(by))
  }
}

#' Every per-run metric of a scenario, as a long table.
#'
#' Invalid runs (`valid == FALSE`: the backend's fidelity checks failed) are
#' left out with a warning.
#'
#' The metrics are those of analysis/R/metrics.R; some exist only where the
#' data does: per class (`class_goodput_bps`, `goodput_share`, and
#' `share_ratio` with `share_ratio_max_dev` for series with a `weights_bytes`
#' parameter) when flows have more than one class; per UDP group
#' (`loss_ratio`, `delay_mean_s`, `delay_max_s`; `asi` on a dumbbell) and per
#' group of VoIP calls (`voip_r_factor`, `voip_mos`); `avg_goodput_bps` per
#' group of any application; per traced queue and band
#' from a collected queues table (`mean_backlog_pkts`) and packets table
#' (`sojourn_p99_s`, `sojourn_max_s`), both after `warmup_s`.
#'
#' @param results One scenario's results (`read_scenario_results()`).
#' @param warmup_s Queue samples and packet events before this time are ignored.
#' @param metrics The registered metrics to compute (`metrics_named()`: those
#'   a paper's items and claims name), or NULL for every one the data allows.
#'   A summary none of whose metrics is wanted is not computed: a paper's
#'   analysis spent most of its time on metrics no item or claim reads.
#' @return Run keys, sweep variables, `metric`, the part of the run it is about
#'   (`group`, `cls`, `queue`, `band`: NA where the metric is not about one),
#'   `value`, `n_censored` (censored flows in that run for completion-time
#'   metrics, else 0). Attribute `computed`: `metrics` (select_metric_rows()
#'   stops on a metric outside it rather than find no rows).
compute_run_metrics <- function(results, warmup_s = 0, metrics = NULL) {
  unknown <- setdiff(metrics, metric_registry$name)
  if (length(unknown) > 0) {
    stop(sprintf("run metrics: %s must be registered in analysis/R/metrics.R",
                 paste0("`", unknown, "`", collapse = ", ")))
  }
  # whether any of these metrics is wanted
  want <- function(...) is.null(metrics) || any(c(...) %in% metrics)
  runs <- results$runs
  invalid <- runs[!runs$valid, run_key_columns]
  if (nrow(invalid) > 0) {
    warning(sprintf("%d run(s) of %s failed the backend's fidelity checks and are left out",
                    nrow(invalid), paste(unique(invalid$scenario), collapse = ", ")))
  }
  flows <- dplyr::anti_join(results$flows, invalid, by = run_key_columns)
  by <- c(run_key_columns, results$sweep_vars)
  if (nrow(flows) == 0) {
    # no valid run: no metrics (summaries of zero runs would not be defined)
    empty <- results$runs[0, intersect(by, names(results$runs)), drop = FALSE]
    empty <- dplyr::mutate(tibble::as_tibble(empty), metric = character(), value = numeric(), n_censored = integer())
    empty <- with_metric_keys(empty) |>
      dplyr::relocate(dplyr::all_of(c("metric", metric_key_columns)), .before = "value")
    attr(empty, "computed") <- metrics
    return(empty)
  }
  # one metric from each named column of `df`, keeping the key columns it has
  longer <- function(df, columns, keys = character(), censored = NULL) {
    kept <- c(by, keys)
    purrr::imap_dfr(columns, function(column, metric) {
      # the columns picked by name, as transmute() below would give them: its
      # tidy evaluation cost milliseconds a call, hundreds of calls (srd: 2.5 s)
      if (tibble::is_tibble(df) && !dplyr::is_grouped_df(df) && !anyDuplicated(kept) &&
            all(c(kept, column, censored) %in% names(df))) {
        table <- df[kept]
        table$metric <- rep(metric, nrow(df))
        table$value <- df[[column]]
        table$n_censored <- if (is.null(censored)) rep(0L, nrow(df)) else df[[censored]]
        return(table)
      }
      dplyr::transmute(
        df,
        dplyr::across(dplyr::all_of(c(by, keys))),
        metric = metric,
        value = .data[[column]],
        n_censored = if (is.null(censored)) 0L else .data[[censored]]
      )
    })
  }
  bulk <- dplyr::filter(flows, .data$app == "bulk") # completion times: TCP tasks only
  completion <- function(group) {
    times <- summarise_completion_time(bulk, by, group)
    if (!is.null(group)) times$group <- group
    longer(times, c(avg_fct_s = "avg_fct_s", worst_fct_s = "worst_fct_s"),
           if (is.null(group)) character() else "group", "n_censored")
  }
  completion_by_size <- function(group) {
    times <- summarise_fct_by_size(bulk, by, group)
    if (!is.null(group)) times$group <- rep(group, nrow(times))
    purrr::map_dfr(split(times, times$metric), function(bucket) {
      longer(bucket, purrr::set_names("avg_fct_s", bucket$metric[[1]]),
             if (is.null(group)) character() else "group", "n_censored")
    })
  }
  group_goodput <- function(group) {
    goodput <- summarise_group_goodput(flows, by, group)
    goodput$group <- rep(group, nrow(goodput))
    longer(goodput, c(avg_goodput_bps = "avg_goodput_bps"), "group")
  }
  class_metrics <- NULL
  if (length(unique(flows$cls)) > 1) {
    shares <- summarise_class_goodput(flows, by)
    ratios <- relate_shares_to_weights(shares, function(series) series_weights(results$scenario, series))
    class_metrics <- dplyr::bind_rows(
      if (want("class_goodput_bps", "goodput_share")) {
        longer(shares, c(class_goodput_bps = "class_goodput_bps", goodput_share = "share"), "cls")
      },
      if (want("per_flow_goodput_ratio")) {
        longer(summarise_per_flow_ratio(flows, by), c(per_flow_goodput_ratio = "per_flow_goodput_ratio"), "cls")
      },
      if (want("share_ratio")) longer(ratios, c(share_ratio = "share_ratio"), "cls"),
      if (nrow(ratios) > 0 && want("share_ratio_max_dev")) {
        longer(summarise_share_deviation(ratios, by), c(share_ratio_max_dev = "share_ratio_max_dev"))
      }
    )
  }
  udp_metrics <- NULL
  if (any(flows$app %in% udp_apps)) {
    udp_metrics <- dplyr::bind_rows(
      if (want("loss_ratio", "delay_mean_s", "delay_max_s")) {
        longer(summarise_udp_groups(flows, by),
               c(loss_ratio = "loss_ratio", delay_mean_s = "delay_mean_s", delay_max_s = "delay_max_s"), "group")
      },
      if (!is.null(results$scenario)) {
        dplyr::bind_rows(
          if (want("wait_mean_s")) {
            longer(summarise_bottleneck_wait(flows, by, results$scenario), c(wait_mean_s = "wait_mean_s"), "group")
          },
          if (want("offered_load")) {
            longer(summarise_offered_load(flows, by, results$scenario), c(offered_load = "offered_load"))
          }
        )
      }
    )
    # the calls of each VoIP group on any topology: the paper's eq. (22) R
    # and the ASI over their one-way delays
    voip_groups <- if (want("r_factor", "asi_oneway")) sort(unique(flows$group[flows$app == "voip"]))
    udp_metrics <- dplyr::bind_rows(udp_metrics, purrr::map_dfr(voip_groups, function(group) {
      r <- summarise_group_r_factor(flows, by, group)
      r$group <- rep(group, nrow(r))
      asi <- summarise_group_asi(flows, by, group)
      asi$group <- rep(group, nrow(asi))
      dplyr::bind_rows(longer(r, c(r_factor = "r_factor"), "group"), longer(asi, c(asi_oneway = "asi"), "group"))
    }))
    # the sensors of a wireless_dumbbell (ncq-journal Scenario 2): their
    # Energy Potential and the ASI over their one-way delays (radio hops and
    # all: a multi-hop radio path has no fixed latency to subtract)
    topology <- results$scenario$topology
    sensor_groups <- if (identical(topology$kind, "wireless_dumbbell") && want("energy_potential", "asi_oneway")) {
      names(purrr::keep(results$scenario$workload$groups, function(g) identical(g$from, "wireless")))
    } else {
      character()
    }
    udp_metrics <- dplyr::bind_rows(udp_metrics, purrr::map_dfr(intersect(sensor_groups, flows$group), function(group) {
      ep <- summarise_energy_potential(flows, by, group)
      ep$group <- rep(group, nrow(ep))
      asi <- summarise_group_asi(flows, by, group)
      asi$group <- rep(group, nrow(asi))
      dplyr::bind_rows(longer(ep, c(energy_potential = "energy_potential"), "group"),
                       longer(asi, c(asi_oneway = "asi"), "group"))
    }))
  }
  voip_metrics <- NULL
  if (any(flows$app == "voip")) {
    voip_metrics <- dplyr::bind_rows(
      if (want("voip_r_factor", "voip_mos")) {
        longer(summarise_voip_quality(flows, by), c(voip_r_factor = "voip_r_factor", voip_mos = "voip_mos"), "group")
      },
      if (want("voip_r_factor_amr", "voip_mos_amr")) {
        longer(summarise_voip_quality_amr(flows, by),
               c(voip_r_factor_amr = "voip_r_factor_amr", voip_mos_amr = "voip_mos_amr"), "group")
      },
      if (want("voip_mos_amr_calls")) {
        longer(summarise_voip_calls_amr(flows, by), c(voip_mos_amr_calls = "voip_mos_amr_calls"), "group")
      }
    )
  }
  # the ASI needs each UDP group's delay without queueing (a dumbbell's)
  latency <- if (any(flows$app %in% udp_apps) && !is.null(results$scenario) && want("asi")) {
    dumbbell_latency_table(results$scenario, flows)
  }
  asi_metrics <- if (!is.null(latency)) longer(summarise_udp_asi(flows, by, latency), c(asi = "asi"), "group")
  # (with every run valid, the table itself: the anti-join would copy it whole)
  valid_only <- function(table) {
    if (nrow(invalid) == 0) table else dplyr::anti_join(table, invalid, by = run_key_columns)
  }
  # the processor-sharing reference and the link utilisation need the bottleneck's rate (a dumbbell's)
  capacity_bps <- results$scenario$topology$bottleneck_rate_bps
  queue_metrics <- NULL
  if (want("mean_backlog_pkts", "total_backlog_pkts", "backlog_slope_pkts_per_source") && !is.null(results$queues)) {
    # the valid runs' samples, once
    queues <- valid_only(results$queues)
    queue_metrics <- dplyr::bind_rows(
      if (want("mean_backlog_pkts")) {
        longer(summarise_band_backlog(queues, by, warmup_s),
               c(mean_backlog_pkts = "mean_backlog_pkts"), c("queue", "band"))
      },
      if (want("total_backlog_pkts")) {
        longer(summarise_total_backlog(queues, by, warmup_s),
               c(total_backlog_pkts = "total_backlog_pkts"), "queue")
      }
    )
    # sources switched on and off (rbaqm Fig. 7): the backlog against the load, within each run
    sources <- if (!is.null(results$scenario) && want("backlog_slope_pkts_per_source")) {
      scenario_source_groups(results$scenario)
    }
    if (!is.null(sources)) {
      queue_metrics <- dplyr::bind_rows(queue_metrics, longer(
        summarise_backlog_load_slope(queues, by, source_phases(sources)),
        c(backlog_slope_pkts_per_source = "backlog_slope_pkts_per_source"), "queue"))
    }
  }
  sojourn_metrics <- NULL
  drop_metrics <- NULL
  if (want(packet_metrics) && !is.null(results$packets)) {
    # the valid runs' events, once: an anti-join of millions of events took
    # seconds each time (srd: 4 s of its 40)
    packets <- valid_only(results$packets)
    if (want("sojourn_p99_s", "sojourn_max_s")) {
      sojourn_metrics <- longer(summarise_band_sojourn(packets, by, warmup_s),
                                c(sojourn_p99_s = "sojourn_p99_s", sojourn_max_s = "sojourn_max_s"),
                                c("queue", "band"))
    }
    if (length(unique(results$packets$band)) > 1 && want("jitter_class_slope_s")) {
      sojourn_metrics <- dplyr::bind_rows(sojourn_metrics, longer(
        summarise_jitter_class_slope(packets, by, warmup_s),
        c(jitter_class_slope_s = "jitter_class_slope_s"), "queue"))
    }
    if (want("dropped_pkts", "drop_ratio")) {
      drops <- summarise_band_drops(packets, by, warmup_s)
      drop_metrics <- dplyr::bind_rows(
        if (want("dropped_pkts")) longer(drops$drops, c(dropped_pkts = "dropped_pkts"), c("queue", "band", "reason")),
        if (want("drop_ratio")) longer(drops$ratios, c(drop_ratio = "drop_ratio"), c("queue", "band"))
      )
    }
    # sources switched on and off (rbaqm Fig. 8): each band's drops against the load, within each run
    sources <- if (!is.null(results$scenario) && want("drop_ratio_slope_per_source")) {
      scenario_source_groups(results$scenario)
    }
    if (!is.null(sources)) {
      drop_metrics <- dplyr::bind_rows(drop_metrics, longer(
        summarise_drop_load_slope(packets, by, source_phases(sources)),
        c(drop_ratio_slope_per_source = "drop_ratio_slope_per_source"), c("queue", "band")))
    }
    # the system's ASI over its traffic classes at the gateway (ncq-journal Fig. 15(a))
    if (identical(results$scenario$topology$kind, "wireless_dumbbell") && want("asi_system")) {
      drop_metrics <- dplyr::bind_rows(drop_metrics, longer(
        summarise_class_asi(packets, flows, by, warmup_s), c(asi_system = "asi")))
    }
    rate_bps <- results$scenario$topology$bottleneck_rate_bps
    # the rate per run where a sweep sets it (srd's capacity), else the scenario's
    swept_rate <- if (!is.null(results$scenario)) add_bottleneck_capacity(valid_only(runs), results$scenario)
    if (!is.null(swept_rate) && nrow(swept_rate) > 0) rate_bps <- swept_rate
    if (all(c("len_bytes", "flow_id") %in% names(results$packets)) && !is.null(rate_bps) &&
          want(group_queue_metrics)) {
      # loss and delay per traffic group at a dumbbell's traced queue (cqaqm)
      drop_metrics <- dplyr::bind_rows(drop_metrics, longer(
        summarise_group_queue(packets, flows, by,
                              if (is.data.frame(rate_bps)) rate_bps else as.numeric(rate_bps), warmup_s),
        c(queue_loss_ratio = "queue_loss_ratio", queue_delay_mean_s = "queue_delay_mean_s",
          queue_delay_p50_s = "queue_delay_p50_s", queue_delay_p95_s = "queue_delay_p95_s",
          queue_delay_p99_s = "queue_delay_p99_s", queue_wait_mean_s = "queue_wait_mean_s"), c("queue", "group")))
    }
    if ("len_bytes" %in% names(results$packets) && want("useful_50ms_bps")) {
      drop_metrics <- dplyr::bind_rows(drop_metrics, longer(
        summarise_useful_50ms(packets, by, results$runs, warmup_s),
        c(useful_50ms_bps = "useful_50ms_bps"), c("queue", "band")))
    }
    if ("len_bytes" %in% names(results$packets) && want("link_utilisation")) {
      # a dumbbell's link utilisation by class and group (srd)
      capacity <- if (!is.null(results$scenario)) add_bottleneck_capacity(valid_only(runs), results$scenario)
      if (!is.null(capacity) && nrow(capacity) > 0 && "flow_id" %in% names(results$packets)) {
        drop_metrics <- dplyr::bind_rows(drop_metrics, longer(
          summarise_link_utilisation(packets, flows, capacity, by, warmup_s),
          c(link_utilisation = "utilisation"), c("queue", "cls", "group")))
      }
    }
    # classes switched on and off with WFQ weights (rbaqm Figs. 4, 8): every
    # series weighted, and a phase with two classes or more
    weights_of <- function(series) series_weights(results$scenario, series)
    if (!is.null(results$scenario$workload$groups) && "len_bytes" %in% names(results$packets) &&
          want("phase_share_max_dev") &&
          all(purrr::map_lgl(unique(runs$series), function(s) !is.null(weights_of(s))))) {
      classes <- scenario_classes(results$scenario)
      if (any(lengths(class_phases(classes)$active) >= 2)) {
        drop_metrics <- dplyr::bind_rows(drop_metrics, longer(
          summarise_phase_share(packets, by, classes, weights_of),
          c(phase_share_max_dev = "phase_share_max_dev")))
      }
    }
  }
  ps_metrics <- NULL
  if (nrow(bulk) > 0 && !is.null(capacity_bps) && want("ps_worst_fct_s")) {
    ps_metrics <- longer(summarise_processor_sharing(bulk, by, as.numeric(capacity_bps)),
                         c(ps_worst_fct_s = "ps_worst_fct_s"), "group")
  }
  completion_wanted <- nrow(bulk) > 0 && want("avg_fct_s", "worst_fct_s")
  out <- dplyr::bind_rows(
    if (want("system_goodput_bps")) {
      longer(summarise_system_goodput(flows, by), c(system_goodput_bps = "system_goodput_bps"))
    },
    if (want("fairness_jain")) longer(summarise_fairness(flows, by), c(fairness_jain = "fairness_jain")),
    if (completion_wanted) completion(NULL),
    if (completion_wanted) purrr::map_dfr(sort(unique(bulk$group)), completion),
    if (nrow(bulk) > 0 && "bytes_goal" %in% names(flows) && want(fct_size_buckets$metric)) {
      dplyr::bind_rows(completion_by_size(NULL), purrr::map_dfr(sort(unique(bulk$group)), completion_by_size))
    },
    if (want("avg_goodput_bps")) purrr::map_dfr(sort(unique(flows$group)), group_goodput),
    # packets per second needs the segment size (every trace has it; a hand-made table may not)
    if (nrow(bulk) > 0 && "seg_bytes" %in% names(flows) && want("tcp_throughput_pps")) {
      longer(summarise_tcp_throughput(flows, by), c(tcp_throughput_pps = "tcp_throughput_pps"), "group")
    },
    class_metrics, udp_metrics, voip_metrics, asi_metrics, queue_metrics, sojourn_metrics, drop_metrics, ps_metrics
  )
  if (nrow(out) == 0) {
    # nothing wanted computes here: the empty table, typed
    out <- dplyr::mutate(flows[0, intersect(by, names(flows)), drop = FALSE],
                         metric = character(), value = numeric(), n_censored = integer())
  }
  # a summary computes its metrics together (voip_r_factor and voip_mos): keep those asked for
  if (!is.null(metrics)) out <- out[out$metric %in% metrics, ]
  out <- out |>
    with_metric_keys() |>
    dplyr::relocate(dplyr::all_of(c("metric", metric_key_columns)), .before = "value")
  attr(out, "computed") <- metrics
  out
}

# The metrics compute_run_metrics() derives from a packets table (it reads
# the table only when one of them is wanted).
group_queue_metrics <- c("queue_loss_ratio", "queue_delay_mean_s", "queue_delay_p50_s", "queue_delay_p95_s",
                         "queue_delay_p99_s", "queue_wait_mean_s")
packet_metrics <- c("sojourn_p99_s", "sojourn_max_s", "jitter_class_slope_s", "dropped_pkts", "drop_ratio",
                    "drop_ratio_slope_per_source", "asi_system", group_queue_metrics, "useful_50ms_bps",
                    "link_utilisation", "phase_share_max_dev")

#' The WFQ weights of one series of a resolved scenario, or NULL when its
#' discipline has no `weights_bytes` parameter set.
series_weights <- function(scenario, series) {
  params <- scenario$series[[series]]$params
  if (is.null(params$weights_bytes)) {
    return(NULL)
  }
  parse_weight_list(params$weights_bytes, as.integer(params$classes %||% 0L) %if_zero%
                      length(strsplit(as.character(params$weights_bytes), ":")[[1]]))
}

`%if_zero%` <- function(x, default) if (length(x) == 0 || is.na(x) || x == 0) default else x

# ---- tests behind the verdicts (analysis/R/claims.R) -----------------------

#' One-sided one-sample t-test of per-seed values (or paired contrasts).
#'
#' @param x Per-seed values.
#' @param null The value under the null hypothesis.
#' @param side "greater" (H1: mean > null) or "less" (H1: mean < null).
#' @return The p-value; NA with fewer than two values. With no spread (every
#'   value equal) the test is degenerate: 0 when the values lie strictly on
#'   the claimed side of `null`, else 1.
one_sided_p <- function(x, null, side) {
  side <- match.arg(side, c("greater", "less"))
  x <- x[!is.na(x)]
  n <- length(x)
  if (n < 2) {
    return(NA_real_)
  }
  if (stats::sd(x) == 0) {
    sign <- if (side == "greater") 1 else -1
    return(if (sign * (mean(x) - null) > 0) 0 else 1)
  }
  one_sample_t(x, mu = null, alternative = side)$p_value
}

#' Two one-sided tests (TOST) that the mean of `x` lies within [lower, upper].
#'
#' @return The TOST p-value, max of the two one-sided p-values (H1: mean >
#'   lower and H1: mean < upper); NA with fewer than two values.
tost_p <- function(x, lower, upper) {
  if (lower >= upper) {
    stop("TOST: the margin's `lower` must be below its `upper`")
  }
  max(one_sided_p(x, lower, "greater"), one_sided_p(x, upper, "less"))
}

#' Mean of per-seed values `y` estimated with a control variate `x` whose
#' expectation `x_expected` is known: the regression-adjusted estimator
#' (Lavenberg & Welch, Management Science 27(3), 1981; Law, Simulation
#' Modeling and Analysis, 5th ed., §11.4): the intercept of the least-squares
#' line of y on x - x_expected, i.e. mean(y) - slope (mean(x) - x_expected),
#' with that intercept's standard error and n - 2 degrees of freedom (exact
#' when (x, y) are jointly normal, as means over many packets are). The
#' slope is fitted on the same seeds, one degree of freedom fewer than the
#' plain t-interval's.
#'
#' @return A one-row tibble: n, estimate, se, df, slope; NA estimate with
#'   fewer than three seeds (no slope and spread to fit).
control_variate_mean <- function(y, x, x_expected) {
  if (!is.numeric(y) || !is.numeric(x) || length(y) != length(x)) {
    stop("control variate: `y` and `x` must be numeric vectors of one length (one value per seed)")
  }
  if (!is.numeric(x_expected) || length(x_expected) != 1 || !is.finite(x_expected)) {
    stop("control variate: `x_expected` must be one finite number (the control's known expectation)")
  }
  keep <- !is.na(y) & !is.na(x)
  y <- y[keep]
  x <- x[keep] - x_expected
  n <- length(y)
  if (n < 3 || stats::var(x) == 0) {
    return(tibble::tibble(n = n, estimate = NA_real_, se = NA_real_, df = NA_real_, slope = NA_real_))
  }
  fit <- summary(stats::lm(y ~ x))$coefficients
  tibble::tibble(n = n, estimate = fit[1, "Estimate"], se = fit[1, "Std. Error"], df = n - 2,
                 slope = fit[2, "Estimate"])
}

#' One-sided p-value of an estimate with a standard error and degrees of
#' freedom (a t statistic), against `null`: side "greater" (H1: above null)
#' or "less". With a zero standard error, 0 or 1 by the estimate's side.
t_p_value <- function(estimate, se, df, null, side) {
  side <- match.arg(side, c("greater", "less"))
  sign <- if (side == "greater") 1 else -1
  if (is.na(estimate) || is.na(se)) return(NA_real_)
  if (se == 0) return(if (sign * (estimate - null) > 0) 0 else 1)
  stats::pt(sign * (estimate - null) / se, df, lower.tail = FALSE)
}

#' Holm's step-down adjustment of a family of p-values (NA kept as NA, and
#' not counted in the family).
holm <- function(p) {
  adjusted <- rep(NA_real_, length(p))
  known <- !is.na(p)
  adjusted[known] <- stats::p.adjust(p[known], method = "holm")
  adjusted
}

# ---- frequency tables (the NCQ journal's Scenario 4) -------------------------

method_frequency <- paste(
  "paired by seed: per-run change 100·(treatment/baseline − 1) %, share of the runs in each interval (lo, hi],",
  "95% Clopper–Pearson interval of each share"
)

#' Exact (Clopper–Pearson) 95% interval of a share `k` of `n`, in percent.
#'
#' @return A list: `lo`, `hi` (NA when n = 0).
clopper_pearson_pct <- function(k, n, level = confidence_level) {
  if (!is.numeric(k) || !is.numeric(n) || any(k < 0 | k > n)) {
    stop("Clopper-Pearson: k must be a count between 0 and n")
  }
  alpha <- 1 - level
  n <- rep_len(n, length(k))
  lo <- ifelse(n == 0, NA_real_, ifelse(k == 0, 0, suppressWarnings(stats::qbeta(alpha / 2, k, n - k + 1))))
  hi <- ifelse(n == 0, NA_real_, ifelse(k == n, 1, suppressWarnings(stats::qbeta(1 - alpha / 2, k + 1, n - k))))
  list(lo = 100 * lo, hi = 100 * hi)
}

#' The intervals of a frequency table from its inner edges: (-Inf, e1],
#' (e1, e2], ..., (ek, Inf), right-closed ("an improvement up to 50%"
#' includes 50%, "more than 100%" does not include 100%).
#'
#' @param edges Increasing inner edges, in percent.
#' @return A tibble: `bin` (1..k+1), `lo`, `hi`, `label`.
frequency_bins <- function(edges) {
  if (!is.numeric(edges) || length(edges) == 0 || any(is.na(edges)) || any(diff(edges) <= 0)) {
    stop("frequency bins: `edges` must be increasing numbers (the inner edges, in percent)")
  }
  lo <- c(-Inf, edges)
  hi <- c(edges, Inf)
  label <- dplyr::case_when(
    is.infinite(lo) ~ sprintf("≤ %g%%", hi),
    is.infinite(hi) ~ sprintf("> %g%%", lo),
    TRUE ~ sprintf("(%g%%, %g%%]", lo, hi)
  )
  tibble::tibble(bin = seq_along(lo), lo = lo, hi = hi, label = label)
}

#' A frequency table of per-run changes: how many runs fall in each interval
#' of `frequency_bins(edges)`, as a share in percent with its exact 95% interval.
#'
#' @param change_pct Per-run changes, percent (NA: left out).
#' @return `frequency_bins(edges)` with `runs`, `n` (runs in the table),
#'   `share_pct`, `ci_lo`, `ci_hi`.
frequency_table <- function(change_pct, edges) {
  bins <- frequency_bins(edges)
  change_pct <- change_pct[!is.na(change_pct)]
  n <- length(change_pct)
  runs <- purrr::map_int(seq_len(nrow(bins)), function(i) sum(change_pct > bins$lo[[i]] & change_pct <= bins$hi[[i]]))
  ci <- clopper_pearson_pct(runs, n)
  bins$runs <- runs
  bins$n <- rep(n, nrow(bins))
  bins$share_pct <- if (n == 0) rep(NA_real_, nrow(bins)) else 100 * runs / n
  bins$ci_lo <- ci$lo
  bins$ci_hi <- ci$hi
  bins
}

#' Per-run percent changes of treatment against baseline, paired by seed
#' (and `by`): 100 · (treatment / baseline − 1); NA where the baseline is 0.
paired_change_pct <- function(df, treatment, baseline, by) {
  pairs <- pair_by_seed(df, treatment, baseline, by)
  dplyr::mutate(pairs, change_pct = 100 * (.data$ratio - 1))
}

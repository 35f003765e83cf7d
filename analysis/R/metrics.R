# The registry of per-run metrics: every metric name a paper spec
# (analysis/papers/<paper>.yaml) or a claims file (analysis/claims/<paper>.yaml)
# may use is a literal row here, so a grep of the name finds what it is, its
# unit and the function that computes it (and that function's test,
# tests/testthat/test-metric-<file>.R).
#
# A metric of a part of a run (a traffic group, a class, a queue's band) keeps
# one name; the part is given beside it, in the spec and in the long tables,
# by the columns `metric_key_columns`:
#
#   metric: avg_fct_s            group: noncongestive
#   metric: mean_backlog_pkts    band: 0            (queue: bottleneck:L)
#   metric: dropped_pkts         band: 1   reason: precedence_cross
#
# `keys` says which of those columns a metric's rows carry. A key a spec leaves
# out selects the rows where it is NA: the metric over all of them (avg_fct_s
# without a group is over every bulk flow). The queue is the exception: it may
# be left out when the runs traced one queue.

metric_key_columns <- c("group", "cls", "queue", "band", "reason")

metric_registry <- tibble::tribble(
  ~name, ~keys, ~unit, ~computed_by, ~description,
  "system_goodput_bps", "", "bit/s", "summarise_system_goodput",
  "System Goodput (ncq-conf §4.1): the mean of the flows' goodputs (bytes delivered × 8 / time taken)",
  "avg_goodput_bps", "group", "bit/s", "summarise_group_goodput",
  paste("Average Goodput (ncq-journal §5.2.1) of a traffic group, TCP or UDP: the mean of its flows' goodputs (over",
        "all flows: system_goodput_bps)"),
  "fairness_jain", "", "1", "summarise_fairness",
  "Jain's fairness index over the flows' goodputs",
  "avg_fct_s", "group", "s", "summarise_completion_time",
  "average completion time of the bulk (TCP) tasks of a group, or of all of them; censored at the run's end",
  "avg_fct_lt10k_s", "group", "s", "summarise_fct_by_size",
  "avg_fct_s of the tasks (bulk TCP flows) of fewer than 10,000 bytes (bytes_goal; the web workloads' short transfers)",
  "avg_fct_10k_100k_s", "group", "s", "summarise_fct_by_size",
  "avg_fct_s of the tasks (bulk TCP flows) of 10,000 to 99,999 bytes (bytes_goal)",
  "avg_fct_ge100k_s", "group", "s", "summarise_fct_by_size",
  "avg_fct_s of the tasks (bulk TCP flows) of 100,000 bytes or more (bytes_goal; the Pareto sizes' tail)",
  "worst_fct_s", "group", "s", "summarise_completion_time",
  "worst (largest) completion time of the bulk (TCP) tasks of a group, or of all of them; censored at the run's end",
  "class_goodput_bps", "cls", "bit/s", "summarise_class_goodput",
  "sum of the goodputs of a class's flows (runs with more than one class)",
  "goodput_share", "cls", "1", "summarise_class_goodput",
  "a class's share of the run's summed goodput",
  "share_ratio", "cls", "1", "relate_shares_to_weights",
  "a class's goodput share over its weight's share W_k / sum W (series with a weights_bytes parameter)",
  "share_ratio_max_dev", "", "1", "summarise_share_deviation",
  "largest |share_ratio - 1| over the classes of a run",
  "loss_ratio", "group", "1", "summarise_udp_groups",
  "UDP datagrams of a group lost / sent",
  "delay_mean_s", "group", "s", "summarise_udp_groups",
  "mean one-way delay of a UDP group's received datagrams",
  "delay_max_s", "group", "s", "summarise_udp_groups",
  "largest one-way delay of a UDP group's received datagrams",
  "wait_mean_s", "group", "s", "summarise_bottleneck_wait",
  paste("mean time a UDP group's datagrams waited at a dumbbell's bottleneck: mean one-way delay minus the path's",
        "transmission and propagation times"),
  "offered_load", "", "1", "summarise_offered_load",
  paste("load a run's Poisson streams offered a dumbbell's bottleneck: the bits they sent on the wire (IP length plus",
        "the backend's framing) over the bottleneck's rate x their window (the validation claims' control variate)"),
  "voip_r_factor", "group", "1", "summarise_voip_quality",
  paste("E-model R of a group of VoIP calls (app voip): their mean one-way delay plus 10 ms of G.711 encoding, their",
        "loss ratio, G.711 with PLC (ITU-T G.107, Cole & Rosenbluth's delay impairment; ncq-journal §5.2.3)"),
  "voip_mos", "group", "1", "summarise_voip_quality",
  "MOS (ITU-T G.107 Annex B, 1 to 4.5) of a group of VoIP calls, from their voip_r_factor",
  "voip_r_factor_amr", "group", "1", "summarise_voip_quality_amr",
  paste("E-model R of a group of VoIP calls (app voip) rated as AMR 12.2 kbit/s (Ie 5, Bpl 10): mean one-way delay",
        "plus 25 ms of codec delay, loss ratio (srd §5, metric-voip-amr.R)"),
  "voip_mos_amr", "group", "1", "summarise_voip_quality_amr",
  "MOS (ITU-T G.107 Annex B) of a group of AMR 12.2 VoIP calls, from their voip_r_factor_amr (srd Figs. 4(a), 5(a))",
  "voip_mos_amr_calls", "group", "1", "summarise_voip_calls_amr",
  paste("mean over a group's AMR 12.2 calls of each call's MOS (E-model from its own mean one-way delay + 25 ms and",
        "loss; a call that received nothing: 1; srd's transient and VoIP-population experiments)"),
  "link_utilisation", "group cls queue", "1", "summarise_link_utilisation",
  paste("IP bits a traced queue of a dumbbell sent after the warm-up for a class's (cls) or a group's flows, or for",
        "all (neither), over the bottleneck's capacity x the time (srd Figs. 4(b), 6(a)-8(a); rbaqm Fig. 9 and the",
        "sensitivity figure, in all; packets table)"),
  "asi", "group", "1", "summarise_udp_asi",
  paste("Application Satisfaction Index (ncq-journal §5.2.2) over a UDP group's flows on a dumbbell: each flow's",
        "mean queueing delay against its share of the group's data times the group's largest queueing delay",
        "(per-term reading)"),
  "r_factor", "group", "1", "summarise_group_r_factor",
  paste("mean R of a voip group's calls by the ncq-journal's eq. (22) (G.711), mouth-to-ear delay = mean one-way",
        "delay + 10 ms; a call that received nothing: 0"),
  "asi_oneway", "group", "1", "summarise_group_asi",
  paste("Application Satisfaction Index (ncq-journal §5.2.2, per-term reading) of a voip group (or a group of",
        "wireless sensors), a node per call (sensor): its mean one-way delay and bytes delivered, Delay_max the",
        "group's largest delay"),
  "asi_system", "", "1", "summarise_class_asi",
  paste("Application Satisfaction Index (ncq-journal §5.2.2, Fig. 15(a), per-term reading) of a wireless_dumbbell",
        "run, a unit per traffic group: its packets' mean sojourn at the traced gateway queue and its bytes",
        "delivered, Delay_max the largest sojourn (packets table)"),
  "energy_potential", "group", "1", "summarise_energy_potential",
  paste("Energy Potential (ncq-journal §5.2.2, Fig. 14(c)) of a UDP group from wireless nodes: the mean over its",
        "flows of 1 - (a (T - G) + b (Tmax - T)) / Tmax, a = b = 1, Tmax the rate the flow offers (= G / Tmax)"),
  "mean_backlog_pkts", "queue band", "packets", "summarise_band_backlog",
  "time-average backlog of a band of a traced queue, after the warm-up (queues table)",
  "sojourn_p99_s", "queue band", "s", "summarise_band_sojourn",
  "99th percentile (type 1) of the sojourn of a band's dequeued packets, after the warm-up (packets table)",
  "sojourn_max_s", "queue band", "s", "summarise_band_sojourn",
  "largest sojourn of a band's dequeued packets, after the warm-up (packets table)",
  "dropped_pkts", "queue band reason", "packets", "summarise_band_drops",
  paste("packets of a band of a traced queue dropped for a reason (drop_reasons; 0 when none), after the warm-up",
        "(packets table)"),
  "drop_ratio", "queue band", "1", "summarise_band_drops",
  paste("packets of a band dropped / packets that arrived at it (admitted or dropped on arrival), after the warm-up",
        "(packets table)"),
  "per_flow_goodput_ratio", "cls", "1", "summarise_per_flow_ratio",
  paste("mean goodput per flow of a class over that of class 0 (runs with more than one class; srd: R over D, to",
        "compare with k)"),
  "ps_worst_fct_s", "group", "s", "summarise_processor_sharing",
  paste("worst completion time of the bulk tasks of a group (or of all) under processor sharing at the bottleneck",
        "rate: a lower bound"),
  "tasks_completed", "", "tasks", "count_tasks_completed",
  "tasks whose last byte has arrived by a time t (the tasks_over_time figures; a time series, not a per-run value)",
  "total_backlog_pkts", "queue", "packets", "summarise_total_backlog",
  "time-average of the packets queued in every band of a traced queue, after the warm-up (queues table)",
  "useful_50ms_bps", "queue band", "bit/s", "summarise_useful_50ms",
  paste("IP bits per second of a band's packets that left the queue within 50 ms of arriving, from the warm-up to",
        "the run's end (rbaqm Fig. 9's useful data; packets table)"),
  "phase_share_max_dev", "", "1", "summarise_phase_share",
  paste("largest |rate / fair share - 1| of a class over the phases of a run in which two classes or more are active",
        "(second half of each phase), the fair shares weighted by W with non-bottlenecked classes keeping their",
        "demand (rbaqm eq. 5; packets table)"),
  "class_rate_bps", "queue band", "bit/s", "summarise_class_rates",
  paste("IP bits per second a band (class) of a traced queue sent in each window of a stated length (rbaqm Figs. 4,",
        "6, 8; a time series)"),
  "backlog_total_pkts", "queue", "packets", "summarise_backlog_series",
  "packets queued in every band of a traced queue at each sample (rbaqm Figs. 5, 7; a time series)",
  "backlog_avg_pkts", "queue", "packets", "summarise_backlog_series",
  paste("mean total backlog found by the last n packets arriving at a traced queue (rbaqm's 'average backlog",
        "measured over 300 packets'; a time series)"),
  "backlog_slope_pkts_per_source", "queue", "packets per source", "summarise_backlog_load_slope",
  paste("least-squares slope, within a run, of the time-average total backlog of each phase of the schedule (second",
        "half of the phase) on the number of sources active in it (rbaqm Fig. 7; queues table)"),
  "drop_ratio_slope_per_source", "queue band", "1 per source", "summarise_drop_load_slope",
  paste("least-squares slope, within a run, of a band's drop ratio in each phase of the schedule (second half) on the",
        "number of sources active in it (rbaqm Fig. 8; packets table)"),
  "jitter_class_slope_s", "queue", "s", "summarise_jitter_class_slope",
  paste("least-squares slope, within a run, of each band's jitter (the standard deviation of its dequeued packets'",
        "sojourns at a traced queue, after the warm-up) on the band number (rbaqm Fig. 2; packets table)"),
  "tcp_throughput_pps", "group", "packets/s", "summarise_tcp_throughput",
  paste("mean TCP throughput per flow of a group, or of every TCP flow (cqaqm §IV: packets acknowledged over the",
        "time from the flow's start to the run's end; the Gain and System Efficiency are its paired ratios)"),
  "queue_loss_ratio", "group queue", "1", "summarise_group_queue",
  paste("packets of a traffic group dropped at a traced queue / offered to it, after the warm-up (cqaqm §IV's",
        "loss per class; packets table, a dumbbell)"),
  "queue_delay_mean_s", "group queue", "s", "summarise_group_queue",
  paste("mean sojourn plus transmission at a traced queue of a traffic group's packets that left it, after the",
        "warm-up (cqaqm §IV's delay per class, propagation excluded; packets table, a dumbbell)"),
  "queue_delay_p50_s", "group queue", "s", "summarise_group_queue",
  paste("median (type 1) of the delays (sojourn plus transmission) at a traced queue of a traffic group's packets",
        "that left it, after the warm-up (the benchmark's sensor reports; packets table, a dumbbell)"),
  "queue_delay_p95_s", "group queue", "s", "summarise_group_queue",
  paste("95th percentile (type 1) of the delays (sojourn plus transmission) at a traced queue of a traffic group's",
        "packets that left it, after the warm-up (packets table, a dumbbell)"),
  "queue_delay_p99_s", "group queue", "s", "summarise_group_queue",
  paste("99th percentile (type 1) of the delays (sojourn plus transmission) at a traced queue of a traffic group's",
        "packets that left it, after the warm-up (packets table, a dumbbell)"),
  "queue_wait_mean_s", "group queue", "s", "summarise_group_queue",
  paste("mean sojourn at a traced queue of a traffic group's packets that left it, after the warm-up: their wait",
        "before transmission where the queue's clock ends at the transmitter (qlab-emu's virtual time; the emulation",
        "validation's W; packets table, a dumbbell)"),
  "useful_bps", "band", "bit/s", "summarise_useful_throughput",
  paste("IP bits per second of a band's packets that left the queue within a deadline (rbaqm Fig. 9: 50 ms), per bin",
        "of sessions started")
)

# Registered metrics that are not one value per run (compute_run_metrics
# leaves them out): time series and per-bin values, each computed by its own
# function for its figure.
series_metrics <- c("tasks_completed", "class_rate_bps", "backlog_total_pkts", "backlog_avg_pkts", "useful_bps")

#' The key columns a registered metric's rows carry.
metric_keys <- function(name) {
  keys <- metric_registry$keys[match(name, metric_registry$name)]
  if (is.na(keys) || keys == "") character() else strsplit(keys, " ", fixed = TRUE)[[1]]
}

#' A metric as a spec names it: `metric` plus the keys of the part it is about.
#'
#' @param fields A list with `metric` and any of `metric_key_columns` (other
#'   fields, e.g. `label`, are kept).
#' @param where Where the fields come from, for error messages.
#' @return The fields, checked: the metric is registered and every key given is
#'   one the metric has.
metric_selector <- function(fields, where) {
  name <- fields$metric
  if (!is.character(name) || length(name) != 1) {
    stop(sprintf("%s: `metric` must be one metric name of analysis/R/metrics.R", where))
  }
  if (!name %in% metric_registry$name) {
    stop(sprintf("%s: metric `%s` must be registered in analysis/R/metrics.R (registered: %s)",
                 where, name, paste(metric_registry$name, collapse = ", ")))
  }
  given <- intersect(metric_key_columns, names(fields))
  extra <- setdiff(given, metric_keys(name))
  if (length(extra) > 0) {
    has <- metric_keys(name)
    stop(sprintf("%s: metric `%s` has no %s (its rows are keyed by %s)", where, name,
                 paste0("`", extra, "`", collapse = ", "),
                 if (length(has) == 0) "nothing: one value per run" else paste0("`", has, "`", collapse = ", ")))
  }
  fields
}

#' A readable id of a selector, e.g. "avg_fct_s[group=noncongestive]".
metric_selector_id <- function(selector) {
  keys <- intersect(metric_key_columns, names(selector))
  if (length(keys) == 0) {
    return(selector$metric)
  }
  sprintf("%s[%s]", selector$metric, paste(keys, unlist(selector[keys]), sep = "=", collapse = ", "))
}

#' Add any missing key column, typed, as NA (a table of run-level metrics has none).
with_metric_keys <- function(df) {
  empty <- list(group = NA_character_, cls = NA_integer_, queue = NA_character_, band = NA_integer_,
                reason = NA_character_)
  for (key in metric_key_columns) {
    if (!key %in% names(df)) df[[key]] <- rep(empty[[key]], nrow(df))
  }
  df
}

#' The rows of a long per-run metrics table a selector names.
#'
#' @param metrics Long table (`metric`, the key columns, `value`, ...).
#' @param selector From `metric_selector()`.
#' @param where Names the caller in errors.
#' @return The matching rows; zero rows when the metric is not computed there.
select_metric_rows <- function(metrics, selector, where) {
  require_computed(metrics, selector$metric, where)
  rows <- dplyr::filter(with_metric_keys(metrics), .data$metric == selector$metric)
  for (key in metric_key_columns) {
    wanted <- selector[[key]]
    if (identical(key, "queue") && is.null(wanted) && "queue" %in% metric_keys(selector$metric)) {
      queues <- unique(rows$queue)
      if (length(queues) > 1) {
        stop(sprintf("%s: metric `%s` is computed for several queues (%s): name one with `queue:`",
                     where, selector$metric, paste(sort(queues), collapse = ", ")))
      }
      next
    }
    rows <- if (is.null(wanted)) rows[is.na(rows[[key]]), ] else rows[!is.na(rows[[key]]) & rows[[key]] == wanted, ]
  }
  rows
}

#' Stop when a table of compute_run_metrics(metrics = ...) left `metric`
#' out: no rows would read as "not computed here" (metrics_named() missed
#' a field that names it).
require_computed <- function(metrics, metric, where) {
  computed <- attr(metrics, "computed")
  if (!is.null(computed) && !metric %in% computed) {
    stop(sprintf(paste("%s: metric `%s` was not computed: the run metrics of this analysis are those its items",
                       "and claims name (metrics_named(); computed: %s)"),
                 where, metric, paste(computed, collapse = ", ")))
  }
  invisible(metrics)
}

# The fields of a paper's items and claims whose value is a metric's name.
metric_name_fields <- c("metric", "reference_metric", "control")

#' The registered metrics each scenario's items and claims name, anywhere in
#' them (`metric`, `reference_metric`, a comparison's `control`, a claim's
#' `requires`, an item's `metrics` and `also`): per scenario, every metric
#' of each entry that names that scenario anywhere.
#'
#' @param entries Items and claims (lists, as read from their YAML).
#' @return A named list, scenario id -> metric names (unregistered names are
#'   left to the checks that report them).
metrics_named <- function(entries) {
  walk <- function(x, field) {
    if (!is.list(x)) return(character())
    names <- names(x) %||% rep("", length(x))
    found <- unlist(purrr::map2(x, names, function(value, name) {
      here <- if (name %in% field && is.character(value)) value else character()
      c(here, walk(value, field))
    }))
    as.character(found)
  }
  out <- list()
  for (entry in entries) {
    metrics <- intersect(walk(entry, metric_name_fields), metric_registry$name)
    for (scenario in unique(walk(entry, "scenario"))) {
      out[[scenario]] <- union(out[[scenario]], metrics)
    }
  }
  out
}

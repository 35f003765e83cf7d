# Figures drawn from the summary tables of analyze-paper.R (columns figure,
# selector, metric and its keys, series, x, n, mean, sd, ci_lo, ci_hi,
# n_censored, method; topology diagrams are in topology.R). Each function
# returns a ggplot; captions come from `figure_caption()` so every plot names
# its statistics.

series_palette <- function(series) {
  labels <- sort(unique(series))
  palette <- c("#444444", "#d95f02", "#1b9e77", "#7570b3", "#e7298a", "#66a61e", "#e6ab02")
  stats::setNames(rep_len(palette, length(labels)), labels)
}

#' A metric against a sweep variable, one line per series, 95% CI error bars.
#'
#' @param summary Rows of one figure (and one backend) from analyze-paper.R.
#' @param y_scale Multiplier for the y values (e.g. 1e-6 for Mb/s).
#' @param labels With several metrics (`selector`), their panel titles (one
#'   panel per metric, free y scales); NULL: one panel.
plot_metric_vs_x <- function(summary, x_label, y_label, y_scale = 1, labels = NULL) {
  require_columns(summary, c("series", "x", "mean", "ci_lo", "ci_hi"), "plot metric vs x")
  if (!is.null(labels) && "selector" %in% names(summary) && length(unique(summary$selector)) > 1) {
    summary$panel <- factor(selector_labels(summary, labels), levels = unique(selector_labels(
      dplyr::arrange(summary, .data$selector), labels)))
    return(plot_metric_vs_x(summary, x_label, y_label, y_scale) +
             ggplot2::facet_wrap(ggplot2::vars(.data$panel), scales = "free_y", ncol = 2))
  }
  dodge <- ggplot2::position_dodge(width = 0.02 * diff(range(summary$x, 1)))
  ggplot2::ggplot(summary, ggplot2::aes(x = .data$x, y = .data$mean * y_scale, colour = .data$series)) +
    ggplot2::geom_line(position = dodge) +
    ggplot2::geom_point(position = dodge, size = 1.8) +
    ggplot2::geom_errorbar(ggplot2::aes(ymin = .data$ci_lo * y_scale, ymax = .data$ci_hi * y_scale),
                           width = 0.015 * diff(range(summary$x, 1)) + 0.5, position = dodge) +
    ggplot2::scale_colour_manual(values = series_palette(summary$series)) +
    ggplot2::scale_x_continuous(breaks = sweep_breaks(summary$x)) +
    ggplot2::labs(x = x_label, y = y_label, colour = "Series") +
    # more than three series (a reference, another scenario's) wrap onto two rows
    ggplot2::guides(colour = ggplot2::guide_legend(nrow = if (length(unique(summary$series)) > 3) 2 else 1)) +
    ggplot2::theme_bw() +
    ggplot2::theme(legend.position = "bottom")
}

#' A metric against a sweep variable for several backends: colour is the
#' series, line type the backend, 95% CI error bars.
plot_metric_vs_x_by_backend <- function(summary, x_label, y_label, y_scale = 1) {
  require_columns(summary, c("series", "backend", "x", "mean", "ci_lo", "ci_hi"), "plot metric vs x by backend")
  dodge <- ggplot2::position_dodge(width = 0.03 * diff(range(summary$x, 1)))
  ggplot2::ggplot(summary, ggplot2::aes(x = .data$x, y = .data$mean * y_scale, colour = .data$series,
                                        linetype = .data$backend,
                                        group = interaction(.data$series, .data$backend))) +
    ggplot2::geom_line(position = dodge) +
    ggplot2::geom_point(ggplot2::aes(shape = .data$backend), position = dodge, size = 1.8) +
    ggplot2::geom_errorbar(ggplot2::aes(ymin = .data$ci_lo * y_scale, ymax = .data$ci_hi * y_scale),
                           width = 0.015 * diff(range(summary$x, 1)) + 0.5, position = dodge,
                           linetype = "solid") +
    ggplot2::scale_colour_manual(values = series_palette(summary$series)) +
    ggplot2::scale_x_continuous(breaks = sweep_breaks(summary$x)) +
    ggplot2::labs(x = x_label, y = y_label, colour = "Series", linetype = "Backend", shape = "Backend") +
    ggplot2::theme_bw() +
    ggplot2::theme(legend.position = "bottom")
}

#' Axis breaks at the sweep values when there are few of them.
sweep_breaks <- function(x) {
  values <- sort(unique(x))
  if (length(values) <= 12) values else ggplot2::waiver()
}

#' Tasks completed over time: mean over seeds per series, 95% CI ribbon.
plot_tasks_over_time <- function(summary, x_label = "Time (s)", y_label = "Tasks completed") {
  require_columns(summary, c("series", "x", "mean", "ci_lo", "ci_hi"), "plot tasks over time")
  palette <- series_palette(summary$series)
  ggplot2::ggplot(summary, ggplot2::aes(x = .data$x, y = .data$mean)) +
    ggplot2::geom_ribbon(ggplot2::aes(ymin = .data$ci_lo, ymax = .data$ci_hi, fill = .data$series),
                         alpha = 0.2, colour = NA) +
    ggplot2::geom_step(ggplot2::aes(colour = .data$series)) +
    ggplot2::scale_colour_manual(values = palette) +
    ggplot2::scale_fill_manual(values = palette) +
    ggplot2::labs(x = x_label, y = y_label, colour = "Series", fill = "Series") +
    ggplot2::theme_bw() +
    ggplot2::theme(legend.position = "bottom")
}

#' The TCP state of one flow per series over time (summarise_tcp_worst_flow):
#' one panel per quantity (tcp_state_quantities), steps, no intervals.
plot_tcp_worst_flow <- function(summary, x_label) {
  require_columns(summary, c("series", "metric", "x", "mean"), "plot tcp worst flow")
  summary$panel <- factor(unname(tcp_state_quantities[summary$metric]), levels = unname(tcp_state_quantities))
  ggplot2::ggplot(summary, ggplot2::aes(x = .data$x, y = .data$mean, colour = .data$series)) +
    ggplot2::geom_step() +
    ggplot2::facet_wrap(ggplot2::vars(.data$panel), ncol = 1, scales = "free_y") +
    ggplot2::scale_colour_manual(values = series_palette(summary$series)) +
    ggplot2::labs(x = x_label, y = NULL, colour = "Series") +
    ggplot2::theme_bw() +
    ggplot2::theme(legend.position = "bottom")
}

#' Paired ratios treatment/baseline vs a sweep variable, one line per
#' treatment series, one panel per metric, 95% CI error bars, 1 = no change.
#'
#' @param labels Panel titles, one per position in the item's metric list
#'   (`selector`); default: the metric names.
plot_paired_ratio_vs_x <- function(summary, x_label, y_label, labels = NULL) {
  require_columns(summary, c("series", "selector", "metric", "x", "mean", "ci_lo", "ci_hi"), "plot paired ratio")
  summary$panel <- factor(selector_labels(summary, labels), levels = unique(selector_labels(
    dplyr::arrange(summary, .data$selector), labels)))
  plot_metric_vs_x(summary, x_label, y_label) +
    ggplot2::geom_hline(yintercept = 1, linetype = "dashed", colour = "grey40") +
    ggplot2::facet_wrap(ggplot2::vars(.data$panel), scales = "free_y")
}

#' The label of each row's metric: `labels[selector]`, else the metric's name.
selector_labels <- function(summary, labels) {
  if (is.null(labels)) summary$metric else dplyr::coalesce(unname(labels[summary$selector]), summary$metric)
}

#' Several metrics side by side (one group of bars per metric), one bar per
#' series, 95% CI error bars, and an optional horizontal reference line
#' (e.g. a delay bound or 1 for "as the weights say").
#'
#' @param labels Axis labels, one per position in the item's metric list
#'   (`selector`, also `x`); default: the metric names.
#' @param reference NULL, or list(value = y in the plotted units, label = text).
plot_metric_by_series <- function(summary, y_label, y_scale = 1, labels = NULL, reference = NULL) {
  require_columns(summary, c("series", "selector", "metric", "mean", "ci_lo", "ci_hi"), "plot metric by series")
  ordered <- dplyr::arrange(summary, .data$selector)
  summary$metric_label <- factor(selector_labels(summary, labels), levels = unique(selector_labels(ordered, labels)))
  dodge <- ggplot2::position_dodge(width = 0.8)
  plot <- ggplot2::ggplot(summary,
                          ggplot2::aes(x = .data$metric_label, y = .data$mean * y_scale, fill = .data$series)) +
    ggplot2::geom_col(position = dodge, width = 0.75) +
    ggplot2::geom_errorbar(ggplot2::aes(ymin = .data$ci_lo * y_scale, ymax = .data$ci_hi * y_scale),
                           position = dodge, width = 0.25) +
    ggplot2::scale_fill_manual(values = series_palette(summary$series)) +
    ggplot2::labs(x = NULL, y = y_label, fill = "Series") +
    ggplot2::theme_bw() +
    ggplot2::theme(legend.position = "bottom")
  if (!is.null(reference)) {
    plot <- plot +
      ggplot2::geom_hline(yintercept = reference$value, linetype = "dashed", colour = "grey30") +
      ggplot2::annotate("text", x = -Inf, y = reference$value, label = reference$label, hjust = -0.05,
                        vjust = -0.5, size = 3.2, colour = "grey20")
  }
  plot
}

#' Several metrics of one point per series, one panel per metric on its own
#' scale, the series along x in a given order (e.g. a reading and the values
#' changed one at a time around it), 95% CI error bars; the first series'
#' mean as a dashed line in each panel, the reference the others move from.
#'
#' @param labels The panels' titles, one per position in the item's metric
#'   list (`selector`); default: the metric names.
#' @param order The series in the order shown (default: sorted).
plot_metric_by_variant <- function(summary, y_label, labels = NULL, order = NULL) {
  require_columns(summary, c("series", "selector", "metric", "mean", "ci_lo", "ci_hi"), "plot metric by variant")
  order <- order %||% sort(unique(summary$series))
  unknown <- setdiff(unique(summary$series), order)
  if (length(unknown) > 0) {
    stop(sprintf("plot metric by variant: series %s must be in the order given", paste(unknown, collapse = ", ")))
  }
  ordered <- dplyr::arrange(summary, .data$selector)
  summary$panel <- factor(selector_labels(summary, labels), levels = unique(selector_labels(ordered, labels)))
  summary$series <- factor(summary$series, levels = order)
  backends <- if ("backend" %in% names(summary)) unique(summary$backend) else character()
  if (length(backends) > 1) {
    # an all_backends item (the emulation page): each series' value per
    # backend side by side, no reference line (the series are compared
    # between backends, not against the first)
    dodge <- ggplot2::position_dodge(width = 0.4)
    return(ggplot2::ggplot(summary, ggplot2::aes(x = .data$series, y = .data$mean, colour = .data$backend,
                                                 shape = .data$backend)) +
      ggplot2::geom_errorbar(ggplot2::aes(ymin = .data$ci_lo, ymax = .data$ci_hi), width = 0.3, position = dodge) +
      ggplot2::geom_point(size = 1.8, position = dodge) +
      ggplot2::facet_wrap(ggplot2::vars(.data$panel), ncol = 1, scales = "free_y") +
      ggplot2::labs(x = "Series", y = y_label, colour = "Backend", shape = "Backend") +
      ggplot2::theme_bw() +
      ggplot2::theme(legend.position = "bottom"))
  }
  reference <- dplyr::filter(summary, .data$series == order[[1]])
  ggplot2::ggplot(summary, ggplot2::aes(x = .data$series, y = .data$mean)) +
    ggplot2::geom_hline(data = reference, ggplot2::aes(yintercept = .data$mean), linetype = "dashed",
                        colour = "grey50") +
    ggplot2::geom_errorbar(ggplot2::aes(ymin = .data$ci_lo, ymax = .data$ci_hi), width = 0.3) +
    ggplot2::geom_point(size = 1.8) +
    ggplot2::facet_wrap(ggplot2::vars(.data$panel), ncol = 1, scales = "free_y") +
    ggplot2::labs(x = "Series", y = y_label) +
    ggplot2::theme_bw()
}

#' A frequency table of per-run changes (summarise_improvement_freq):
#' one bar per interval, the share of the runs in it, 95% Clopper–Pearson
#' error bars; one colour per treatment series.
#'
#' @param bin_labels The intervals' labels, by number (`frequency_bins()$label`).
plot_improvement_frequency <- function(summary, x_label, y_label, bin_labels) {
  require_columns(summary, c("series", "x", "mean", "ci_lo", "ci_hi"), "plot improvement frequency")
  summary$interval <- factor(bin_labels[summary$x], levels = bin_labels)
  dodge <- ggplot2::position_dodge(width = 0.8)
  ggplot2::ggplot(summary, ggplot2::aes(x = .data$interval, y = .data$mean, fill = .data$series)) +
    ggplot2::geom_col(position = dodge, width = 0.75) +
    ggplot2::geom_errorbar(ggplot2::aes(ymin = .data$ci_lo, ymax = .data$ci_hi), position = dodge, width = 0.25) +
    ggplot2::scale_fill_manual(values = series_palette(summary$series)) +
    ggplot2::scale_x_discrete(drop = FALSE) +
    ggplot2::labs(x = x_label, y = y_label, fill = "Series") +
    ggplot2::theme_bw() +
    ggplot2::theme(legend.position = "bottom")
}

#' Format a rate in bit/s as text ("10 Mb/s").
format_rate <- function(rate_bps) {
  if (is.null(rate_bps) || is.na(rate_bps)) return("rate ?")
  units <- c(`Gb/s` = 1e9, `Mb/s` = 1e6, `kb/s` = 1e3, `b/s` = 1)
  unit <- names(units)[which(rate_bps >= units)[1] %if_missing% 4]
  paste(format(rate_bps / units[[unit]], trim = TRUE, digits = 4), unit)
}

#' Format a delay in seconds as text ("5 ms").
format_delay <- function(delay_s) {
  if (is.null(delay_s) || is.na(delay_s)) return("delay ?")
  paste(format(delay_s * 1e3, trim = TRUE, digits = 4), "ms")
}

`%if_missing%` <- function(x, default) if (length(x) == 0 || is.na(x)) default else x

#' A figure caption naming the statistics and any censored completion times.
#'
#' @param summary The figure's summary rows.
#' @param caption The paper's caption, verbatim (quoted as the paper's), or
#'   qlab's own for a figure not in the paper (`from_paper = FALSE`).
figure_caption <- function(summary, label, caption, from_paper = TRUE) {
  lead <- if (from_paper) {
    sprintf("%s (paper): \u201c%s\u201d. qlab:", label, caption)
  } else {
    sprintf("%s: %s. Statistics:", label, caption)
  }
  if (nrow(summary) == 0) {
    return(sprintf("%s no results in this run.", lead))
  }
  # rows without a sample size (a closed form drawn beside the runs) count no seeds
  n_range <- if (all(is.na(summary$n))) c(NA, NA) else range(summary$n, na.rm = TRUE)
  n_text <- if (is.na(n_range[1])) {
    "exact values"
  } else if (n_range[1] == n_range[2]) {
    sprintf("n = %d", n_range[1])
  } else {
    sprintf("n = %d to %d", n_range[1], n_range[2])
  }
  method <- unique(summary$method)
  intervals <- if (all(is.na(summary$ci_lo))) {
    ""
  } else if (all(summary$method == method_frequency)) {
    "; error bars are 95% Clopper–Pearson intervals of the shares"
  } else if (all(summary$method == method_seed_quantiles)) {
    # time series (rbaqm.R): the seeds' spread, not an interval of a mean
    "; ribbons span the seeds' 2.5% to 97.5% quantiles"
  } else {
    "; error bars/ribbons are 95% t-intervals"
  }
  text <- sprintf("%s %s; %s%s.", lead, paste(method, collapse = "; "), n_text, intervals)
  censored <- sum(summary$n_censored, na.rm = TRUE)
  if (censored > 0) {
    text <- paste(text, sprintf(
      paste("%d task(s), summed over the runs shown, did not complete before their run ended:",
            "their completion time is censored at the run end, so the values that include them are lower bounds."),
      censored))
  }
  text
}

#' A paper's analytic model vs the utilisation (or another x): one panel per
#' reading of the paper's equations, the printed reading first, colour the
#' series. Exact values, so no intervals. A log y axis when the values span
#' more than two decades (delays grow without bound as u approaches 1).
plot_model_vs_x <- function(table, x_label, y_label, y_scale = 1) {
  require_columns(table, c("series", "reading", "x", "mean"), "plot model vs x")
  readings <- unique(table$reading)
  table$reading <- factor(table$reading, levels = c("printed", setdiff(readings, "printed")))
  table$value <- table$mean * y_scale
  span <- range(table$value[table$value > 0], na.rm = TRUE)
  log_y <- span[[2]] / span[[1]] > 100
  plot <- ggplot2::ggplot(table, ggplot2::aes(x = .data$x, y = .data$value, colour = .data$series)) +
    ggplot2::geom_line() +
    # "option=value" on two lines: the long names fit their panel
    ggplot2::facet_wrap(ggplot2::vars(.data$reading), ncol = if (length(readings) > 3) 2L else length(readings),
                        labeller = ggplot2::as_labeller(function(x) sub("=", " =\n", x, fixed = TRUE))) +
    ggplot2::scale_colour_manual(values = series_palette(table$series)) +
    ggplot2::labs(x = x_label, y = if (log_y) paste(y_label, "(log scale)") else y_label, colour = "Series") +
    ggplot2::guides(colour = ggplot2::guide_legend(ncol = 2)) +
    ggplot2::theme_bw() +
    ggplot2::theme(legend.position = "bottom")
  if (log_y) plot <- plot + ggplot2::scale_y_log10()
  plot
}

#' Simulation against closed forms (summarise_theory_vs_x): one panel per
#' series, colour the part of the run (the item's metric labels), points
#' with 95% CI error bars for the simulation, a line per closed form
#' (line type). A log y axis when the values span more than two decades.
plot_theory_vs_x <- function(summary, x_label, y_label, y_scale = 1, labels = NULL) {
  require_columns(summary, c("series", "selector", "metric", "x", "mean", "ci_lo", "ci_hi", "method"),
                  "plot theory vs x")
  ordered <- dplyr::arrange(summary, .data$selector)
  summary$part <- factor(selector_labels(summary, labels), levels = unique(selector_labels(ordered, labels)))
  summary$value <- summary$mean * y_scale
  theory <- summary[startsWith(summary$method, "closed form"), ]
  simulated <- summary[!startsWith(summary$method, "closed form"), ]
  theory$model <- sub("^closed form: ", "", theory$method)
  span <- range(summary$value[summary$value > 0], na.rm = TRUE)
  log_y <- span[[2]] / span[[1]] > 20
  plot <- ggplot2::ggplot(mapping = ggplot2::aes(x = .data$x, y = .data$value, colour = .data$part)) +
    ggplot2::geom_line(data = theory, ggplot2::aes(linetype = .data$model)) +
    ggplot2::geom_point(data = simulated, size = 1.8) +
    ggplot2::geom_errorbar(data = simulated, ggplot2::aes(ymin = .data$ci_lo * y_scale, ymax = .data$ci_hi * y_scale),
                           width = 0.015 * diff(range(summary$x, 1))) +
    ggplot2::facet_wrap(ggplot2::vars(.data$series)) +
    ggplot2::scale_x_continuous(breaks = sweep_breaks(summary$x)) +
    ggplot2::labs(x = x_label, y = if (log_y) paste(y_label, "(log scale)") else y_label,
                  colour = NULL, linetype = NULL) +
    ggplot2::guides(colour = ggplot2::guide_legend(order = 1), linetype = ggplot2::guide_legend(ncol = 1, order = 2)) +
    ggplot2::theme_bw() +
    ggplot2::theme(legend.position = "bottom", legend.box = "vertical")
  if (log_y) plot <- plot + ggplot2::scale_y_log10()
  plot
}

#' The same table as ratios to the closed form: each simulated point (and
#' its 95% interval) over the first closed form its series names (the
#' model the claims test), a solid line at 1 and dashed lines at 1 ± margin.
plot_theory_ratio <- function(summary, x_label, labels = NULL, margin = 0.02) {
  require_columns(summary, c("series", "selector", "group", "x", "mean", "ci_lo", "ci_hi", "method"),
                  "plot theory ratio")
  ordered <- dplyr::arrange(summary, .data$selector)
  summary$part <- factor(selector_labels(summary, labels), levels = unique(selector_labels(ordered, labels)))
  closed <- startsWith(summary$method, "closed form")
  reference <- summary[closed, ] |>
    dplyr::group_by(.data$series) |>
    dplyr::filter(.data$method == dplyr::first(.data$method)) |>
    dplyr::ungroup() |>
    dplyr::transmute(.data$series, .data$selector, .data$x, theory = .data$mean,
                     model = sub("^closed form: ", "", .data$method))
  points <- dplyr::inner_join(summary[!closed, ], reference, by = c("series", "selector", "x"))
  ggplot2::ggplot(points, ggplot2::aes(x = .data$x, y = .data$mean / .data$theory, colour = .data$part)) +
    ggplot2::geom_hline(yintercept = 1, colour = "grey30") +
    ggplot2::geom_hline(yintercept = 1 + c(-1, 1) * margin, linetype = "dashed", colour = "grey50") +
    ggplot2::geom_point(size = 1.8, position = ggplot2::position_dodge(width = 0.03)) +
    ggplot2::geom_errorbar(ggplot2::aes(ymin = .data$ci_lo / .data$theory, ymax = .data$ci_hi / .data$theory),
                           width = 0.02, position = ggplot2::position_dodge(width = 0.03)) +
    ggplot2::facet_wrap(ggplot2::vars(.data$series)) +
    ggplot2::scale_x_continuous(breaks = sweep_breaks(points$x)) +
    ggplot2::labs(x = x_label, y = sprintf("Simulated / closed form (dashed: ±%s%%)", format(100 * margin)),
                  colour = NULL) +
    ggplot2::theme_bw() +
    ggplot2::theme(legend.position = "bottom")
}

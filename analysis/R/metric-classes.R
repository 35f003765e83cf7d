# Per-class throughput (the disciplines page): how a class-based discipline
# shares the bottleneck. A flow's goodput is `add_flow_goodput()`'s; a
# class's goodput is the sum over its flows, and its share the fraction of
# the sum over all classes.

#' Goodput of each class of each run, and its share of the run's total.
#'
#' @param flows Per-flow table (see `add_flow_goodput()`) with `cls`.
#' @param by Columns naming a run.
#' @return `by`, `cls`, `class_goodput_bps`, `share`.
summarise_class_goodput <- function(flows, by) {
  require_columns(flows, c(by, "cls"), "class goodput")
  flows |>
    add_flow_goodput() |>
    dplyr::group_by(dplyr::across(dplyr::all_of(c(by, "cls")))) |>
    dplyr::summarise(class_goodput_bps = sum(.data$flow_goodput_bps), .groups = "drop_last") |>
    dplyr::mutate(share = .data$class_goodput_bps / sum(.data$class_goodput_bps)) |>
    dplyr::ungroup()
}

#' A WFQ weight list in the core's syntax ("3000:2000:1000", or one value
#' for every class) as a numeric vector of `classes` weights.
parse_weight_list <- function(text, classes) {
  if (is.null(text) || length(text) != 1 || is.na(text)) {
    stop("weight list: expected one string such as \"3000:2000:1000\"")
  }
  weights <- suppressWarnings(as.numeric(strsplit(as.character(text), ":", fixed = TRUE)[[1]]))
  if (length(weights) == 0 || any(is.na(weights)) || any(weights <= 0)) {
    stop(sprintf("weight list: expected positive numbers separated by ':', got '%s'", text))
  }
  if (length(weights) == 1) {
    weights <- rep(weights, classes)
  }
  if (length(weights) != classes) {
    stop(sprintf("weight list: expected 1 or %d values, got %d ('%s')", classes, length(weights), text))
  }
  weights
}

#' Each class's share relative to its weight's share, W_k / sum(W): 1 when
#' the link is shared in proportion to the weights.
#'
#' @param shares Output of `summarise_class_goodput()`.
#' @param weights_of A function(series) giving that series' weight vector
#'   (indexed by cls + 1), or NULL for a series without weights.
#' @return The rows of `shares` whose series has weights, with `w_share`
#'   (W_k / sum W) and `share_ratio` (share / w_share).
relate_shares_to_weights <- function(shares, weights_of) {
  require_columns(shares, c("series", "cls", "share"), "shares vs weights")
  series <- unique(shares$series)
  weight_table <- purrr::map_dfr(series, function(s) {
    w <- weights_of(s)
    if (is.null(w)) {
      return(NULL)
    }
    tibble::tibble(series = s, cls = seq_along(w) - 1L, w_share = w / sum(w))
  })
  if (nrow(weight_table) == 0) {
    return(dplyr::mutate(shares[0, ], w_share = numeric(), share_ratio = numeric()))
  }
  shares |>
    dplyr::inner_join(weight_table, by = c("series", "cls")) |>
    dplyr::mutate(share_ratio = .data$share / .data$w_share)
}

#' The largest relative deviation of a class's share from its weight's share,
#' per run: max over the classes of |share_ratio - 1| (0 when every class
#' gets exactly W_k / sum W).
#'
#' @param ratios Output of `relate_shares_to_weights()`.
#' @param by Columns naming a run.
#' @return `by`, `share_ratio_max_dev`.
summarise_share_deviation <- function(ratios, by) {
  require_columns(ratios, c(by, "share_ratio"), "share deviation")
  if (any(is.na(ratios$share_ratio))) {
    stop("share deviation: every class's share_ratio must be known (not NA)")
  }
  ratios |>
    dplyr::group_by(dplyr::across(dplyr::all_of(by))) |>
    dplyr::summarise(share_ratio_max_dev = max(abs(.data$share_ratio - 1)), .groups = "drop")
}

#' Mean goodput per flow of each class over that of class 0 (srd: the R
#' class's per-flow rate over the D class's, which the discipline aims to
#' hold at k).
#'
#' @return `by`, `cls` (every class but 0), `per_flow_goodput_ratio`.
summarise_per_flow_ratio <- function(flows, by) {
  require_columns(flows, c(by, "cls"), "per-flow goodput ratio")
  per_class <- flows |>
    add_flow_goodput() |>
    dplyr::group_by(dplyr::across(dplyr::all_of(c(by, "cls")))) |>
    dplyr::summarise(per_flow_bps = mean(.data$flow_goodput_bps), .groups = "drop")
  base <- dplyr::filter(per_class, .data$cls == 0) |>
    dplyr::select(dplyr::all_of(by), base_bps = "per_flow_bps")
  per_class |>
    dplyr::filter(.data$cls != 0) |>
    dplyr::inner_join(base, by = by) |>
    dplyr::mutate(per_flow_goodput_ratio = dplyr::if_else(.data$base_bps > 0,
                                                          .data$per_flow_bps / .data$base_bps, NA_real_)) |>
    dplyr::select(dplyr::all_of(c(by, "cls", "per_flow_goodput_ratio")))
}

# Per-class rate over time (rbaqm Figs. 4, 6 and 8: "the flow rates of
# traffic in each class"): the IP bytes of a band's packets leaving a traced
# queue in consecutive windows of a stated length (the paper does not state
# its window: scenarios/rbaqm/defaults.yaml, assumption rate-window), from
# the packet events (packets table).

#' Rate of one stream of departures in consecutive windows [k w, (k + 1) w).
#'
#' @param time_s Departure times (s).
#' @param len_bytes IP length of each departure.
#' @param window_s Window length (s), > 0.
#' @param end_s The run's end: windows cover [0, end_s); a last partial window
#'   is left out (its rate would be over a shorter time).
#' @return A tibble: `time_s` (each window's start), `rate_bps` (8 x bytes / window_s);
#'   a window without departures has rate 0.
window_rate_bps <- function(time_s, len_bytes, window_s, end_s) {
  if (!is.numeric(window_s) || length(window_s) != 1 || !(window_s > 0)) {
    stop("class rate: window_s must be one number > 0")
  }
  if (length(time_s) != length(len_bytes)) {
    stop("class rate: time_s and len_bytes must have the same length")
  }
  windows <- floor(end_s / window_s + 1e-9)
  if (windows < 1) {
    stop(sprintf("class rate: the run (%g s) must last at least one window (%g s)", end_s, window_s))
  }
  k <- floor(time_s / window_s + 1e-9)
  keep <- k >= 0 & k < windows
  bytes <- numeric(windows)
  sums <- rowsum(as.numeric(len_bytes[keep]), k[keep])
  bytes[as.integer(rownames(sums)) + 1] <- sums[, 1]
  tibble::tibble(time_s = (seq_len(windows) - 1) * window_s, rate_bps = 8 * bytes / window_s)
}

#' Rate of every band of a traced queue in windows, per run.
#'
#' @param packets Collected packets table (`time_s`, `queue`, `event`, `band`, `len_bytes`).
#' @param by Columns naming a run.
#' @param bands The bands to report (each gets every window, 0 where it sent nothing).
#' @param window_s Window length (s).
#' @param end_s The runs' end (s).
#' @return `by`, `queue`, `band`, `time_s`, `rate_bps`.
summarise_class_rates <- function(packets, by, bands, window_s, end_s) {
  require_columns(packets, c(by, "time_s", "queue", "event", "band", "len_bytes"), "class rate")
  runs <- dplyr::distinct(packets, dplyr::across(dplyr::all_of(c(by, "queue"))))
  sent <- dplyr::filter(packets, .data$event == "deq")
  cells <- tidyr::expand_grid(runs, band = as.integer(bands))
  # each cell's departures (row numbers, in order) from one grouping of the
  # departures: filtering all of them again for each cell took seconds (rbaqm)
  columns <- c(by, "queue", "band")
  grouped <- dplyr::group_by(sent, dplyr::across(dplyr::all_of(columns)))
  rows_of <- dplyr::left_join(cells, dplyr::mutate(dplyr::group_keys(grouped), .rows = dplyr::group_rows(grouped)),
                              by = columns)$.rows
  purrr::map_dfr(seq_len(nrow(cells)), function(i) {
    rows <- rows_of[[i]] %||% integer() # a cell without departures: every window at 0
    dplyr::bind_cols(cells[i, ], window_rate_bps(sent$time_s[rows], sent$len_bytes[rows], window_s, end_s))
  })
}

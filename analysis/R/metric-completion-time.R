# Task completion time (ncq-conf §4.1: "worst / average task completion time").
#
# A task is one bulk transfer. A flow that has not delivered its goal when the
# run ends is *censored*: its completion time is at least `run_end_s - start_s`.
# We use that lower bound in the average and the worst time and count the
# censored flows, so a figure can say when its values are lower bounds.

#' Completion time of each task, censored at the run's end.
#'
#' @param start_s Time each task started.
#' @param end_s Time each task completed; NA if it did not.
#' @param run_end_s The run's end (one value or one per task).
#' @return Seconds: `end_s - start_s`, or `run_end_s - start_s` where `end_s` is NA.
completion_time_s <- function(start_s, end_s, run_end_s) {
  if (length(start_s) != length(end_s)) {
    stop("completion time: `start_s` and `end_s` must have the same length")
  }
  if (!length(run_end_s) %in% c(1L, length(start_s))) {
    stop("completion time: `run_end_s` must have length 1 or the length of `start_s`")
  }
  if (any(is.na(start_s)) || any(start_s < 0)) {
    stop("completion time: `start_s` must be non-negative and not NA")
  }
  if (any(is.na(run_end_s))) {
    stop("completion time: `run_end_s` must not be NA")
  }
  end_or_run_end <- dplyr::coalesce(as.numeric(end_s), rep_len(as.numeric(run_end_s), length(start_s)))
  if (any(end_or_run_end < start_s)) {
    stop("completion time: a task's end (or the run's end) must not precede its start")
  }
  end_or_run_end - start_s
}

#' Average task completion time.
average_completion_time_s <- function(time_s) {
  check_completion_times(time_s)
  mean(time_s)
}

#' Worst (largest) task completion time.
worst_completion_time_s <- function(time_s) {
  check_completion_times(time_s)
  max(time_s)
}

check_completion_times <- function(time_s) {
  if (length(time_s) == 0) {
    stop("completion time: at least one task must be given")
  }
  if (any(is.na(time_s)) || any(time_s < 0)) {
    stop("completion time: times must be non-negative and not NA")
  }
}

#' Average and worst completion time of each run, over all flows or one group.
#'
#' @param flows Per-flow table with `start_s`, `end_s`, `group` and the run's `sim_end_s`.
#' @param by Columns naming a run.
#' @param group NULL for all flows, or a traffic group (e.g. "noncongestive").
#' @return `by` columns plus `avg_fct_s`, `worst_fct_s`, `n_flows`, `n_censored`.
summarise_completion_time <- function(flows, by, group = NULL) {
  require_columns(flows, c("start_s", "end_s", "group", "sim_end_s"), "completion time")
  selected <- flows
  if (!is.null(group)) {
    selected <- dplyr::filter(flows, .data$group == .env$group)
  }
  selected |>
    dplyr::mutate(task_time_s = completion_time_s(.data$start_s, .data$end_s, .data$sim_end_s)) |>
    dplyr::group_by(dplyr::across(dplyr::all_of(by))) |>
    dplyr::summarise(
      avg_fct_s = average_completion_time_s(.data$task_time_s),
      worst_fct_s = worst_completion_time_s(.data$task_time_s),
      n_flows = dplyr::n(),
      n_censored = sum(is.na(.data$end_s)),
      .groups = "drop"
    )
}

# Completion time by task size (the benchmark's web workloads: FCT by size
# bucket). The buckets are fixed, in the task's bytes (`bytes_goal`), so that
# every workload and backend reads the same ones: short transfers, below 10
# kB (a few round trips at any window), medium, 10 to 100 kB, and long, 100
# kB and more (the Pareto sizes' tail).
fct_size_buckets <- tibble::tribble(
  ~metric, ~from_bytes, ~to_bytes,
  "avg_fct_lt10k_s", 0, 1e4,
  "avg_fct_10k_100k_s", 1e4, 1e5,
  "avg_fct_ge100k_s", 1e5, Inf
)

#' Average completion time of each run's tasks in each size bucket
#' (fct_size_buckets: from_bytes <= bytes_goal < to_bytes), over all flows or
#' one group; a run with no task in a bucket has no row for it.
#'
#' @param flows Per-flow table with `bytes_goal`, `start_s`, `end_s`, `group` and `sim_end_s`.
#' @param by Columns naming a run.
#' @param group NULL for all flows, or a traffic group (e.g. "web").
#' @return `by` columns plus `metric` (the bucket's metric name), `avg_fct_s`,
#'   `worst_fct_s`, `n_flows`, `n_censored`.
summarise_fct_by_size <- function(flows, by, group = NULL) {
  require_columns(flows, c("bytes_goal", "start_s", "end_s", "group", "sim_end_s"), "completion time by size")
  purrr::pmap_dfr(fct_size_buckets, function(metric, from_bytes, to_bytes) {
    inside <- flows[flows$bytes_goal >= from_bytes & flows$bytes_goal < to_bytes &
                      (is.null(group) | flows$group %in% group), ]
    if (nrow(inside) == 0) return(NULL)
    dplyr::mutate(summarise_completion_time(inside, by, group), metric = metric, .before = "avg_fct_s")
  })
}

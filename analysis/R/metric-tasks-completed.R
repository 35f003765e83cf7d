# Tasks completed over time (ncq-conf Figs 8 and 9): the number of tasks
# whose last byte has reached the receiver by time t.

#' Cumulative number of completed tasks at each time of a grid.
#'
#' @param end_s Completion time of each task (NA: not completed).
#' @param time_grid_s Times at which to count, in seconds.
#' @return An integer vector, one count per grid time: tasks with `end_s <= t`.
tasks_completed <- function(end_s, time_grid_s) {
  if (!is.numeric(end_s) && !all(is.na(end_s))) {
    stop("tasks completed: `end_s` must be numeric")
  }
  if (!is.numeric(time_grid_s) || any(is.na(time_grid_s))) {
    stop("tasks completed: `time_grid_s` must be numeric and not NA")
  }
  if (is.unsorted(time_grid_s)) {
    stop("tasks completed: `time_grid_s` must be sorted in increasing order")
  }
  done <- sort(end_s[!is.na(end_s)])
  findInterval(time_grid_s, done, rightmost.closed = FALSE, left.open = FALSE)
}

#' A time grid covering every run's end, with `n_points` equally spaced times from 0.
time_grid_s <- function(run_end_s, n_points = 201L) {
  if (length(run_end_s) == 0 || any(is.na(run_end_s)) || any(run_end_s <= 0)) {
    stop("time grid: run ends must be positive and not NA")
  }
  seq(0, max(run_end_s), length.out = n_points)
}

#' Tasks completed over a time grid, for each run.
#'
#' @param flows Per-flow table with `end_s`.
#' @param by Columns naming a run.
#' @param grid_s Time grid (see `time_grid_s()`).
#' @return `by` columns plus `time_s` and `tasks_completed`, one row per run and grid time.
count_tasks_completed <- function(flows, by, grid_s) {
  require_columns(flows, "end_s", "tasks completed")
  flows |>
    dplyr::group_by(dplyr::across(dplyr::all_of(by))) |>
    dplyr::summarise(
      time_s = list(grid_s),
      tasks_completed = list(tasks_completed(.data$end_s, grid_s)),
      .groups = "drop"
    ) |>
    tidyr::unnest(c("time_s", "tasks_completed"))
}

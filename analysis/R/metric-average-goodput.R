# Average Goodput of a traffic group (ncq-journal §5.2.1, Figs. 8(a), 8(b),
# 10(a), 12(a), 12(b)): AverageGoodput = sum_{i=1..n} Goodput_i / n over the
# n flows of the group, Goodput_i = Original_Data / Time (metric-goodput.R).
# Over all flows it is ncq-conf's System Goodput, the same per-flow mean, so
# the vector function is system_goodput_bps(); this file adds the group.

#' Average Goodput of each run's flows of one traffic group.
#'
#' @param flows Per-flow table with `group` and the columns
#'   `add_flow_goodput()` needs.
#' @param by Columns naming a run.
#' @param group A traffic group (e.g. "noncongestive").
#' @return `by` columns plus `avg_goodput_bps` and `n_flows`; a run with no
#'   flow of the group has no row.
summarise_group_goodput <- function(flows, by, group) {
  require_columns(flows, "group", "group goodput")
  if (!is.character(group) || length(group) != 1 || is.na(group)) {
    stop("group goodput: `group` must be one traffic group name")
  }
  flows |>
    dplyr::filter(.data$group == .env$group) |>
    add_flow_goodput() |>
    dplyr::group_by(dplyr::across(dplyr::all_of(by))) |>
    dplyr::summarise(
      avg_goodput_bps = system_goodput_bps(.data$flow_goodput_bps),
      n_flows = dplyr::n(),
      .groups = "drop"
    )
}

# Figures that compare backends (a `metric_vs_x` item with `all_backends:
# true`, a `backend_ratio_vs_x` item) need every side's results. When a side
# is missing (Mininet did not run on this machine, or none of its runs was
# valid) the figure must say so, not show one backend under a comparison's
# title or an empty ratio plot.

#' Whether an item compares backends.
compares_backends <- function(item) {
  isTRUE(item$all_backends) || identical(item$kind, "backend_ratio_vs_x")
}

#' The backends an item compares: a ratio's numerator and denominator, else
#' every backend its scenario lists (`backends` of scenario.json).
compared_backends <- function(item, scenario_backends) {
  if (identical(item$kind, "backend_ratio_vs_x")) {
    return(c(item$numerator, item$denominator))
  }
  # a scenario that did not run has no scenario.json: nothing is known, and
  # nothing is compared (describe_backend_comparison says so)
  as.character(unlist(scenario_backends))
}

#' What a backend comparison can show.
#'
#' @param item A paper spec item that compares backends.
#' @param scenario_backends The backends its scenario lists.
#' @param with_results The backends with collected results for its scenario.
#' @param table The item's figure table (rows only for valid runs).
#' @return A list: `status` ("complete"; "one_sided": a plot of the backends
#'   shown, some missing; "absent": nothing to draw), `compared`, `missing`
#'   (backends without results), `no_valid_run` (backends with results but no
#'   valid run in the table), `shown`, and `message` (what the page says; NULL
#'   when complete).
describe_backend_comparison <- function(item, scenario_backends, with_results, table) {
  compared <- compared_backends(item, scenario_backends)
  if (length(compared) == 0) {
    return(list(status = "absent", compared = compared, missing = compared, no_valid_run = character(),
                shown = character(),
                message = sprintf("Not drawn: %s did not run (no results for it on any backend).", item$scenario)))
  }
  missing <- setdiff(compared, with_results)
  is_ratio <- identical(item$kind, "backend_ratio_vs_x")
  shown <- if (is_ratio) character() else intersect(compared, unique(table$backend))
  no_valid_run <- if (is_ratio) character() else setdiff(intersect(compared, with_results), shown)
  ratio <- if (is_ratio) sprintf("%s / %s", item$numerator, item$denominator) else NULL
  lacking <- function() {
    paste(c(if (length(missing) > 0) sprintf("no %s results for %s", paste(missing, collapse = " or "), item$scenario),
            if (length(no_valid_run) > 0) sprintf("no valid %s run", paste(no_valid_run, collapse = " or "))),
          collapse = " and ")
  }
  status <- if (is_ratio) {
    if (length(missing) == 0 && nrow(table) > 0) "complete" else "absent"
  } else if (length(shown) == length(compared)) {
    "complete"
  } else if (length(shown) > 0) {
    "one_sided"
  } else {
    "absent"
  }
  message <- switch(status,
    complete = NULL,
    one_sided = sprintf("One-sided: %s only (%s), so this figure compares nothing.",
                        paste(shown, collapse = ", "), lacking()),
    absent = if (is_ratio && length(missing) == 0) {
      sprintf("Not drawn: no valid %s run pairs with a valid %s run of the same job (see the runs and their fidelity).",
              item$numerator, item$denominator)
    } else if (is_ratio) {
      sprintf("Not drawn: the %s ratio needs both sides, and there are %s.", ratio, lacking())
    } else {
      sprintf("Not drawn: %s.", lacking())
    }
  )
  list(status = status, compared = compared, missing = missing, no_valid_run = no_valid_run, shown = shown,
       message = message)
}

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
#' @return A list: `status` ("complete"; "partial": two or more backends
#'   shown, some compared one missing, so the figure still compares;
#'   "one_sided": a plot of one backend, the others missing; "absent":
#'   nothing to draw), `compared`, `missing`
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
  } else if (length(shown) > 1) {
    "partial"
  } else if (length(shown) > 0) {
    "one_sided"
  } else {
    "absent"
  }
  message <- switch(status,
    complete = NULL,
    partial = sprintf("Partial: %s (%s).", paste(shown, collapse = ", "), lacking()),
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

#' Each claim's verdict under each of `backends`, side by side.
#'
#' @param claims An evaluated claims table with a `backend` column (claims.csv).
#' @return One row per claim (the paper's order): `claim_id`, `figure`, a
#'   verdict column per backend (NA where that backend has no verdict), and
#'   `agree`: TRUE when every backend gave the same verdict, FALSE when they
#'   differ, NA when a backend has no verdict or "not comparable" (its runs
#'   cannot test the claim: nothing to agree or differ on).
verdicts_by_backend <- function(claims, backends) {
  require_columns(claims, c("claim_id", "figure", "verdict", "backend"), "verdicts by backend")
  order <- unique(claims$claim_id)
  wide <- claims |>
    dplyr::filter(.data$backend %in% backends) |>
    dplyr::distinct(.data$claim_id, .data$figure, .data$backend, .data$verdict) |>
    tidyr::pivot_wider(names_from = "backend", values_from = "verdict")
  for (backend in setdiff(backends, names(wide))) wide[[backend]] <- NA_character_
  verdict_columns <- as.matrix(wide[backends])
  wide$agree <- apply(verdict_columns, 1, function(v) {
    if (anyNA(v) || any(v == "not comparable")) NA else length(unique(v)) == 1
  })
  wide[order(match(wide$claim_id, order)), c("claim_id", "figure", backends, "agree")]
}

#' How each backend ran TCP, from its runs' own records: the plan's TCP
#' settings (every backend reads the same plan) and what each runner wrote
#' about its simulator and TCP model (run.json `versions`).
#'
#' @param runs Named list, backend -> a parsed run.json of one run.
#' @param plan_tcp The plan's `tcp` object (scenario.json's `tcp`).
#' @return Rows `setting`, then one column per backend.
tcp_models_of_runs <- function(runs, plan_tcp) {
  from_plan <- purrr::imap_dfr(plan_tcp, function(value, name) {
    text <- if (is.logical(value)) tolower(as.character(value)) else as.character(unlist(value))
    tibble::tibble(setting = paste0("plan: tcp.", name), value = paste(text, collapse = ", "))
  })
  per_backend <- purrr::imap_dfr(runs, function(run, backend) {
    versions <- run$versions %||% list()
    versions$qlab <- NULL
    tibble::tibble(backend = backend, setting = paste0("runner: ", names(versions)),
                   value = as.character(unlist(versions)))
  })
  backends <- names(runs)
  shared <- tidyr::expand_grid(from_plan, backend = backends)
  dplyr::bind_rows(shared, per_backend) |>
    tidyr::pivot_wider(names_from = "backend", values_from = "value") |>
    dplyr::select(dplyr::all_of(c("setting", backends)))
}

#' Each run's own fidelity measurements (`fidelity` in its run.json, written
#' by an emulating backend's runner: the mininet backend's achieved rate,
#' spacing and added delay, the testbed's shaper rate, packet counts and
#' clock offsets). One row per run with a fidelity record; a number per host
#' (an object) is reduced to the one largest in magnitude; what is not a
#' number is left out.
#'
#' @return Columns `backend`, `series`, `point`, `seed`, `valid`, then one per
#'   fact (the union over runs, NA where a run lacks it); no rows when the
#'   backend's runs record no fidelity (ns-3).
run_fidelity <- function(results_dir, scenario, backend) {
  files <- run_json_files(results_dir, scenario, backend)
  largest <- function(v) {
    x <- suppressWarnings(as.numeric(unlist(v)))
    x <- x[!is.na(x)]
    if (length(x) == 0) NA_real_ else x[which.max(abs(x))]
  }
  rows <- purrr::map(files, function(f) {
    run <- jsonlite::read_json(f, simplifyVector = FALSE)
    facts <- purrr::compact(run$fidelity %||% list())
    facts <- purrr::map(facts, function(v) if (is.list(v)) largest(v) else v)
    facts <- purrr::keep(facts, function(v) is.numeric(v) && length(v) == 1)
    if (length(facts) == 0) return(NULL)
    tibble::as_tibble(c(list(backend = backend, series = run$series, point = run$point, seed = as.integer(run$seed),
                             valid = isTRUE(run$valid)), facts))
  })
  out <- dplyr::bind_rows(rows)
  if (nrow(out) == 0) return(out)
  dplyr::arrange(out, .data$series, .data$point, .data$seed)
}

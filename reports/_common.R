# Shared by every page of the site (Quarto, or reports/render.R): where the
# data are, the analysis code, and the helpers that print parameters,
# assumptions, claims and the colophon. Pages run with reports/ as the
# working directory.

if (Sys.getenv("TZ") == "") Sys.setenv(TZ = "UTC")

qlab_root <- normalizePath(Sys.getenv("QLAB_ROOT", ".."), mustWork = TRUE)
qlab_results <- normalizePath(Sys.getenv("QLAB_RESULTS", "../results"), mustWork = FALSE)
if (!dir.exists(qlab_results)) {
  stop(sprintf("results directory %s not found (set QLAB_RESULTS)", qlab_results))
}
analysis_dir <- file.path(qlab_root, "analysis")

suppressPackageStartupMessages({
  library(dplyr)
  library(ggplot2)
})
for (file in list.files(file.path(analysis_dir, "R"), pattern = "\\.R$", full.names = TRUE)) {
  sys.source(file, envir = globalenv())
}

knitr::opts_chunk$set(echo = FALSE, warning = FALSE, message = FALSE, fig.width = 7, fig.height = 4.2, dpi = 96)

# ---- data ---------------------------------------------------------------

#' Everything a paper page needs: its spec, figure tables, verdicts, the
#' resolved scenarios and the provenance.
#'
#' Figure tables and verdicts are read from <results>/analysis/<paper>/
#' (written by analysis/scripts/analyze.R); when that directory is missing
#' they are computed here from the collected results, and the page says so.
load_paper_context <- function(paper) {
  spec <- read_paper_spec(analysis_dir, paper)
  out_dir <- file.path(qlab_results, "analysis", paper)
  files <- purrr::map_chr(figure_items(spec), "file")
  expected <- file.path(out_dir, c(paste0(files, ".csv"), "claims.csv"))
  scenarios <- unique(unlist(purrr::map(spec$items, "scenario")))
  if (!all(file.exists(expected)) &&
      length(unlist(purrr::map(scenarios, function(s) list_backends(qlab_results, s)))) == 0) {
    # this run did not include the paper's scenarios (e.g. `scenarios=` limited them)
    return(list(paper = paper, spec = spec, missing = TRUE, figures = list(), backend = "none",
                backends = character(), scenarios = list(),
                claims = tibble::tibble(figure = character(), verdict = character(), backend = character()),
                source_note = sprintf("No results for %s in %s: this run did not include its scenarios (%s).",
                                      paper, qlab_results, paste(scenarios, collapse = ", "))))
  }
  if (all(file.exists(expected))) {
    figures <- purrr::map(stats::setNames(files, files), function(file) {
      readr::read_csv(file.path(out_dir, paste0(file, ".csv")), show_col_types = FALSE,
                      col_types = readr::cols(.default = readr::col_guess(), series = readr::col_character(),
                                              metric = readr::col_character(), backend = readr::col_character()))
    })
    claims <- readr::read_csv(file.path(out_dir, "claims.csv"), show_col_types = FALSE,
                              col_types = readr::cols(.default = readr::col_character()))
    source_note <- sprintf("Summary tables read from %s (analysis/scripts/analyze.R).", out_dir)
  } else {
    computed <- analyze_paper(qlab_results, paper, analysis_dir)
    figures <- computed$figures
    claims <- computed$claims
    source_note <- sprintf("%s has no analysis tables: computed while rendering, with the same code (analysis/R).", out_dir)
  }
  backends <- sort(unique(unlist(purrr::map(figures, "backend"))))
  backend <- choose_backend(backends)
  list(
    paper = paper,
    spec = spec,
    missing = FALSE,
    # items that compare backends keep every backend's rows
    figures = purrr::imap(figures, function(table, file) {
      item <- purrr::detect(spec$items, function(i) identical(i$file, file))
      if (isTRUE(item$all_backends) || identical(item$kind, "backend_ratio_vs_x")) table
      else dplyr::filter(table, .data$backend == .env$backend)
    }),
    claims = dplyr::filter(claims, .data$backend == .env$backend),
    backend = backend,
    backends = backends,
    scenarios = purrr::map(stats::setNames(scenarios, scenarios), function(scenario) {
      path <- file.path(scenario_results_dir(qlab_results, scenario, backend), "scenario.json")
      if (file.exists(path)) read_scenario_json(path) else NULL
    }),
    backends_of = purrr::map(stats::setNames(scenarios, scenarios), function(s) list_backends(qlab_results, s)),
    provenance = read_provenance(qlab_results),
    source_note = source_note
  )
}

#' On a page whose paper has no results: say so and evaluate no further chunk.
skip_if_no_results <- function(ctx) {
  if (isTRUE(ctx$missing)) {
    cat("\n**", ctx$source_note, "** Run `make reproduce` to fill this page.\n\n", sep = "")
    knitr::opts_chunk$set(eval = FALSE)
  }
  invisible(ctx$missing)
}

#' The backend a page shows: QLAB_BACKEND if set, else ns3, else the first found.
choose_backend <- function(backends) {
  wanted <- Sys.getenv("QLAB_BACKEND", "")
  if (wanted != "") {
    if (!wanted %in% backends) stop(sprintf("QLAB_BACKEND=%s has no results (found: %s)", wanted, paste(backends, collapse = ", ")))
    return(wanted)
  }
  if ("ns3" %in% backends) "ns3" else backends[[1]]
}

paper_item <- function(ctx, id) {
  item <- purrr::detect(ctx$spec$items, function(item) item$id == id)
  if (is.null(item)) stop(sprintf("paper spec %s has no item %s", ctx$paper, id))
  item
}

# ---- figures ------------------------------------------------------------

item_heading <- function(ctx, id) {
  item <- paper_item(ctx, id)
  sprintf("%s: %s", item$label, item$caption)
}

#' The plot of a spec item, from its summary table (or its scenario, for the diagram).
plot_item <- function(ctx, id) {
  item <- paper_item(ctx, id)
  if (item$kind == "diagram") {
    scenario <- ctx$scenarios[[item$scenario]]
    if (is.null(scenario)) {
      return(no_data_plot(sprintf("No results for %s in %s", item$scenario, qlab_results)))
    }
    return(plot_dumbbell(dumbbell_parameters(scenario)))
  }
  table <- ctx$figures[[item$file]]
  if (nrow(table) == 0) {
    return(no_data_plot(sprintf("No results for %s in %s", item$scenario, qlab_results)))
  }
  if (isTRUE(item$all_backends)) {
    return(plot_metric_vs_x_by_backend(table, item$x_label, item$y_label, item$y_scale %||% 1))
  }
  switch(item$kind,
    metric_vs_x = plot_metric_vs_x(table, item$x_label, item$y_label, item$y_scale %||% 1),
    backend_ratio_vs_x = plot_paired_ratio_vs_x(table, item$x_label, item$y_label, unlist(item$metric_labels)),
    tasks_over_time = plot_tasks_over_time(table, item$x_label, item$y_label),
    paired_ratio_vs_x = plot_paired_ratio_vs_x(table, item$x_label, item$y_label, unlist(item$metric_labels)),
    metric_by_series = plot_metric_by_series(table, item$y_label, item$y_scale %||% 1, unlist(item$metric_labels),
                                             item_reference(ctx, item))
  )
}

#' A placeholder plot that says why there is no data.
no_data_plot <- function(text) {
  ggplot2::ggplot() +
    ggplot2::annotate("text", x = 0, y = 0, label = text, size = 4) +
    ggplot2::theme_void()
}

#' Every run a backend marked invalid (its fidelity checks failed), with the
#' reasons, and per backend and series how many runs were valid: the runs
#' the figures leave out.
print_run_validity <- function(ctx, scenario) {
  runs <- purrr::map_dfr(ctx$backends_of[[scenario]] %||% character(), function(backend) {
    read_runs_table(file.path(scenario_results_dir(qlab_results, scenario, backend), "runs.csv.gz"))
  })
  if (nrow(runs) == 0) {
    cat("\nNo runs of ", scenario, " in ", qlab_results, ".\n\n", sep = "")
    return(invisible())
  }
  counts <- runs |>
    dplyr::group_by(.data$backend, .data$series) |>
    dplyr::summarise(runs = dplyr::n(), valid = sum(.data$valid), .groups = "drop")
  print_html(html_table(counts, caption = "Runs per backend and series (valid: the backend's fidelity checks held)"))
  invalid <- dplyr::filter(runs, !.data$valid)
  if (nrow(invalid) == 0) {
    cat("\nEvery run passed its backend's fidelity checks.\n\n")
  } else {
    print_html(html_table(dplyr::transmute(invalid, .data$backend, .data$series, .data$point, .data$seed,
                                           reasons = .data$invalid_reasons),
                          caption = "Runs marked invalid: left out of every figure and ratio above"))
  }
}

#' An item's reference line, from its spec: `reference: {value: 1, label: ...}`
#' or `reference: {param: d_ns, scale: 1e-6, label: ...}`, a discipline
#' parameter of the scenario (the same in every series) in plotted units.
item_reference <- function(ctx, item) {
  ref <- item$reference
  if (is.null(ref)) return(NULL)
  if (!is.null(ref$value)) return(list(value = ref$value, label = ref$label %||% ""))
  scenario <- ctx$scenarios[[item$scenario]]
  values <- unique(unlist(purrr::map(scenario$series, function(s) s$params[[ref$param]])))
  if (length(values) != 1) {
    stop(sprintf("%s: reference parameter %s must have one value in every series of %s", item$id, ref$param, item$scenario))
  }
  value <- as.numeric(values) * (ref$scale %||% 1)
  list(value = value, label = sprintf("%s = %s", ref$label %||% ref$param, format(value, digits = 4)))
}

#' Caption: the paper's caption verbatim, then our statistics.
item_caption <- function(ctx, id) {
  item <- paper_item(ctx, id)
  if (item$kind == "diagram") {
    return(sprintf("%s (paper): \u201c%s\u201d. qlab: drawn from the parameters of scenario %s (backend %s).",
                   item$label, item$caption, item$scenario, ctx$backend))
  }
  text <- figure_caption(ctx$figures[[item$file]], item$label, item$caption)
  if (!is.null(item$at)) {
    text <- paste(text, sprintf("At %s.", describe_point(item$at)))
  }
  shown <- unique(ctx$figures[[item$file]]$backend)
  cross <- isTRUE(item$all_backends) || identical(item$kind, "backend_ratio_vs_x")
  if (!cross || length(shown) == 0) shown <- ctx$backend
  paste(text, sprintf("Scenario %s, %s %s.", item$scenario, if (length(shown) > 1) "backends" else "backend",
                      paste(shown, collapse = ", ")))
}

# ---- tables -------------------------------------------------------------

html_table <- function(df, caption = NULL) {
  knitr::kable(df, format = "html", escape = TRUE, caption = caption,
               table.attr = "class=\"table table-sm qlab-table\"")
}

print_html <- function(...) {
  cat("\n```{=html}\n", ..., "\n```\n\n", sep = "")
}

#' Flatten a nested JSON object into `path = value` rows.
flatten_parameters <- function(x, prefix = "") {
  if (is.list(x) && length(x) > 0 && !is.null(names(x)) && all(names(x) != "")) {
    return(purrr::imap_dfr(x, function(value, name) {
      flatten_parameters(value, if (prefix == "") name else paste0(prefix, ".", name))
    }))
  }
  if (is.list(x) && length(x) > 0 && all(purrr::map_lgl(x, function(v) is.list(v) && !is.null(names(v))))) {
    return(purrr::imap_dfr(x, function(value, i) flatten_parameters(value, sprintf("%s[%d]", prefix, i))))
  }
  tibble::tibble(parameter = prefix, value = paste(format(unlist(x), scientific = FALSE, trim = TRUE), collapse = ", "))
}

#' The resolved parameters of the scenario behind an item.
print_parameters <- function(ctx, id) {
  item <- paper_item(ctx, id)
  scenario <- ctx$scenarios[[item$scenario]]
  cat("\n**Parameters** (scenario ", item$scenario, ", as resolved in scenario.json):\n\n", sep = "")
  if (is.null(scenario)) {
    cat("No scenario.json for ", item$scenario, " (backend ", ctx$backend, ").\n\n", sep = "")
    return(invisible())
  }
  keep <- intersect(c("topology", "tcp", "workload", "series", "sweep", "seeds"), names(scenario))
  table <- flatten_parameters(scenario[keep])
  # a swept value is not the value of every run: point to its sweep
  for (name in names(scenario$sweep)) {
    swept <- table$parameter == scenario$sweep[[name]]$path
    table$value[swept] <- sprintf("swept: see sweep.%s.values", name)
  }
  print_html(html_table(table))
}

#' The scenario's assumptions (where the paper is ambiguous).
print_assumptions <- function(ctx, id) {
  item <- paper_item(ctx, id)
  assumptions <- ctx$scenarios[[item$scenario]]$assumptions
  # an assumption naming figures applies to those only
  assumptions <- purrr::keep(assumptions, function(a) is.null(a$figures) || id %in% unlist(a$figures))
  cat("\n**Assumptions** of ", item$scenario, ":\n\n", sep = "")
  if (length(assumptions) == 0) {
    cat("None recorded.\n\n")
    return(invisible())
  }
  table <- purrr::map_dfr(assumptions, function(a) tibble::tibble(id = a$id %||% "", field = a$field %||% "", assumption = a$text %||% ""))
  print_html(html_table(table))
}

#' The claims of one item (claim, paper's value, ours, verdict, how tested).
print_claims <- function(ctx, figure) {
  claims <- dplyr::filter(ctx$claims, .data$figure == .env$figure)
  cat("\n**Claims** (backend ", ctx$backend, "):\n\n", sep = "")
  if (nrow(claims) == 0) {
    cat("The paper makes no claim about this item.\n\n")
    return(invisible())
  }
  print_html(html_table(dplyr::transmute(claims, claim = .data$claim, `paper's value` = .data$paper_value,
                                         ours = .data$ours, verdict = .data$verdict, `how we test it` = .data$method)))
}

#' Parameters, assumptions and claims of a figure, in that order.
print_item_details <- function(ctx, id) {
  print_parameters(ctx, id)
  print_assumptions(ctx, id)
  print_claims(ctx, id)
}

# ---- listing ------------------------------------------------------------

#' The source of C function `name` in `path`, or NULL when absent.
#'
#' The definition is found by a regular expression (a line starting with the
#' return type and the name, up to the opening brace); its body ends at the
#' matching closing brace.
extract_c_function <- function(path, name) {
  if (!file.exists(path)) return(NULL)
  source_text <- paste(readLines(path, warn = FALSE), collapse = "\n")
  pattern <- sprintf("(?m)^[A-Za-z_][A-Za-z0-9_ \\t\\*]*\\n?[ \\t\\*]*\\b%s\\s*\\([^;{]*\\)\\s*\\{", name)
  start <- regexpr(pattern, source_text, perl = TRUE)
  if (start < 0) return(NULL)
  characters <- strsplit(substring(source_text, start), "")[[1]]
  depth <- cumsum((characters == "{") - (characters == "}"))
  opened <- which(characters == "{")[1]
  closing <- which(depth == 0 & seq_along(characters) > opened)[1]
  if (is.na(closing)) return(NULL)
  paste(characters[seq_len(closing)], collapse = "")
}

#' The paper's listing next to qlab's implementation (read at render time).
print_listing <- function(ctx, id) {
  item <- paper_item(ctx, id)
  implementation <- ctx$spec$implementation
  path <- file.path(qlab_root, implementation$file)
  code <- extract_c_function(path, implementation$`function`)
  ours <- if (!is.null(code)) {
    code
  } else if (!file.exists(path)) {
    sprintf("(%s is not in this checkout: the implementation cannot be shown.)", implementation$file)
  } else {
    sprintf("(%s has no function %s.)", implementation$file, implementation$`function`)
  }
  escape <- htmltools::htmlEscape
  print_html(
    "<div style=\"display:flex;gap:1em;flex-wrap:wrap\">",
    "<div style=\"flex:1;min-width:20em\"><p><strong>Paper (verbatim)</strong></p><pre>",
    escape(item$pseudo_code_verbatim), "</pre></div>",
    "<div style=\"flex:1.4;min-width:24em\"><p><strong>qlab: <code>", escape(implementation$`function`),
    "</code> in <code>", escape(implementation$file), "</code></strong></p><pre>",
    escape(ours), "</pre></div></div>"
  )
}

# ---- colophon -----------------------------------------------------------

tool_versions <- function(provenance) {
  packages <- unlist(provenance$packages)
  render_tools <- c(
    R = paste(R.version$major, R.version$minor, sep = "."),
    knitr = as.character(utils::packageVersion("knitr")),
    rmarkdown = as.character(utils::packageVersion("rmarkdown")),
    ggplot2 = as.character(utils::packageVersion("ggplot2")),
    `pandoc (render)` = tryCatch(as.character(rmarkdown::pandoc_version()), error = function(e) "unknown")
  )
  c(qlab = provenance$qlab_version %||% "unknown", packages, render_tools)
}

#' The colophon printed at the foot of every page.
print_colophon <- function(backends = NULL) {
  provenance <- read_provenance(qlab_results)
  scenarios <- purrr::map_dfr(provenance$scenarios, function(s) {
    tibble::tibble(scenario = s$id, sha256 = substr(s$sha256 %||% "", 1, 16))
  })
  versions <- tool_versions(provenance)
  cat("\n\n---\n\n**Colophon.** ")
  cat(sprintf("git commit `%s`%s; profile `%s`; backend(s) %s. ",
              provenance$git_commit, if (isTRUE(provenance$git_dirty)) " (with uncommitted changes)" else "",
              provenance$profile, paste(backends %||% unique(unlist(purrr::map(provenance$scenarios, "backends"))), collapse = ", ")))
  cat("Scenario hashes (SHA-256, first 16 hex digits): ",
      paste(sprintf("%s `%s`", scenarios$scenario, scenarios$sha256), collapse = "; "), ". ", sep = "")
  cat("Tools: ", paste(names(versions), versions, collapse = ", "), ".\n", sep = "")
}

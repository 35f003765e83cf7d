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

knitr::opts_chunk$set(echo = FALSE, warning = FALSE, message = FALSE, fig.width = 6.4, fig.height = 3.4, dpi = 96)

# ---- data ---------------------------------------------------------------

#' Everything a paper page needs: its spec, figure tables, verdicts, the
#' resolved scenarios and the runs' graphs.
#'
#' Figure tables and verdicts are read from <results>/analysis/<paper>/
#' (written by analysis/scripts/analyze.R); when that directory is missing
#' they are computed here from the collected results, and the page says so.
load_paper_context <- function(paper) {
  spec <- read_paper_spec(analysis_dir, paper)
  out_dir <- file.path(qlab_results, "analysis", paper)
  items <- figure_items(spec)
  files <- purrr::map_chr(items, item_file)
  expected <- file.path(out_dir, c(paste0(files, ".csv"), "claims.csv"))
  scenarios <- unique(unlist(purrr::map(spec$items, "scenario")))
  backends_of <- purrr::map(stats::setNames(scenarios, scenarios), function(s) list_backends(qlab_results, s))
  backends <- sort(unique(unlist(backends_of)))
  if (!all(file.exists(expected)) && length(backends) == 0) {
    # this run did not include the paper's scenarios (e.g. `scenarios=` limited them)
    return(list(paper = paper, spec = spec, missing = TRUE, figures = list(), backend = "none",
                backends = character(), scenarios = list(), graphs = list(), backends_of = backends_of,
                claims = tibble::tibble(figure = character(), verdict = character(), backend = character()),
                source_note = sprintf("No results for %s in %s: this run did not include its scenarios (%s).",
                                      paper, qlab_results, paste(scenarios, collapse = ", "))))
  }
  if (all(file.exists(expected))) {
    figures <- purrr::map2(stats::setNames(files, files), items, function(file, item) {
      read_item_table(file.path(out_dir, paste0(file, ".csv")), item)
    })
    claims <- readr::read_csv(file.path(out_dir, "claims.csv"), show_col_types = FALSE,
                              col_types = readr::cols(.default = readr::col_character()))
    source_note <- sprintf("Summary tables read from %s (analysis/scripts/analyze.R).", out_dir)
  } else {
    computed <- analyze_paper(qlab_results, paper, analysis_dir)
    figures <- computed$figures
    claims <- computed$claims
    source_note <- sprintf(
      "%s has no analysis tables: computed while rendering, with the same code (analysis/R).", out_dir
    )
  }
  # a paper with no scenarios, or none of whose scenarios ran, shows its
  # analytic model only
  backend <- if (length(backends) == 0) model_backend else choose_backend(backends)
  # a scenario's own files from the page's backend, else from one that ran it
  scenario_file <- function(scenario, name) {
    dirs <- scenario_results_dir(qlab_results, scenario, unique(c(backend, backends_of[[scenario]])))
    found <- file.path(dirs, name)[file.exists(file.path(dirs, name))]
    if (length(found) == 0) NULL else found[[1]]
  }
  list(
    paper = paper,
    spec = spec,
    missing = FALSE,
    # items that compare backends keep every backend's rows
    figures = purrr::map2(figures, items, function(table, item) {
      if (compares_backends(item) || item$kind %in% kinds_without_runs) table
      else dplyr::filter(table, .data$backend == .env$backend)
    }),
    claims = dplyr::filter(claims, .data$backend == .env$backend),
    # every backend's verdicts (the ns2-vs-ns3 page sets them side by side)
    all_claims = claims,
    backend = backend,
    backends = backends,
    scenarios = purrr::map(stats::setNames(scenarios, scenarios), function(scenario) {
      path <- scenario_file(scenario, "scenario.json")
      if (is.null(path)) NULL else read_scenario_json(path)
    }),
    graphs = purrr::map(stats::setNames(scenarios, scenarios), function(scenario) {
      path <- scenario_file(scenario, "graph.json")
      if (is.null(path)) NULL else list(path = path, plan = read_graph_json(path))
    }),
    backends_of = backends_of,
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

#' The backend a page shows: QLAB_BACKEND if set, else the registry's default
#' (QLAB_DEFAULT_BACKEND, which `qlab render` sets from qlab/backends), else
#' the first found.
choose_backend <- function(backends) {
  wanted <- Sys.getenv("QLAB_BACKEND", "")
  if (wanted != "") {
    if (!wanted %in% backends) {
      stop(sprintf("QLAB_BACKEND=%s has no results (found: %s)", wanted, paste(backends, collapse = ", ")))
    }
    return(wanted)
  }
  default <- Sys.getenv("QLAB_DEFAULT_BACKEND", "")
  if (default %in% backends) default else backends[[1]]
}

paper_item <- function(ctx, id) {
  item <- purrr::detect(ctx$spec$items, function(item) item$id == id)
  if (is.null(item)) stop(sprintf("paper spec %s has no item %s", ctx$paper, id))
  item
}

#' The items a page shows, in the spec's order (an item's `page`, default the paper's).
page_items <- function(spec, page) {
  purrr::keep(spec$items, function(item) identical(item$page %||% spec$page, page))
}

# ---- backend comparisons -------------------------------------------------

#' What a cross-backend item can show (analysis/R/compare-backends.R).
item_comparison <- function(ctx, item) {
  describe_backend_comparison(item, ctx$scenarios[[item$scenario]]$backends,
                              ctx$backends_of[[item$scenario]] %||% character(), ctx$figures[[item_file(item)]])
}

# How to get a backend's results, for a page that lacks them.
backend_how_to <- c(
  mininet = paste("run <code>make reproduce</code> as root on a machine with Mininet installed",
                  "(<code>qlab backends</code> says whether this one can emulate, and why not)"),
  ns3 = "run <code>make reproduce</code> (ns-3 is always run)",
  testbed = paste("boot the virtual testbed (<code>qlab testbed up</code>) or point",
                  "<code>QLAB_TESTBED_INVENTORY</code> at real hosts, then run <code>make reproduce</code>",
                  "(README, “The testbed backend”)"),
  mnkernel = paste("boot the virtual testbed (<code>qlab testbed up</code>), whose router runs",
                   "Mininet with the kernel qdisc, then run <code>make reproduce</code>",
                   "(README, “The testbed backend”)")
)

how_to_get <- function(backend) {
  if (backend %in% names(backend_how_to)) return(backend_how_to[[backend]])
  sprintf("run <code>make reproduce BACKENDS='[ns3,%s]'</code> where that backend can run", backend)
}

#' At the top of a page: when a figure comparing backends lacks a side, say
#' which backend is missing, what that does to the figures, and how to get it.
print_comparison_notice <- function(ctx, page) {
  if (isTRUE(ctx$missing)) return(invisible())
  compared <- purrr::keep(page_items(ctx$spec, page), compares_backends)
  outcomes <- purrr::map(compared, function(item) item_comparison(ctx, item))
  incomplete <- purrr::map_lgl(outcomes, function(o) o$status != "complete")
  if (!any(incomplete)) return(invisible())
  escape <- htmltools::htmlEscape
  missing <- unique(unlist(purrr::map(outcomes, "missing")))
  invalid <- setdiff(unique(unlist(purrr::map(outcomes, "no_valid_run"))), missing)
  present <- unique(unlist(purrr::map(compared, function(item) ctx$backends_of[[item$scenario]])))
  scenarios <- unique(purrr::map_chr(compared[incomplete], "scenario"))
  affected <- purrr::map2_chr(compared[incomplete], outcomes[incomplete], function(item, outcome) {
    sprintf("<li>%s: %s</li>", escape(item$label), escape(outcome$message))
  })
  how <- purrr::map_chr(missing, function(b) sprintf("To get the %s side, %s.", escape(b), how_to_get(b)))
  # every figure still compares two backends or more (a three-way page
  # without its third side): a note on what is absent, not an alarm
  still_compares <- !any(purrr::map_lgl(outcomes, function(o) o$status == "one_sided")) &&
    any(purrr::map_lgl(outcomes, function(o) o$status %in% c("complete", "partial")))
  if (still_compares) {
    print_html(
      "<div class=\"qlab-partial-side\" style=\"border:1px solid #999;background:#f6f6f6;",
      "padding:.6em 1em;margin:1em 0 1.5em\">",
      "<p style=\"margin-top:0\"><strong>Not here: ", escape(paste(c(missing, invalid), collapse = ", ")),
      ".</strong> The figures compare the backends that ran (",
      escape(paste(intersect(present, unique(unlist(purrr::map(outcomes, "compared")))), collapse = ", ")),
      "); what needs ", escape(paste(c(missing, invalid), collapse = " or ")), " is absent:</p><ul>",
      paste(affected, collapse = ""), "</ul>",
      if (length(how) > 0) paste0("<p>", paste(how, collapse = " "), "</p>"),
      "</div>"
    )
    return(invisible())
  }
  title <- if (length(missing) > 0) {
    sprintf("No %s results: this comparison is %s.", paste(missing, collapse = " or "),
            if (length(present) > 0) "one-sided" else "empty")
  } else {
    sprintf("No valid %s run: this comparison is one-sided.", paste(invalid, collapse = " or "))
  }
  print_html(
    "<div class=\"qlab-missing-side\" style=\"border:2px solid #d95f02;background:#fff4e5;",
    "padding:.8em 1.1em;margin:1em 0 1.5em\">",
    "<p style=\"font-size:1.15em;margin-top:0\"><strong>", escape(title), "</strong></p>",
    "<p>This page compares ", escape(paste(unique(unlist(purrr::map(outcomes, "compared"))), collapse = " with ")),
    " on ", escape(paste(scenarios, collapse = ", ")), ", but the results in <code>", escape(qlab_results),
    "</code> hold ", if (length(present) > 0) paste("only", escape(paste(present, collapse = ", "))) else "no run",
    if (length(invalid) > 0) sprintf(" (and no valid %s run)", escape(paste(invalid, collapse = ", "))) else "",
    ". The figures that compare backends are therefore absent or one-sided:</p><ul>",
    paste(affected, collapse = ""), "</ul>",
    if (length(invalid) > 0) {
      "<p>Runs that failed their fidelity checks are listed under “Runs and their fidelity”.</p>"
    },
    if (length(how) > 0) paste0("<p>", paste(how, collapse = " "), "</p>"),
    "</div>"
  )
}

# ---- figures ------------------------------------------------------------

item_heading <- function(item) {
  sprintf("%s: %s", item$label, item$caption)
}

#' The labels of an item's metrics, by position (its `label`, else the metric's id).
item_metric_labels <- function(item) {
  purrr::map_chr(item_selectors(item), function(selector) selector$label %||% metric_selector_id(selector))
}

#' The kinds of a scenario's series (name -> discipline kind).
series_kinds <- function(scenario) {
  purrr::map(scenario$series %||% list(), "kind")
}

#' The diagram of a `diagram` item, from its scenario's graph.json; NULL without one.
item_diagram <- function(ctx, item) {
  graph <- ctx$graphs[[item$scenario]]
  if (is.null(graph)) return(NULL)
  scenario <- ctx$scenarios[[item$scenario]]
  topology_diagram(graph$plan, series_kinds(scenario), purrr::map(scenario$series %||% list(), "routers"),
                   scenario$topology$undeployed$kind)
}

#' Each series and its discipline, "ncq0: droptail", and where a series
#' deploys at some routers only, which: "ncq3: ncq at r1, r2, r3 (droptail
#' elsewhere)".
describe_series <- function(scenario) {
  kinds <- series_kinds(scenario)
  purrr::imap_chr(kinds, function(kind, name) {
    routers <- scenario$series[[name]]$routers
    if (is.null(routers)) return(sprintf("%s: %s", name, kind))
    sprintf("%s: %s at %s (%s elsewhere)", name, kind,
            if (length(routers) == 0) "no router" else paste(unlist(routers), collapse = ", "),
            scenario$topology$undeployed$kind %||% "?")
  }) |> paste(collapse = ", ")
}

#' The plot of a spec item, from its summary table (or its run's graph, for the diagram).
plot_item <- function(ctx, id) {
  item <- paper_item(ctx, id)
  if (item$kind == "diagram") {
    return(plot_topology(item_diagram(ctx, item)))
  }
  table <- ctx$figures[[item_file(item)]]
  # time series and panels of metrics draw every backend themselves (a row of
  # panels, or a colour, per backend)
  if (isTRUE(item$all_backends) && !(item$kind == "time_series" || identical(item$layout, "panels"))) {
    return(plot_metric_vs_x_by_backend(table, item$x_label, item$y_label, item$y_scale %||% 1))
  }
  switch(item$kind,
    metric_vs_x = plot_metric_vs_x(table, item$x_label, item$y_label, item$y_scale %||% 1, item_metric_labels(item)),
    backend_ratio_vs_x = plot_paired_ratio_vs_x(table, item$x_label, item$y_label, item_metric_labels(item)),
    tasks_over_time = plot_tasks_over_time(table, item$x_label, item$y_label),
    tcp_worst_flow = plot_tcp_worst_flow(table, item$x_label),
    model_vs_x = plot_model_vs_x(table, item$x_label, item$y_label, item$y_scale %||% 1),
    theory_vs_x = if (isTRUE(item$relative)) {
      plot_theory_ratio(table, item$x_label, item_metric_labels(item), item$margin %||% 0.02)
    } else {
      plot_theory_vs_x(table, item$x_label, item$y_label, item$y_scale %||% 1, item_metric_labels(item))
    },
    paired_ratio_vs_x = plot_paired_ratio_vs_x(table, item$x_label, item$y_label, item_metric_labels(item)),
    improvement_frequency = plot_improvement_frequency(table, item$x_label, item$y_label,
                                                       frequency_bins(unlist(item$bins))$label),
    metric_by_series = if (identical(item$layout, "panels")) {
      plot_metric_by_variant(table, item$y_label, item_metric_labels(item), unlist(item$series))
    } else {
      plot_metric_by_series(table, item$y_label, item$y_scale %||% 1, item_metric_labels(item),
                            item_reference(ctx, item))
    },
    time_series = plot_time_series(table, item$x_label, item$y_label, item_metric_labels(item), item$y_scale %||% 1),
    useful_vs_sessions = plot_metric_vs_x(table, item$x_label, item$y_label, item$y_scale %||% 1)
  )
}

#' An item's plot with its caption, drawn once, straight into the PNG file
#' the page embeds. A plot printed in a chunk is drawn on knitr's chunk
#' device and then replayed into the file: two draws, a tenth of a page's
#' render. This writes the file knitr would (its path, the chunk's size and
#' resolution: `dpi`, already times `fig.retina`) and prints the markup
#' knitr's plot hook gives it, caption and all.
item_png <- function(ctx, id, options = knitr::opts_current$get()) {
  path <- knitr::fig_path(".png", options, number = 1L)
  dir.create(dirname(path), recursive = TRUE, showWarnings = FALSE)
  grDevices::png(path, width = options$fig.width, height = options$fig.height, units = "in", res = options$dpi)
  device <- grDevices::dev.cur()
  tryCatch(print(plot_item(ctx, id)), finally = grDevices::dev.off(device))
  options$fig.cap <- item_caption(ctx, id)
  options$fig.num <- 1L
  options$fig.cur <- 1L
  cat(knitr::knit_hooks$get("plot")(path, options))
}

# ---- interactive figures ----------------------------------------------------

#' The interactive version of an item's ggplot (plotly::ggplotly on the same
#' object, so the hover values are the plotted numbers): hover values, a
#' legend whose entries toggle their series (a click hides one, a double
#' click shows it alone) and zoom. NULL for the topology diagram (nothing to
#' read off it) and when ggplotly cannot convert a plot, which then stays
#' static.
#'
#' The chunk draws both: this widget, then the ggplot PNG with the caption.
#' qlab.css shows the widget on screen and the PNG in print (plotly's canvas
#' prints unreliably and its toolbar means nothing on paper), and the PNG on
#' screen too when JavaScript is off (_qlab-head.html marks the page when it
#' runs): a <noscript> copy would embed the PNG twice, and a "static image"
#' link would leave print without a figure.
plotly_js_dir <- "/usr/share/python3-plotly"

interactive_figure <- function(ctx, id, height_in = knitr::opts_current$get("fig.height")) {
  item <- paper_item(ctx, id)
  if (item$kind == "diagram") return(invisible(NULL))
  widget <- tryCatch(suppressMessages(suppressWarnings(
    plotly::ggplotly(plot_item(ctx, id), height = round(height_in * 96), dynamicTicks = FALSE)
  )), error = function(e) NULL)
  if (is.null(widget)) return(invisible(NULL))
  widget <- plotly::config(widget, displaylogo = FALSE, toImageButtonOptions = list(format = "png"),
                           modeBarButtonsToRemove = c("lasso2d", "select2d", "autoScale2d"))
  # Debian's r-cran-plotly replaces the plotly.js its R code is written for
  # (2.11) with plotly.js 1.31, which its own htmlwidgets binding cannot drive
  # (errors in the console, no figure): use plotly.js 2.6 from Debian's
  # python3-plotly instead, and draw no widget without it. The typed-array
  # polyfill Debian ships fails to load ("GLOBAL is not defined"): every
  # browser plotly.js 2 runs in has typed arrays.
  if (!file.exists(file.path(plotly_js_dir, "plotly.js"))) return(invisible(NULL))
  widget$dependencies <- purrr::discard(widget$dependencies, function(d) d$name %in% c("typedarray", "plotly-main"))
  widget$dependencies <- c(widget$dependencies, list(htmltools::htmlDependency(
    "plotly-main", "2.6.3", src = plotly_js_dir, script = "plotly.js", all_files = FALSE)))
  # ggplotly drops a legend placed at the bottom: above the plot, in a row
  widget <- plotly::layout(widget, showlegend = TRUE,
                           legend = list(orientation = "h", x = 0, y = 1.02, xanchor = "left", yanchor = "bottom",
                                         itemclick = "toggle", itemdoubleclick = "toggleothers"))
  widget <- relabel_hover(plotly::plotly_build(widget), item)
  # fill the column; the height is the PNG's, so the page does not jump between screen and print
  widget$sizingPolicy$knitr$figure <- FALSE
  widget$sizingPolicy$defaultWidth <- "100%"
  widget$width <- "100%"
  widget
}

#' Print an htmlwidget from a `results = 'asis'` chunk: its HTML, and its
#' JavaScript and CSS registered with knitr so that rmarkdown embeds them
#' once per page.
print_widget <- function(widget) {
  out <- knitr::knit_print(widget)
  knitr::knit_meta_add(attr(out, "knit_meta"))
  # already a raw HTML block (htmltools::htmlPreserve)
  cat("\n", as.character(out), "\n\n", sep = "")
}

#' Why an item has nothing to plot (NULL when it has): no graph for a
#' diagram, a backend comparison without its sides, a figure without rows.
item_absence <- function(ctx, item) {
  if (item$kind %in% c("listing", table_kinds)) return(NULL)
  if (item$kind == "diagram") {
    if (!is.null(ctx$graphs[[item$scenario]])) return(NULL)
    return(sprintf(paste("Not drawn: no graph.json for %s in %s (the workflow writes the graph of one run",
                         "per scenario and backend)."),
                   item$scenario, qlab_results))
  }
  if (compares_backends(item)) {
    outcome <- item_comparison(ctx, item)
    return(if (outcome$status == "absent") outcome$message else NULL)
  }
  if (nrow(ctx$figures[[item_file(item)]]) == 0) {
    not_run <- scenario_not_run_reason(qlab_results, item$scenario)
    if (!is.null(not_run)) return(sprintf("Not drawn: %s.", not_run))
    return(sprintf("Not drawn: no results for %s in %s.", item$scenario, qlab_results))
  }
  NULL
}

#' Each emulating backend's runs with their own fidelity measurements
#' (run_fidelity()), a table per backend.
print_run_fidelity <- function(ctx, scenario) {
  for (backend in ctx$backends_of[[scenario]] %||% character()) {
    runs <- run_fidelity(qlab_results, scenario, backend)
    if (nrow(runs) == 0) next
    shown <- purrr::modify_if(runs, is.double, function(x) signif(x, 4))
    print_html(html_table(shown, caption = sprintf("%s: each run's fidelity measurements (%s)", backend, scenario)))
  }
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
    stop(sprintf("%s: reference parameter %s must have one value in every series of %s",
                 item$id, ref$param, item$scenario))
  }
  value <- as.numeric(values) * (ref$scale %||% 1)
  list(value = value, label = sprintf("%s = %s", ref$label %||% ref$param, format(value, digits = 4)))
}

#' Caption: the paper's caption verbatim, then our statistics (or, for the
#' diagram, which run's graph it is).
item_caption <- function(ctx, id) {
  item <- paper_item(ctx, id)
  if (item$kind == "diagram") {
    plan <- ctx$graphs[[item$scenario]]$plan
    point <- if (length(plan$point_values) > 0) paste0(", ", describe_point(plan$point_values)) else ""
    return(sprintf(paste(
      "%s (paper): \u201c%s\u201d. qlab: drawn from the graph of one run of scenario %s (graph.json: backend %s,",
      "series %s%s, seed %s). Each diamond is a discipline, on the link it sends into; filled: a queue the runs",
      "trace, which runs each series' discipline (%s). Hosts are summarised per traffic group."),
      item$label, item$caption, item$scenario, plan$backend, plan$series, point, plan$seed,
      describe_series(ctx$scenarios[[item$scenario]])))
  }
  table <- ctx$figures[[item_file(item)]]
  if (item$kind %in% kinds_without_runs && !is.null(item$model_note)) {
    return(sprintf("%s (paper): \u201c%s\u201d. qlab: %s", item$label, item$caption, item$model_note))
  }
  if (item$kind %in% kinds_without_runs) {
    others <- setdiff(unique(table$reading), "printed")
    return(sprintf(paste(
      "%s (paper): \u201c%s\u201d. qlab: computed exactly from the paper's equations (model %s, no simulation),",
      "under the printed reading (first panel) and %d other reading(s) of what the paper leaves ambiguous, one per",
      "panel: %s (analysis/MODEL-NCQ-JOURNAL.md)."),
      item$label, item$caption, item$model, length(others), paste(others, collapse = "; ")))
  }
  text <- figure_caption(table, item$label, item$caption, from_paper = !startsWith(item$id, "qlab/"))
  if (!is.null(item$at)) {
    text <- paste(text, sprintf("At %s.", describe_point(item$at)))
  }
  shown <- unique(table$backend)
  if (!compares_backends(item) || length(shown) == 0) shown <- ctx$backend
  text <- paste(text, sprintf("Scenario %s, %s %s.", item$scenario, if (length(shown) > 1) "backends" else "backend",
                              paste(shown, collapse = ", ")))
  if (compares_backends(item)) {
    outcome <- item_comparison(ctx, item)
    if (outcome$status %in% c("one_sided", "partial")) text <- paste(text, outcome$message)
  }
  text
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

#' The resolved parameters of a scenario (parameter, value), each beside the
#' value the paper states (reports/paper-parameters.yaml; parameters_vs_paper()
#' adds `paper` and `differs`). NULL without a scenario.json.
scenario_parameters <- function(ctx, scenario_id) {
  scenario <- ctx$scenarios[[scenario_id]]
  if (is.null(scenario)) return(NULL)
  keep <- intersect(c("topology", "tcp", "workload", "series", "sweep", "seeds"), names(scenario))
  table <- flatten_parameters(scenario[keep])
  # a swept value is not the value of every run: point to its sweep
  for (name in names(scenario$sweep)) {
    swept <- table$parameter %in% c(scenario$sweep[[name]]$path, unlist(scenario$sweep[[name]]$also))
    table$value[swept] <- sprintf("swept: see sweep.%s.values", name)
    for (path in names(scenario$sweep[[name]]$with)) {
      alongside <- table$parameter == path
      table$value[alongside] <- sprintf("set with sweep.%s: see sweep.%s.with", name, name)
    }
  }
  stated <- read_stated_parameters(file.path(qlab_root, "reports", "paper-parameters.yaml"), ctx$paper)
  parameters_vs_paper(table, stated, scenario_id)
}

#' The resolved parameters of the scenario behind an item, those that differ
#' from the paper's stated values marked (class qlab-differs, and "≠" for print
#' without colour).
print_parameters <- function(ctx, id) {
  item <- paper_item(ctx, id)
  table <- scenario_parameters(ctx, item$scenario)
  cat("\n**Parameters** (scenario ", item$scenario, ", as resolved in scenario.json):\n\n", sep = "")
  if (is.null(table)) {
    cat("No scenario.json for ", item$scenario, " in ", qlab_results, ".\n\n", sep = "")
    return(invisible())
  }
  differs <- !is.na(table$differs) & table$differs
  legend <- if (all(is.na(table$differs))) {
    sprintf(paste("No value %s states for these parameters is listed in reports/paper-parameters.yaml:",
                  "none is compared."), htmltools::htmlEscape(ctx$paper))
  } else {
    sprintf(paste("<span class=\"qlab-differs\">&ne; highlighted</span>: %d of the %d values the paper states",
                  "differ here (the paper's words beside them, from the figure catalogue); a blank <em>paper</em>",
                  "cell: the paper does not state it (see the assumptions)."),
            sum(differs), sum(!is.na(table$differs)))
  }
  print_html("<p class=\"qlab-legend\">", legend, "</p>")
  escape <- htmltools::htmlEscape
  rows <- purrr::pmap_chr(list(table$parameter, table$value, table$paper, differs),
                          function(parameter, value, paper, d) {
    sprintf("<tr%s><td>%s%s</td><td>%s</td><td>%s</td></tr>", if (d) " class=\"qlab-differs\"" else "",
            if (d) "&ne; " else "", escape(parameter), escape(value), escape(paper))
  })
  print_html("<table class=\"table table-sm qlab-table qlab-parameters\"><thead><tr><th>parameter</th><th>value</th>",
             "<th>paper</th></tr></thead><tbody>", paste(rows, collapse = ""), "</tbody></table>")
}

#' How many of a scenario's parameters differ from the paper's values (NA without scenario.json).
count_differing_parameters <- function(ctx, scenario_id) {
  table <- scenario_parameters(ctx, scenario_id)
  if (is.null(table)) NA_integer_ else sum(table$differs, na.rm = TRUE)
}

#' The scenario's assumptions (where the paper is ambiguous); with
#' `only_named`, just those that name this item (the others were shown with
#' an earlier item of the same scenario).
print_assumptions <- function(ctx, id, only_named = FALSE) {
  item <- paper_item(ctx, id)
  assumptions <- ctx$scenarios[[item$scenario]]$assumptions
  # an assumption naming figures applies to those only
  assumptions <- purrr::keep(assumptions, function(a) {
    if (only_named) id %in% unlist(a$figures) else is.null(a$figures) || id %in% unlist(a$figures)
  })
  if (only_named && length(assumptions) == 0) return(invisible())
  cat("\n**Assumptions** of ", item$scenario, if (only_named) " for this item" else "", ":\n\n", sep = "")
  if (length(assumptions) == 0) {
    cat("None recorded.\n\n")
    return(invisible())
  }
  table <- purrr::map_dfr(assumptions, function(a) {
    tibble::tibble(id = a$id %||% "", field = a$field %||% "", assumption = a$text %||% "")
  })
  print_html(html_table(table))
}

#' A verdict as a coloured label (qlab.css colours .qlab-v-<verdict>).
verdict_label <- function(verdict) {
  sprintf("<span class=\"qlab-verdict qlab-v-%s\">%s</span>", gsub("[^a-z]+", "-", tolower(verdict)),
          htmltools::htmlEscape(verdict))
}

#' A sortable table (DT::datatable) of an HTML-formatted data frame
#' (`table`, its cells escaped already), with a copy as a plain HTML table
#' in <noscript> for a reader without JavaScript (and for tests that parse
#' the page). A click on a column's header sorts by it; no paging, so the
#' whole table prints; a search box once it is long.
print_sortable_table <- function(table, caption = NULL) {
  widget <- DT::datatable(
    table, rownames = FALSE, escape = FALSE, class = "compact stripe qlab-dt",
    caption = if (!is.null(caption)) htmltools::tags$caption(caption),
    options = list(paging = FALSE, info = FALSE, searching = nrow(table) > 10, autoWidth = FALSE,
                   order = list(), dom = if (nrow(table) > 10) "ft" else "t")
  )
  print_widget(widget)
  print_html("<noscript>", knitr::kable(table, format = "html", escape = FALSE, caption = caption,
                                        table.attr = "class=\"table table-sm qlab-table\""), "</noscript>")
}

#' The claims of one item or claim section (claim, paper's value, ours,
#' verdict, how tested), sortable, the verdicts coloured; folded, with every
#' claim's verdict in view on the fold's line.
print_claims <- function(ctx, figure) {
  claims <- dplyr::filter(ctx$claims, .data$figure == .env$figure)
  if (nrow(claims) == 0) {
    cat("\n**Claims** (backend ", ctx$backend, "): no claim is tested on this item.\n\n", sep = "")
    return(invisible())
  }
  # the test's description (often a paragraph) folded, so the table stays short
  escape <- htmltools::htmlEscape
  table <- dplyr::transmute(claims, claim = escape(.data$claim), `paper's value` = escape(.data$paper_value),
                            ours = escape(.data$ours), verdict = verdict_label(.data$verdict),
                            `how we test it` = sprintf("<details><summary>test</summary>%s</details>",
                                                       escape(.data$method)))
  print_html(sprintf(paste0("<details class=\"qlab-claims\"><summary><strong>Claims</strong> ",
                            "(backend %s): %d, verdicts %s</summary>"),
                     escape(ctx$backend), nrow(claims), paste(verdict_label(claims$verdict), collapse = " ")))
  print_sortable_table(table, caption = "Verdict rules: the Verdicts page (verdicts.html)")
  print_html("</details>")
}

#' A backend ratio's values as a table (metric, series, point, ratio with its interval).
#' Each claim's verdict under each of `backends` (verdicts_by_backend), the
#' claims whose verdicts differ first marked.
print_verdicts_by_backend <- function(ctx, backends) {
  claims <- ctx$all_claims %||% tibble::tibble()
  present <- intersect(backends, unique(claims$backend))
  if (length(present) < 2) {
    cat(sprintf("\nNo verdicts to set side by side: this run has verdicts for %s only.\n\n",
                if (length(present) == 0) "no backend" else paste(present, collapse = ", ")))
    return(invisible())
  }
  wide <- verdicts_by_backend(claims, backends)
  compared <- sum(!is.na(wide$agree))
  cat(sprintf(paste("\n%d of the %d claims that both simulators' runs can test get the same verdict under %s",
                    "(%d claim(s) only one of them ran, or neither can test).\n\n"),
              sum(wide$agree, na.rm = TRUE), compared, paste(backends, collapse = " and "), nrow(wide) - compared))
  wide$agree <- dplyr::case_when(is.na(wide$agree) ~ "—", wide$agree ~ "yes", TRUE ~ "DIFFERS")
  print_html(html_table(dplyr::rename(wide, claim = "claim_id", `same verdict` = "agree"),
                        caption = "Each claim's verdict per simulator (rules: the Verdicts page)"))
}

#' How each backend ran TCP (tcp_models_of_runs): the plan's settings and
#' each runner's records, from one run of `scenario` per backend.
print_tcp_models <- function(ctx, scenario, backends) {
  runs <- purrr::compact(purrr::map(stats::setNames(backends, backends), function(backend) {
    files <- run_json_files(qlab_results, scenario, backend)
    if (length(files) == 0) NULL else jsonlite::read_json(files[[1]])
  }))
  plan_tcp <- ctx$scenarios[[scenario]]$tcp
  if (length(runs) == 0 || is.null(plan_tcp)) {
    cat(sprintf("\nNo runs of %s in %s to read the TCP models from.\n\n", scenario, qlab_results))
    return(invisible())
  }
  print_html(html_table(tcp_models_of_runs(runs, plan_tcp),
                        caption = sprintf(paste("TCP as each simulator ran %s: the plan (read by both) and",
                                                "each runner's own record (run.json)"), scenario)))
}

print_backend_ratios <- function(ctx, item) {
  ratios <- ctx$figures[[item_file(item)]]
  if (nrow(ratios) == 0) return(invisible())
  column <- sprintf("%s / %s", item$numerator, item$denominator)
  table <- dplyr::transmute(ratios, metric = item_metric_labels(item)[.data$selector], series = .data$series,
                            !!item$x := .data$x, seeds = .data$n,
                            !!column := sprintf("%.3f (95%% CI %.3f to %.3f)", .data$mean, .data$ci_lo, .data$ci_hi))
  print_html(html_table(table, caption = sprintf("%s per metric, series and %s (paired by seed)", column, item$x)))
}

#' The frequency table of an improvement_frequency item, as the paper's
#' frequency tables: runs and share per interval of the per-run change.
print_frequency_table <- function(ctx, item) {
  table <- ctx$figures[[item_file(item)]]
  if (nrow(table) == 0) return(invisible())
  labels <- frequency_bins(unlist(item$bins))$label
  rows <- dplyr::transmute(table, series = .data$series, `change vs baseline` = labels[.data$x],
                           `share of runs` = sprintf("%.0f%% (95%% CI %.0f%% to %.0f%%)", .data$mean, .data$ci_lo,
                                                     .data$ci_hi),
                           runs = sprintf("%d of %d", as.integer(round(.data$mean * .data$n / 100)), .data$n))
  print_html(html_table(rows, caption = sprintf("Frequency table: per-run change of %s, %s against %s (paired by seed)",
                                                item_metric_labels(item)[[1]], item$treatment, item$baseline)))
}

#' Parameters, assumptions and claims of an item, in that order. With
#' `shown_at`, an item above on the page (of the same scenario) that showed
#' the parameters and scenario-wide assumptions: point to it instead.
print_item_details <- function(ctx, id, shown_at = NULL) {
  item <- paper_item(ctx, id)
  print_figure_links(ctx, item)
  if (item$kind %in% kinds_without_runs) {
    print_model_equations(ctx, item)
    print_claims(ctx, id)
    return(invisible())
  }
  if (identical(item$kind, "backend_ratio_vs_x")) print_backend_ratios(ctx, item)
  if (identical(item$kind, "improvement_frequency")) print_frequency_table(ctx, item)
  if (!is.null(shown_at)) {
    cat("\n**Parameters and assumptions**: as for [", paper_item(ctx, shown_at)$label, "](#", item_anchor(shown_at),
        ") above (scenario ", item$scenario, ").\n\n", sep = "")
    print_assumptions(ctx, id, only_named = TRUE)
  } else {
    # shown once per scenario, folded: the figure and its claims stay in view
    differing <- count_differing_parameters(ctx, item$scenario)
    print_html(sprintf("<details class=\"qlab-details\"><summary>Parameters and assumptions of scenario %s%s</summary>",
                       htmltools::htmlEscape(item$scenario),
                       if (isTRUE(differing > 0)) {
                         sprintf(" (%d %s from the paper's)", differing, if (differing == 1) "differs" else "differ")
                       } else {
                         ""
                       }))
    print_parameters(ctx, id)
    print_assumptions(ctx, id)
    print_html("</details>")
  }
  print_claims(ctx, id)
}

#' Under a figure: its data (the figure table, embedded as a CSV download)
#' and the command that regenerates it.
print_figure_links <- function(ctx, item) {
  table <- ctx$figures[[item_file(item)]]
  if (is.null(table) || nrow(table) == 0) return(invisible())
  print_html(sprintf("<p class=\"qlab-links\">%s &middot; regenerate: <code>.venv/bin/qlab figure %s</code></p>",
                     data_link(table, item_file(item)), htmltools::htmlEscape(item$id)))
}

#' A link that downloads `table` as <file>.csv (embedded in the page).
data_link <- function(table, file) {
  data <- base64enc::base64encode(charToRaw(readr::format_csv(table, na = "NA")))
  sprintf("<a download=\"%s.csv\" href=\"data:text/csv;base64,%s\">Data (CSV, %d rows)</a>", file, data, nrow(table))
}

# ---- table items -------------------------------------------------------

#' A symbol as the paper's notation writes it ("T_{S1}", "λ_1") in HTML,
#' its subscripts lowered.
notation_html <- function(symbol) {
  escaped <- htmltools::htmlEscape(symbol)
  escaped <- gsub("_\\{([^}]*)\\}", "<sub>\\1</sub>", escaped)
  gsub("_([A-Za-z0-9])", "<sub>\\1</sub>", escaped)
}

#' A table item: the paper's notation (table_notation), or a table computed
#' from analysis/R beside the paper's printed values (table_model).
print_table_item <- function(ctx, id) {
  item <- paper_item(ctx, id)
  if (item$kind == "table_notation") {
    rows <- purrr::map_dfr(item$notation, tibble::as_tibble)
    table <- tibble::tibble(Symbol = notation_html(rows$symbol), Description = htmltools::htmlEscape(rows$description))
    caption <- sprintf(paste("%s (paper): \u201c%s\u201d. The paper's rows as printed (analysis/papers/%s.yaml;",
                             "tests/test_papers.py checks them against the catalogue)."),
                       item$label, item$caption, ctx$paper)
    print_html(knitr::kable(table, format = "html", escape = FALSE, caption = htmltools::htmlEscape(caption),
                            table.attr = "class=\"table table-sm qlab-table\""))
    return(invisible())
  }
  if (item$kind == "table_scenario") {
    print_scenario_table(ctx, item)
    return(invisible())
  }
  computed <- item_model_table(item)
  range <- function(low, high, digits) sprintf("%.*f \u2013 %.*f", digits, low, digits, high)
  shown <- dplyr::transmute(computed,
    `R-Factor (paper)` = sprintf("%g < R < %g", .data$r_low, .data$r_high),
    `Quality of voice rating (paper)` = .data$rating_paper,
    `G.109 category (ours)` = .data$rating_g109,
    `MOS (paper)` = range(.data$mos_low_paper, .data$mos_high_paper, 2),
    `MOS at the bounds, G.107 (ours)` = range(.data$mos_low, .data$mos_high, 3),
    `MOS at the bounds, paper's printed formula` = range(.data$mos_low_printed_formula,
                                                          .data$mos_high_printed_formula, 3),
    `agrees` = ifelse(.data$agrees, "yes", "NO")
  )
  caption <- sprintf(paste(
    "%s (paper): \u201c%s\u201d. qlab: the category and the MOS at each band's bounds computed by",
    "rate_voice_quality() and mos_from_r() (analysis/R/metric-emodel.R, ITU-T G.107 Annex B), the functions that",
    "rate the calls; the last MOS column is the paper's printed mapping, 1 + 0.035R + 7e-6(100 - R). A row agrees",
    "when our MOS is within 0.005 of the paper's two-decimal values at both bounds and the category is the same:",
    "%d of %d rows do."), item$label, item$caption, sum(computed$agrees), nrow(computed))
  print_html(html_table(shown, caption = caption))
  print_html(sprintf("<p class=\"qlab-links\">%s</p>", data_link(computed, item_file(item))))
}

#' The equations behind each curve of a model item (its table's `method`).
print_model_equations <- function(ctx, item) {
  table <- ctx$figures[[item_file(item)]]
  if (nrow(table) == 0) return(invisible())
  used <- dplyr::distinct(table, .data$series, .data$method) |>
    dplyr::transmute(series = .data$series, equations = sub("^analytic, ", "", .data$method))
  print_html(html_table(used, caption = "The paper's equations behind each curve"))
}

#' The numbers a paper states from its own model, under every reading: the
#' printed one and those changing one ambiguous choice (the claims' verdicts
#' use these; readings changing more are counted in the claims' text).
print_model_stated_values <- function(model) {
  table <- model_value_tables()[[model]]()
  table$changes <- ifelse(table$reading == "printed", 0L, lengths(strsplit(table$reading, "+", fixed = TRUE)))
  listed <- function(readings) if (length(readings) == 0) "none" else paste(readings, collapse = "; ")
  shown <- table |>
    dplyr::group_by(.data$figure, .data$series, .data$stated_pct) |>
    dplyr::summarise(
      printed = sprintf("%+.1f%%", .data$value_pct[.data$reading == "printed"][1]),
      `readings changing one choice` = sprintf("%+.0f%% to %+.0f%%", min(.data$value_pct[.data$changes == 1]),
                                               max(.data$value_pct[.data$changes == 1])),
      `matching (one choice)` = listed(.data$reading[.data$match & .data$changes <= 1]),
      `matching combinations (2+ choices)` = sum(.data$match & .data$changes > 1),
      .groups = "drop") |>
    dplyr::mutate(stated = sprintf("%+g%%", .data$stated_pct), .after = "series") |>
    dplyr::select(-"stated_pct")
  print_html(html_table(shown, caption = sprintf(
    "The percentages the paper states at u = 0.60, and ours (model %s), matched within %g percentage point(s)",
    model, table$tolerance_pp[[1]])))
}

# ---- generated sections --------------------------------------------------

#' The R Markdown of one item's section: heading, prose, the figure (with its
#' caption) or why there is none, and the details (`shown_at`: see
#' `print_item_details()`). Knitted as a child of the page, so its figures
#' are captioned like hand-written chunks.
item_section_rmd <- function(ctx, item, level, shown_at) {
  id <- deparse(item$id)
  label <- paste0("item-", gsub("[^a-z0-9]+", "-", tolower(item$id)))
  absence <- item_absence(ctx, item)
  # a comparison missing a side says so in its heading and above its plot
  comparison <- if (compares_backends(item)) item_comparison(ctx, item) else NULL
  heading <- switch(comparison$status %||% "complete",
    complete = item_heading(item),
    one_sided = ,
    partial = sprintf("%s [%s only: no %s]", item_heading(item), paste(comparison$shown, collapse = ", "),
                      paste(c(comparison$missing, comparison$no_valid_run), collapse = ", ")),
    absent = paste(item_heading(item), "[not drawn]")
  )
  notice <- if (identical(comparison$status, "one_sided")) c(paste0("**", comparison$message, "**"), "")
  size <- if (item$kind == "diagram" && is.null(absence)) item_diagram(ctx, item)$size_in else NULL
  width <- size[["width"]] %||% item$fig_width %||% knitr::opts_chunk$get("fig.width")
  height <- size[["height"]] %||% item$fig_height %||% knitr::opts_chunk$get("fig.height")
  body <- if (item$kind == "listing") {
    c(sprintf("```{r %s, results = 'asis'}", label), sprintf("print_listing(ctx, %s)", id),
      sprintf("print_claims(ctx, %s)", id), "```")
  } else if (item$kind %in% table_kinds) {
    c(sprintf("```{r %s, results = 'asis'}", label), sprintf("print_table_item(ctx, %s)", id),
      sprintf("print_claims(ctx, %s)", id), "```")
  } else {
    c(if (!is.null(absence)) c(paste0("**", absence, "**"), "")
      else c(notice, "::: {.qlab-figure}",
             # the widget in a chunk of its own: in the figure's, knitr would caption it too
             sprintf("```{r %s-interactive, fig.width = %s, fig.height = %s}", label, width, height),
             sprintf("interactive_figure(ctx, %s)", id), "```", "",
             sprintf("```{r %s, results = 'asis', fig.width = %s, fig.height = %s}", label, width, height),
             sprintf("item_png(ctx, %s)", id), "```", ":::", ""),
      sprintf("```{r %s-details, results = 'asis'}", label),
      sprintf("print_item_details(ctx, %s, shown_at = %s)", id, deparse(shown_at)), "```")
  }
  # the item's id is its anchor (ncq-conf.html#ncq-conf-fig2) and is shown under its heading
  # items sit two per row on a wide screen (qlab.css); a listing, diagram or table takes a whole row
  wide <- if (item$kind %in% c("listing", "diagram", table_kinds)) " .qlab-item .qlab-wide" else " .qlab-item"
  c(sprintf("%s %s {#%s%s}", strrep("#", level), heading, item_anchor(item$id), wide), "",
    sprintf("Item `%s`.", item$id), "",
    item$prose %||% character(), "", body, "")
}

#' The HTML anchor of an item: its id with every run of other characters as
#' one dash (ncq-conf/fig2 -> ncq-conf-fig2).
item_anchor <- function(id) gsub("[^a-z0-9]+", "-", tolower(id))

#' Every item of a page in the spec's order, each as its own section (with
#' its spec section's heading and prose before the first of a section), then
#' the paper's claim sections when this is the paper's page.
print_items <- function(ctx, page) {
  env <- new.env(parent = globalenv())
  env$ctx <- ctx
  sections <- stats::setNames(ctx$spec$sections %||% list(), purrr::map_chr(ctx$spec$sections %||% list(), "id"))
  current <- NULL
  # the first of consecutive items of one scenario shows its parameters
  shown_at <- NULL
  # knitting a child moves to the page's directory: come back, or knitr warns
  # that the chunk changed the working directory
  wd <- getwd()
  on.exit(setwd(wd), add = TRUE)
  for (item in page_items(ctx$spec, page)) {
    lines <- character()
    if (!identical(item$section, current) && !is.null(item$section)) {
      section <- sections[[item$section]]
      lines <- c(paste("##", section$title), "", section$prose %||% character(), "")
    }
    current <- item$section
    if (!is.null(shown_at) && !identical(paper_item(ctx, shown_at)$scenario, item$scenario)) shown_at <- NULL
    lines <- c(lines, item_section_rmd(ctx, item, level = if (is.null(item$section)) 2 else 3, shown_at))
    cat(knitr::knit_child(text = lines, envir = env, quiet = TRUE), sep = "\n")
    setwd(wd)
    if (!is.null(item$scenario)) shown_at <- shown_at %||% item$id
  }
  if (identical(page, ctx$spec$page)) {
    for (section in ctx$spec$claim_sections %||% list()) {
      cat("\n## ", section$title, "\n\n", sep = "")
      print_claims(ctx, section$id)
    }
  }
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

#' The colophon printed at the foot of every page, from software.json: a
#' page may render while other papers still run, before provenance.json.
print_colophon <- function(backends = NULL) {
  provenance <- read_provenance(qlab_results, "software.json")
  scenarios <- purrr::map_dfr(provenance$scenarios, function(s) {
    tibble::tibble(scenario = s$id, sha256 = substr(s$sha256 %||% "", 1, 16))
  })
  versions <- tool_versions(provenance)
  cat("\n\n---\n\n**Colophon.** ")
  cat(sprintf("git commit `%s`%s; profile `%s`; backend(s) %s. ",
              provenance$git_commit, if (isTRUE(provenance$git_dirty)) " (with uncommitted changes)" else "",
              provenance$profile,
              paste(backends %||% unique(unlist(purrr::map(provenance$scenarios, "backends"))), collapse = ", ")))
  cat("Scenario hashes (SHA-256, first 16 hex digits): ",
      paste(sprintf("%s `%s`", scenarios$scenario, scenarios$sha256), collapse = "; "), ". ", sep = "")
  cat("Tools: ", paste(names(versions), versions, collapse = ", "), ".\n", sep = "")
}

#' The paper's catalogued items that nothing produces yet (the spec's
#' `pending`), so a reader sees what the page does not show.
print_pending_items <- function(ctx) {
  pending <- unlist(ctx$spec$pending)
  if (length(pending) == 0) {
    cat("\nEvery catalogued item of the paper is on this page.\n\n")
    return(invisible())
  }
  cat("\n", length(pending), " of the paper's ", length(pending) + length(ctx$spec$items),
      " catalogued items are not reproduced yet (no scenario produces them): ",
      paste0("`", pending, "`", collapse = ", "), ".\n\n", sep = "")
}

# The benchmark page's sections and its heat map across workloads
# (reports/benchmark.qmd): the anchors of the sections are made here, once,
# and the heat map's cells link to them, so a cell cannot point at a
# section that does not exist.

#' An anchor's text: lower case, every run of other characters one dash,
#' no dash at either end.
anchor_text <- function(text) {
  gsub("^-+|-+$", "", gsub("[^a-z0-9]+", "-", tolower(text)))
}

#' The HTML id of a workload's section on the benchmark page ("bench-bulk");
#' of another backend's section of it (the page shows one backend in full,
#' the others after it), the backend's name and a double dash first
#' ("mininet--bench-bulk"; no anchor_text() has a double dash, so no two
#' collide).
bench_workload_anchor <- function(workload, backend = NULL) {
  paste0(if (is.null(backend)) "" else paste0(anchor_text(backend), "--"), "bench-", anchor_text(workload))
}

#' The HTML id of the table of one metric of one workload: the workload's
#' anchor, a double dash and the metric selector's id
#' ("bench-small-flows--avg-fct-s-group-small").
bench_metric_anchor <- function(workload, selector, backend = NULL) {
  paste0(bench_workload_anchor(workload, backend), "--", anchor_text(selector))
}

#' The Markdown heading of a workload's section, with its anchor (`level`
#' #s: another backend's workloads sit one level down).
bench_workload_heading <- function(workload, backend = NULL, level = 2L) {
  sprintf("%s %s {#%s}", strrep("#", level), workload, bench_workload_anchor(workload, backend))
}

#' The Markdown heading of a metric's table in a workload's section, with its anchor.
bench_metric_heading <- function(workload, selector, label, backend = NULL, level = 3L) {
  sprintf("%s %s {#%s}", strrep("#", level), label, bench_metric_anchor(workload, selector, backend))
}

#' Where two backends' leaderboards agree: per workload, metric and
#' discipline run on both, each backend's change against the baseline
#' (signed so that positive is better) and verdict, and whether the
#' verdicts are the same.
#'
#' @param effects bench_leaderboard()'s effects with `backend`.
#' @param a,b The two backends (a the page's main one).
#' @return workload, selector, label, series, change_a, verdict_a, change_b,
#'   verdict_b, agree; no rows when they share no workload.
bench_backend_agreement <- function(effects, a, b) {
  require_columns(effects, c("backend", "workload", "selector", "label", "series", "better", "change", "significant",
                             "improves"), "backend agreement")
  side <- function(backend, suffix) {
    dplyr::filter(effects, .data$backend == !!backend) |>
      dplyr::transmute(.data$workload, .data$selector, .data$label, .data$series,
                       change = dplyr::if_else(.data$better == "higher", .data$change, -.data$change),
                       verdict = dplyr::case_when(!.data$significant ~ "no significant difference",
                                                  .data$improves ~ "better", TRUE ~ "worse")) |>
      dplyr::rename_with(function(n) paste0(n, "_", suffix), c("change", "verdict"))
  }
  dplyr::inner_join(side(a, "a"), dplyr::select(side(b, "b"), -"label"), by = c("workload", "selector", "series")) |>
    dplyr::mutate(agree = .data$verdict_a == .data$verdict_b) |>
    dplyr::arrange(.data$workload, .data$selector, .data$series)
}

#' The heat map across workloads as an HTML table: a row per workload and
#' metric, a column per discipline (the baseline has no cell), each cell
#' the change against the baseline signed so that positive is better (the
#' mean paired difference over the baseline's mean), coloured on a
#' diverging scale capped at 100% either way, with "*" where it is
#' significant after Holm's adjustment, and a link to that workload's table
#' of that metric (bench_metric_anchor()).
#'
#' @param effects bench_leaderboard()'s effects of one backend: workload,
#'   selector, label, series, better, change, significant, p_holm.
#' @param caption The table's caption (HTML-escaped here).
#' @param backend NULL for the page's main backend, else the backend whose
#'   sections the cells link to (bench_metric_anchor()).
#' @return The table's HTML, one string.
bench_heat_map_html <- function(effects, caption, backend = NULL) {
  require_columns(effects, c("workload", "selector", "label", "series", "better", "change", "significant", "p_holm"),
                  "benchmark heat map")
  cells <- effects |>
    dplyr::mutate(
      gain = dplyr::if_else(.data$better == "higher", .data$change, -.data$change),
      row = paste(.data$workload, .data$selector, sep = "\r")
    )
  rows <- dplyr::distinct(cells, .data$row, .data$workload, .data$selector, .data$label)
  series <- sort(unique(cells$series))
  palette <- scales::div_gradient_pal(low = "#b2182b", mid = "#f7f7f7", high = "#2166ac")
  escape <- htmltools::htmlEscape
  cell_html <- function(cell, workload, selector, label) {
    href <- paste0("#", bench_metric_anchor(workload, selector, backend))
    if (nrow(cell) == 0) {
      return(sprintf("<td class=\"qlab-heat-none\"><a href=\"%s\" title=\"%s\">&ndash;</a></td>", href,
                     escape(sprintf("%s: %s: no paired runs", workload, label))))
    }
    gain <- cell$gain[[1]]
    # whole percents, a change that rounds to 0 as +0% (not -0%)
    shown <- if (is.na(gain)) {
      "n/a"
    } else {
      sprintf("%+d%%%s", as.integer(round(100 * gain)), if (isTRUE(cell$significant)) "*" else "")
    }
    colour <- if (is.na(gain)) "#cccccc" else palette((pmax(-1, pmin(1, gain)) + 1) / 2)
    ink <- if (!is.na(gain) && abs(gain) > 0.55) "#ffffff" else "#000000"
    title <- sprintf("%s: %s, %s: %s against the baseline%s", workload, label, cell$series[[1]],
                     if (is.na(gain)) {
                       "no relative change (the baseline's mean is 0)"
                     } else {
                       sprintf("%.1f%% %s", 100 * abs(gain), if (gain < 0) "worse" else "better")
                     },
                     if (is.na(cell$p_holm[[1]])) "" else sprintf(", Holm p %s", format_p(cell$p_holm[[1]])))
    sprintf("<td style=\"background:%s\"><a href=\"%s\" style=\"color:%s\" title=\"%s\">%s</a></td>", colour, href,
            ink, escape(title), escape(shown))
  }
  body <- purrr::pmap_chr(rows, function(row, workload, selector, label) {
    here <- cells[cells$row == row, ]
    tds <- purrr::map_chr(series, function(label_series) {
      cell_html(here[here$series == label_series, ], workload, selector, label)
    })
    sprintf("<tr><th scope=\"row\"><a href=\"#%s\">%s</a></th>%s</tr>",
            bench_metric_anchor(workload, selector, backend),
            escape(paste0(workload, ": ", label)), paste(tds, collapse = ""))
  })
  paste0(
    "<table class=\"table table-sm qlab-table qlab-heat-map\">",
    sprintf("<caption>%s</caption>", escape(caption)),
    "<thead><tr><th scope=\"col\">workload: metric</th>",
    paste(sprintf("<th scope=\"col\">%s</th>", escape(series)), collapse = ""), "</tr></thead>",
    "<tbody>", paste(body, collapse = ""), "</tbody></table>"
  )
}

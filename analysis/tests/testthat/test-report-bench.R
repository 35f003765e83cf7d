# The benchmark page's anchors and heat map (analysis/R/report-bench.R):
# every cell of the heat map links to a section heading the page writes
# with the same functions.

# the ids of Markdown headings written as `## text {#id}`
heading_ids <- function(lines) sub("^#+ .* \\{#([^}]+)\\}$", "\\1", lines)

# every href="#..." of an HTML string
link_targets <- function(html) {
  sub("^href=\"#", "", sub("\"$", "", regmatches(html, gregexpr("href=\"#[^\"]*\"", html))[[1]]))
}

test_that("every workload and metric of analysis/bench.yaml has an anchor of its own", {
  spec <- read_bench_spec(file.path("..", "..", "bench.yaml"))
  pairs <- purrr::imap_dfr(spec$workloads, function(entry, name) {
    tibble::tibble(workload = name, selector = purrr::map_chr(entry$metrics, metric_selector_id))
  })
  metric_anchors <- bench_metric_anchor(pairs$workload, pairs$selector)
  workload_anchors <- bench_workload_anchor(unique(pairs$workload))
  expect_false(anyDuplicated(c(metric_anchors, workload_anchors)) > 0)
  expect_true(all(grepl("^[a-z][a-z0-9-]*$", c(metric_anchors, workload_anchors))))
  expect_equal(bench_metric_anchor("small-flows", "avg_fct_s[group=small]"), "bench-small-flows--avg-fct-s-group-small")
  expect_equal(heading_ids(bench_metric_heading("bulk", "fairness_jain", "Jain fairness")), "bench-bulk--fairness-jain")
  expect_equal(heading_ids(bench_workload_heading("bulk")), "bench-bulk")
})

# effects of two workloads whose metrics share a label (as the bulk
# variants' do: the headings' own text would give pandoc the same id twice)
heat_effects <- function() {
  tibble::tribble(
    ~workload, ~selector, ~label, ~series, ~better, ~change, ~significant, ~p_holm,
    "bulk", "fairness_jain", "Jain fairness", "ncq", "higher", 0.5, TRUE, 0.001,
    "bulk", "fairness_jain", "Jain fairness", "red", "higher", -2, FALSE, 0.4,
    "bulk", "total_backlog_pkts[queue=bottleneck:L]", "mean backlog", "ncq", "lower", -0.25, TRUE, 0.01,
    "bulk", "total_backlog_pkts[queue=bottleneck:L]", "mean backlog", "red", "lower", NA, FALSE, NA,
    "bulk-cubic", "fairness_jain", "Jain fairness", "ncq", "higher", 1.5, FALSE, 0.2,
    "bulk-cubic", "fairness_jain", "Jain fairness", "pie", "higher", -0.004, FALSE, 0.9
  )
}

test_that("every heat-map cell links to the heading of its workload's metric", {
  effects <- heat_effects()
  html <- bench_heat_map_html(effects, caption = "c")
  # the headings the page writes for the same rows
  rows <- dplyr::distinct(effects, .data$workload, .data$selector, .data$label)
  ids <- heading_ids(c(bench_workload_heading(unique(rows$workload)),
                       bench_metric_heading(rows$workload, rows$selector, rows$label)))
  targets <- link_targets(html)
  # a cell per discipline and row (pie ran only bulk-cubic, red not it: their empty cells link too), and
  # each row's heading
  expect_length(targets, 3 * (3 + 1))
  expect_equal(lengths(regmatches(html, gregexpr("qlab-heat-none", html))), 3)
  expect_true(all(targets %in% ids))
  expect_setequal(unique(targets), bench_metric_anchor(rows$workload, rows$selector))
  # one table row per workload and metric: the shared label does not merge them
  expect_equal(lengths(regmatches(html, gregexpr("<tr>", html))), 1 + 3)
})

test_that("another backend's heat map links to its own sections, none of them the main backend's", {
  effects <- heat_effects()
  rows <- dplyr::distinct(effects, .data$workload, .data$selector, .data$label)
  main <- link_targets(bench_heat_map_html(effects, caption = "c"))
  other <- link_targets(bench_heat_map_html(effects, caption = "c", backend = "mininet"))
  ids <- heading_ids(c(bench_workload_heading(unique(rows$workload), "mininet", 4L),
                       bench_metric_heading(rows$workload, rows$selector, rows$label, "mininet", 5L)))
  expect_true(all(other %in% ids))
  expect_length(intersect(other, main), 0)
  expect_equal(bench_workload_anchor("bulk", "mininet"), "mininet--bench-bulk")
  expect_match(bench_workload_heading("bulk", "mininet", 4L), "^#### bulk ")
})

test_that("two backends' verdicts side by side, where both ran a discipline", {
  effects <- dplyr::bind_rows(
    dplyr::mutate(heat_effects(), backend = "ns3"),
    dplyr::mutate(heat_effects(), backend = "mininet",
                  significant = dplyr::if_else(.data$series == "red", TRUE, .data$significant))
  ) |>
    dplyr::mutate(improves = dplyr::if_else(.data$better == "higher", .data$change > 0, .data$change < 0))
  both <- bench_backend_agreement(dplyr::filter(effects, !(.data$backend == "mininet" & .data$series == "pie")),
                                  "ns3", "mininet")
  expect_equal(nrow(both), 5) # pie ran on ns3 only
  red <- dplyr::filter(both, .data$series == "red", .data$selector == "fairness_jain")
  expect_equal(c(red$verdict_a, red$verdict_b, red$agree), c("no significant difference", "worse", "FALSE"))
  ncq <- dplyr::filter(both, .data$series == "ncq", .data$workload == "bulk")
  # a lower-is-better metric's change is signed so that positive is better
  expect_equal(ncq$change_a[ncq$selector != "fairness_jain"], 0.25)
  expect_true(all(ncq$agree))
})

test_that("a cell shows the change signed so that positive is better, and its significance", {
  html <- bench_heat_map_html(heat_effects(), caption = "Change & more")
  # higher is better: +50%, significant; lower is better: -25% is +25% better
  expect_match(html, ">\\+50%\\*</a>")
  expect_match(html, ">\\+25%\\*</a>")
  expect_match(html, ">-200%</a>") # shown uncapped; the colour is capped at 100% either way
  expect_match(html, ">\\+150%</a>")
  expect_match(html, ">\\+0%</a>") # -0.4% rounds to +0%, not -0%
  expect_match(html, ">n/a</a>") # no relative change where the baseline's mean is 0
  expect_match(html, "<caption>Change &amp; more</caption>")
  expect_match(html, "title=\"bulk: Jain fairness, red: 200.0% worse against the baseline, Holm p 0.4\"")
  # the colour scale's ends: blue for +150% (capped), red for -200%
  expect_match(html, "background:#2166AC\"><a [^>]*>\\+150%", ignore.case = TRUE)
  expect_match(html, "background:#B2182B\"><a [^>]*>-200%", ignore.case = TRUE)
  expect_error(bench_heat_map_html(dplyr::select(heat_effects(), -"label"), "c"), "label")
})

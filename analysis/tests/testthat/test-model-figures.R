# Items and claims computed from a paper's analytic model (kind model_vs_x,
# comparison model_value): no runs, exact values.

stated_row <- function(reading, value_pct, stated_pct = 100, tolerance_pp = 1) {
  tibble::tibble(figure = "p/fig3", series = "s", u = 0.6, stated_pct = stated_pct, reading = reading,
                 value_pct = value_pct, tolerance_pp = tolerance_pp,
                 abs_error_pp = abs(value_pct - stated_pct), match = abs(value_pct - stated_pct) <= tolerance_pp)
}

with_model_values <- function(table, code) {
  # model_value_tables() is looked up at call time: replace it for one test
  original <- model_value_tables
  assign("model_value_tables", function() list(m = function() table), envir = globalenv())
  on.exit(assign("model_value_tables", original, envir = globalenv()))
  force(code)
}

model_claim <- list(id = "c", figure = "p/fig3", claim = "x", paper_value = "+100%",
                    comparison = list(kind = "model_value", model = "m", series = "s"))

test_that("a stated value is reproduced only by the printed reading, partly by one changed choice", {
  printed_matches <- dplyr::bind_rows(stated_row("printed", 100.4), stated_row("a=x", 150))
  out <- with_model_values(printed_matches, evaluate_claim(model_claim, list()))
  expect_equal(out$verdict, "reproduced")
  expect_match(out$ours, "\\+100.4% \\(printed reading\\)")

  one_choice <- dplyr::bind_rows(stated_row("printed", 120), stated_row("a=x", 99.5), stated_row("a=x+b=y", 100))
  out <- with_model_values(one_choice, evaluate_claim(model_claim, list()))
  expect_equal(out$verdict, "partly")
  expect_match(out$method, "changing one choice, 1 reading\\(s\\) do: a=x\\.")
  expect_match(out$method, "two or more choices, which decide nothing: 1 match")
})

test_that("a match that needs two changed choices decides nothing", {
  combined_only <- dplyr::bind_rows(stated_row("printed", 120), stated_row("a=x", 130), stated_row("a=x+b=y", 100))
  out <- with_model_values(combined_only, evaluate_claim(model_claim, list()))
  expect_equal(out$verdict, "not reproduced")
  expect_match(out$method, "the nearest reading is a=x\\+b=y with \\+100.0%")
})

test_that("a model claim must name a known model; an unknown figure or series is an error", {
  bad <- model_claim
  bad$comparison$model <- "nope"
  expect_error(check_claim(bad, "claims.yaml: claims[1]"), "comparison.model must be one of")
  missing <- model_claim
  missing$comparison$series <- "other"
  expect_error(with_model_values(stated_row("printed", 1), evaluate_claim(missing, list())),
               "model m states no value for figure p/fig3, series other")
})

test_that("a model item's table is its model's rows for that id, exact, with the model as backend", {
  item <- list(id = "ncq-journal/fig1a", kind = "model_vs_x", model = "ncq-journal")
  table <- model_figure_table(item)
  expect_equal(names(table), model_columns())
  expect_true(all(table$figure == "ncq-journal/fig1a") && all(table$backend == model_backend))
  expect_equal(table$ci_lo, table$mean)
  expect_setequal(unique(table$reading), c("printed", "service_moment=second_moment"))
  expect_error(model_figure_table(list(id = "ncq-journal/fig99", model = "ncq-journal")), "computes no rows for it")
  expect_error(check_item(list(id = "x/fig1", label = "l", caption = "c", kind = "model_vs_x", model = "ncq-journal",
                               x_label = "u", y_label = "d", scenario = "x/s"), "w"), "must not name a `scenario`")
})

test_that("the ncq-journal spec analyses without any run: every model item and every claim", {
  analysis <- analyze_paper(tempfile(), "ncq-journal", file.path("..", ".."))
  spec <- read_paper_spec(file.path("..", ".."), "ncq-journal")
  model_items <- purrr::keep(spec$items, function(item) item$kind == "model_vs_x")
  run_items <- purrr::keep(figure_items(spec), function(item) !is.null(item$scenario))
  expect_gt(length(run_items), 0)
  expect_setequal(names(analysis$figures), purrr::map_chr(c(model_items, run_items), item_file))
  # the model's items in full; the items of the scenarios, which did not run, empty
  expect_true(all(purrr::map_int(analysis$figures[purrr::map_chr(model_items, item_file)], nrow) > 0))
  expect_true(all(purrr::map_int(analysis$figures[purrr::map_chr(run_items, item_file)], nrow) == 0))
  on_runs <- analysis$claims$claim_id %in% purrr::map_chr(purrr::keep(read_claims(
    file.path("..", "..", "claims", "ncq-journal.yaml")), function(claim) !is.null(claim$scenario)), "id")
  expect_true(any(on_runs))
  expect_true(all(analysis$claims$verdict[on_runs] == "not comparable"))
  expect_true(all(analysis$claims$backend == model_backend))
  stated <- analysis$claims[grepl("^model_value|Exact, from the paper", analysis$claims$method), ]
  expect_equal(nrow(stated), 6)
  expect_true(all(stated$verdict %in% c("reproduced", "partly", "not reproduced")))
  # written and read back with the model's columns
  out <- tempfile()
  write_paper_analysis(analysis, out)
  back <- read_item_table(file.path(out, "fig2a.csv"), model_items[[5]])
  expect_equal(nrow(back), nrow(analysis$figures$fig2a))
})

test_that("a paper without analytic items and without results is an error, not an empty analysis", {
  err <- tryCatch(analyze_paper(tempfile(), "ncq-conf", file.path("..", "..")), error = conditionMessage)
  expect_match(err, "no results for any scenario of ncq-conf")
  # each scenario's place named once: <results>/<scenario>/<backend>/runs.csv.gz
  expect_match(err, "ncq-conf/flows/<backend>/runs.csv.gz", fixed = TRUE)
  expect_false(grepl("runs.csv.gz/<backend>", err, fixed = TRUE))
})

test_that("pending items must not be items the spec produces", {
  dir <- tempfile()
  dir.create(file.path(dir, "papers"), recursive = TRUE)
  spec <- yaml::read_yaml(file.path("..", "..", "papers", "ncq-journal.yaml"))
  spec$pending <- c(spec$pending, "ncq-journal/fig1a")
  yaml::write_yaml(spec, file.path(dir, "papers", "ncq-journal.yaml"))
  expect_error(read_paper_spec(dir, "ncq-journal"),
               "`pending` must list ids of items the spec does not produce \\(found: ncq-journal/fig1a\\)")
})

test_that("table items are checked: a notation's rows, a model table's name and paper rows, no scenario", {
  table_item <- function(...) c(list(id = "x/table1", label = "TABLE 1", caption = "c"), list(...))
  notation <- list(list(symbol = "λ_1", description = "Arrival rate of class 1"))
  expect_silent(check_item(table_item(kind = "table_notation", notation = notation), "w"))
  expect_error(check_item(table_item(kind = "table_notation", notation = list(list(symbol = "λ"))), "w"),
               "each `symbol` and `description`")
  expect_error(check_item(table_item(kind = "table_notation", notation = notation, scenario = "x/s"), "w"),
               "must not name a `scenario`")
  rows <- list(list(r_low = 90, r_high = 100, rating = "Best", mos_low = 4.34, mos_high = 4.5))
  expect_silent(check_item(table_item(kind = "table_model", table = "voice-quality", paper_rows = rows), "w"))
  expect_error(check_item(table_item(kind = "table_model", table = "mos", paper_rows = rows), "w"),
               "table must be one of voice-quality")
  expect_error(check_item(table_item(kind = "table_model", table = "voice-quality", paper_rows = list(list(r_low = 1))),
                          "w"), "w \\(x/table1\\): paper_rows must be")
})

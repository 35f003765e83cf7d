# relabel_hover(): plotly's hover text in the item's words, numbers to 4 digits.

widget_of <- function(text, name = "(droptail,1)") {
  list(x = list(data = list(list(text = text, name = name))))
}

test_that("hover keys become the item's axis labels and values keep 4 significant digits", {
  item <- list(x_label = "flows", y_label = "goodput (Mb/s)")
  out <- relabel_hover(widget_of("x: 10<br />mean * y_scale: 1.62032289<br />ci_lo * y_scale: 1.5"), item)
  expect_equal(out$x$data[[1]]$text, "flows: 10<br />goodput (Mb/s): 1.62<br />95% CI low: 1.5")
  expect_equal(out$x$data[[1]]$name, "droptail")
})

test_that("points without hover text (NA or empty) keep none, and the others are relabelled", {
  item <- list(x_label = "u")
  out <- relabel_hover(widget_of(c("x: 0.5", NA, "")), item)
  expect_equal(out$x$data[[1]]$text, c("u: 0.5", NA, ""))
})

test_that("each point's numbers are formatted on their own, not padded to the trace's widest", {
  item <- list(x_label = "u", y_label = "wait (s)")
  out <- relabel_hover(widget_of(c("x: 0.0001<br />value: 123456.7<br />colour: ncq", "x: 1<br />value: 2")), item)
  expect_equal(out$x$data[[1]]$text, c("u: 1e-04<br />wait (s): 123500<br />series: ncq", "u: 1<br />wait (s): 2"))
})

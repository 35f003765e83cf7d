# The report's interactive figures: hover text in the item's words (reports/_common.R).

#' The hover text of a built plotly figure in the item's words: ggplotly
#' names each value by its aesthetic's expression ("mean * y_scale: 1.62032289");
#' here by the axis labels, "95% CI low/high" and "series", with 4
#' significant digits (the plotted numbers are unchanged).
relabel_hover <- function(widget, item) {
  name <- function(key) {
    if (key == "x") return(item$x_label %||% "x")
    if (grepl("^(mean|value)\\b", key)) return(item$y_label %||% key)
    if (grepl("^ci_lo\\b", key)) return("95% CI low")
    if (grepl("^ci_hi\\b", key)) return("95% CI high")
    if (key %in% c("colour", "fill", "series", "part")) return("series")
    key
  }
  relabel <- function(text) {
    # a point without hover text (NA: a missing interval, say) keeps none
    if (is.na(text) || !nzchar(text)) return(text)
    parts <- strsplit(text, "<br />", fixed = TRUE)[[1]]
    parts <- purrr::map_chr(parts, function(part) {
      key <- sub(":.*$", "", part)
      value <- sub("^[^:]*: ?", "", part)
      number <- suppressWarnings(as.numeric(value))
      if (!is.na(number)) value <- format(signif(number, 4))
      paste0(htmltools::htmlEscape(name(key)), ": ", value)
    })
    paste(parts, collapse = "<br />")
  }
  widget$x$data <- purrr::map(widget$x$data, function(trace) {
    if (is.character(trace$text) && length(trace$text) > 0) trace$text <- purrr::map_chr(trace$text, relabel)
    # a series drawn with colour and fill is named "(droptail,1)" in the legend
    if (is.character(trace$name)) trace$name <- sub("^\\((.+),[0-9]+\\)$", "\\1", trace$name)
    trace
  })
  widget
}

# The report's interactive figures: hover text in the item's words (reports/_common.R).

#' The hover text of a built plotly figure in the item's words: ggplotly
#' names each value by its aesthetic's expression ("mean * y_scale: 1.62032289");
#' here by the axis labels, "95% CI low/high" and "series", with 4
#' significant digits (the plotted numbers are unchanged).
relabel_hover <- function(widget, item) {
  # Vectorised over a trace's points: a figure of the ncq-journal page has
  # thousands of them, and a closure per hover line made relabelling a fifth
  # of the page's render time.
  names_of <- function(keys) {
    out <- keys
    x <- keys == "x"
    y <- !x & grepl("^(mean|value)\\b", keys)
    lo <- !x & !y & grepl("^ci_lo\\b", keys)
    hi <- !x & !y & !lo & grepl("^ci_hi\\b", keys)
    series <- !x & !y & !lo & !hi & keys %in% c("colour", "fill", "series", "part")
    out[x] <- item$x_label %||% "x"
    if (!is.null(item$y_label)) out[y] <- item$y_label
    out[lo] <- "95% CI low"
    out[hi] <- "95% CI high"
    out[series] <- "series"
    out
  }
  relabel <- function(texts) {
    # a point without hover text (NA: a missing interval, say) keeps none
    todo <- which(!is.na(texts) & nzchar(texts))
    if (length(todo) == 0) return(texts)
    parts <- strsplit(texts[todo], "<br />", fixed = TRUE)
    part <- unlist(parts, use.names = FALSE)
    key <- sub(":.*$", "", part)
    value <- sub("^[^:]*: ?", "", part)
    number <- suppressWarnings(as.numeric(value))
    numeric <- !is.na(number)
    # format() one number at a time: on a vector it would pad them to one width
    value[numeric] <- vapply(signif(number[numeric], 4), format, character(1))
    part <- paste0(htmltools::htmlEscape(names_of(key)), ": ", value)
    point <- factor(rep.int(seq_along(todo), lengths(parts)), levels = seq_along(todo))
    texts[todo] <- vapply(split(part, point), paste, character(1), collapse = "<br />", USE.NAMES = FALSE)
    texts
  }
  widget$x$data <- purrr::map(widget$x$data, function(trace) {
    if (is.character(trace$text) && length(trace$text) > 0) trace$text <- relabel(trace$text)
    # a series drawn with colour and fill is named "(droptail,1)" in the legend
    if (is.character(trace$name)) trace$name <- sub("^\\((.+),[0-9]+\\)$", "\\1", trace$name)
    trace
  })
  widget
}

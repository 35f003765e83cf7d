# The report's parameter tables beside the values the paper states
# (reports/paper-parameters.yaml): which parameters differ.

#' Read the stated values of one paper from `path` (a list of entries; see
#' reports/paper-parameters.yaml). A paper without entries gives list().
read_stated_parameters <- function(path, paper) {
  if (!file.exists(path)) return(list())
  entries <- yaml::read_yaml(path)[[paper]] %||% list()
  purrr::walk(entries, function(entry) {
    if (is.null(entry$path) || (is.null(entry$stated) == is.null(entry$range))) {
      stop(sprintf("%s (%s): each entry needs a path and one of stated or range", path, paper))
    }
    if (!is.null(entry$range) && length(entry$range) != 2) {
      stop(sprintf("%s (%s, %s): range is [low, high]", path, paper, entry$path))
    }
  })
  entries
}

#' A parameter path pattern as an anchored Perl regex: the names quoted
#' literally, `*` standing for any one name, dots included (series names
#' such as ncq-0.01 hold dots), but not for a path that begins or ends it.
parameter_pattern <- function(pattern) {
  parts <- strsplit(pattern, ".", fixed = TRUE)[[1]]
  parts <- ifelse(parts == "*", ".+", paste0("\\Q", parts, "\\E"))
  paste0("^", paste(parts, collapse = "\\."), "$")
}

#' Whether a parameter's shown value (`value`: one value, or several joined
#' by ", " as flatten_parameters() writes lists) agrees with an entry: every
#' value equal to one of `stated` (numbers to a relative 1e-9, text ignoring
#' case) or, for a `range`, numeric and within it.
value_agrees <- function(value, entry) {
  values <- trimws(strsplit(value, ",", fixed = TRUE)[[1]])
  numbers <- suppressWarnings(as.numeric(values))
  if (!is.null(entry$range)) {
    range <- as.numeric(unlist(entry$range))
    return(length(values) > 0 && !anyNA(numbers) && all(numbers >= range[[1]] & numbers <= range[[2]]))
  }
  stated <- unlist(entry$stated)
  stated_numbers <- suppressWarnings(as.numeric(stated))
  if (!anyNA(stated_numbers)) {
    if (anyNA(numbers)) return(FALSE)
    close <- function(x) any(abs(x - stated_numbers) <= 1e-9 * pmax(abs(stated_numbers), 1))
    return(all(purrr::map_lgl(numbers, close)))
  }
  all(tolower(values) %in% tolower(as.character(stated)))
}

#' The parameter table `table` (columns parameter, value) of scenario
#' `scenario` beside the paper's values: adds `paper` (the paper's words,
#' "" where it states nothing) and `differs` (TRUE/FALSE; NA where the paper
#' states nothing, or where the row shows no single value, e.g. a swept
#' parameter, whose sweep row is compared instead). For each row the first
#' entry whose path matches and names the scenario decides, else the first
#' that matches and names no scenario.
parameters_vs_paper <- function(table, stated, scenario) {
  applies <- purrr::map_lgl(stated, function(entry) is.null(entry$scenarios) || scenario %in% unlist(entry$scenarios))
  specific <- purrr::map_lgl(stated, function(entry) !is.null(entry$scenarios))
  ordered <- stated[c(which(applies & specific), which(applies & !specific))]
  patterns <- purrr::map_chr(ordered, function(entry) parameter_pattern(entry$path))
  decided <- purrr::map2(table$parameter, table$value, function(parameter, value) {
    hit <- which(purrr::map_lgl(patterns, function(p) grepl(p, parameter, perl = TRUE)))
    if (length(hit) == 0) return(list(paper = "", differs = NA))
    entry <- ordered[[hit[[1]]]]
    differs <- if (startsWith(value, "swept:")) NA else !value_agrees(value, entry)
    list(paper = entry$paper %||% paste(unlist(entry$stated %||% entry$range), collapse = ", "), differs = differs)
  })
  table$paper <- purrr::map_chr(decided, "paper")
  table$differs <- purrr::map_lgl(decided, "differs")
  table
}

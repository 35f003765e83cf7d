# Load the analysis code the tests exercise (analysis/R/*.R).
suppressPackageStartupMessages(library(dplyr))
local({
  r_dir <- normalizePath(file.path("..", "..", "R"), mustWork = FALSE)
  if (!dir.exists(r_dir)) {
    stop(sprintf("helper-load.R: the tests must run from analysis/tests/testthat (no %s)", r_dir))
  }
  for (file in list.files(r_dir, pattern = "\\.R$", full.names = TRUE)) {
    sys.source(file, envir = globalenv())
  }
})

#' A per-flow table of one or more runs, as read_scenario_results() returns it.
make_flows <- function(..., group = "congestive") {
  tibble::tibble(scenario = "test/s", backend = "ns3", point = "p", group = group, ...)
}

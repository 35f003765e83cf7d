#!/usr/bin/env Rscript
# The NCQ journal paper's analytic figures (Figs. 1-6) and its stated
# percentages, computed from the paper's equations (1)-(21):
#
#   Rscript analysis/scripts/model-ncq-journal.R --out results/analysis/ncq-journal
#
# Writes <out>/fig1.csv ... <out>/fig6.csv (figure = the catalogue item id,
# metric, series, reading, x = total utilisation u, x_variable, mean = the
# delay or task time in seconds, ci_lo = ci_hi = mean (exact values), unit,
# method) and <out>/stated-percentages.csv. See analysis/MODEL-NCQ-JOURNAL.md.

if (Sys.getenv("TZ") == "") Sys.setenv(TZ = "UTC")

parse_args <- function(args) {
  usage <- "usage: model-ncq-journal.R --out DIR"
  if (length(args) != 2 || args[[1]] != "--out") {
    stop(sprintf("model-ncq-journal.R: expected --out DIR, got '%s'\n%s", paste(args, collapse = " "), usage),
         call. = FALSE)
  }
  list(out = args[[2]])
}

script_dir <- function() {
  file_arg <- grep("^--file=", commandArgs(FALSE), value = TRUE)
  dirname(normalizePath(sub("^--file=", "", file_arg[[1]])))
}

main <- function() {
  options <- parse_args(commandArgs(trailingOnly = TRUE))
  # the model is self-contained: source its file only, not the whole of analysis/R
  source(file.path(dirname(script_dir()), "R", "model-ncq-journal.R"), local = globalenv())
  suppressPackageStartupMessages(library(dplyr))
  dir.create(options$out, recursive = TRUE, showWarnings = FALSE)
  figures <- ncq_journal_figure_data()
  for (name in names(figures)) {
    write_atomically(figures[[name]], file.path(options$out, paste0(name, ".csv")))
  }
  stated <- ncq_journal_stated_percentages()
  write_atomically(stated, file.path(options$out, "stated-percentages.csv"))
  printed <- dplyr::filter(stated, .data$reading == "printed")
  message(sprintf(paste("model-ncq-journal.R: wrote %s and stated-percentages.csv to %s; printed reading matches",
                        "%d of %d stated percentages, some reading matches %d"),
                  paste0(names(figures), ".csv", collapse = ", "), options$out, sum(printed$match), nrow(printed),
                  dplyr::n_distinct(stated$stated_pct[stated$match])))
}

write_atomically <- function(table, path) {
  partial <- paste0(path, ".partial")
  readr::write_csv(table, partial, na = "")
  file.rename(partial, path)
}

main()

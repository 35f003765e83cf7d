#!/usr/bin/env bash
# lintr on the R code (analysis/R, analysis/scripts, the testthat tests,
# reports/*.R) with the project's .lintr: each finding as
# file:line:col: linter: message, exit 1 if any.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck disable=SC2016  # R code, expanded by R, not the shell
Rscript --vanilla -e '
files <- c(Sys.glob("analysis/R/*.R"), Sys.glob("analysis/scripts/*.R"),
           Sys.glob("analysis/tests/testthat/*.R"), Sys.glob("reports/*.R"))
n <- 0L
for (f in files) {
  for (l in lintr::lint(f)) {
    n <- n + 1L
    cat(sprintf("%s:%d:%d: %s: %s\n", f, l$line_number, l$column_number, l$linter, l$message))
  }
}
if (n > 0L) {
  cat(sprintf("lintr: %d findings in %d files\n", n, length(files)))
  quit(status = 1L)
}
cat(sprintf("lintr: %d files clean\n", length(files)))
'

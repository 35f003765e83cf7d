#!/usr/bin/env Rscript
# What reading a collected packet trace costs the analysis, and what a
# different reader would save and change (docs/benchmarks.md,
# "Orchestration", twenty-fourth session).
#
#   Rscript benchmarks/packet-read.R RESULTS/<paper>/<scenario>/<backend>/packets.csv.gz
#
# Times, in CPU seconds of this process (user + system; children's too):
#   qlab      analysis/R/load.R's reader (readr, the .gz as it is);
#   plain     the same reader on an uncompressed copy (vroom first
#             decompresses a .gz into a temporary file);
#   no keys   the uncompressed copy without the run key columns;
#   fread     data.table::fread on one thread (through zcat), with
#             the same column types;
# and, for fread, how many values differ from qlab's reader in each column,
# and of those, how many a correctly rounded parse (the C library's strtod,
# through a Python float) agrees with: readr's or fread's.
# Nothing is written outside R's temporary directory.

args <- commandArgs(trailingOnly = TRUE)
if (length(args) != 1 || !file.exists(args[[1]])) {
  stop("usage: packet-read.R PACKETS.csv.gz (a collected packet trace)", call. = FALSE)
}
path <- normalizePath(args[[1]])
root <- normalizePath(file.path(dirname(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))), ".."))
source(file.path(root, "analysis", "R", "load.R"))

cpu <- function(expr) {
  t <- system.time(expr, gcFirst = TRUE)
  sum(t[c("user.self", "sys.self", "user.child", "sys.child")], na.rm = TRUE)
}

types <- c(run_key_types, packet_trace_types)
header <- names(readr::read_csv(path, n_max = 0, col_types = readr::cols(.default = readr::col_character())))
reference <- NULL
t_qlab <- cpu(reference <- read_typed_csv(path, types))
plain <- tempfile(fileext = ".csv")
con <- gzfile(path, "rb")
out <- file(plain, "wb")
repeat {
  chunk <- readBin(con, "raw", 1e7)
  if (length(chunk) == 0) break
  writeBin(chunk, out)
}
close(con)
close(out)
t_plain <- cpu(read_typed_csv(plain, types))
spec <- do.call(readr::cols, c(types, list(.default = readr::col_guess())))
for (key in setdiff(names(run_key_types), "seed")) spec$cols[[key]] <- readr::col_skip()
t_nokeys <- cpu(readr::read_csv(plain, col_types = spec, na = "NA", progress = FALSE))
unlink(plain)

fread_classes <- function(t) {
  switch(class(t)[[1]], collector_integer = "integer", collector_double = "double",
         collector_character = "character", collector_logical = "logical", "character")
}
classes <- vapply(types, fread_classes, "")
sweep <- setdiff(header, names(types))
classes <- c(classes, stats::setNames(vapply(sweep, function(v) class(reference[[v]])[[1]], ""), sweep))
data.table::setDTthreads(1L)
other <- NULL
t_fread <- cpu(other <- data.table::fread(cmd = paste("zcat", shQuote(path)), colClasses = classes,
                                          na.strings = "NA", showProgress = FALSE))
other <- tibble::as_tibble(other)[names(reference)]
differ <- vapply(names(reference), function(n) {
  a <- reference[[n]]
  b <- other[[n]]
  sum(xor(is.na(a), is.na(b)) | (!is.na(a) & !is.na(b) & a != b))
}, 0)

# Which reader rounds the differing decimals correctly: Python's float() is
# correctly rounded, and %.17g round-trips a double.
lines <- character()
if (any(differ > 0)) {
  con <- gzfile(path, "rt")
  lines <- readLines(con)
  close(con)
}
rounding <- vapply(names(differ)[differ > 0], function(n) {
  rows <- which(xor(is.na(reference[[n]]), is.na(other[[n]])) | reference[[n]] != other[[n]])
  text <- lines[rows + 1L]
  field <- vapply(strsplit(text, ",", fixed = TRUE), function(f) f[[match(n, header)]], "")
  script <- paste0("import sys\nfor line in sys.stdin:\n    t, a, b = line.split()\n",
                   "    x = float(t)\n    print(int(float(a) == x), int(float(b) == x))")
  input <- sprintf("%s %.17g %.17g", field, reference[[n]][rows], other[[n]][rows])
  answer <- system2("python3", c("-c", shQuote(script)), input = input, stdout = TRUE)
  ok <- do.call(rbind, lapply(strsplit(answer, " "), as.integer))
  sprintf("%s: readr right %d, fread right %d", n, sum(ok[, 1]), sum(ok[, 2]))
}, "")

cat(sprintf("%s: %d rows, %d columns\n", path, nrow(reference), ncol(reference)))
cat(sprintf("  qlab (readr, .gz)      %6.2f CPU-s\n", t_qlab))
cat(sprintf("  readr, uncompressed    %6.2f\n", t_plain))
cat(sprintf("  readr, no run keys     %6.2f\n", t_nokeys))
cat(sprintf("  data.table::fread      %6.2f\n", t_fread))
cat(sprintf("  values fread reads differently: %s\n",
            if (any(differ > 0)) paste(sprintf("%s %d", names(differ)[differ > 0], differ[differ > 0]), collapse = ", ")
            else "none"))
if (length(rounding) > 0) cat(sprintf("  correctly rounded, of those: %s\n", paste(rounding, collapse = "; ")))

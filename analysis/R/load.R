# Readers for the collected tables the Python side writes under
#   results/<paper>/<name>/<backend>/{flows.csv.gz, runs.csv.gz, scenario.json}
# and results/provenance.json. Column types are explicit; the sweep variables
# (one column per variable, between `seed` and the trace columns) are the only
# columns whose type is guessed, because each scenario names its own.

`%||%` <- function(x, default) if (is.null(x)) default else x

# readr reads and writes on one thread. Its multi-threaded writer (vroom
# 1.6.1, Debian bookworm's) can corrupt R's heap when it writes character
# columns: the analysis then loops forever printing "*** recursive gc
# invocation" (seen in a CI-like run: analyze.R at 100 % CPU for over ten
# minutes while writing a figure table; docs/benchmarks.md, "CI"). The
# tables are small, so one thread costs nothing measurable.
options(readr.num_threads = 1L)

run_key_columns <- c("scenario", "backend", "series", "point", "seed")

flow_trace_types <- list(
  flow_id = readr::col_integer(),
  app = readr::col_character(),
  group = readr::col_character(),
  cls = readr::col_integer(),
  prec = readr::col_integer(),
  seg_bytes = readr::col_integer(),
  bytes_goal = readr::col_double(),
  bytes_delivered = readr::col_double(),
  start_s = readr::col_double(),
  end_s = readr::col_double(),
  completed = readr::col_integer(),
  fct_s = readr::col_double(),
  goodput_bps = readr::col_double(),
  tx_packets = readr::col_double(),
  retx_packets = readr::col_double(),
  rx_packets = readr::col_double(),
  lost_packets = readr::col_double(),
  delay_mean_s = readr::col_double(),
  delay_max_s = readr::col_double()
)

queue_trace_types <- list(
  time_s = readr::col_double(),
  queue = readr::col_character(), # LINK:NODE: a run may trace several queues
  band = readr::col_integer(),
  backlog_pkts = readr::col_double(),
  backlog_bytes = readr::col_double(),
  enqueued_pkts = readr::col_double(),
  dequeued_pkts = readr::col_double(),
  dropped_pkts = readr::col_double(),
  drop_prob = readr::col_double()
)

packet_trace_types <- list(
  seq = readr::col_double(),
  time_s = readr::col_double(),
  queue = readr::col_character(),
  event = readr::col_character(),
  band = readr::col_integer(),
  len_bytes = readr::col_integer(),
  flow_id = readr::col_integer(),
  sojourn_s = readr::col_double(),
  reason = readr::col_character()
)

tcp_trace_types <- list(
  time_s = readr::col_double(),
  flow_id = readr::col_integer(),
  cwnd_bytes = readr::col_double(),
  ssthresh_bytes = readr::col_double(),
  srtt_s = readr::col_double(),
  rto_s = readr::col_double(),
  retx_packets = readr::col_double(),
  syn_retx_packets = readr::col_double(),
  state = readr::col_character(),
  ca_state = readr::col_character()
)

run_key_types <- list(
  scenario = readr::col_character(),
  backend = readr::col_character(),
  series = readr::col_character(),
  point = readr::col_character(),
  seed = readr::col_integer()
)

run_outcome_types <- list(
  sim_end_s = readr::col_double(),
  all_completed = readr::col_logical(),
  wall_time_s = readr::col_double(),
  valid = readr::col_logical(),
  job_sha256 = readr::col_character()
)

# Outcomes older collected tables may lack (read as NA when absent).
optional_run_outcome_types <- list(
  invalid_reasons = readr::col_character() # "; "-joined, NA when the run is valid
)

#' Stop unless `df` has every column in `required`; `what` names the caller.
require_columns <- function(df, required, what) {
  missing <- setdiff(required, names(df))
  if (length(missing) > 0) {
    stop(sprintf("%s: the table must have column(s) %s", what, paste0("`", missing, "`", collapse = ", ")))
  }
  invisible(df)
}

read_typed_csv <- function(path, types) {
  if (!file.exists(path)) {
    stop(sprintf("%s: file not found", path))
  }
  header <- names(readr::read_csv(path, n_max = 0, col_types = readr::cols(.default = readr::col_character())))
  missing <- setdiff(names(types), header)
  if (length(missing) > 0) {
    stop(sprintf("%s: missing required column(s) %s", path, paste0("`", missing, "`", collapse = ", ")))
  }
  spec <- do.call(readr::cols, c(types, list(.default = readr::col_guess())))
  table <- readr::read_csv(path, col_types = spec, na = "NA", progress = FALSE)
  problems <- readr::problems(table)
  if (nrow(problems) > 0) {
    first <- problems[1, ]
    stop(sprintf("%s: row %d, column %d: expected %s, found '%s'",
                 path, first$row, first$col, first$expected, first$actual))
  }
  table
}

#' Read a collected `flows.csv.gz`.
read_flows_table <- function(path) {
  read_typed_csv(path, c(run_key_types, flow_trace_types))
}

#' Read a collected `runs.csv.gz`.
read_runs_table <- function(path) {
  present <- if (file.exists(path)) {
    names(readr::read_csv(path, n_max = 0, col_types = readr::cols(.default = readr::col_character())))
  } else {
    character()
  }
  optional <- optional_run_outcome_types[intersect(names(optional_run_outcome_types), present)]
  runs <- read_typed_csv(path, c(run_key_types, run_outcome_types, optional))
  for (name in setdiff(names(optional_run_outcome_types), names(runs))) {
    runs[[name]] <- NA_character_
  }
  runs
}

#' The sweep variables of a runs table: the columns that are neither run keys nor outcomes.
sweep_variables <- function(runs) {
  setdiff(names(runs), c(names(run_key_types), names(run_outcome_types), names(optional_run_outcome_types)))
}

#' Directory holding one scenario's collected tables for one backend.
scenario_results_dir <- function(results_dir, scenario, backend) {
  file.path(results_dir, scenario, backend)
}

#' Every run's record of one scenario on one backend: <point>/seed-<n>/run.json
#' under its results directory, sorted.
run_json_files <- function(results_dir, scenario, backend) {
  sort(Sys.glob(file.path(scenario_results_dir(results_dir, scenario, backend), "*", "seed-*", "run.json")))
}

#' Backends with collected results for a scenario.
list_backends <- function(results_dir, scenario) {
  dir <- file.path(results_dir, scenario)
  if (!dir.exists(dir)) {
    return(character())
  }
  backends <- list.dirs(dir, full.names = FALSE, recursive = FALSE)
  backends[file.exists(file.path(dir, backends, "runs.csv.gz"))]
}

#' Read one scenario's results for one backend.
#'
#' @return An environment, read as a list (`results$flows`): `flows` (with
#'   the run's `sim_end_s` joined), `runs`, `sweep_vars`, `scenario` (the
#'   resolved scenario.json, or NULL), and `queues` / `packets` / `tcp`
#'   (every run's queue samples, packet events or TCP state samples, or NULL
#'   when the scenario's trace.collect does not name them). Those three are
#'   read when first used: a packet trace of millions of events took most of
#'   an analysis that computed nothing from it.
read_scenario_results <- function(results_dir, scenario, backend) {
  read_collected(scenario_results_dir(results_dir, scenario, backend))
}

#' Read the tables `qlab collect` wrote in one directory (read_scenario_results()).
read_collected <- function(dir) {
  runs <- read_runs_table(file.path(dir, "runs.csv.gz"))
  flows <- read_flows_table(file.path(dir, "flows.csv.gz"))
  sweep_vars <- sweep_variables(runs)
  missing_sweep <- setdiff(sweep_vars, names(flows))
  if (length(missing_sweep) > 0) {
    stop(sprintf("%s: missing sweep column(s) %s present in runs.csv.gz",
                 file.path(dir, "flows.csv.gz"), paste0("`", missing_sweep, "`", collapse = ", ")))
  }
  flows <- dplyr::left_join(
    flows,
    dplyr::select(runs, dplyr::all_of(c(run_key_columns, "sim_end_s"))),
    by = run_key_columns
  )
  if (any(is.na(flows$sim_end_s))) {
    stop(sprintf("%s: some flows belong to no run of runs.csv.gz (matched on %s)",
                 file.path(dir, "flows.csv.gz"), paste(run_key_columns, collapse = ", ")))
  }
  scenario_json <- file.path(dir, "scenario.json")
  optional <- function(table, types) {
    path <- file.path(dir, paste0(table, ".csv.gz"))
    if (file.exists(path)) read_typed_csv(path, c(run_key_types, types)) else NULL
  }
  results <- new.env(parent = emptyenv())
  results$flows <- flows
  results$runs <- runs
  results$sweep_vars <- sweep_vars
  results$scenario <- if (file.exists(scenario_json)) read_scenario_json(scenario_json) else NULL
  delayedAssign("queues", optional("queues", queue_trace_types), assign.env = results)
  delayedAssign("packets", optional("packets", packet_trace_types), assign.env = results)
  delayedAssign("tcp", optional("tcp", tcp_trace_types), assign.env = results)
  results
}

#' Read a resolved scenario (scenario.json), keeping JSON arrays as lists.
read_scenario_json <- function(path) {
  jsonlite::read_json(path, simplifyVector = FALSE)
}

#' Why a scenario has no results, when the reproduction's software.json
#' (qlab provenance --software-only, written before any run) says its
#' profile lists no backend for it; NULL otherwise (not run for another
#' reason, or no software.json).
scenario_not_run_reason <- function(results_dir, scenario) {
  path <- file.path(results_dir, "software.json")
  if (!file.exists(path)) return(NULL)
  software <- jsonlite::read_json(path, simplifyVector = FALSE)
  entry <- purrr::detect(software$scenarios, function(s) identical(s$id, scenario))
  if (is.null(entry) || length(entry$backends) > 0) return(NULL)
  sprintf("the %s profile runs nothing of %s (it lists no backend there; the scenario file says which profile does)",
          software$profile, scenario)
}

#' Read results/provenance.json (`file = "software.json"`: what a
#' reproduction runs with, written before its runs; qlab/provenance.py).
read_provenance <- function(results_dir, file = "provenance.json") {
  path <- file.path(results_dir, file)
  if (!file.exists(path)) {
    stop(sprintf("%s: file not found", path))
  }
  provenance <- jsonlite::read_json(path, simplifyVector = FALSE)
  missing <- setdiff(c("git_commit", "profile", "scenarios", "packages"), names(provenance))
  if (length(missing) > 0) {
    stop(sprintf("%s: missing required key(s) %s", path, paste0("`", missing, "`", collapse = ", ")))
  }
  provenance
}

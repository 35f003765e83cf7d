write_gz <- function(df) {
  path <- tempfile("runs", fileext = ".csv.gz")
  readr::write_csv(df, path)
  path
}

runs_row <- tibble::tibble(scenario = "p/s", backend = "ns3", series = "a", point = "f10", seed = 1L,
                           flows = 10, sim_end_s = 5, all_completed = TRUE, wall_time_s = 1,
                           valid = TRUE, job_sha256 = "x")

# The one flow of that run, as collect writes it.
one_flow <- tibble::tibble(scenario = "p/s", backend = "ns3", series = "a", point = "f10", seed = 1L, flows = 10,
                           flow_id = 0L, app = "bulk", group = "congestive", cls = 0L, prec = 0L, seg_bytes = 1000L,
                           bytes_goal = 1, bytes_delivered = 1, start_s = 0, end_s = 1, completed = 1L, fct_s = 1,
                           goodput_bps = 8, tx_packets = 1, retx_packets = 0, rx_packets = NA, lost_packets = NA,
                           delay_mean_s = NA, delay_max_s = NA)

test_that("a missing column is reported with the file and the column", {
  path <- write_gz(dplyr::select(runs_row, -"sim_end_s"))
  expect_error(read_runs_table(path), paste0(basename(path), ": missing required column\\(s\\) `sim_end_s`"))
})

test_that("sweep variables are the columns besides run keys and outcomes", {
  runs <- read_runs_table(write_gz(runs_row))
  expect_equal(sweep_variables(runs), "flows")
  expect_type(runs$valid, "logical")
})

test_that("flows of an unknown run are refused", {
  dir <- file.path(tempfile("results"), "p/s/ns3")
  dir.create(dir, recursive = TRUE)
  readr::write_csv(runs_row, file.path(dir, "runs.csv.gz"))
  flows <- dplyr::mutate(one_flow, series = "b")
  readr::write_csv(flows, file.path(dir, "flows.csv.gz"))
  expect_error(read_scenario_results(dirname(dirname(dirname(dir))), "p/s", "ns3"), "belong to no run")
})

test_that("invalid_reasons is read when present and NA when an older table lacks it", {
  runs <- read_runs_table(write_gz(runs_row))
  expect_true(is.na(runs$invalid_reasons))
  expect_equal(sweep_variables(runs), "flows")
  with_reasons <- dplyr::mutate(runs_row, valid = FALSE, invalid_reasons = "rate 9.1 Mb/s; late departures")
  runs <- read_runs_table(write_gz(with_reasons))
  expect_equal(runs$invalid_reasons, "rate 9.1 Mb/s; late departures")
  expect_equal(sweep_variables(runs), "flows")
})

test_that("queue and packet tables name the traced queue, as text", {
  dir <- file.path(tempfile("results"), "p/s/ns3")
  dir.create(dir, recursive = TRUE)
  readr::write_csv(runs_row, file.path(dir, "runs.csv.gz"))
  flows <- one_flow
  readr::write_csv(flows, file.path(dir, "flows.csv.gz"))
  queues <- tibble::tibble(scenario = "p/s", backend = "ns3", series = "a", point = "f10", seed = 1L, flows = 10,
                           time_s = 0.1, queue = c("hop1:r0", "hop2:r1"), band = 0L, backlog_pkts = 1,
                           backlog_bytes = 1000, enqueued_pkts = 1, dequeued_pkts = 0, dropped_pkts = 0, drop_prob = NA)
  readr::write_csv(queues, file.path(dir, "queues.csv.gz"))
  results <- read_scenario_results(dirname(dirname(dirname(dir))), "p/s", "ns3")
  expect_type(results$queues$queue, "character")
  expect_equal(results$queues$queue, c("hop1:r0", "hop2:r1"))
  # a table of the old format (no queue column) is refused with the column named, when it is read
  readr::write_csv(dplyr::select(queues, -"queue"), file.path(dir, "queues.csv.gz"))
  results <- read_scenario_results(dirname(dirname(dirname(dir))), "p/s", "ns3")
  expect_error(results$queues, "queues.csv.gz: missing required column\\(s\\) `queue`")
})

test_that("the trace tables are read when first used, and a damaged one is named then", {
  dir <- file.path(tempfile("results"), "p/s/ns3")
  dir.create(dir, recursive = TRUE)
  readr::write_csv(runs_row, file.path(dir, "runs.csv.gz"))
  flows <- one_flow
  readr::write_csv(flows, file.path(dir, "flows.csv.gz"))
  packets <- gzfile(file.path(dir, "packets.csv.gz"), "w")
  writeLines("scenario,backend,series,point,seed,flows,seq,time_s\np/s,ns3,a,f10,1,10,0,soon", packets)
  close(packets)
  results <- read_scenario_results(dirname(dirname(dirname(dir))), "p/s", "ns3")
  expect_equal(results$flows$flow_id, 0L)
  expect_null(results$queues) # not collected
  # metrics that need no packet never read it
  metrics <- compute_run_metrics(results, metrics = "avg_fct_s")
  expect_equal(metrics$value[is.na(metrics$group)], 1)
  expect_error(compute_run_metrics(results, metrics = "sojourn_max_s"), "packets.csv.gz: missing required column")
})

test_that("a scenario its profile runs nothing of is said so, from software.json", {
  dir <- withr::local_tempdir()
  expect_null(scenario_not_run_reason(dir, "validation/emu-md1"))  # no software.json
  jsonlite::write_json(list(profile = "quick", scenarios = list(
    list(id = "validation/md1", backends = list("ns3")),
    list(id = "validation/emu-md1", backends = list()))), file.path(dir, "software.json"), auto_unbox = TRUE)
  expect_match(scenario_not_run_reason(dir, "validation/emu-md1"),
               "^the quick profile runs nothing of validation/emu-md1 \\(it lists no backend there")
  expect_null(scenario_not_run_reason(dir, "validation/md1"))
  expect_null(scenario_not_run_reason(dir, "validation/unknown"))
})

test_that("readr reads and writes on one thread (its threaded writer corrupts R's heap)", {
  expect_identical(getOption("readr.num_threads"), 1L)
  expect_identical(readr:::readr_threads(), 1L)
})

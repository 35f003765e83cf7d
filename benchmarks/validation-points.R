# The validation claims of one scenario from the runs a results tree holds
# (a partial tree too: no collect needed), with and without the control
# variate, and per point the estimate, the 95% half-widths, the share of the
# seed variance the offered load explains, the packets per run and the
# runner CPU (run.json runner_cpu_s). docs/benchmarks.md, "The validation at
# every point".
#
#   Rscript benchmarks/validation-points.R RESULTS md1|mm1|mm1k|mg1     (from the repository's root)
suppressPackageStartupMessages(library(dplyr))
for (f in list.files("analysis/R", pattern = "\\.R$", full.names = TRUE)) sys.source(f, envir = globalenv())
args <- commandArgs(TRUE)
if (length(args) != 2) stop("usage: Rscript benchmarks/validation-points.R RESULTS SCENARIO (md1, mm1, mm1k, mg1)")
root <- args[[1]]
sc <- args[[2]]
scenario <- jsonlite::fromJSON(file.path(root, "validation", sc, "ns3", "scenario.json"), simplifyVector = FALSE)
files <- Sys.glob(file.path(root, "validation", sc, "ns3", "*", "seed-*", "flows.csv.gz"))
flows <- purrr::map_dfr(files, function(f) {
  parts <- strsplit(f, "/")[[1]]
  n <- length(parts)
  point <- parts[n - 2]
  seed <- as.integer(sub("seed-", "", parts[n - 1]))
  readr::read_csv(f, show_col_types = FALSE) |>
    mutate(scenario = paste0("validation/", sc), backend = "ns3", point = point, seed = seed,
           series = sub("_u-.*", "", point), u = as.numeric(sub(".*_u-", "", point)))
})
flows <- filter(flows, .data$series %in% names(.env$scenario$series)) # not a run of a series the profile dropped
by <- c("scenario", "backend", "series", "point", "seed", "u")
wait <- summarise_bottleneck_wait(flows, by, scenario) |>
  transmute(across(all_of(by)), metric = "wait_mean_s", group, value = wait_mean_s)
loss <- summarise_udp_groups(flows, by) |>
  transmute(across(all_of(by)), metric = "loss_ratio", group, value = loss_ratio)
load <- summarise_offered_load(flows, by, scenario) |>
  transmute(across(all_of(by)), metric = "offered_load", group = NA_character_, value = offered_load)
metrics <- bind_rows(wait, loss, load) |> mutate(n_censored = 0L) |> with_metric_keys()
claims <- yaml::read_yaml("analysis/claims/validation.yaml")$claims
data <- list(list(metrics = metrics, sweep_vars = "u", results = list(scenario = scenario)))
names(data) <- paste0("validation/", sc)
for (cl in claims) {
  if (cl$scenario != paste0("validation/", sc)) next
  for (ctl in list(cl$comparison$control, NULL)) {
    c2 <- cl
    c2$comparison$control <- ctl
    out <- evaluate_claim(c2, data)
    cat(sprintf("%s [%s]: %s | %s\n", cl$id, if (is.null(ctl)) "plain mean" else "control variate", out$verdict,
                out$ours))
  }
}
# per-point details: control-variate estimate of the ratio, half-width, df
cat("--- per point\n")
for (cl in claims) {
  if (cl$scenario != paste0("validation/", sc)) next
  sel <- metrics |> filter(metric == cl$metric, group == cl$group, series == cl$comparison$series)
  ld <- metrics |> filter(metric == "offered_load") |> select(series, u, seed, load = value)
  d <- inner_join(sel, ld, by = c("series", "u", "seed"))
  for (x in sort(unique(d$u))) {
    dd <- d[d$u == x, ]
    th <- validation_theory_wait_s(cl$comparison$model, scenario, cl$comparison$series, cl$group, x, "ns3")
    cv <- control_variate_mean(dd$value / th, dd$load, validation_offered_load(scenario, x, "ns3"))
    plain_hw <- qt(.975, nrow(dd) - 1) * sd(dd$value / th) / sqrt(nrow(dd))
    r2 <- summary(lm(value ~ load, dd))$r.squared
    cat(sprintf("%s u=%.1f n=%d ratio=%.4f hw_cv=%.2f%% hw_plain=%.2f%% R2=%.2f pkts/run=%.0f\n", cl$id, x, cv$n,
                cv$estimate, 100 * qt(.975, cv$df) * cv$se / cv$estimate, 100 * plain_hw / mean(dd$value / th), r2,
                mean(flows$tx_packets[flows$u == x]) * length(unique(flows$group))))
  }
}
cpu <- purrr::map_dbl(Sys.glob(file.path(root, "validation", sc, "ns3", "*", "seed-*", "run.json")),
                      function(f) jsonlite::fromJSON(f)$runner_cpu_s %||% NA_real_)
cat(sprintf("runner CPU: %d runs, %.1f CPU-s, %.0f datagrams sent\n", length(cpu), sum(cpu, na.rm = TRUE),
            sum(flows$tx_packets)))

# Synthetic per-run metrics: a baseline and a treatment over 5 seeds and
# three sweep points; the treatment is the baseline times `factor` with a
# small seed-dependent wobble, so paired intervals are narrow but not zero.
synthetic_metrics <- function(factor, metric = "system_goodput_bps") {
  grid <- expand.grid(seed = 1:5, flows = c(10, 50, 90))
  base <- 1e6 / grid$flows * (1 + 0.05 * grid$seed)
  wobble <- 1 + 0.01 * ((grid$seed %% 3) - 1)
  runs <- bind_rows(
    tibble::tibble(series = "droptail", seed = grid$seed, flows = grid$flows, value = base),
    tibble::tibble(series = "ncq", seed = grid$seed, flows = grid$flows, value = base * factor * wobble)
  )
  list(`test/flows` = list(
    metrics = mutate(runs, scenario = "test/flows", backend = "ns3", point = paste0("f", flows),
                     metric = metric, n_censored = 0L),
    sweep_vars = "flows"
  ))
}

gain_claim <- list(
  id = "gain", figure = "test/fig2", claim = "gains of 16% at 90 flows", paper_value = "+16% at 90 flows",
  metric = "system_goodput_bps", scenario = "test/flows",
  comparison = list(kind = "ratio_at", treatment = "ncq", baseline = "droptail",
                    at = list(flows = 90), expected = 1.16, tolerance = 0.5)
)

direction_claim <- list(
  id = "lower", figure = "test/fig4", claim = "times decrease", paper_value = "lower",
  metric = "system_goodput_bps", scenario = "test/flows",
  comparison = list(kind = "direction", treatment = "ncq", baseline = "droptail", relation = "<", min_share = 0.8)
)

test_that("a 15% gain reproduces a claimed 16% gain", {
  verdict <- evaluate_claims(list(gain_claim), synthetic_metrics(1.15))
  expect_equal(verdict$verdict, "reproduced")
  expect_match(verdict$ours, "ratio ncq/droptail at flows = 90: mean 1.15")
  expect_match(verdict$ours, paste0("per-seed best over the sweep 1.16 \\(\\+16.1%\\) ",
                                    "\\(flows = 10, seed 5\\); compared: the mean"))
})

test_that("no gain does not reproduce a claimed 16% gain: the interval excludes it", {
  verdict <- evaluate_claims(list(gain_claim), synthetic_metrics(1.0))
  expect_equal(verdict$verdict, "not reproduced")
})

test_that("a 60% gain matches the direction only", {
  verdict <- evaluate_claims(list(gain_claim), synthetic_metrics(1.6))
  expect_equal(verdict$verdict, "partly")
})

test_that("a direction claim holds only when the treatment is lower at enough points", {
  expect_equal(evaluate_claims(list(direction_claim), synthetic_metrics(0.8))$verdict, "reproduced")
  expect_equal(evaluate_claims(list(direction_claim), synthetic_metrics(1.2))$verdict, "not reproduced")
  expect_match(evaluate_claims(list(direction_claim), synthetic_metrics(0.8))$ours, "at 3/3 points")
})

test_that("a missing sweep point makes a claim not comparable", {
  claim <- gain_claim
  claim$comparison$at <- list(flows = 70)
  expect_equal(evaluate_claims(list(claim), synthetic_metrics(1.15))$verdict, "not comparable")
})

test_that("qualitative and not-comparable claims carry their reason", {
  claims <- list(
    list(id = "q", figure = "f", claim = "c", paper_value = "v",
         comparison = list(kind = "qualitative", reason = "why")),
    list(id = "n", figure = "f", claim = "c", paper_value = "v",
         comparison = list(kind = "not_comparable", reason = "because"))
  )
  result <- evaluate_claims(claims, list())
  expect_equal(result$verdict, c("qualitative", "not comparable"))
  expect_equal(result$method, c("why", "because"))
})

test_that("the ncq-conf claims file is well formed", {
  claims <- read_claims(file.path("..", "..", "claims", "ncq-conf.yaml"))
  expect_gt(length(claims), 10)
})

test_that("a claim without a known comparison kind is refused", {
  path <- tempfile(fileext = ".yaml")
  yaml::write_yaml(list(claims = list(list(id = "x", figure = "f", claim = "c", paper_value = "v",
                                           comparison = list(kind = "vibes")))), path)
  expect_error(read_claims(path), "comparison.kind must be one of")
})

test_that("an at_most bound over every run fails on one run above it", {
  claim <- list(id = "bound", figure = "test/fig", claim = "within d", paper_value = "d",
                metric = "system_goodput_bps", scenario = "test/flows",
                comparison = list(kind = "at_most", series = list("ncq"), threshold = 1e6, over = "every_run"))
  low <- synthetic_metrics(0.5) # every ncq run at or below 0.5 * 1.25e5 * 1.01
  expect_equal(evaluate_claims(list(claim), low)$verdict, "reproduced")
  high <- low
  high$`test/flows`$metrics$value[high$`test/flows`$metrics$series == "ncq"][1] <- 2e6
  outcome <- evaluate_claims(list(claim), high)
  # a bound broken in one run is broken
  expect_equal(outcome$verdict, "not reproduced")
  expect_match(outcome$ours, "in 14/15 runs; largest 2.00 Mb/s")
  claim$comparison$over <- NULL # the mean per cell: the one run makes its cell undecided
  expect_equal(evaluate_claims(list(claim), high)$verdict, "partly")
  expect_equal(evaluate_claims(list(claim), low)$verdict, "reproduced")
})

test_that("claims at a single point (no sweep) pair by seed", {
  data <- synthetic_metrics(0.8)
  data$`test/flows`$metrics <- dplyr::filter(data$`test/flows`$metrics, .data$flows == 10) |> dplyr::select(-"flows")
  data$`test/flows`$sweep_vars <- character()
  expect_equal(evaluate_claims(list(direction_claim), data)$verdict, "reproduced")
})

test_that("the disciplines claims file is well formed", {
  claims <- read_claims(file.path("..", "..", "claims", "disciplines.yaml"))
  expect_gt(length(claims), 8)
})

test_that("a claim about no item of the spec is refused", {
  spec <- list(key = "p", items = list(list(id = "p/fig1")), claim_sections = list(list(id = "abstract")))
  ok <- list(list(figure = "p/fig1"), list(figure = "abstract"))
  expect_silent(check_claim_figures(ok, spec))
  expect_error(check_claim_figures(c(ok, list(list(figure = "qlab/p-fig1"))), spec),
               "must be an item id of analysis/papers/p.yaml .*unknown: qlab/p-fig1")
})

# ---- one test per verdict rule (analysis/R/claims.R, verdict_rules()) -------

# Ten sweep points, five seeds; the treatment's per-seed difference from the
# baseline at each point is `effects[point] + noise` with fixed noise.
ten_point_metrics <- function(effects, noise_sd = 0.1) {
  grid <- expand.grid(seed = 1:5, flows = seq(10, 100, 10))
  base <- 10 + grid$seed + grid$flows / 10 # seeds differ a lot: pairing matters
  noise <- rep(c(-1.2, -0.4, 0, 0.5, 1.1), 10) * noise_sd
  runs <- bind_rows(
    tibble::tibble(series = "droptail", seed = grid$seed, flows = grid$flows, value = base),
    tibble::tibble(series = "ncq", seed = grid$seed, flows = grid$flows,
                   value = base + effects[match(grid$flows, seq(10, 100, 10))] + noise)
  )
  list(`test/flows` = list(
    metrics = mutate(runs, scenario = "test/flows", backend = "ns3", point = paste0("f", flows),
                     metric = "avg_fct_s", n_censored = 0L),
    sweep_vars = "flows"
  ))
}

lower_claim <- function(min_share) {
  list(id = "lower", figure = "f", claim = "NCQ lowers the time", paper_value = "lower",
       metric = "avg_fct_s", scenario = "test/flows",
       comparison = list(kind = "direction", treatment = "ncq", baseline = "droptail", relation = "<",
                         min_share = min_share))
}

test_that("direction: comparisons are paired by seed (seed-to-seed spread does not hide a steady effect)", {
  data <- ten_point_metrics(rep(-0.5, 10), noise_sd = 0.05)
  outcome <- evaluate_claims(list(lower_claim(0.8)), data)
  expect_equal(outcome$verdict, "reproduced")
  # unpaired, the seeds' spread (values 11 to 15 at a point) would swamp a 0.5 difference
  runs <- data$`test/flows`$metrics
  at10 <- runs[runs$flows == 10, ]
  expect_gt(stats::t.test(at10$value[at10$series == "ncq"], at10$value[at10$series == "droptail"])$p.value, 0.05)
})

test_that("direction: one nominally significant point in ten does not give reproduced (Holm)", {
  # a point whose one-sided paired p is about 0.02: significant alone, not after Holm across ten
  effects <- c(-0.17, rep(0, 9))
  data <- ten_point_metrics(effects)
  at10 <- data$`test/flows`$metrics
  at10 <- at10[at10$flows == 10, ]
  raw_p <- one_sided_p(at10$value[at10$series == "ncq"] - at10$value[at10$series == "droptail"], 0, "less")
  expect_lt(raw_p, 0.05)
  expect_gt(raw_p * 10, 0.05)
  for (share in c(0.1, 0.5, 0.8)) {
    outcome <- evaluate_claims(list(lower_claim(share)), data)
    expect_false(outcome$verdict == "reproduced", label = sprintf("min_share %s", share))
    expect_equal(outcome$verdict, "inconclusive")
  }
  expect_match(evaluate_claims(list(lower_claim(0.1)), data)$ours, "at 0/10 points .*Holm-adjusted")
})

test_that("direction: inconclusive when nothing decides, not reproduced when the opposite holds", {
  expect_equal(evaluate_claims(list(lower_claim(0.8)), ten_point_metrics(rep(0, 10)))$verdict, "inconclusive")
  expect_equal(evaluate_claims(list(lower_claim(0.8)), ten_point_metrics(rep(1, 10)))$verdict, "not reproduced")
  mixed <- ten_point_metrics(c(rep(-1, 5), rep(0, 5)))
  expect_equal(evaluate_claims(list(lower_claim(0.8)), mixed)$verdict, "partly")
  expect_equal(evaluate_claims(list(lower_claim(0.5)), mixed)$verdict, "reproduced")
})

test_that("direction against several baselines: one family, every comparison must hold", {
  data <- synthetic_metrics(0.8)
  more <- data$`test/flows`$metrics
  other <- more[more$series == "droptail", ]
  other$series <- "ncq-0.01"
  other$value <- other$value * 0.85 # between ncq (0.8) and droptail
  data$`test/flows`$metrics <- bind_rows(more, other)
  claim <- lower_claim(1)
  claim$metric <- "system_goodput_bps"
  claim$comparison$baseline <- list("droptail", "ncq-0.01")
  outcome <- evaluate_claims(list(claim), data)
  expect_equal(outcome$verdict, "reproduced")
  expect_match(outcome$ours, "ncq < droptail at 3/3 points .*; ncq < ncq-0.01 at 3/3 points")
  claim$comparison$baseline <- list("droptail", "ncq")
  expect_error(evaluate_claims(list(claim), data), NA) # ncq vs itself: no effect, not an error
})

test_that("equivalence: TOST with the claim's margin", {
  claim <- list(id = "same", figure = "f", claim = "the same throughput", paper_value = "same",
                metric = "system_goodput_bps", scenario = "test/flows",
                comparison = list(kind = "equivalent", treatment = "ncq", baseline = "droptail", margin = 0.05))
  # within ±1% per seed: equivalent within ±5% at every point
  same <- evaluate_claims(list(claim), synthetic_metrics(1.0))
  expect_equal(same$verdict, "reproduced")
  expect_match(same$ours, "within \\[0.95, 1.05\\] \\(TOST\\) at 3/3 points, outside at 0")
  # 20% lower: outside the margin
  expect_equal(evaluate_claims(list(claim), synthetic_metrics(0.8))$verdict, "not reproduced")
  # 4% lower with ±1% wobble: the interval straddles the bound, so neither is shown
  expect_equal(evaluate_claims(list(claim), synthetic_metrics(0.955))$verdict, "inconclusive")
  # against a target value (srd: the R:D per-flow ratio against k)
  target <- list(id = "k", figure = "f", claim = "ratio k", paper_value = "k = 2",
                 metric = "system_goodput_bps", scenario = "test/flows",
                 comparison = list(kind = "equivalent", series = list("ncq"), value = 1.25e5, margin = 0.5))
  # the series' goodput is near 1.25e5 at 10 flows only (1e6 / flows per flow)
  outcome <- evaluate_claims(list(target), synthetic_metrics(1.0))
  expect_equal(outcome$verdict, "not reproduced")
  expect_match(outcome$ours, "at 1/3 cells, outside at 2")
})

test_that("TOST and the one-sided tests behave as their definitions", {
  x <- c(0.99, 1.0, 1.01, 1.0, 1.0)
  expect_lt(tost_p(x, 0.95, 1.05), 0.001)
  expect_gt(tost_p(x + 0.06, 0.95, 1.05), 0.5)
  expect_equal(one_sided_p(c(1, 1, 1), 0, "greater"), 0)
  expect_equal(one_sided_p(c(1, 1, 1), 0, "less"), 1)
  expect_true(is.na(one_sided_p(1, 0, "less")))
  expect_equal(holm(c(0.01, NA, 0.04)), c(0.02, NA, 0.04))
  expect_error(tost_p(x, 1, 1), "below its `upper`")
})

test_that("non-inferiority: shown, contradicted, or undecided", {
  claim <- list(id = "cost", figure = "f", claim = "little cost", paper_value = "≤ 10%",
                metric = "system_goodput_bps", scenario = "test/flows",
                comparison = list(kind = "no_worse", treatment = "ncq", baseline = "droptail",
                                  tolerance = 0.1, better = "higher"))
  expect_equal(evaluate_claims(list(claim), synthetic_metrics(0.97))$verdict, "reproduced")
  expect_equal(evaluate_claims(list(claim), synthetic_metrics(0.7))$verdict, "not reproduced")
  expect_equal(evaluate_claims(list(claim), synthetic_metrics(0.9))$verdict, "inconclusive")
})

test_that("magnitude: the verdict compares the mean or the per-seed best, as the claim says", {
  # mean +5%, the best seed about +6%: a +16% claim is only partly there on the mean
  claim <- gain_claim
  expect_equal(evaluate_claims(list(claim), synthetic_metrics(1.05))$verdict, "partly")
  claim$comparison$compare <- "best"
  best <- evaluate_claims(list(claim), synthetic_metrics(1.05))
  expect_equal(best$verdict, "partly")
  expect_match(best$ours, "compared: the per-seed best")
  expect_match(best$method, "Magnitude: the per-seed best over the sweep compared")
  # when the best single run reaches +16% (within ±50% of the effect) but the mean does not
  data <- synthetic_metrics(1.05)
  rows <- data$`test/flows`$metrics
  lucky <- rows$series == "ncq" & rows$flows == 50 & rows$seed == 2
  rows$value[lucky] <- rows$value[lucky] * 1.1
  data$`test/flows`$metrics <- rows
  expect_equal(evaluate_claims(list(claim), data)$verdict, "reproduced")
  claim$comparison$compare <- "mean"
  expect_equal(evaluate_claims(list(claim), data)$verdict, "partly")
})

test_that("a duplicate claim shows the test it names and is counted once", {
  copy <- list(id = "again", figure = "abstract", claim = "gains", paper_value = "+16%", same_as = "gain")
  outcome <- evaluate_claims(list(gain_claim, copy), synthetic_metrics(1.15))
  expect_equal(outcome$verdict, c("reproduced", "reproduced"))
  expect_match(outcome$method[2], "^Same test as gain")
  counts <- count_verdicts(outcome)
  expect_equal(counts$n[counts$verdict == "reproduced"], 1)
  expect_equal(sum(counts$n), 1)
  expect_error(evaluate_claims(list(copy), synthetic_metrics(1.15)), "same_as must name another claim")
  with_test <- copy
  with_test$comparison <- gain_claim$comparison
  expect_error(check_claim(with_test, "c.yaml"), "must give no comparison")
})

test_that("a demonstration whose rule never fired is not reproduced", {
  data <- synthetic_metrics(0.5)
  rows <- data$`test/flows`$metrics
  fired <- mutate(rows, metric = "dropped_pkts", band = 0L, reason = "precedence_cross", value = 3)
  data$`test/flows`$metrics <- bind_rows(rows, fired)
  claim <- list(id = "bound", figure = "f", claim = "no loss", paper_value = "0",
                metric = "system_goodput_bps", scenario = "test/flows",
                requires = list(metric = "dropped_pkts", band = 0L, reason = "precedence_cross", series = list("ncq")),
                comparison = list(kind = "at_most", series = list("ncq"), threshold = 1e6, over = "every_run"))
  expect_equal(evaluate_claims(list(claim), data)$verdict, "reproduced")
  quiet <- data
  quiet$`test/flows`$metrics$value[quiet$`test/flows`$metrics$metric == "dropped_pkts"] <- 0
  outcome <- evaluate_claims(list(claim), quiet)
  expect_equal(outcome$verdict, "not reproduced")
  expect_match(outcome$ours, "the defining rule did not fire in 15 of 15 runs")
  # a claim tested at one point needs the rule there only: it fired at the last flow count alone
  last <- max(rows$flows)
  at_last <- quiet
  at_last$`test/flows`$metrics$value[at_last$`test/flows`$metrics$metric == "dropped_pkts" &
                                       at_last$`test/flows`$metrics$flows == last] <- 3
  expect_equal(evaluate_claims(list(claim), at_last)$verdict, "not reproduced")
  claim$comparison$at <- stats::setNames(list(last), "flows")
  expect_equal(evaluate_claims(list(claim), at_last)$verdict, "reproduced")
})

test_that("a trend is judged per series with Holm across them", {
  claim <- list(id = "t", figure = "f", claim = "falls", paper_value = "decreasing",
                metric = "system_goodput_bps", scenario = "test/flows",
                comparison = list(kind = "trend", series = list("droptail", "ncq"), relation = "decreasing",
                                  x = "flows"))
  expect_equal(evaluate_claims(list(claim), synthetic_metrics(1))$verdict, "reproduced")
  claim$comparison$relation <- "increasing"
  expect_equal(evaluate_claims(list(claim), synthetic_metrics(1))$verdict, "not reproduced")
})

test_that("tasks completed by time t are compared run by run", {
  flows <- tidyr::expand_grid(series = c("droptail", "ncq"), seed = 1:4, flow_id = 1:10) |>
    mutate(scenario = "test/flows", backend = "ns3", point = "f50", flows = 50, app = "bulk",
           end_s = flow_id * 0.5 * (1 + 0.02 * seed) * ifelse(series == "ncq", 0.7, 1))
  runs <- distinct(flows, scenario, backend, series, point, seed) |> mutate(valid = TRUE)
  data <- list(`test/flows` = list(metrics = tibble::tibble(), sweep_vars = "flows",
                                   results = list(flows = flows, runs = runs)))
  data$`test/flows`$metrics <- tibble::tibble(scenario = "test/flows", backend = "ns3", series = "ncq", point = "f50",
                                              seed = 1L, flows = 50, metric = "system_goodput_bps", value = 1)
  claim <- list(id = "t", figure = "f", claim = "more finish earlier", paper_value = "more",
                metric = "tasks_completed", scenario = "test/flows",
                comparison = list(kind = "direction", treatment = "ncq", baseline = "droptail", relation = ">",
                                  at = list(flows = 50), times_s = list(1, 2, 3, 4), min_share = 0.5))
  outcome <- evaluate_claims(list(claim), data)
  expect_equal(outcome$verdict, "reproduced")
  expect_error(check_claim(within(claim, comparison$times_s <- NULL), "c.yaml"), "must give comparison.times_s")
})

# ---- no verdict can pass for every discipline --------------------------------

# Kinds that assert a difference between two series (equivalence and
# non-inferiority assert its absence: identical disciplines pass them by
# design, which is why their margins are stated in the claim).
difference_kinds <- c("direction", "ratio_at", "difference_at")

#' Synthetic runs for one claim of a claims file: the treatment better than
#' each baseline as the claim says (`as_claimed`), or every series drawn from
#' the same discipline (`same`), five seeds, at the claim's point and two more.
synthetic_for_claim <- function(claim, how = c("as_claimed", "same")) {
  how <- match.arg(how)
  comparison <- claim$comparison
  sweep_vars <- if (!is.null(comparison$at)) {
    names(comparison$at)
  } else if (startsWith(claim$scenario, "ncq-conf/")) {
    "flows"
  } else {
    character()
  }
  points <- if (length(sweep_vars) == 0) NA else unique(c(unlist(comparison$at), 20, 60))
  series <- c(comparison$treatment, unlist(comparison$baseline))
  factor <- switch(comparison$kind,
    ratio_at = comparison$expected,
    difference_at = NA,
    direction = if (comparison$relation == "<") 0.7 else 1.3
  )
  grid <- tidyr::expand_grid(series = series, seed = 1:5, point = points)
  noise <- c(-0.02, 0.01, 0, 0.015, -0.005)
  base <- (10 + grid$seed) * (1 + noise[((grid$seed + match(grid$series, series)) %% 5) + 1])
  treated <- grid$series == comparison$treatment
  grid$value <- if (how == "same") base else ifelse(treated, base * factor, base)
  if (identical(comparison$kind, "difference_at") && how == "as_claimed") {
    grid$value <- ifelse(treated, base + comparison$expected, base)
  }
  keys <- claim[intersect(metric_key_columns, names(claim))]
  if (identical(claim$metric, "tasks_completed")) {
    # every task of a run ends at value/10 × its index: a lower value finishes tasks sooner
    flows <- tidyr::expand_grid(grid, flow_id = 1:10) |>
      mutate(scenario = claim$scenario, backend = "ns3", app = "bulk",
             end_s = .data$flow_id * 10 / .data$value)
    flows[[sweep_vars]] <- flows$point
    flows$point <- as.character(flows$point)
    runs <- distinct(flows, scenario, backend, series, point, seed) |> mutate(valid = TRUE)
    data <- list(metrics = tibble::tibble(), sweep_vars = sweep_vars, results = list(flows = flows, runs = runs))
  } else {
    metrics <- mutate(grid, scenario = claim$scenario, backend = "ns3", metric = claim$metric, n_censored = 0L)
    for (key in names(keys)) metrics[[key]] <- keys[[key]]
    if (length(sweep_vars) > 0) metrics[[sweep_vars]] <- metrics$point
    metrics$point <- as.character(metrics$point)
    data <- list(metrics = with_metric_keys(metrics), sweep_vars = sweep_vars)
  }
  stats::setNames(list(data), claim$scenario)
}

swap_labels <- function(claim) {
  swapped <- claim
  swapped$comparison$treatment <- unlist(claim$comparison$baseline)[[1]]
  swapped$comparison$baseline <- claim$comparison$treatment
  swapped
}

comparative_claims <- function() {
  files <- file.path("..", "..", "claims", c("ncq-conf.yaml", "disciplines.yaml", "rbaqm.yaml"))
  claims <- unlist(purrr::map(files, read_claims), recursive = FALSE)
  purrr::keep(claims, function(claim) is.null(claim$same_as) && claim$comparison$kind %in% difference_kinds)
}

test_that("every claim of a difference between disciplines fails when both series are the same discipline", {
  claims <- comparative_claims()
  expect_gt(length(claims), 10)
  for (claim in claims) {
    outcome <- evaluate_claims(list(claim), synthetic_for_claim(claim, "same"))
    expect_false(outcome$verdict %in% c("reproduced", "partly"), label = sprintf("%s with DropTail for both", claim$id))
  }
})

test_that("every such claim passes on data made to match it and fails with the series labels swapped", {
  for (claim in comparative_claims()) {
    data <- synthetic_for_claim(claim, "as_claimed")
    expect_equal(evaluate_claims(list(claim), data)$verdict, "reproduced", label = sprintf("%s as claimed", claim$id))
    if (length(unlist(claim$comparison$baseline)) > 1) {
      # several baselines: swap the treatment with the first one
      swapped <- swap_labels(claim)
      swapped$comparison$baseline <- c(claim$comparison$treatment, unlist(claim$comparison$baseline)[-1])
    } else {
      swapped <- swap_labels(claim)
    }
    # the data keep their labels; the claim now names the other series the treatment
    expect_false(evaluate_claims(list(swapped), data)$verdict == "reproduced", label = sprintf("%s swapped", claim$id))
  }
})

# Per-run values of a DropTail reference and NCQ over `n` seeds at one point
# (no sweep), NCQ's per-seed change given in percent.
frequency_metrics <- function(change_pct, metric = "r_factor") {
  n <- length(change_pct)
  base <- 50 + seq_len(n)
  runs <- bind_rows(
    tibble::tibble(series = "ncq0", seed = seq_len(n), value = base),
    tibble::tibble(series = "ncq3", seed = seq_len(n), value = base * (1 + change_pct / 100))
  )
  list(`test/deploy` = list(
    metrics = mutate(runs, scenario = "test/deploy", backend = "ns3", point = "p", metric = metric,
                     n_censored = 0L),
    sweep_vars = character()
  ))
}

test_that("share of runs: the share in the claim's interval against the paper's, by its tolerance", {
  claim <- list(id = "freq", figure = "f", claim = "more than 100% for 38% of the runs", paper_value = "38%",
                metric = "r_factor", scenario = "test/deploy",
                comparison = list(kind = "share_of_runs", treatment = "ncq3", baseline = "ncq0", above = 100,
                                  expected = 38, tolerance_pp = 15))
  # 4 of 10 runs above 100% (100 itself is not "more than"): 40%, within 38 ± 15
  changes <- c(150, 120, 101, 300, 100, 50, 0, -10, 20, 30)
  outcome <- evaluate_claims(list(claim), frequency_metrics(changes))
  expect_equal(outcome$verdict, "reproduced")
  expect_match(outcome$ours, "> 100% in 4 of 10 paired runs: 40% \\(95% CI 12% to 74%\\)")
  # none of 20 runs above 100%: the interval (0% to 17%) misses 23-53%
  expect_equal(evaluate_claims(list(claim), frequency_metrics(rep(10, 20)))$verdict, "not reproduced")
  # 1 of 10: 10% is outside the band but the interval (0.3% to 45%) reaches it
  expect_equal(evaluate_claims(list(claim), frequency_metrics(c(200, rep(10, 9))))$verdict, "inconclusive")
  # fewer runs than min_runs: never decided
  expect_equal(evaluate_claims(list(claim), frequency_metrics(c(200, 200, 10)))$verdict, "inconclusive")
  # an interval with an upper end: (0, 50]
  upto <- claim
  upto$comparison$above <- 0
  upto$comparison$at_most <- 50
  upto$comparison$expected <- 88
  expect_match(evaluate_claims(list(upto), frequency_metrics(changes))$ours, "in \\(0%, 50%\\] in 3 of 10")
  bad <- claim
  bad$comparison$above <- NULL
  expect_error(check_claim(bad, "claims[1]"), "must give .*above")
})

test_that("equivalence against several treatments is one family over them", {
  metrics <- synthetic_metrics(1.0)
  second <- dplyr::filter(metrics$`test/flows`$metrics, .data$series == "ncq") |>
    dplyr::mutate(series = "ncq-far", value = .data$value * 1.3)
  metrics$`test/flows`$metrics <- dplyr::bind_rows(metrics$`test/flows`$metrics, second)
  claim <- list(id = "same", figure = "f", claim = "minor impact for any number", paper_value = "minor",
                metric = "system_goodput_bps", scenario = "test/flows",
                comparison = list(kind = "equivalent", treatment = list("ncq", "ncq-far"), baseline = "droptail",
                                  margin = 0.1))
  outcome <- evaluate_claims(list(claim), metrics)
  # ncq within ±10% at 3 points, ncq-far 30% above at 3: not reproduced
  expect_equal(outcome$verdict, "not reproduced")
  expect_match(outcome$ours, "ratio ncq, ncq-far/droptail within \\[0.9, 1.1\\] \\(TOST\\) at 3/6 cells, outside at 3")
  claim$comparison$treatment <- list("ncq")
  expect_equal(evaluate_claims(list(claim), metrics)$verdict, "reproduced")
})

# Three series over 5 seeds at flows 10, 50, 90 with the given mean per series
# and point (a matrix: a row per series), a small seed-dependent wobble.
order_metrics <- function(means) {
  grid <- tidyr::expand_grid(series = rownames(means), seed = 1:5, flows = c(10, 50, 90))
  wobble <- 1 + 0.01 * ((grid$seed %% 3) - 1) + 0.002 * match(grid$series, rownames(means))
  grid$value <- means[cbind(match(grid$series, rownames(means)), match(grid$flows, c(10, 50, 90)))] * wobble
  list(`test/flows` = list(
    metrics = mutate(grid, scenario = "test/flows", backend = "ns3", point = paste0("f", flows),
                     metric = "system_goodput_bps", n_censored = 0L),
    sweep_vars = "flows"
  ))
}

order_claim <- list(id = "best-varies", figure = "f", claim = "the best setting varies with the load",
                    paper_value = "varies", metric = "system_goodput_bps", scenario = "test/flows",
                    comparison = list(kind = "order_changes", series = list("q5", "q10", "q20")))

test_that("order changes: reproduced when a pair swaps places between points, with Holm over both sides", {
  # q5 best at 10 flows, q20 best at 90: q5 above q20 at 10, below at 90
  swapping <- rbind(q5 = c(3, 2, 1), q10 = c(2, 2.2, 2), q20 = c(1, 2.1, 3))
  outcome <- evaluate_claims(list(order_claim), order_metrics(swapping))
  expect_equal(outcome$verdict, "reproduced")
  expect_match(outcome$ours, "q5 above q20 at 10; below at 50, 90")
})

test_that("order changes: not reproduced when one series is above every other at every point", {
  steady <- rbind(q5 = c(1, 1, 1), q10 = c(2, 2, 2), q20 = c(3, 3, 3))
  outcome <- evaluate_claims(list(order_claim), order_metrics(steady))
  expect_equal(outcome$verdict, "not reproduced")
  expect_match(outcome$ours, "best \\(flows\\): 10 q20, 50 q20, 90 q20")
})

test_that("order changes: inconclusive when nothing decides", {
  flat <- rbind(q5 = c(2, 2, 2), q10 = c(2, 2, 2), q20 = c(2, 2, 2))
  data <- order_metrics(flat)
  # a noise larger than the wobble, different per series and seed
  data$`test/flows`$metrics$value <- data$`test/flows`$metrics$value *
    (1 + 0.2 * sin(seq_len(nrow(data$`test/flows`$metrics))))
  expect_equal(evaluate_claims(list(order_claim), data)$verdict, "inconclusive")
  expect_error(check_claim(within(order_claim, comparison$series <- NULL), "c.yaml"), "must give series")
})

test_that("a claim on useful_bps is tested per bin of its figure's sessions", {
  spec <- list(items = list(
    list(id = "p/fig9", kind = "useful_vs_sessions", band = 0L, group = "rt", edges = list(1, 2, 3), deadline_s = 0.05),
    list(id = "p/fig8", kind = "time_series")))
  claim <- list(id = "c", figure = "p/fig9", metric = "useful_bps", band = 0L)
  expect_equal(with_figure_bins(list(claim), spec)[[1]]$bins$edges, list(1, 2, 3))
  expect_error(with_figure_bins(list(within(claim, figure <- "p/fig8")), spec), "useful_vs_sessions")
  expect_error(with_figure_bins(list(within(claim, band <- 1L)), spec), "same band")
  # two series, 3 seeds; sessions start at 0, 1, 2 s; bins 1-2 = [0, 1) and 2-3 = [1, 4)
  runs <- tidyr::expand_grid(series = c("a", "b"), seed = 1:3) |>
    dplyr::mutate(scenario = "p/3", backend = "ns3", point = .data$series, valid = TRUE, sim_end_s = 4)
  flows <- tidyr::expand_grid(runs, start_s = c(0, 1, 2)) |> dplyr::mutate(group = "rt")
  # a: one useful packet in each bin; b: one in the first bin, three in the second
  packets <- dplyr::bind_rows(
    tidyr::expand_grid(runs, time_s = c(0.5, 1.5)) |> dplyr::filter(.data$series == "a"),
    tidyr::expand_grid(runs, time_s = c(0.5, 1.5, 2.5, 3.5)) |> dplyr::filter(.data$series == "b")
  ) |>
    dplyr::mutate(event = "deq", band = 0L, len_bytes = 1000L, sojourn_s = 0.01 + 0.001 * .data$seed)
  bins <- useful_bins_runs(list(runs = runs, flows = flows, packets = packets),
                           with_figure_bins(list(claim), spec)[[1]], character())
  expect_equal(bins$value[bins$series == "a" & bins$seed == 1], c(8000, 8000 / 3))
  expect_equal(bins$value[bins$series == "b" & bins$seed == 1], c(8000, 8000))
  expect_true(all(bins$metric == "useful_bps" & bins$band == 0L))
})

# The benchmark leaderboard (analysis/R/bench.R) on synthetic data whose
# order is known, and the adaptive-repetition rule on synthetic noise.

# per-seed values of three disciplines on one metric: means 10 (a), 20 (b),
# 30 (c), the same noise per seed (common random numbers), plus a little
# noise of each discipline's own
synthetic_values <- function(better, seeds = 1:8, own_sd = 0.5) {
  set.seed(42)
  common <- stats::rnorm(length(seeds), sd = 3)
  purrr::map_dfr(c(a = 10, b = 20, c = 30), function(mu) {
    tibble::tibble(seed = seeds, value = mu + common + stats::rnorm(length(seeds), sd = own_sd))
  }, .id = "series") |>
    dplyr::mutate(selector = "m", better = better)
}

test_that("disciplines are ranked in the metric's better direction", {
  lower <- rank_disciplines(synthetic_values("lower"))
  expect_equal(lower$series[order(lower$rank)], c("a", "b", "c"))
  higher <- rank_disciplines(synthetic_values("higher"))
  expect_equal(higher$series[order(higher$rank)], c("c", "b", "a"))
  expect_equal(sort(higher$rank), 1:3)
  expect_true(all(higher$ci_lo < higher$mean & higher$mean < higher$ci_hi))
  expect_equal(unique(higher$n), 8L)
})

test_that("ties share the better rank, and a bad direction is refused", {
  tied <- tibble::tibble(series = c("x", "x", "y", "y", "z", "z"), seed = rep(1:2, 3),
                         value = c(1, 3, 1, 3, 5, 5), selector = "m", better = "lower")
  ranked <- rank_disciplines(tied)
  expect_equal(ranked$rank[ranked$series %in% c("x", "y")], c(1L, 1L))
  expect_equal(ranked$rank[ranked$series == "z"], 3L)
  expect_error(rank_disciplines(dplyr::mutate(tied, better = "up")), "higher or lower")
})

# Adaptive repetition: `early` stopped after the first batch (seeds 1-3),
# `late` and the baseline ran 9 seeds. The seeds differ in how hard they
# are (the same shift for every discipline: common random numbers): the
# first three are hard (+10), the next six easy (-5). True order, lower
# better: early (+0) < late (+2) < base (+5).
unequal_seeds <- function() {
  hardness <- c(10, 12, 8, -6, -4, -5, -6, -5, -4)
  dplyr::bind_rows(
    tibble::tibble(series = "early", seed = 1:3, value = hardness[1:3]),
    tibble::tibble(series = "late", seed = 1:9, value = hardness + 2),
    tibble::tibble(series = "base", seed = 1:9, value = hardness + 5)
  ) |>
    dplyr::mutate(selector = "m", better = "lower")
}

test_that("with unequal seed counts the disciplines are ranked on their common seeds", {
  values <- unequal_seeds()
  # the mean over each one's own seeds ranks the easy seeds, not the disciplines: early last
  naive <- dplyr::summarise(dplyr::group_by(values, .data$series), mean = mean(.data$value))
  expect_equal(naive$series[order(naive$mean)], c("late", "base", "early"))
  ranked <- rank_disciplines(values)
  expect_equal(ranked$series[order(ranked$rank)], c("early", "late", "base"))
  expect_equal(ranked$mean[match(c("early", "late", "base"), ranked$series)], c(10, 12, 15))
  expect_equal(unique(ranked$n), 3L)
  expect_equal(ranked$n_own[match(c("early", "late", "base"), ranked$series)], c(3L, 9L, 9L))
  expect_equal(unique(ranked$ranked_seeds), "1 2 3")
  # the paired effects against the baseline keep every pair each discipline has
  effects <- bench_effects(values, baseline = "base")
  expect_equal(effects$n[effects$series == "late"], 9L)
  expect_equal(effects$mean[effects$series == "late"], -3)
  expect_equal(effects$n[effects$series == "early"], 3L)
})

test_that("the page says which seeds were ranked and which disciplines ran more", {
  expect_equal(format_seeds(c(8, 1, 2, 3, 5, 7)), "1\u20133, 5, 7\u20138")
  ranking <- dplyr::mutate(rank_disciplines(unequal_seeds()), label = "m")
  expect_equal(ranked_seeds_note(ranking), paste(
    "Ranked on seeds 1\u20133, the 3 seeds every discipline ran; more seeds ran (late 9, base 9), all of them in",
    "the paired differences against DropTail."
  ))
  same <- dplyr::mutate(rank_disciplines(dplyr::filter(unequal_seeds(), .data$seed <= 3)), label = "m")
  expect_equal(ranked_seeds_note(same), "Ranked on seeds 1\u20133, the 3 seeds every discipline ran.")
})

test_that("a seed where a discipline has no value is left out for all; disjoint seeds are refused", {
  values <- unequal_seeds()
  values$value[values$series == "late" & values$seed == 2] <- NA
  ranked <- rank_disciplines(values)
  expect_equal(unique(ranked$ranked_seeds), "1 3")
  expect_equal(ranked$mean[ranked$series == "early"], 9)
  # a discipline with no value at all is not ranked and does not empty the common seeds
  values$value[values$series == "late"] <- NA
  ranked <- rank_disciplines(values)
  expect_true(is.na(ranked$rank[ranked$series == "late"]))
  expect_equal(ranked$n[ranked$series == "late"], 0L)
  expect_equal(ranked$rank[ranked$series %in% c("early", "base")], c(1L, 2L))
  disjoint <- dplyr::filter(unequal_seeds(), !(.data$series == "base" & .data$seed <= 3))
  expect_error(rank_disciplines(disjoint), "on m no seed has a value for every discipline \\(base at 4 5 6 7 8 9")
})

test_that("paired effects against the baseline find the known differences", {
  effects <- bench_effects(synthetic_values("lower"), baseline = "b")
  a <- effects[effects$series == "a", ]
  c <- effects[effects$series == "c", ]
  # the shared noise cancels in the pairs: intervals near -10 and +10
  expect_true(a$ci_lo < -10 && -10 < a$ci_hi && a$ci_hi < -8)
  expect_true(c$ci_lo > 8 && c$ci_lo < 10 && 10 < c$ci_hi)
  expect_true(a$improves && !c$improves)
  expect_true(all(effects$significant))
  expect_equal(a$change, a$mean / abs(a$baseline_mean))
  expect_lt(a$d_z, -5)
})

test_that("Holm's adjustment runs over the whole family of a workload", {
  set.seed(7)
  noise <- tibble::tibble(series = rep(c("base", "same", "better"), each = 6), seed = rep(1:6, 3),
                          value = c(rep(0, 6), stats::rnorm(6, sd = 1), stats::rnorm(6, mean = -3, sd = 1)),
                          selector = "m", better = "lower")
  effects <- bench_effects(noise, baseline = "base")
  expect_equal(effects$p_holm, stats::p.adjust(effects$p, method = "holm"))
  expect_true(all(effects$p_holm >= effects$p))
  expect_true(effects$significant[effects$series == "better"])
  expect_false(effects$significant[effects$series == "same"])
})

test_that("effects need the baseline among the series", {
  expect_error(bench_effects(synthetic_values("lower"), baseline = "droptail"), "baseline `droptail`")
})

test_that("the leaderboard takes whatever series the runs have: a new discipline needs no edit", {
  spec <- list(baseline = "a", workloads = list(w = list(metrics = list(
    list(metric = "fairness_jain", better = "higher", label = "Jain")
  ))))
  metrics <- synthetic_values("higher") |>
    dplyr::transmute(series, seed, metric = "fairness_jain", value) |>
    with_metric_keys()
  renamed <- dplyr::bind_rows(metrics, dplyr::mutate(dplyr::filter(metrics, series == "c"), series = "c-copy"))
  board <- bench_leaderboard(list(w = renamed), spec)
  expect_setequal(board$ranking$series, c("a", "b", "c", "c-copy"))
  expect_equal(board$ranking$rank[board$ranking$series == "c-copy"], 1L)
  expect_setequal(board$effects$series, c("b", "c", "c-copy"))
})

test_that("a workload without a valid run of the baseline has no rows on the leaderboard", {
  spec <- list(baseline = "a", workloads = list(
    w = list(metrics = list(list(metric = "fairness_jain", better = "higher", label = "Jain"))),
    v = list(metrics = list(list(metric = "fairness_jain", better = "higher", label = "Jain")))
  ))
  metrics <- synthetic_values("higher") |>
    dplyr::transmute(series, seed, metric = "fairness_jain", value) |>
    with_metric_keys()
  ran <- list(w = c("a", "b", "c"), v = c("a", "b", "c"))
  board <- bench_leaderboard(list(w = metrics, v = dplyr::filter(metrics, series != "a")), spec, ran = ran)
  expect_equal(unique(board$ranking$workload), "w")
  expect_equal(unique(board$effects$workload), "w")
  # a baseline that never ran is a misconfigured suite, not an invalid run
  expect_error(bench_leaderboard(list(w = metrics, v = dplyr::filter(metrics, series != "a")), spec,
                                 ran = list(w = c("a", "b", "c"), v = c("b", "c"))),
               "workload `v` has no run of the baseline `a` \\(series run: b, c\\)")
  expect_error(bench_leaderboard(list(v = dplyr::filter(metrics, series != "a")), spec), "baseline `a`")
})

test_that("a workload without metrics in the spec is refused by name", {
  spec <- list(baseline = "a", workloads = list())
  metrics <- with_metric_keys(dplyr::transmute(synthetic_values("higher"), series, seed, metric = "fairness_jain",
                                               value))
  expect_error(bench_leaderboard(list(bulk = metrics), spec), "workload `bulk`")
})

test_that("the registry's selectors pick the rows of a group and leave other parts out", {
  metrics <- with_metric_keys(tibble::tibble(series = "a", seed = 1L, metric = "loss_ratio",
                                             group = c("voip", "web", NA), value = c(0.1, 0.2, 0.3)))
  expect_equal(select_metric_rows(metrics, list(metric = "loss_ratio", group = "voip"), "t")$value, 0.1)
  expect_equal(select_metric_rows(metrics, list(metric = "loss_ratio"), "t")$value, 0.3)
})

test_that("native baselines are the series whose kind is one of ns-3's own queue discs", {
  scenario <- list(series = list(
    droptail = list(kind = "droptail", params = list(limit_pkts = 100)),
    codel = list(kind = "ns3-codel", params = list(limit_pkts = 100)),
    `my-ns3` = list(kind = "ncq"),
    pie = list(kind = "ns3-pie")
  ))
  expect_equal(native_baselines(scenario), c(codel = "ns3-codel", pie = "ns3-pie"))
  expect_length(native_baselines(list(series = list(droptail = list(kind = "droptail")))), 0)
  expect_length(native_baselines(list()), 0)
})

test_that("analysis/bench.yaml reads, and a bad direction names the entry", {
  spec <- read_bench_spec(file.path("..", "..", "bench.yaml"))
  expect_equal(spec$baseline, "droptail")
  # the TCP-variant workloads are ranked on the bulk workload's metrics
  expect_identical(spec$workloads[["bulk-bbr"]]$metrics, spec$workloads$bulk$metrics)
  expect_identical(spec$workloads[["bulk-cubic"]]$metrics, spec$workloads$bulk$metrics)
  path <- tempfile(fileext = ".yaml")
  yaml::write_yaml(list(baseline = "droptail", repetition = list(width_relative = 0.2),
                        workloads = list(bulk = list(metrics = list(list(metric = "fairness_jain", better = "up"))))),
                   path)
  expect_error(read_bench_spec(path), "workloads.bulk.metrics\\[1\\]: `better` must be higher or lower")
})

test_that("adaptive repetition stops at the first batch when the noise is small", {
  set.seed(1)
  run <- adaptive_seeds(function(seeds) 1 + stats::rnorm(length(seeds), sd = 0.01), width = 0.1, batch = 5, cap = 50)
  expect_equal(run$seeds, 1:5)
  expect_equal(run$stopped, "width")
  expect_lt(run$interval$ci_hi - run$interval$ci_lo, 0.1)
})

test_that("adaptive repetition runs to the cap when the noise is large", {
  set.seed(2)
  run <- adaptive_seeds(function(seeds) stats::rnorm(length(seeds), sd = 10), width = 0.1, batch = 4, cap = 18)
  expect_equal(run$seeds, 1:18)
  expect_equal(run$stopped, "cap")
})

test_that("adaptive repetition takes more seeds for noisier differences", {
  set.seed(3)
  used <- purrr::map_dbl(c(0.5, 1, 2), function(noise) {
    length(adaptive_seeds(function(seeds) stats::rnorm(length(seeds), sd = noise), width = 1, batch = 5,
                          cap = 500)$seeds)
  })
  expect_true(all(diff(used) > 0))
})

test_that("the stopped interval still covers the true difference about 95% of the time", {
  set.seed(4)
  covered <- purrr::map_lgl(1:120, function(i) {
    run <- adaptive_seeds(function(seeds) 2 + stats::rnorm(length(seeds), sd = 1), width = 1.2, batch = 5, cap = 60)
    run$interval$ci_lo <= 2 && 2 <= run$interval$ci_hi
  })
  # optional stopping costs some coverage (the page discloses the rule): 0.95
  # at this seed, 0.89-0.975 at others; a gross check, 120 trials take ~1.5 s
  expect_gt(mean(covered), 0.85)
})

test_that("adaptive repetition refuses bad arguments", {
  expect_error(adaptive_seeds(function(s) s, width = 0), "width")
  expect_error(adaptive_seeds(function(s) s, width = 1, batch = 1), "batch")
  expect_error(adaptive_seeds(function(s) 1, width = 1, batch = 3), "one difference per seed")
})

# ---- the adaptive rule as the workflow applies it (adaptive_status()) ----------

# one metric, per-seed values: the baseline at 100 + common noise, each other
# series 100 + its shift + common noise + noise of its own with the given sd
status_values <- function(own_sd, seeds = 1:9, shift = 5) {
  set.seed(11)
  common <- stats::rnorm(length(seeds), sd = 10)
  base <- tibble::tibble(series = "base", seed = seeds, value = 100 + common)
  others <- purrr::imap_dfr(own_sd, function(sd, label) {
    tibble::tibble(series = label, seed = seeds, value = 100 + shift + common + stats::rnorm(length(seeds), sd = sd))
  })
  dplyr::bind_rows(base, others) |> dplyr::mutate(selector = "m", better = "lower")
}
status_selectors <- list(list(metric = "m", better = "lower"))
status_of <- function(values, batch = 3, cap = 9, width_relative = 0.1, selectors = status_selectors) {
  st <- adaptive_status(values, selectors, "base", list(batch = batch, cap = cap, width_relative = width_relative))
  purrr::set_names(st$status, st$series)
}

test_that("a discipline no noisier than the baseline stops at the first batch; a noisy one runs to the cap", {
  # width 0.1 x 100 = 10; own noise sd 0.1 gives intervals far below it, sd 50 far above
  st <- adaptive_status(status_values(c(quiet = 0.1, noisy = 50)), status_selectors, "base",
                        list(batch = 3, cap = 9, width_relative = 0.1))
  quiet <- st[st$series == "quiet", ]
  expect_equal(c(quiet$status, quiet$n_stop), c("width", "3"))
  expect_lt(quiet$widest, 1)
  noisy <- st[st$series == "noisy", ]
  expect_equal(noisy$status, "cap")
  expect_gt(noisy$widest, 1)
  expect_equal(st$status[st$series == "base"], "baseline")
})

test_that("a discipline whose interval is still too wide before the cap runs another batch", {
  values <- status_values(c(noisy = 50))
  first_batch <- dplyr::filter(values, .data$seed <= 3)
  expect_equal(status_of(first_batch)[["noisy"]], "continue")
  # the same runs after the last batch: stopped at the cap
  expect_equal(status_of(values)[["noisy"]], "cap")
})

test_that("the rule stops at the first batch boundary where every interval is narrow, not later", {
  # differences 5 + (-4, 0, 4): an interval 19.9 wide after 3 seeds; with (-1, 0, 1) next, 5.5 after 6
  values <- status_values(c(middling = 0))
  values$value[values$series == "middling"] <- values$value[values$series == "middling"] +
    c(-4, 0, 4, -1, 0, 1, 0, 0, 0)
  st <- adaptive_status(values, status_selectors, "base", list(batch = 3, cap = 9, width_relative = 0.1))
  expect_equal(st$status[st$series == "middling"], "width")
  expect_equal(st$n_stop[st$series == "middling"], 6L)
  expect_equal(st$n[st$series == "middling"], 9L) # the runs it has (here more than the rule needed)
  expect_equal(status_of(dplyr::filter(values, .data$seed <= 3))[["middling"]], "continue")
})

test_that("every metric must be narrow, and a metric's own width replaces the relative one", {
  two <- dplyr::bind_rows(status_values(c(x = 0.1)),
                          dplyr::mutate(status_values(c(x = 0.1)), selector = "loss",
                                        value = .data$value / 1000))
  relative <- list(list(metric = "m", better = "lower"), list(metric = "loss", better = "lower"))
  expect_equal(status_of(two, selectors = relative)[["x"]], "width")
  # an absolute width no interval of `loss` gets below keeps it running
  strict <- list(list(metric = "m", better = "lower"), list(metric = "loss", better = "lower", width = 1e-9))
  expect_equal(status_of(two, selectors = strict)[["x"]], "cap")
  expect_equal(unname(adaptive_widths(strict, c(m = 100, loss = 0.1), 0.1)), c(10, 1e-9))
})

test_that("a discipline identical to the baseline stops even when the baseline's mean is 0", {
  zero <- tibble::tibble(series = rep(c("base", "same"), each = 3), seed = rep(1:3, 2), value = 0,
                         selector = "m", better = "lower")
  expect_equal(status_of(zero, batch = 3, cap = 6)[["same"]], "width")
})

test_that("an invalid run counts as run but pairs nothing: no early stop on fewer pairs, and no error", {
  values <- status_values(c(quiet = 0.1))
  every <- list(base = 1:9, quiet = 1:9)
  # seed 2 of `quiet` invalid (no values): after 3 seeds run, 2 pairs; the
  # rule is evaluated at the boundary of the seeds run, not of the valid ones
  holed <- dplyr::filter(values, !(.data$series == "quiet" & .data$seed == 2))
  st <- adaptive_status(dplyr::filter(holed, .data$seed <= 3), status_selectors, "base",
                        list(batch = 3, cap = 9, width_relative = 0.1), ran = list(base = 1:3, quiet = 1:3))
  expect_equal(st$n[st$series == "quiet"], 3L)
  expect_equal(st$n_valid[st$series == "quiet"], 2L)
  # every run of the baseline invalid: nothing pairs, the others run on, and stop at the cap
  no_base <- dplyr::filter(values, .data$series != "base")
  st <- adaptive_status(dplyr::filter(no_base, .data$seed <= 3), status_selectors, "base",
                        list(batch = 3, cap = 9, width_relative = 0.1), ran = list(base = 1:3, quiet = 1:3))
  expect_equal(purrr::set_names(st$status, st$series), c(base = "baseline", quiet = "continue"))
  expect_equal(st$widest[st$series == "quiet"], Inf)
  expect_equal(st$n_valid[st$series == "base"], 0L)
  st <- adaptive_status(no_base, status_selectors, "base", list(batch = 3, cap = 9, width_relative = 0.1),
                        ran = every)
  expect_equal(st$status[st$series == "quiet"], "cap")
  # a series with no valid run at all is still listed, from the seeds it ran
  st <- adaptive_status(dplyr::filter(values, .data$series == "base"), status_selectors, "base",
                        list(batch = 3, cap = 9, width_relative = 0.1), ran = every)
  expect_equal(st$status[st$series == "quiet"], "cap")
  expect_equal(seeds_run(tibble::tibble(series = c("b", "a", "a"), seed = c(2, 3, 1))), list(a = c(1L, 3L), b = 2L))
})

test_that("the leaderboard leaves out a workload without a valid baseline run, and ranks none on disjoint seeds", {
  values <- unequal_seeds()
  disjoint <- dplyr::filter(values, !(.data$series == "base" & .data$seed <= 3))
  ranked <- rank_disciplines(disjoint, disjoint = "unrank")
  expect_true(all(is.na(ranked$rank)))
  expect_true(all(ranked$n == 0L))
  expect_match(ranked_seeds_note(dplyr::mutate(ranked, label = "m")), "^Not ranked: no seed has a valid run")
})

test_that("the adaptive rule refuses a bad repetition and a missing baseline", {
  values <- status_values(c(x = 1))
  expect_error(adaptive_status(values, status_selectors, "base", list(batch = 1, cap = 9, width_relative = 0.1)),
               "batch")
  expect_error(adaptive_status(values, status_selectors, "droptail", list(batch = 3, cap = 9, width_relative = 0.1)),
               "baseline `droptail`")
})

test_that("the coverage table: seeded, near 95%, fewer seeds for a wider stated width", {
  a <- adaptive_coverage(batch = 5, cap = 20, widths_sd = c(1, 3), trials = 200)
  expect_identical(a, adaptive_coverage(batch = 5, cap = 20, widths_sd = c(1, 3), trials = 200))
  expect_true(all(a$coverage > 0.85 & a$coverage <= 1))
  expect_gt(a$mean_seeds[[1]], a$mean_seeds[[2]])
  expect_equal(a$stopped_on_width[[2]], 1)
})

test_that("analysis/bench.yaml states the relative width, and a bad width is refused by name", {
  spec <- read_bench_spec(file.path("..", "..", "bench.yaml"))
  expect_gt(spec$repetition$width_relative, 0)
  path <- tempfile(fileext = ".yaml")
  yaml::write_yaml(list(baseline = "droptail", workloads = list(bulk = list(metrics = list(
    list(metric = "fairness_jain", better = "higher")
  )))), path)
  expect_error(read_bench_spec(path), "repetition.width_relative")
  yaml::write_yaml(list(baseline = "droptail", repetition = list(width_relative = 0.2),
                        workloads = list(bulk = list(metrics = list(
                          list(metric = "fairness_jain", better = "higher", width = -1)
                        )))), path)
  expect_error(read_bench_spec(path), "workloads.bulk.metrics\\[1\\]: `width` must be a positive number")
})

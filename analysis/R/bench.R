# The benchmark leaderboard (reports/benchmark.qmd): every discipline of the
# suite (scenarios/bench/) ranked on each workload's metrics
# (analysis/bench.yaml), with 95% intervals over seeds, paired effects
# against the baseline (DropTail) with Holm-adjusted p-values, and the
# adaptive-repetition rule a benchmark comparison may stop by. The metrics
# are those of the registry (metrics.R, compute_run_metrics()); nothing
# here computes a metric of its own.

method_bench_effect <- paste(
  "paired by seed: mean per-seed difference (discipline − baseline) with its 95% t-interval;",
  "two-sided paired t-test, Holm-adjusted over every discipline × metric of a workload;",
  "effect size d_z = mean difference / sd of the differences"
)

#' Read and check analysis/bench.yaml.
#'
#' @return The spec: `baseline`, `warmup_s`, `workloads` (name -> list of
#'   metric selectors, each with `better` and `label`).
read_bench_spec <- function(path) {
  if (!file.exists(path)) stop(sprintf("%s: file not found (the benchmark's workloads and metrics)", path))
  spec <- yaml::read_yaml(path)
  for (field in c("baseline", "workloads")) {
    if (is.null(spec[[field]])) stop(sprintf("%s: missing field `%s`", path, field))
  }
  spec$warmup_s <- as.numeric(spec$warmup_s %||% 0)
  relative <- spec$repetition$width_relative
  if (!is.numeric(relative) || length(relative) != 1 || !(relative > 0)) {
    stop(sprintf(paste("%s: `repetition.width_relative` must be a positive number",
                       "(the adaptive rule's width over the baseline's mean)"), path))
  }
  spec$workloads <- purrr::imap(spec$workloads, function(workload, name) {
    where <- sprintf("%s: workloads.%s", path, name)
    if (!is.list(workload$metrics) || length(workload$metrics) == 0) {
      stop(sprintf("%s: `metrics` must list at least one metric", where))
    }
    workload$metrics <- purrr::imap(workload$metrics, function(entry, i) {
      at <- sprintf("%s.metrics[%d]", where, i)
      if (!identical(entry$better, "higher") && !identical(entry$better, "lower")) {
        stop(sprintf("%s: `better` must be higher or lower (found %s)", at, format(entry$better %||% "nothing")))
      }
      if (!is.null(entry$width) && (!is.numeric(entry$width) || length(entry$width) != 1 || !(entry$width > 0))) {
        stop(sprintf("%s: `width` must be a positive number in the metric's unit", at))
      }
      metric_selector(entry, at)
    })
    workload
  })
  spec
}

#' One workload's per-run values of its leaderboard metrics.
#'
#' @param metrics A long per-run table (compute_run_metrics()): series, seed,
#'   metric, the key columns, value.
#' @param selectors The workload's metric selectors (read_bench_spec()).
#' @return series, seed, `selector` (metric_selector_id()), `better`, value
#'   (no `label` column: pair_by_seed()'s data mask would read a column of that
#'   name for its own argument; bench_labels() has the labels).
bench_values <- function(metrics, selectors) {
  # `entry`, not `selector`: tibble() reads its own earlier columns first
  purrr::map_dfr(selectors, function(entry) {
    rows <- select_metric_rows(metrics, entry, sprintf("benchmark: %s", metric_selector_id(entry)))
    tibble::tibble(series = rows$series, seed = rows$seed, selector = metric_selector_id(entry),
                   better = entry$better, value = rows$value)
  })
}

#' The label of each selector of a workload (for the page's tables).
bench_labels <- function(selectors) {
  tibble::tibble(
    selector = purrr::map_chr(selectors, metric_selector_id),
    label = purrr::map_chr(selectors, function(selector) selector$label %||% metric_selector_id(selector))
  )
}

#' Rank disciplines on each metric on their common seeds: the seeds at which
#' every discipline with a value of the metric has one. With adaptive
#' repetition the disciplines stop at different seed counts, and a mean over
#' each one's own seeds would compare different seeds' luck as much as the
#' disciplines (the seeds are common random numbers: one seed's flows are
#' the same for every discipline); on the common seeds every mean is over
#' the same workloads. The paired effects against the baseline
#' (bench_effects()) use each discipline's own seeds, since the baseline
#' runs them all. Rank 1 is the best mean in the metric's better direction
#' (ties share the smaller rank); a discipline with no value of the metric
#' is not ranked (rank NA, n 0).
#'
#' @param values bench_values(): series, seed, selector, better, value.
#' @param disjoint What to do when no seed has a value for every discipline
#'   of a metric: "error", or "unrank" (no discipline is ranked on it: rank
#'   NA, n 0), which the leaderboard asks for, since an emulation run that
#'   failed the backend's fidelity checks leaves its seed without a value.
#' @return selector, better, series, n (the common seeds), mean, sd, ci_lo,
#'   ci_hi (a 95% t-interval over them), rank, n_own (the seeds the
#'   discipline has a value at), ranked_seeds (the common seeds,
#'   space-separated).
rank_disciplines <- function(values, disjoint = c("error", "unrank")) {
  disjoint <- match.arg(disjoint)
  require_columns(values, c("series", "seed", "selector", "better", "value"), "rank disciplines")
  bad <- setdiff(unique(values$better), c("higher", "lower"))
  if (length(bad) > 0) stop(sprintf("rank disciplines: `better` must be higher or lower (found %s)", bad[[1]]))
  if (nrow(values) == 0) {
    return(tibble::tibble(selector = character(), better = character(), series = character(), n = integer(),
                          mean = numeric(), sd = numeric(), ci_lo = numeric(), ci_hi = numeric(), rank = integer(),
                          n_own = integer(), ranked_seeds = character()))
  }
  purrr::map_dfr(sort(unique(values$selector)), function(id) {
    rows <- values[values$selector == id, ]
    present <- rows[!is.na(rows$value), ]
    own_seeds <- split(present$seed, present$series)
    common <- sort(Reduce(intersect, own_seeds, init = unique(present$seed)))
    if (length(own_seeds) > 0 && length(common) == 0 && disjoint == "error") {
      stop(sprintf(paste("rank disciplines: on %s no seed has a value for every discipline (%s): a ranking",
                         "compares means over the same seeds"), id,
                   paste(sprintf("%s at %s", names(own_seeds), purrr::map_chr(own_seeds, function(s) {
                     paste(sort(unique(s)), collapse = " ")
                   })), collapse = "; ")))
    }
    direction <- rows$better[[1]]
    purrr::map_dfr(sort(unique(rows$series)), function(label) {
      interval <- t_interval(present$value[present$series == label & present$seed %in% common])
      one_row(selector = id, better = direction, series = label, n = interval$n, mean = interval$mean,
              sd = interval$sd, ci_lo = interval$ci_lo, ci_hi = interval$ci_hi,
              n_own = length(unique(own_seeds[[label]])), ranked_seeds = paste(common, collapse = " "))
    }) |>
      dplyr::mutate(rank = dplyr::min_rank(if (direction == "higher") -.data$mean else .data$mean),
                    .after = "ci_hi")
  }) |>
    dplyr::arrange(.data$selector, .data$rank, .data$series)
}

#' Seeds as runs of consecutive numbers: c(1, 2, 3, 5) -> "1-3, 5" (an en dash).
format_seeds <- function(seeds) {
  seeds <- sort(unique(as.integer(seeds)))
  if (length(seeds) == 0) return("none")
  starts <- seeds[c(TRUE, diff(seeds) != 1)]
  ends <- seeds[c(diff(seeds) != 1, TRUE)]
  paste(dplyr::if_else(starts == ends, as.character(starts), paste0(starts, "\u2013", ends)), collapse = ", ")
}

#' The sentence under a workload's heading saying which seeds its ranking
#' compares (rank_disciplines()): the common seeds, and the disciplines that
#' ran more (whose paired effects use them all).
#'
#' @param ranking rank_disciplines() rows of one workload (with `label`).
#' @param baseline The baseline as the page names it.
ranked_seeds_note <- function(ranking, baseline = "DropTail") {
  require_columns(ranking, c("selector", "series", "n", "n_own", "ranked_seeds"), "ranked seeds note")
  seeds_of <- function(text) format_seeds(as.integer(strsplit(as.character(text), " ", fixed = TRUE)[[1]]))
  sets <- dplyr::distinct(ranking, .data$selector, .data$ranked_seeds, .keep_all = TRUE)
  more <- dplyr::filter(ranking, .data$n_own > .data$n) |>
    dplyr::distinct(.data$series, .keep_all = TRUE)
  ranked <- if (all(is.na(sets$ranked_seeds) | sets$ranked_seeds == "")) {
    paste("Not ranked: no seed has a valid run of every discipline",
          "(runs that failed the backend's fidelity checks are left out)")
  } else if (length(unique(sets$ranked_seeds)) == 1) {
    sprintf("Ranked on seeds %s, the %d seeds every discipline ran", seeds_of(sets$ranked_seeds[[1]]),
            length(strsplit(as.character(sets$ranked_seeds[[1]]), " ", fixed = TRUE)[[1]]))
  } else {
    sprintf("Ranked on the seeds every discipline ran on each metric: %s",
            paste(sprintf("%s seeds %s", sets$label %||% sets$selector, purrr::map_chr(sets$ranked_seeds, seeds_of)),
                  collapse = "; "))
  }
  if (nrow(more) == 0) return(paste0(ranked, "."))
  sprintf("%s; more seeds ran (%s), all of them in the paired differences against %s.", ranked,
          paste(sprintf("%s %d", more$series, more$n_own), collapse = ", "), baseline)
}

#' Paired effects of every discipline against the baseline, per metric:
#' the mean per-seed difference with its 95% t-interval, the relative change
#' (mean difference over the baseline's mean), Cohen's d_z, a two-sided
#' paired t-test and its Holm adjustment over the whole family (every
#' discipline × metric given), and whether the change is an improvement.
#'
#' @param values bench_values() of one workload.
#' @param baseline The baseline's series label.
bench_effects <- function(values, baseline) {
  require_columns(values, c("series", "seed", "selector", "better", "value"), "bench effects")
  if (!baseline %in% values$series) {
    stop(sprintf("bench effects: the baseline `%s` must be among the series (found: %s)", baseline,
                 paste(unique(values$series), collapse = ", ")))
  }
  others <- setdiff(unique(values$series), baseline)
  effects <- purrr::map_dfr(others, function(label) {
    pairs <- pair_by_seed(values, label, baseline, by = c("selector", "better"))
    pairs |>
      dplyr::group_by(.data$selector, .data$better) |>
      dplyr::summarise(
        baseline_mean = mean(.data$baseline),
        p = paired_p(.data$difference),
        t_interval(.data$difference),
        .groups = "drop"
      ) |>
      dplyr::mutate(series = label)
  })
  if (nrow(effects) == 0) {
    return(tibble::tibble(selector = character(), series = character(), n = integer(), mean = numeric(),
                          ci_lo = numeric(), ci_hi = numeric(), d_z = numeric(), change = numeric(), p = numeric(),
                          p_holm = numeric(), improves = logical(), significant = logical()))
  }
  effects |>
    dplyr::mutate(
      d_z = dplyr::if_else(is.na(.data$sd) | .data$sd == 0, NA_real_, .data$mean / .data$sd),
      change = dplyr::if_else(.data$baseline_mean == 0, NA_real_, .data$mean / abs(.data$baseline_mean)),
      improves = dplyr::if_else(.data$better == "higher", .data$mean > 0, .data$mean < 0),
      p_holm = holm(.data$p),
      significant = !is.na(.data$p_holm) & .data$p_holm < 1 - confidence_level,
      method = method_bench_effect
    ) |>
    dplyr::relocate("series", .after = "selector")
}

#' Two-sided p-value of a paired t-test on per-seed differences (NA with
#' fewer than two pairs; 1 when every difference is 0, < 1e-300 when they
#' are equal and not 0: no spread, no doubt about the sign).
paired_p <- function(differences) {
  differences <- differences[!is.na(differences)]
  if (length(differences) < 2) return(NA_real_)
  if (stats::sd(differences) == 0) return(if (all(differences == 0)) 1 else 0)
  one_sample_t(differences)$p_value # stats::t.test()'s p-value, without its overhead (stats.R)
}

#' The metrics a workload's leaderboard reads (its entries in analysis/bench.yaml):
#' compute_run_metrics(metrics = ...) computes only these.
bench_workload_metrics <- function(spec, workload) {
  unique(purrr::map_chr(spec$workloads[[workload]]$metrics %||% list(), "metric"))
}

#' The leaderboard of every workload: rankings and effects, one table each.
#'
#' @param metrics_by_workload Named list: workload -> long per-run metrics.
#' @param spec read_bench_spec().
#' @param ran Named list: workload -> the series that ran there, valid or not
#'   (the runs table's `series`). A workload whose baseline ran but left no
#'   valid run (every one broke the backend's fidelity checks) has no rows; one
#'   whose baseline never ran at all is a misconfigured suite, an error.
#' @return A list: `ranking` and `effects` (each with a `workload` column).
bench_leaderboard <- function(metrics_by_workload, spec, ran = list()) {
  tables <- purrr::imap(metrics_by_workload, function(metrics, workload) {
    selectors <- spec$workloads[[workload]]$metrics
    if (is.null(selectors)) {
      stop(sprintf("benchmark: workload `%s` has no entry in analysis/bench.yaml (every workload needs its metrics)",
                   workload))
    }
    values <- bench_values(metrics, selectors)
    if (!spec$baseline %in% values$series) {
      if (!spec$baseline %in% ran[[workload]]) {
        stop(sprintf("benchmark: workload `%s` has no run of the baseline `%s` (series run: %s)", workload,
                     spec$baseline, paste(sort(unique(c(ran[[workload]], values$series))), collapse = ", ")))
      }
      # every run of the baseline invalid by the backend's fidelity checks:
      # nothing to rank against; adaptive_status() says why
      return(NULL)
    }
    labelled <- function(df) {
      dplyr::left_join(df, bench_labels(selectors), by = "selector") |>
        dplyr::mutate(workload = workload, .before = 1) |>
        dplyr::relocate("label", .after = "selector")
    }
    list(ranking = labelled(rank_disciplines(values, disjoint = "unrank")),
         effects = labelled(bench_effects(values, spec$baseline)))
  })
  list(ranking = purrr::map_dfr(tables, "ranking"), effects = purrr::map_dfr(tables, "effects"))
}

# ---- adaptive repetition ------------------------------------------------------

#' Whether a paired difference's 95% t-interval is narrower than `width`: its
#' width (ci_hi − ci_lo) below it, or 0 (every seed gave the same difference).
#' Not with fewer than two differences (no interval).
interval_narrow <- function(differences, width) {
  interval <- t_interval(differences)
  if (is.na(interval$ci_lo) || is.na(width)) return(FALSE)
  spread <- interval$ci_hi - interval$ci_lo
  spread == 0 || spread < width
}

#' Run seeds in batches until the paired difference's 95% t-interval is
#' narrower than `width` (interval_narrow()), or `cap` seeds have run.
#'
#' @param draw A function of a vector of seeds returning one paired
#'   difference (treatment − baseline) per seed.
#' @param width The interval width (ci_hi − ci_lo) to reach, in the metric's unit.
#' @param batch Seeds per batch (at least 2: an interval needs two).
#' @param cap Most seeds to run (a multiple of `batch` is not required).
#' @return A list: `seeds` used, `differences`, `interval` (t_interval()),
#'   `stopped` ("width" or "cap").
adaptive_seeds <- function(draw, width, batch = 5L, cap = 50L) {
  if (!is.function(draw)) stop("adaptive seeds: `draw` must be a function of seeds")
  if (!is.numeric(width) || length(width) != 1 || !(width > 0)) {
    stop("adaptive seeds: `width` must be a positive number")
  }
  check_repetition(batch, cap)
  seeds <- integer()
  differences <- numeric()
  repeat {
    more <- seq.int(length(seeds) + 1L, min(length(seeds) + batch, cap))
    got <- draw(more)
    if (!is.numeric(got) || length(got) != length(more)) {
      stop(sprintf("adaptive seeds: `draw` must return one difference per seed (%d asked, %d returned)",
                   length(more), length(got)))
    }
    seeds <- c(seeds, more)
    differences <- c(differences, got)
    reached <- interval_narrow(differences, width)
    if (reached || length(seeds) >= cap) {
      return(list(seeds = seeds, differences = differences, interval = t_interval(differences),
                  stopped = if (reached) "width" else "cap"))
    }
  }
}

check_repetition <- function(batch, cap) {
  if (!is.numeric(batch) || length(batch) != 1 || batch < 2 || !is.numeric(cap) || length(cap) != 1 ||
        cap < batch) {
    stop("adaptive seeds: `batch` must be at least 2 and `cap` at least `batch`")
  }
}

#' The width each metric's paired interval must get below: the metric's own
#' `width` (in its unit, analysis/bench.yaml) or `width_relative` times the
#' baseline's mean (its absolute value) over the seeds compared.
#'
#' @param selectors A workload's metric selectors (read_bench_spec()).
#' @param baseline_means Named numeric: selector id -> the baseline's mean.
#' @param width_relative The suite's relative width (spec$repetition$width_relative).
adaptive_widths <- function(selectors, baseline_means, width_relative) {
  purrr::map_dbl(purrr::set_names(selectors, purrr::map_chr(selectors, metric_selector_id)), function(selector) {
    if (!is.null(selector$width)) return(as.numeric(selector$width))
    width_relative * abs(unname(baseline_means[metric_selector_id(selector)]))
  })
}

#' The adaptive rule applied to one workload's runs: for each discipline, at
#' each batch boundary (its first `batch`, 2 `batch`, ... seeds in seed order,
#' paired with the baseline's), whether every metric's paired difference has
#' an interval narrower than its width (adaptive_widths()). A discipline
#' stops at the first boundary where they all have ("width") or when it has
#' run `cap` seeds ("cap"); otherwise it runs another batch ("continue").
#' The baseline runs every batch (each discipline is paired with it
#' independently of the others): its status is "baseline".
#'
#' A run the backend judged unfaithful (an emulation run that broke its
#' timing invariants) has no values: its seed counts as run (towards the
#' batch boundaries and the cap) but pairs nothing, so a discipline whose
#' runs, or the baseline's, were invalid runs its next batch rather than
#' stop on fewer pairs than the rule asks for.
#'
#' @param values bench_values() of one workload (every valid run so far).
#' @param selectors The workload's metric selectors.
#' @param baseline The baseline's series label.
#' @param repetition list(batch, cap, width_relative).
#' @param ran Named list, series -> the seeds it ran, valid or not (NULL:
#'   those of `values`, every run valid).
#' @return One row per series: series, n (seeds run), n_valid (of them, the
#'   valid ones), status, n_stop (the seeds the rule stops at; NA while it
#'   continues), seeds (those run, space-separated), widest (the largest ratio
#'   of a metric's interval width to its width at the last boundary
#'   evaluated; below 1 when it stopped on width).
adaptive_status <- function(values, selectors, baseline, repetition, ran = NULL) {
  require_columns(values, c("series", "seed", "selector", "value"), "adaptive status")
  batch <- as.integer(repetition$batch)
  cap <- as.integer(repetition$cap)
  check_repetition(batch, cap)
  if (is.null(ran)) ran <- split(values$seed, values$series)
  if (!baseline %in% names(ran)) {
    stop(sprintf("adaptive status: the baseline `%s` must be among the series", baseline))
  }
  base <- dplyr::filter(values, .data$series == !!baseline)
  purrr::map_dfr(sort(names(ran)), function(label) {
    own <- dplyr::filter(values, .data$series == !!label)
    seeds <- sort(unique(as.integer(ran[[label]])))
    row <- function(status, n_stop, widest) {
      tibble::tibble(series = label, n = length(seeds), n_valid = length(unique(own$seed)), status = status,
                     n_stop = n_stop, seeds = paste(seeds, collapse = " "), widest = widest)
    }
    if (label == baseline) return(row("baseline", NA_integer_, NA_real_))
    widest <- NA_real_
    # the batch boundaries reached: every `batch` seeds, and the cap when it ends a shorter batch
    boundaries <- unique(c(if (length(seeds) >= batch) seq.int(batch, length(seeds), by = batch),
                           if (length(seeds) >= cap) length(seeds)))
    for (n in boundaries) {
      used <- seeds[seq_len(n)]
      own_used <- dplyr::filter(own, .data$seed %in% used)
      base_used <- dplyr::filter(base, .data$seed %in% used)
      if (nrow(own_used) == 0 || nrow(base_used) == 0) {  # every run of one side invalid: nothing pairs
        widest <- Inf
        next
      }
      pairs <- pair_by_seed(dplyr::bind_rows(own_used, base_used), label, baseline, by = "selector")
      baseline_means <- tapply(pairs$baseline, pairs$selector, mean)
      widths <- adaptive_widths(selectors, baseline_means, repetition$width_relative)
      narrow <- purrr::imap_lgl(widths, function(width, id) {
        interval_narrow(pairs$difference[pairs$selector == id], width)
      })
      spreads <- purrr::imap_dbl(widths, function(width, id) {
        interval <- t_interval(pairs$difference[pairs$selector == id])
        interval$ci_hi - interval$ci_lo
      })
      widest <- max(dplyr::case_when(is.na(spreads) ~ Inf, spreads == 0 ~ 0, TRUE ~ spreads / widths))
      if (all(narrow)) return(row("width", as.integer(n), widest))
    }
    if (length(seeds) >= cap) row("cap", as.integer(cap), widest) else row("continue", NA_integer_, widest)
  })
}

#' What optional stopping does to coverage, on synthetic normal noise: for
#' each width (in standard deviations of the paired differences), the share
#' of `trials` stopped intervals that cover the true difference, and the mean
#' seeds used, with the given batch and cap (adaptive_seeds()). Seeded, so
#' the page's table is the same at every render.
adaptive_coverage <- function(batch, cap, widths_sd = c(1, 1.5, 2, 3), trials = 400L, seed = 23L) {
  check_repetition(batch, cap)
  old <- if (exists(".Random.seed", envir = globalenv())) get(".Random.seed", envir = globalenv()) else NULL
  on.exit(if (!is.null(old)) assign(".Random.seed", old, envir = globalenv()))
  set.seed(seed)
  purrr::map_dfr(widths_sd, function(width) {
    runs <- purrr::map(seq_len(trials), function(i) {
      adaptive_seeds(function(seeds) stats::rnorm(length(seeds)), width = width, batch = batch, cap = cap)
    })
    tibble::tibble(
      width_sd = width, batch = as.integer(batch), cap = as.integer(cap), trials = as.integer(trials),
      coverage = mean(purrr::map_lgl(runs, function(r) r$interval$ci_lo <= 0 && 0 <= r$interval$ci_hi)),
      mean_seeds = mean(purrr::map_int(runs, function(r) length(r$seeds))),
      stopped_on_width = mean(purrr::map_chr(runs, "stopped") == "width")
    )
  })
}

#' The series of a benchmark workload that run a native baseline: one of
#' ns-3's own queue discs (a `kind` named ns3-*, docs/job.schema.json),
#' not a discipline of qlab's core.
#'
#' @param scenario The workload's resolved scenario (read_scenario_json() of
#'   its scenario.json).
#' @return A named character vector, series label -> kind, in the scenario's order.
native_baselines <- function(scenario) {
  kinds <- purrr::map_chr(scenario$series %||% list(), function(series) series$kind %||% NA_character_)
  kinds[!is.na(kinds) & startsWith(kinds, "ns3-")]
}

# ---- from the results ----------------------------------------------------------

#' The leaderboard of every workload with results, on each backend that ran it.
#'
#' @param results_dir Holds bench/<workload>/<backend>/ (collected tables).
#' @param spec read_bench_spec().
#' @return A list: `ranking`, `effects` (each with `backend`), `seeds` (the
#'   seeds each workload's disciplines ran, per backend).
analyze_bench <- function(results_dir, spec) {
  workloads <- names(spec$workloads)
  backends <- sort(unique(unlist(purrr::map(workloads, function(w) list_backends(results_dir, file.path("bench", w))))))
  boards <- purrr::map(backends, function(backend) {
    metrics <- list()
    ran <- list()
    series_ran <- list()
    for (workload in workloads) {
      scenario <- file.path("bench", workload)
      if (!backend %in% list_backends(results_dir, scenario)) next
      results <- read_scenario_results(results_dir, scenario, backend)
      ran[[workload]] <- seeds_run(results$runs)
      series_ran[[workload]] <- unique(results$runs$series)
      metrics[[workload]] <- compute_run_metrics(results, warmup_s = spec$warmup_s,
                                                 metrics = bench_workload_metrics(spec, workload))
    }
    board <- bench_leaderboard(metrics, spec, ran = series_ran)
    adaptive <- purrr::imap_dfr(metrics, function(m, workload) {
      scenario <- read_scenario_json(file.path(scenario_results_dir(results_dir, file.path("bench", workload), backend),
                                               "scenario.json"))
      repetition <- scenario_repetition(scenario, spec)
      adaptive_status(bench_values(m, spec$workloads[[workload]]$metrics), spec$workloads[[workload]]$metrics,
                      spec$baseline, repetition, ran = ran[[workload]]) |>
        dplyr::mutate(workload = workload, .before = 1) |>
        dplyr::mutate(batch = repetition$batch, cap = repetition$cap)
    })
    seeds <- purrr::imap_dfr(metrics, function(m, workload) {
      dplyr::distinct(m, .data$series, .data$seed) |>
        dplyr::group_by(.data$series) |>
        dplyr::summarise(seeds = paste(sort(.data$seed), collapse = " "), .groups = "drop") |>
        dplyr::mutate(workload = workload, .before = 1)
    })
    purrr::map(c(board, list(seeds = seeds, adaptive = adaptive)), function(df) dplyr::mutate(df, backend = backend))
  })
  if (length(boards) == 0) {
    stop(sprintf("%s: no results for any benchmark workload (looked for %s/bench/<workload>/<backend>/runs.csv.gz)",
                 results_dir, results_dir))
  }
  tables <- purrr::set_names(c("ranking", "effects", "seeds", "adaptive"))
  purrr::map(tables, function(table) purrr::map_dfr(boards, table))
}

#' The seeds each series ran, valid or not (adaptive_status()'s `ran`).
#'
#' @param runs A collection's runs table (series, seed).
#' @return Named list, series -> its seeds (sorted integers).
seeds_run <- function(runs) {
  require_columns(runs, c("series", "seed"), "seeds run")
  lapply(split(as.integer(runs$seed), runs$series), function(seeds) sort(unique(seeds)))
}

#' A workload's repetition as its scenario runs it (scenario.json): batches
#' of `repetition.batch` seeds up to its seeds (the cap); without
#' `repetition`, one batch of every seed (fixed seeds: the rule is evaluated
#' once, at the end). The width from the spec (analysis/bench.yaml).
scenario_repetition <- function(scenario, spec) {
  cap <- length(scenario$seeds)
  if (cap == 0) stop("benchmark: scenario.json lists no seeds")
  batch <- min(as.integer(scenario$repetition$batch %||% cap), cap)
  list(batch = max(batch, min(2L, cap)), cap = cap, width_relative = spec$repetition$width_relative)
}

#' Write the leaderboard tables (ranking.csv, effects.csv, seeds.csv, adaptive.csv, coverage.csv).
write_bench_analysis <- function(board, out_dir) {
  dir.create(out_dir, recursive = TRUE, showWarnings = FALSE)
  purrr::iwalk(board, function(table, name) {
    readr::write_csv(table, file.path(out_dir, paste0(name, ".csv")), na = "NA")
  })
  invisible(out_dir)
}

# ---- one discipline on the leaderboard (`qlab bench --discipline X`) ---------------

#' Per-run metrics of one workload for placing a discipline: its own runs and
#' the baseline's (`own`, the collection of `qlab bench`'s set), beside every
#' other discipline's of the suite's collection (`suite`, NULL when the suite
#' has not run): the leaderboard `bench_leaderboard()` ranks them together.
placement_metrics <- function(own, suite) {
  if (is.null(suite)) return(own)
  dplyr::bind_rows(own, dplyr::filter(suite, !.data$series %in% unique(own$series)))
}

#' A discipline's place on the leaderboard: per workload and metric, its rank
#' among the disciplines ranked, its mean with 95% interval, its paired
#' difference against the baseline with the Holm-adjusted p-value (Holm over
#' the whole board of the workload) and a verdict.
#'
#' @param board bench_leaderboard() of the workloads.
#' @param discipline The series to place.
bench_placement <- function(board, discipline) {
  if (!discipline %in% board$ranking$series) {
    stop(sprintf("benchmark: `%s` has no runs on the leaderboard (series: %s)", discipline,
                 paste(sort(unique(board$ranking$series)), collapse = ", ")))
  }
  ranked <- board$ranking |>
    dplyr::group_by(.data$workload, .data$selector) |>
    dplyr::mutate(of = dplyr::n()) |>
    dplyr::ungroup() |>
    dplyr::filter(.data$series == !!discipline)
  effects <- dplyr::filter(board$effects, .data$series == !!discipline) |>
    dplyr::select("workload", "selector", d_mean = "mean", d_lo = "ci_lo", d_hi = "ci_hi", "p_holm", "significant",
                  "improves")
  dplyr::left_join(ranked, effects, by = c("workload", "selector")) |>
    dplyr::mutate(verdict = dplyr::case_when(is.na(.data$d_mean) ~ "no paired runs",
                                             !.data$significant ~ "no significant difference",
                                             .data$improves ~ "better", TRUE ~ "worse")) |>
    dplyr::select("workload", "selector", "label", "better", "rank", "of", "n", "mean", "ci_lo", "ci_hi", "d_mean",
                  "d_lo", "d_hi", "p_holm", "verdict")
}

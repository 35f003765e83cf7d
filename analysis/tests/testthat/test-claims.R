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
  expect_match(verdict$ours, "ratio ncq/droptail at flows = 90: 1.15")
})

test_that("no gain does not reproduce a claimed 16% gain", {
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
    list(id = "q", figure = "f", claim = "c", paper_value = "v", comparison = list(kind = "qualitative", reason = "why")),
    list(id = "n", figure = "f", claim = "c", paper_value = "v", comparison = list(kind = "not_comparable", reason = "because"))
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
  expect_equal(outcome$verdict, "partly")
  expect_match(outcome$ours, "in 14/15 runs; largest 2.00 Mb/s")
  claim$comparison$over <- NULL # the mean per cell
  expect_equal(evaluate_claims(list(claim), high)$verdict, "reproduced")
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

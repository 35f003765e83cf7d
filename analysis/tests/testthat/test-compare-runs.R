# analysis/scripts/compare-runs.R (qlab diff): verdicts are paired claim by
# claim and backend by backend, whatever order each tree wrote them in.
source(file.path("..", "..", "scripts", "compare-runs.R"), local = TRUE)

write_claims <- function(root, rows) {
  dir.create(file.path(root, "analysis", "p"), recursive = TRUE)
  readr::write_csv(rows, file.path(root, "analysis", "p", "claims.csv"))
}

claims <- function(backend, verdict) {
  tibble::tibble(claim_id = c("c1", "c1", "c2"), backend = backend, verdict = verdict, ours = "x")
}

test_that("a claim's verdicts on two backends, written in another order, are not changes", {
  old <- withr::local_tempdir()
  new <- withr::local_tempdir()
  write_claims(old, claims(c("ns2", "ns3", "ns3"), c("not comparable", "reproduced", "partly")))
  write_claims(new, claims(c("ns3", "ns2", "ns3"), c("reproduced", "not comparable", "partly"))[c(1, 2, 3), ])
  out <- capture.output(verdict_changes(old, new))
  expect_true(any(grepl("3 claims in both, 0 changed, 0 only in the old tree, 0 only in the new", out)))
  expect_false(any(grepl("^\\| p \\|", out)))
})

test_that("a verdict that changed on one backend is reported with that backend", {
  old <- withr::local_tempdir()
  new <- withr::local_tempdir()
  write_claims(old, claims(c("ns2", "ns3", "ns3"), c("inconclusive", "reproduced", "partly")))
  write_claims(new, claims(c("ns3", "ns2", "ns3"), c("reproduced", "not reproduced", "partly")))
  out <- capture.output(verdict_changes(old, new))
  expect_true(any(grepl("3 claims in both, 1 changed", out)))
  expect_true(any(grepl("| p | c1 | ns2 | inconclusive | not reproduced | x |", out, fixed = TRUE)))
})

test_that("claims tables without a backend column still pair by claim", {
  old <- withr::local_tempdir()
  new <- withr::local_tempdir()
  write_claims(old, tibble::tibble(claim_id = "c1", verdict = "reproduced"))
  write_claims(new, tibble::tibble(claim_id = "c1", verdict = "partly"))
  out <- capture.output(verdict_changes(old, new))
  expect_true(any(grepl("| p | c1 | - | reproduced | partly |", out, fixed = TRUE)))
})

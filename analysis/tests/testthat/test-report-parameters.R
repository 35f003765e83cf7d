# parameters_vs_paper(): which parameter rows differ from the paper's values.

stated_example <- list(
  list(path = "topology.bottleneck_rate_bps", stated = 10000000, paper = "10Mbps"),
  list(path = "tcp.variant", stated = "NewReno", paper = "TCP NewReno"),
  list(path = "sweep.flows.values", range = list(10, 100), paper = "10 to 100"),
  list(path = "series.*.params.thresh", stated = 0.05, paper = "0.05"),
  list(path = "series.*.params.thresh", scenarios = list("p/thresh"), stated = list(0.01, 0.03, 0.05),
       paper = "0.01, 0.03, 0.05")
)

decide <- function(parameter, value, scenario = "p/flows") {
  parameters_vs_paper(tibble::tibble(parameter = parameter, value = value), stated_example, scenario)
}

test_that("a value equal to the paper's agrees, another differs", {
  out <- decide(c("topology.bottleneck_rate_bps", "topology.bottleneck_rate_bps"), c("10000000", "20000000"))
  expect_equal(out$differs, c(FALSE, TRUE))
  expect_equal(out$paper, c("10Mbps", "10Mbps"))
})

test_that("numbers compare as numbers and text ignores case", {
  out <- decide(c("topology.bottleneck_rate_bps", "tcp.variant", "tcp.variant"), c("1e7", "newreno", "Cubic"))
  expect_equal(out$differs, c(FALSE, FALSE, TRUE))
})

test_that("a parameter the paper does not state is not compared", {
  out <- decide(c("topology.bottleneck_delay_s", "series.ncq.params.limit_pkts"), c("0.01", "100"))
  expect_equal(out$differs, c(NA, NA))
  expect_equal(out$paper, c("", ""))
})

test_that("a range holds every listed value or the row differs", {
  out <- decide(rep("sweep.flows.values", 3), c("10, 20, 100", "10, 50, 120", "ten"))
  expect_equal(out$differs, c(FALSE, TRUE, TRUE))
})

test_that("a wildcard matches any name, dotted ones too, but no more of the path", {
  out <- decide(c("series.ncq.params.thresh", "series.ncq-0.01.params.thresh", "series.ncq.params.thresh_max",
                  "x.series.ncq.params.thresh"),
                c("0.05", "0.01", "0.05", "0.05"))
  expect_equal(out$differs, c(FALSE, TRUE, NA, NA))
})

test_that("an entry for the scenario wins over the paper-wide one", {
  out <- decide(rep("series.ncq-0.01.params.thresh", 2), c("0.01", "0.02"), scenario = "p/thresh")
  expect_equal(out$differs, c(FALSE, TRUE))
  expect_equal(out$paper[[1]], "0.01, 0.03, 0.05")
})

test_that("a swept row is not compared (its sweep row is)", {
  out <- decide("series.ncq.params.thresh", "swept: see sweep.thresh.values")
  expect_true(is.na(out$differs))
  expect_equal(out$paper, "0.05")
})

test_that("a malformed entry is refused", {
  path <- withr::local_tempfile(fileext = ".yaml")
  writeLines("p:\n  - path: a.b\n    stated: 1\n    range: [1, 2]\n", path)
  expect_error(read_stated_parameters(path, "p"), "one of stated or range")
  writeLines("p:\n  - path: a.b\n    stated: 1\n", path)
  expect_length(read_stated_parameters(path, "p"), 1)
  expect_equal(read_stated_parameters(path, "other"), list())
})

# reports/paper-parameters.yaml against the figure catalogue (not in the
# repository: QLAB_CATALOGUE, else ../shared/design/catalogue.yaml beside the checkout)
test_that("every stated value quotes the catalogue's parameters", {
  root <- normalizePath(file.path("..", "..", ".."))
  file <- file.path(root, "reports", "paper-parameters.yaml")
  catalogue_path <- Sys.getenv("QLAB_CATALOGUE", file.path(dirname(root), "shared", "design", "catalogue.yaml"))
  skip_if_not(file.exists(catalogue_path), "no figure catalogue here")
  catalogue <- yaml::read_yaml(catalogue_path)$papers
  papers <- yaml::read_yaml(file)
  expect_gt(length(papers), 0)
  for (paper in names(papers)) {
    items <- purrr::detect(catalogue, function(p) identical(p$key, paper))$items
    entries <- read_stated_parameters(file, paper)
    for (entry in entries) {
      where <- strsplit(entry$catalogue, " ", fixed = TRUE)[[1]]
      item <- purrr::detect(items, function(i) identical(i$id, where[[1]]))
      expect_false(is.null(item), label = entry$catalogue)
      value <- purrr::pluck(item$parameters, !!!strsplit(where[[2]], ".", fixed = TRUE)[[1]])
      text <- paste(unlist(value), collapse = ", ")
      expect_true(grepl(entry$paper, text, fixed = TRUE),
                  label = sprintf("%s: %s in %s", entry$path, entry$paper, text))
    }
  }
})

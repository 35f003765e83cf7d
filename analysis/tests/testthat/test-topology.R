# Topology diagrams from resolved plans (fixtures: example plans of qlab
# expand, a dumbbell with 50 flows, a parking lot with cross and web traffic,
# a general graph with two access ISPs).
fixture_graph <- function(name) read_graph_json(file.path("fixtures", paste0("graph-", name, ".json")))

host_box <- function(diagram, group, role) {
  box <- dplyr::filter(diagram$hosts, .data$group == .env$group, .data$role == .env$role)
  expect_equal(nrow(box), 1)
  box
}

# Whether two sets of boxes (centre x, y, width, height) overlap.
boxes_overlap <- function(a, b) {
  any(outer(seq_len(nrow(a)), seq_len(nrow(b)), Vectorize(function(i, j) {
    abs(a$x[i] - b$x[j]) < (a$w[i] + b$w[j]) / 2 && abs(a$y[i] - b$y[j]) < (a$h[i] + b$h[j]) / 2
  })))
}

expect_boxes_apart <- function(diagram) {
  hosts <- dplyr::transmute(diagram$hosts, x = .data$x, y = .data$y, w = .data$box_width_in, h = .data$box_height_in)
  routers <- dplyr::transmute(diagram$routers, x = .data$x, y = .data$y, w = diagram_text$router_in,
                              h = diagram_text$router_in)
  for (i in seq_len(nrow(hosts))) {
    expect_false(boxes_overlap(hosts[i, ], hosts[-i, ]), label = sprintf("host box %d overlaps another", i))
  }
  expect_false(boxes_overlap(hosts, routers), label = "a host box overlaps a router")
  expect_true(all(hosts$x - hosts$w / 2 >= diagram$xlim[1] & hosts$x + hosts$w / 2 <= diagram$xlim[2]))
}

test_that("a dumbbell: two routers, the bottleneck with the series' discipline at L, hosts per group", {
  diagram <- topology_diagram(fixture_graph("dumbbell"), series_kinds = list(droptail = "droptail", ncq = "ncq"))
  expect_equal(diagram$routers$id, c("L", "R"))
  expect_equal(diagram$routers$layer, c(0, 1))
  expect_equal(diagram$links$label, "bottleneck: 10 Mb/s, 10 ms")
  # the lossless queue at R is not drawn; the traced one at L names every series' kind
  expect_equal(diagram$queues$node, "L")
  expect_true(diagram$queues$traced)
  expect_equal(diagram$queues$label, "droptail | ncq, 100 pkts")
  congestive <- host_box(diagram, "congestive", "sending")
  expect_equal(c(congestive$n_hosts, congestive$n_flows), c(47L, 47L))
  expect_equal(congestive$router, "L")
  expect_equal(congestive$side, "left")
  expect_match(congestive$label, "47 hosts: congestive, sending\n47 flows (bulk)\naccess 10 Mb/s, 1 ms", fixed = TRUE)
  receivers <- host_box(diagram, "noncongestive", "receiving")
  expect_equal(c(receivers$n_hosts, receivers$side, receivers$router), c("3", "right", "R"))
  expect_equal(nrow(diagram$hosts), 4) # 100 hosts in four boxes
  expect_boxes_apart(diagram)
})

test_that("without the series, a traced queue is labelled with the plan's discipline", {
  diagram <- topology_diagram(fixture_graph("dumbbell"))
  expect_equal(diagram$queues$label, "ncq, 100 pkts")
})

test_that("a parking lot: a chain of routers in traffic order, a traced discipline per hop, cross traffic beside", {
  diagram <- topology_diagram(fixture_graph("parking-lot"))
  expect_equal(diagram$routers$layer[match(c("r0", "r1", "r2", "r3"), diagram$routers$id)], c(0, 1, 2, 3))
  expect_equal(diagram$links$id, c("hop1", "hop2", "hop3"))
  expect_equal(diagram$queues$node, c("r0", "r1", "r2"))
  expect_true(all(diagram$queues$traced))
  expect_equal(unique(diagram$queues$kind), "srd")
  # 201 web flows over 3 host pairs: one box per side
  web <- host_box(diagram, "web", "sending")
  expect_equal(c(web$n_hosts, web$n_flows), c(3L, 201L))
  # cross traffic enters at r1 and leaves at r2, off the chain's ends
  expect_equal(host_box(diagram, "cross1", "sending")$router, "r1")
  expect_equal(host_box(diagram, "cross1", "sending")$side, "above")
  expect_equal(host_box(diagram, "cross1", "receiving")$side, "below")
  expect_match(host_box(diagram, "voice", "sending")$label, "2 flows (voip)", fixed = TRUE)
  expect_boxes_apart(diagram)
})

test_that("a general graph: two access routers feed the core, a fixed discipline is not the series'", {
  diagram <- topology_diagram(fixture_graph("general"), series_kinds = list(ncq = "ncq", droptail = "droptail"))
  layers <- stats::setNames(diagram$routers$layer, diagram$routers$id)
  expect_equal(layers[c("a1", "a2", "core", "b1")], c(a1 = 0, a2 = 0, core = 1, b1 = 2))
  traced <- dplyr::filter(diagram$queues, .data$traced)
  expect_equal(sort(paste(traced$link, traced$node, sep = ":")), c("a1-core:a1", "exit:core"))
  fixed <- dplyr::filter(diagram$queues, !.data$traced)
  expect_equal(fixed$label, "droptail, 50 pkts") # an ISP's own queue, whatever the series
  expect_equal(diagram$links$label[diagram$links$id == "exit"], "exit: 20 Mb/s, 10 ms")
  expect_match(host_box(diagram, "isp2", "sending")$label, "access 100 Mb/s, 50 ms", fixed = TRUE)
  expect_equal(host_box(diagram, "isp1", "receiving")$router, "b1")
  expect_boxes_apart(diagram)
  plot <- plot_topology(diagram)
  expect_s3_class(plot, "ggplot")
  expect_silent(ggplot2::ggplot_build(plot))
})

test_that("a route that loops or is missing is reported", {
  plan <- fixture_graph("dumbbell")
  plan$routes <- list()
  expect_error(topology_diagram(plan), "router L has no route to 10.2.0.1")
  plan <- fixture_graph("parking-lot")
  back <- purrr::detect_index(plan$routes, function(r) r$node == "r1" && r$dst == "10.4.0.0/16")
  plan$routes[[back]]$link <- "hop1" # r1 sends r3's traffic back to r0
  expect_error(topology_diagram(plan), "loop")
})

test_that("a graph file without flows is refused", {
  path <- tempfile(fileext = ".json")
  jsonlite::write_json(list(nodes = list(), links = list(), routes = list()), path)
  expect_error(read_graph_json(path), "must have `flows`")
})

test_that("access links that differ within a group are given as a range", {
  expect_equal(describe_access(c(1e7, 1e8, 1e7), c(1e6, 1e6, 5e7)), "access 10 Mb/s to 100 Mb/s, 1 ms to 50 ms")
})

test_that("with incremental deployment, a traced queue names the series running each kind at it", {
  diagram <- topology_diagram(fixture_graph("general"), series_kinds = list(dt = "droptail", n1 = "ncq"),
                              series_routers = list(dt = NULL, n1 = list("a1")), undeployed_kind = "droptail")
  traced <- dplyr::filter(diagram$queues, .data$traced)
  labels <- stats::setNames(traced$label, paste(traced$link, traced$node, sep = ":"))
  # n1 deploys NCQ at a1 only: at core it runs the undeployed DropTail, as dt does everywhere
  expect_match(labels[["a1-core:a1"]], "^droptail \\(dt\\) \\| ncq \\(n1\\)")
  expect_match(labels[["exit:core"]], "^droptail \\(dt, n1\\)")
  # without routers listed, every series' kind, as before
  plain <- topology_diagram(fixture_graph("general"), series_kinds = list(dt = "droptail", n1 = "ncq"),
                            series_routers = list(dt = NULL, n1 = NULL))
  expect_match(dplyr::filter(plain$queues, .data$traced)$label[[1]], "^droptail \\| ncq")
})

test_that("a wireless_dumbbell: the sensors hang off their gateway by radio, not by links", {
  # scenarios/ncq-journal/sensors.yaml, test profile: 10 FTP flows, 2 of the 25 sensors report
  diagram <- topology_diagram(fixture_graph("wireless"), series_kinds = list(droptail = "droptail", ncq = "ncq"))
  expect_equal(diagram$routers$id, c("L", "R"))
  expect_equal(diagram$links$label, "bottleneck: 10 Mb/s, 10 ms")
  sensors <- host_box(diagram, "sensors", "sending")
  expect_equal(c(sensors$n_hosts, sensors$n_flows), c(2L, 2L))
  expect_equal(sensors$router, "L")
  expect_match(sensors$label, "radio to L: 802.11b, AODV, two ray ground", fixed = TRUE)
  idle <- host_box(diagram, "no flow", "idle")
  expect_equal(idle$n_hosts, 23L)
  collectors <- host_box(diagram, "sensors", "receiving")
  expect_equal(collectors$router, "R")
  expect_match(collectors$label, "access 10 Mb/s, 1 ms", fixed = TRUE)
  expect_boxes_apart(diagram)
})

test_that("describe_access names the radio of wireless hosts", {
  expect_equal(describe_access(c(1e7, 1e7), c(1e6, 1e6)), "access 10 Mb/s, 1 ms")
  expect_equal(describe_access(c(NA, NA), c(NA, NA), c("radio to L: x", "radio to L: x")), "radio to L: x")
})

# Topology diagrams (a paper's "simulation topology" figure, item kind
# `diagram`) drawn from the graph a run was built from: the resolved plan the
# workflow writes as results/<paper>/<name>/<backend>/graph.json
# (docs/job.schema.json, docs/jobs.md). Routers and router links are drawn
# one by one, with each link's rate and delay and the discipline at each end;
# hosts are summarised per traffic group and router ("47 hosts: congestive"),
# since a run may have thousands.

#' Read a run's graph (a resolved plan: nodes, links, routes, flows).
read_graph_json <- function(path) {
  if (!file.exists(path)) {
    stop(sprintf("%s: file not found", path))
  }
  plan <- jsonlite::read_json(path, simplifyVector = FALSE)
  missing <- setdiff(c("nodes", "links", "routes", "flows"), names(plan))
  if (length(missing) > 0) {
    stop(sprintf("%s: a graph must have %s (a resolved plan, docs/job.schema.json)", path,
                 paste0("`", missing, "`", collapse = ", ")))
  }
  plan
}

#' An IPv4 address as a number.
ipv4_number <- function(address) {
  parts <- as.numeric(strsplit(address, ".", fixed = TRUE)[[1]])
  if (length(parts) != 4 || any(is.na(parts)) || any(parts < 0 | parts > 255)) {
    stop(sprintf("graph: '%s' must be an IPv4 address (four numbers 0-255)", address))
  }
  sum(parts * 256^(3:0))
}

#' Whether `address` lies in `prefix` ("10.2.0.0/16"), and the prefix length.
prefix_match <- function(address, prefix) {
  parts <- strsplit(prefix, "/", fixed = TRUE)[[1]]
  length_bits <- as.integer(parts[[2]])
  block <- 2^(32 - length_bits)
  list(match = floor(ipv4_number(address) / block) == floor(ipv4_number(parts[[1]]) / block),
       length_bits = length_bits)
}

#' The routers a packet from host `src` to host `dst` crosses, in order,
#' following the plan's routes (longest prefix wins) from `src`'s router.
router_path <- function(plan, tables, src, dst) {
  here <- tables$host_router[[src]]
  target <- tables$host_router[[dst]]
  address <- tables$address[[dst]]
  path <- here
  while (!identical(here, target)) {
    candidates <- purrr::keep(plan$routes, function(route) identical(route$node, here))
    matches <- purrr::map(candidates, function(route) prefix_match(address, route$dst))
    hits <- which(purrr::map_lgl(matches, "match"))
    if (length(hits) == 0) {
      stop(sprintf("graph: router %s has no route to %s (host %s)", here, address, dst))
    }
    best <- hits[which.max(purrr::map_int(matches[hits], "length_bits"))]
    link <- tables$links[[candidates[[best]]$link]]
    here <- if (identical(link$a, here)) link$b else link$a
    if (here %in% path || length(path) > length(tables$routers)) {
      stop(sprintf("graph: the routes from %s to %s loop (%s)", src, dst, paste(c(path, here), collapse = " -> ")))
    }
    path <- c(path, here)
  }
  path
}

#' Each router's layer (left to right): the longest chain of routers the
#' traffic crosses before it. Edges that would close a cycle (traffic in
#' both directions) are ignored; routers no flow crosses sit one layer right
#' of a neighbour.
router_layers <- function(routers, edges, router_links) {
  kept <- edges[0, ]
  reaches <- function(from, to) {
    seen <- from
    frontier <- from
    while (length(frontier) > 0) {
      frontier <- setdiff(kept$to[kept$from %in% frontier], seen)
      seen <- c(seen, frontier)
    }
    to %in% seen
  }
  for (i in seq_len(nrow(edges))) {
    if (!reaches(edges$to[[i]], edges$from[[i]])) kept <- dplyr::bind_rows(kept, edges[i, ])
  }
  layer <- stats::setNames(rep(NA_integer_, length(routers)), routers)
  on_path <- unique(c(kept$from, kept$to))
  layer[on_path] <- 0L
  for (step in seq_along(routers)) {
    for (i in seq_len(nrow(kept))) {
      layer[[kept$to[[i]]]] <- max(layer[[kept$to[[i]]]], layer[[kept$from[[i]]]] + 1L)
    }
  }
  # routers off every path: next to a placed neighbour, else at layer 0
  for (step in seq_along(routers)) {
    for (router in routers[is.na(layer)]) {
      neighbours <- c(router_links$b[router_links$a == router], router_links$a[router_links$b == router])
      placed <- layer[neighbours][!is.na(layer[neighbours])]
      if (length(placed) > 0) layer[[router]] <- max(placed) + 1L
    }
  }
  layer[is.na(layer)] <- 0L
  layer
}

# Text metrics of the drawing, in inches: the diagram is laid out in inches
# so that its labels fit whatever the graph, and the report draws it at its
# own size (`diagram$size_in`). Sizes are ggplot text sizes (mm).
diagram_text <- list(
  size = 2.8,          # host boxes, link and queue labels
  char_in = 0.064,     # width of a character at that size (sans)
  line_in = 0.135,     # line height
  pad_in = 0.1,        # a label box's padding, both sides together
  router_in = 0.32     # a router's square
)

#' The width and height (inches) of a label box holding `text`.
label_box_in <- function(text) {
  lines <- strsplit(text, "\n")
  list(width = purrr::map_dbl(lines, function(l) max(nchar(l))) * diagram_text$char_in + diagram_text$pad_in,
       height = lengths(lines) * diagram_text$line_in + diagram_text$pad_in)
}

#' The data of a topology diagram, laid out in inches.
#'
#' @param plan A run's graph (`read_graph_json()`).
#' @param series_kinds The discipline kind of each series of the scenario (the
#'   traced queues run the series' discipline, so a diagram of one run's plan
#'   names them all); NULL: the plan's own.
#' @param series_routers For a graph whose series deploy their discipline at
#'   some routers only (incremental deployment): series -> its `routers`
#'   (NULL: every router); the other routers run `undeployed_kind` there. A
#'   traced queue is then labelled with the series running each kind at it.
#' @param undeployed_kind The topology's `undeployed` discipline kind.
#' @return A list: `routers` (id, layer, x, y), `links` (router links: id, a,
#'   b, rate_bps, delay_ns, label, coordinates), `queues` (the disciplines on
#'   router links, by the end that sends into them: link, node, kind, traced,
#'   label, coordinates), `hosts` (one box per traffic group, role and router:
#'   group, role, router, n_hosts, n_flows, apps, access, side, label,
#'   coordinates and box size), `size_in` (width, height).
topology_diagram <- function(plan, series_kinds = NULL, series_routers = NULL, undeployed_kind = NULL) {
  nodes <- purrr::map_dfr(plan$nodes, function(n) tibble::tibble(id = n$id, kind = n$kind, address = n$address))
  bad <- setdiff(nodes$kind, c("host", "router"))
  if (length(bad) > 0) stop(sprintf("graph: node kinds must be host or router (found %s)", paste(bad, collapse = ", ")))
  routers <- nodes$id[nodes$kind == "router"]
  if (length(routers) == 0) stop("graph: at least one router must be given")
  is_router <- function(id) id %in% routers
  between_routers <- purrr::keep(plan$links, function(l) is_router(l$a) && is_router(l$b))
  router_links <- purrr::map_dfr(between_routers, function(l) {
    tibble::tibble(id = l$id, a = l$a, b = l$b, rate_bps = as.numeric(l$rate_bps), delay_ns = as.numeric(l$delay_ns))
  })
  if (nrow(router_links) == 0) {
    router_links <- tibble::tibble(id = character(), a = character(), b = character(), rate_bps = numeric(),
                                   delay_ns = numeric())
  }
  access <- purrr::map_dfr(purrr::discard(plan$links, function(l) is_router(l$a) && is_router(l$b)), function(l) {
    host <- if (is_router(l$a)) l$b else l$a
    router <- if (is_router(l$a)) l$a else l$b
    if (is_router(host) || !is_router(router)) {
      stop(sprintf("graph: link %s must join a host to a router, or two routers", l$id))
    }
    tibble::tibble(host = host, router = router, rate_bps = as.numeric(l$rate_bps),
                   delay_ns = as.numeric(l$delay_ns), medium = NA_character_)
  })
  # wireless hosts (docs/jobs.md, wireless): no link, their gateway's radio instead
  if (!is.null(plan$wireless)) {
    w <- plan$wireless
    access <- dplyr::bind_rows(access, tibble::tibble(
      host = unlist(w$nodes), router = w$gateway, rate_bps = NA_real_, delay_ns = NA_real_,
      medium = sprintf("radio to %s: %s, %s, %s", w$gateway, w$standard, toupper(w$routing),
                       gsub("_", " ", w$propagation))))
  }
  tables <- list(
    host_router = stats::setNames(as.list(access$router), access$host),
    address = stats::setNames(as.list(nodes$address), nodes$id),
    links = stats::setNames(plan$links, purrr::map_chr(plan$links, "id")),
    routers = routers
  )
  flows <- purrr::map_dfr(plan$flows, function(f) {
    tibble::tibble(flow_id = as.integer(f$flow_id), app = f$app, group = f$group, src = f$src, dst = f$dst)
  })
  # which way the traffic crosses the routers: the diagram's left to right
  paths <- dplyr::distinct(flows, .data$src, .data$dst)
  edges <- purrr::map_dfr(seq_len(nrow(paths)), function(i) {
    path <- router_path(plan, tables, paths$src[[i]], paths$dst[[i]])
    if (length(path) < 2) return(NULL)
    tibble::tibble(from = utils::head(path, -1), to = path[-1])
  })
  edges <- if (nrow(edges) == 0) tibble::tibble(from = character(), to = character()) else dplyr::distinct(edges)
  layer <- router_layers(routers, edges, router_links)

  router_links$label <- sprintf("%s: %s, %s", router_links$id, purrr::map_chr(router_links$rate_bps, format_rate),
                                purrr::map_chr(router_links$delay_ns / 1e9, format_delay))
  queues <- describe_link_queues(between_routers, unlist(plan$trace$queues %||% list()), series_kinds,
                                 series_routers, undeployed_kind)
  hosts <- summarise_host_groups(flows, access, layer)
  hosts$box_width_in <- label_box_in(hosts$label)$width
  hosts$box_height_in <- label_box_in(hosts$label)$height

  # layers far enough apart for a link's label and its queues' labels; rows
  # far enough apart for the host boxes stacked beside a router
  gap <- 0.25
  widest_between <- max(c(label_box_in(router_links$label)$width, 2 * label_box_in(queues$label)$width, 1.6)) + gap
  layer_in <- widest_between + diagram_text$router_in
  stacked <- dplyr::filter(hosts, .data$side %in% c("left", "right")) |>
    dplyr::group_by(.data$router, .data$side) |>
    dplyr::summarise(height = sum(.data$box_height_in + gap), .groups = "drop")
  above_below <- dplyr::filter(hosts, .data$side %in% c("above", "below")) |>
    dplyr::group_by(.data$router, .data$side) |>
    dplyr::summarise(height = sum(.data$box_height_in + gap), .groups = "drop")
  row_in <- max(c(stacked$height, 2 * (above_below$height + 0.6), 1.6))
  router_table <- tibble::tibble(id = routers, layer = unname(layer[routers])) |>
    dplyr::group_by(.data$layer) |>
    dplyr::mutate(row = (dplyr::n() + 1) / 2 - dplyr::row_number()) |>
    dplyr::ungroup() |>
    dplyr::mutate(x = layer_in * .data$layer, y = row_in * .data$row)
  at <- function(id, column) router_table[[column]][match(id, router_table$id)]

  router_links <- dplyr::mutate(router_links, x = at(.data$a, "x"), y = at(.data$a, "y"),
                                xend = at(.data$b, "x"), yend = at(.data$b, "y"))
  # a link with a drawn queue at both ends has the second queue's label
  # below it: its own label goes under that one
  both_ends <- purrr::map_lgl(router_links$id, function(id) sum(queues$link == id) == 2)
  below <- perpendicular(router_links$x, router_links$y, router_links$xend, router_links$yend,
                         ifelse(both_ends, -0.45, -0.22))
  router_links$label_x <- (router_links$x + router_links$xend) / 2 + below$dx
  router_links$label_y <- (router_links$y + router_links$yend) / 2 + below$dy
  # a queue's diamond a fifth of the way from the end that sends into it, its label beside
  queues <- dplyr::mutate(queues,
    x = at(.data$node, "x") + 0.22 * (at(.data$other, "x") - at(.data$node, "x")),
    y = at(.data$node, "y") + 0.22 * (at(.data$other, "y") - at(.data$node, "y"))
  )
  beside <- perpendicular(at(queues$node, "x"), at(queues$node, "y"),
                          at(queues$other, "x"), at(queues$other, "y"), 0.22)
  queues$label_x <- queues$x + beside$dx
  queues$label_y <- queues$y + beside$dy
  hosts <- place_host_boxes(hosts, router_table, gap)

  xs <- c(router_table$x + c(-1, 1) * diagram_text$router_in, hosts$x - hosts$box_width_in / 2,
          hosts$x + hosts$box_width_in / 2, router_links$label_x)
  ys <- c(router_table$y + c(-1, 1) * diagram_text$router_in, hosts$y - hosts$box_height_in / 2,
          hosts$y + hosts$box_height_in / 2, router_links$label_y - 0.15, queues$label_y + 0.15)
  margin <- 0.1
  list(routers = router_table, links = router_links, queues = queues, hosts = hosts,
       xlim = range(xs) + c(-margin, margin), ylim = range(ys) + c(-margin, margin),
       size_in = c(width = diff(range(xs)) + 2 * margin, height = diff(range(ys)) + 2 * margin))
}

#' The disciplines on the router links (lossless queues are not drawn): which
#' node sends into each, whether the run traces it, and its label. A traced
#' queue runs the series' discipline, so with `series_kinds` it is labelled
#' with every series' kind, or, where series deploy at some routers only
#' (`series_routers`), with each kind and the series that run it there:
#' "droptail (ncq0) | ncq (ncq3, ncq4)".
describe_link_queues <- function(links, traced, series_kinds, series_routers = NULL, undeployed_kind = NULL) {
  queues <- purrr::map_dfr(links, function(l) {
    purrr::imap_dfr(l$queues, function(queue, node) {
      if (identical(queue$kind, "lossless")) return(NULL)
      tibble::tibble(link = l$id, node = node, other = if (identical(node, l$a)) l$b else l$a, kind = queue$kind,
                     limit_pkts = as.numeric(queue$params$limit_pkts %||% NA),
                     traced = paste0(l$id, ":", node) %in% traced)
    })
  })
  if (nrow(queues) == 0) {
    return(tibble::tibble(link = character(), node = character(), other = character(), kind = character(),
                          limit_pkts = numeric(), traced = logical(), label = character()))
  }
  kinds <- if (length(series_kinds) > 0) paste(unique(unlist(series_kinds)), collapse = " | ") else queues$kind
  if (length(series_kinds) > 0 && !all(purrr::map_lgl(series_routers %||% list(), is.null))) {
    kinds <- purrr::map_chr(queues$node, function(node) {
      at_node <- purrr::imap_chr(series_kinds, function(kind, series) {
        routers <- series_routers[[series]]
        if (is.null(routers) || node %in% unlist(routers)) kind else undeployed_kind %||% "?"
      })
      by_kind <- split(names(at_node), unname(at_node))
      by_kind <- by_kind[order(purrr::map_chr(by_kind, function(s) min(s)))] # in the series' order
      paste(sprintf("%s (%s)", names(by_kind), purrr::map_chr(by_kind, function(s) paste(sort(s), collapse = ", "))),
            collapse = " | ")
    })
  }
  dplyr::mutate(queues, label = paste0(
    dplyr::if_else(.data$traced, kinds, .data$kind),
    dplyr::if_else(is.na(.data$limit_pkts), "", sprintf(", %g pkts", .data$limit_pkts))
  ))
}

#' A vector `distance` long at right angles to each segment, to the left of
#' the direction from (x, y) to (xend, yend) (up for a link drawn left to
#' right); straight up for a segment of no length.
perpendicular <- function(x, y, xend, yend, distance) {
  length <- sqrt((xend - x)^2 + (yend - y)^2)
  length[length == 0] <- NA
  list(dx = dplyr::coalesce(-(yend - y) / length, 0) * distance,
       dy = dplyr::coalesce((xend - x) / length, 1) * distance)
}

#' Hosts per traffic group, role (sending, receiving) and router, and the
#' side of the router their box goes: senders at the leftmost layer to its
#' left, receivers at the rightmost to its right, other senders above and
#' receivers below. Hosts of no flow are one box per router ("idle").
summarise_host_groups <- function(flows, access, layer) {
  ends <- dplyr::bind_rows(
    dplyr::transmute(flows, .data$group, .data$flow_id, .data$app, host = .data$src, role = "sending"),
    dplyr::transmute(flows, .data$group, .data$flow_id, .data$app, host = .data$dst, role = "receiving")
  ) |>
    dplyr::left_join(access, by = "host")
  idle <- dplyr::filter(access, !.data$host %in% ends$host) |>
    dplyr::mutate(group = "no flow", role = "idle", flow_id = NA_integer_, app = NA_character_)
  hosts <- dplyr::bind_rows(ends, idle) |>
    dplyr::group_by(.data$group, .data$role, .data$router) |>
    dplyr::summarise(
      n_hosts = dplyr::n_distinct(.data$host),
      n_flows = dplyr::n_distinct(.data$flow_id, na.rm = TRUE),
      apps = paste(sort(unique(stats::na.omit(.data$app))), collapse = ", "),
      access = describe_access(.data$rate_bps, .data$delay_ns, .data$medium),
      .groups = "drop"
    ) |>
    dplyr::arrange(match(.data$group, unique(c(flows$group, "no flow"))), dplyr::desc(.data$role))
  router_layer <- unname(layer[hosts$router])
  hosts$side <- dplyr::case_when(
    hosts$role %in% c("sending", "idle") & router_layer == 0 ~ "left",
    hosts$role == "receiving" & router_layer == max(layer) ~ "right",
    hosts$role == "receiving" ~ "below",
    TRUE ~ "above"
  )
  hosts$label <- paste0(
    sprintf("%d host%s: %s, %s", hosts$n_hosts, ifelse(hosts$n_hosts == 1, "", "s"), hosts$group, hosts$role),
    ifelse(hosts$n_flows > 0, sprintf("\n%d flow%s (%s)", hosts$n_flows, ifelse(hosts$n_flows == 1, "", "s"),
                                      hosts$apps), ""),
    "\n", hosts$access
  )
  hosts
}

#' Positions of the host boxes (inches): stacked beside their router, on
#' their side, `gap` apart.
place_host_boxes <- function(hosts, router_table, gap) {
  hosts$router_x <- router_table$x[match(hosts$router, router_table$id)]
  hosts$router_y <- router_table$y[match(hosts$router, router_table$id)]
  clear <- diagram_text$router_in / 2 + gap
  hosts |>
    dplyr::group_by(.data$router, .data$side) |>
    dplyr::mutate(
      # top of each box within a left/right stack centred on the router
      stack_top = sum(.data$box_height_in + gap) / 2 - (cumsum(.data$box_height_in + gap) - .data$box_height_in - gap),
      from_router = cumsum(.data$box_height_in + gap) - .data$box_height_in / 2 - gap + 0.45
    ) |>
    dplyr::ungroup() |>
    dplyr::mutate(
      x = .data$router_x + dplyr::case_when(
        .data$side == "left" ~ -(clear + .data$box_width_in / 2),
        .data$side == "right" ~ clear + .data$box_width_in / 2,
        TRUE ~ 0
      ),
      y = .data$router_y + dplyr::case_when(
        .data$side %in% c("left", "right") ~ .data$stack_top - .data$box_height_in / 2 - gap / 2,
        .data$side == "above" ~ .data$from_router,
        TRUE ~ -.data$from_router
      )
    ) |>
    dplyr::select(-"stack_top", -"from_router")
}

#' "access 10 Mb/s, 1 ms", or the range when a group's access links differ.
describe_access <- function(rate_bps, delay_ns, medium = NA_character_) {
  medium <- unique(stats::na.omit(medium))
  if (length(medium) > 0) return(paste(medium, collapse = "; ")) # wireless hosts: their radio
  part <- function(values, format) {
    values <- sort(unique(values))
    if (length(values) == 1) format(values) else paste(format(min(values)), "to", format(max(values)))
  }
  sprintf("access %s, %s", part(rate_bps, format_rate), part(delay_ns / 1e9, format_delay))
}

#' Draw a topology diagram (`topology_diagram()`) at its size (`size_in`):
#' routers as squares, router links with their rate and delay, each
#' discipline as a diamond on its link next to the node that sends into it
#' (filled: a queue the run traces), host groups as boxes.
plot_topology <- function(diagram) {
  hosts <- diagram$hosts
  queues <- diagram$queues
  text_size <- diagram_text$size
  ggplot2::ggplot() +
    ggplot2::geom_segment(data = hosts, ggplot2::aes(x = .data$router_x, y = .data$router_y, xend = .data$x,
                                                     yend = .data$y),
                          colour = "grey55", linewidth = 0.4, linetype = "dashed") +
    ggplot2::geom_segment(data = diagram$links, ggplot2::aes(x = .data$x, y = .data$y, xend = .data$xend,
                                                             yend = .data$yend),
                          colour = "grey25", linewidth = 1.8) +
    ggplot2::geom_point(data = queues, ggplot2::aes(x = .data$x, y = .data$y, fill = .data$traced),
                        shape = 23, size = 3.6, colour = "black", show.legend = FALSE) +
    ggplot2::scale_fill_manual(values = c(`TRUE` = "#d95f02", `FALSE` = "white")) +
    ggplot2::geom_text(data = queues, ggplot2::aes(x = .data$label_x, y = .data$label_y, label = .data$label),
                       size = text_size, colour = "#a04000") +
    ggplot2::geom_text(data = diagram$links, ggplot2::aes(x = .data$label_x, y = .data$label_y, label = .data$label),
                       size = text_size) +
    ggplot2::geom_point(data = diagram$routers, ggplot2::aes(x = .data$x, y = .data$y), shape = 22, size = 9,
                        fill = "grey85") +
    ggplot2::geom_text(data = diagram$routers, ggplot2::aes(x = .data$x, y = .data$y, label = .data$id),
                       size = text_size) +
    ggplot2::geom_label(data = hosts, ggplot2::aes(x = .data$x, y = .data$y, label = .data$label),
                        size = text_size, lineheight = 0.95, label.padding = ggplot2::unit(0.05, "in")) +
    ggplot2::coord_fixed(xlim = diagram$xlim, ylim = diagram$ylim, expand = FALSE) +
    ggplot2::theme_void()
}

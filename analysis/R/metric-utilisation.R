# Link utilisation by class or traffic group (srd Figs. 4(b), 6(a), 7(a),
# 8(a): "average utilization of class R", "of the long-lived flows"; Section
# 4: "We average the utilization ... over the whole experiment with
# exclusion of its first five seconds"): the IP bytes a traced queue sent
# for a class's (or a group's) flows from the warm-up to the run's end, over
# what the link could carry in that time.
#
#   utilisation = 8 sum(len_bytes of the dequeues at or after warmup_s) /
#                 (capacity_bps (sim_end_s - warmup_s))
#
# A packet's class and group are its flow's (flows table, by flow_id): with
# one band for every class (DropTail) the class is still the flow's.
# Packets of no flow (flow_id NA) count only in the total.

#' Utilisation of each traced queue of each run by each class, each traffic
#' group and in all.
#'
#' @param packets Collected packets table (`by`, `time_s`, `queue`, `event`,
#'   `len_bytes`, `flow_id`).
#' @param flows Per-flow table (`by`, `flow_id`, `cls`, `group`).
#' @param runs One row per run: `by`, `capacity_bps` (the traced link's
#'   rate) and `sim_end_s` (the run's end).
#' @param by Columns naming a run.
#' @param warmup_s Dequeues before it are left out.
#' @return `by`, `queue`, `cls`, `group`, `utilisation`: per class (`group`
#'   NA), per group (`cls` NA) and in all (both NA); 0 for a class or group
#'   of the run that sent nothing through the queue after the warm-up.
summarise_link_utilisation <- function(packets, flows, runs, by, warmup_s = 0) {
  require_columns(packets, c(by, "time_s", "queue", "event", "len_bytes", "flow_id"), "link utilisation")
  require_columns(flows, c(by, "flow_id", "cls", "group"), "link utilisation flows")
  require_columns(runs, c(by, "capacity_bps", "sim_end_s"), "link utilisation runs")
  if (any(is.na(runs$capacity_bps) | runs$capacity_bps <= 0)) {
    stop("link utilisation: capacity_bps must be > 0 for every run")
  }
  if (any(runs$sim_end_s <= warmup_s)) {
    stop(sprintf("link utilisation: every run must end after the warm-up (%g s)", warmup_s))
  }
  sent <- packets |>
    dplyr::filter(.data$event == "deq", .data$time_s >= warmup_s) |>
    dplyr::select(dplyr::all_of(c(by, "queue", "flow_id", "len_bytes"))) |>
    dplyr::left_join(dplyr::select(flows, dplyr::all_of(c(by, "flow_id", "cls", "group"))),
                     by = c(by, "flow_id"))
  queues <- dplyr::distinct(packets, dplyr::across(dplyr::all_of(c(by, "queue"))))
  capacity <- dplyr::select(runs, dplyr::all_of(c(by, "capacity_bps", "sim_end_s")))
  per <- function(key) {
    parts <- dplyr::distinct(flows, dplyr::across(dplyr::all_of(c(by, key))))
    bytes <- sent |>
      dplyr::filter(!is.na(.data[[key]])) |>
      dplyr::group_by(dplyr::across(dplyr::all_of(c(by, "queue", key)))) |>
      dplyr::summarise(bytes = sum(.data$len_bytes), .groups = "drop")
    dplyr::inner_join(queues, parts, by = by, relationship = "many-to-many") |>
      dplyr::left_join(bytes, by = c(by, "queue", key)) |>
      dplyr::mutate(bytes = dplyr::coalesce(.data$bytes, 0))
  }
  total <- sent |>
    dplyr::group_by(dplyr::across(dplyr::all_of(c(by, "queue")))) |>
    dplyr::summarise(bytes = sum(.data$len_bytes), .groups = "drop")
  total <- dplyr::left_join(queues, total, by = c(by, "queue")) |>
    dplyr::mutate(bytes = dplyr::coalesce(.data$bytes, 0))
  dplyr::bind_rows(
    dplyr::mutate(per("cls"), group = NA_character_),
    dplyr::mutate(per("group"), cls = NA_integer_),
    dplyr::mutate(total, cls = NA_integer_, group = NA_character_)
  ) |>
    dplyr::inner_join(capacity, by = by) |>
    dplyr::mutate(utilisation = 8 * .data$bytes / (.data$capacity_bps * (.data$sim_end_s - warmup_s))) |>
    dplyr::select(dplyr::all_of(c(by, "queue", "cls", "group", "utilisation")))
}

#' The rate of the link a dumbbell's traced queue serves, per run: the
#' scenario's bottleneck_rate_bps, or the sweep variable that sets it (its
#' `path` or one of its `also` paths). NULL for other topologies.
#'
#' @param runs Runs table (`by` and the sweep columns).
#' @param scenario The resolved scenario (scenario.json).
#' @return `runs` with `capacity_bps`, or NULL.
add_bottleneck_capacity <- function(runs, scenario) {
  if (!identical(scenario$topology$kind, "dumbbell")) return(NULL)
  target <- "topology.bottleneck_rate_bps"
  swept <- purrr::keep(names(scenario$sweep %||% list()), function(name) {
    target %in% c(scenario$sweep[[name]]$path, unlist(scenario$sweep[[name]]$also))
  })
  # or set per swept value by a sweep's `with`
  alongside <- purrr::keep(names(scenario$sweep %||% list()), function(name) {
    target %in% names(scenario$sweep[[name]]$with)
  })
  capacity <- if (length(swept) == 1) {
    as.numeric(runs[[swept]])
  } else if (length(alongside) == 1) {
    sw <- scenario$sweep[[alongside]]
    as.numeric(unlist(sw$with[[target]]))[match(as.character(runs[[alongside]]), as.character(unlist(sw$values)))]
  } else {
    as.numeric(scenario$topology$bottleneck_rate_bps)
  }
  dplyr::mutate(runs, capacity_bps = .env$capacity)
}

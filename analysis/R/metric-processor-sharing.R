# The processor-sharing reference for task completion times (ncq-conf Figs
# 4-7): the same tasks, started at the same times, through an ideal fluid
# link of the bottleneck's rate that serves every unfinished task at an
# equal share at every instant (egalitarian processor sharing), with the
# bytes TCP puts on the wire (40 bytes of IPv4 + TCP headers per segment,
# no options) and no handshake, no propagation delay, no loss. No discipline
# and no TCP can finish the last task earlier, so the worst time under
# processor sharing is a lower bound on any run's worst time, and the gap to
# it is what the transport and the discipline cost.

tcp_ip_header_bytes <- 40

#' Bytes a bulk task puts on the wire: payload plus one header per segment.
wire_bytes <- function(bytes_goal, seg_bytes) {
  if (any(is.na(bytes_goal)) || any(bytes_goal < 0) || any(is.na(seg_bytes)) || any(seg_bytes <= 0)) {
    stop("wire bytes: `bytes_goal` must be ≥ 0 and `seg_bytes` > 0, neither NA")
  }
  bytes_goal + tcp_ip_header_bytes * ceiling(bytes_goal / seg_bytes)
}

#' Completion times of tasks under egalitarian processor sharing.
#'
#' @param start_s Start time of each task.
#' @param size_bits Bits each task must send.
#' @param capacity_bps The link's rate.
#' @return Each task's completion time (end − start), in seconds.
processor_sharing_times_s <- function(start_s, size_bits, capacity_bps) {
  if (length(start_s) != length(size_bits)) {
    stop("processor sharing: `start_s` and `size_bits` must have the same length")
  }
  if (length(capacity_bps) != 1 || is.na(capacity_bps) || capacity_bps <= 0) {
    stop("processor sharing: `capacity_bps` must be one positive rate")
  }
  if (any(is.na(start_s)) || any(is.na(size_bits)) || any(size_bits < 0)) {
    stop("processor sharing: starts and sizes must be given, sizes ≥ 0")
  }
  n <- length(start_s)
  remaining <- as.numeric(size_bits)
  end_s <- rep(NA_real_, n)
  order <- order(start_s)
  arrived <- 0L
  now <- if (n > 0) min(start_s) else 0
  # every iteration completes a task or admits one: at most 2n iterations
  for (step in seq_len(2 * n + 1)) {
    while (arrived < n && start_s[order[arrived + 1]] <= now) {
      arrived <- arrived + 1L
      task <- order[arrived]
      if (remaining[task] == 0) end_s[task] <- now
    }
    active <- which(is.na(end_s) & seq_len(n) %in% order[seq_len(arrived)])
    next_arrival <- if (arrived < n) start_s[order[arrived + 1]] else Inf
    if (length(active) == 0) {
      if (is.infinite(next_arrival)) break
      now <- next_arrival
      next
    }
    share_bps <- capacity_bps / length(active)
    first_done <- min(remaining[active]) / share_bps
    dt <- min(first_done, next_arrival - now)
    remaining[active] <- remaining[active] - dt * share_bps
    now <- now + dt
    finished <- active[remaining[active] <= 1e-9 * pmax(1, size_bits[active])]
    remaining[finished] <- 0
    end_s[finished] <- now
  }
  end_s - start_s
}

#' The worst completion time under processor sharing of each run's bulk
#' tasks, over all of them or one group (the tasks of the whole run share
#' the link either way).
#'
#' @param flows Per-flow table of bulk flows (`start_s`, `bytes_goal`, `seg_bytes`, `group`).
#' @param by Columns naming a run.
#' @param capacity_bps The bottleneck's rate.
#' @return `by`, `group` (NA for all flows), `ps_worst_fct_s`.
summarise_processor_sharing <- function(flows, by, capacity_bps) {
  require_columns(flows, c(by, "start_s", "bytes_goal", "seg_bytes", "group"), "processor sharing")
  per_flow <- flows |>
    dplyr::group_by(dplyr::across(dplyr::all_of(by))) |>
    dplyr::mutate(ps_fct_s = processor_sharing_times_s(.data$start_s, 8 * wire_bytes(.data$bytes_goal, .data$seg_bytes),
                                                       .env$capacity_bps)) |>
    dplyr::ungroup()
  all_flows <- per_flow |>
    dplyr::group_by(dplyr::across(dplyr::all_of(by))) |>
    dplyr::summarise(ps_worst_fct_s = max(.data$ps_fct_s), .groups = "drop") |>
    dplyr::mutate(group = NA_character_)
  per_group <- per_flow |>
    dplyr::group_by(dplyr::across(dplyr::all_of(c(by, "group")))) |>
    dplyr::summarise(ps_worst_fct_s = max(.data$ps_fct_s), .groups = "drop")
  dplyr::bind_rows(all_flows, per_group)
}

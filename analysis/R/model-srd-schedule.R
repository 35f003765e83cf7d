# The departure schedules of the srd paper's proof (Section 3, Figs. 1 and
# 2), from a small replay through the core: qcore-replay runs S-RD's own
# code (disciplines/core/srd.c) on a few enqueues and dequeues, and the
# figures plot what it decided, not a drawing.
#
# The proof follows delta(t) = L_D(t) / L_R(t) - alpha (eq. 4) at the arrival
# t_a and the departure t_d of a D packet p: Fig. 1 is the case delta(t_a) >
# 0, delta(t_d) >= 0, Fig. 2 delta(t_a) <= 0, delta(t_d) < 0. The replay: a
# 1 Mbit/s link, k = 1 and n_D = n_R = 1 (alpha = 1), both queues
# backlogged: 4 D packets of 400 bytes (what B_D = (d - w) R_D = 1725 bytes
# holds) and 8 R packets of 1000 bytes at t = 0, one more D packet in the
# middle of each slot; one dequeue per 8 ms slot (a 1000-byte packet time)
# for 14 slots, and p (400 bytes)
# arriving at a slot boundary: the first boundary at which the case's two
# signs hold (`srd_schedule_case()` tries each in turn; the test checks the
# signs). delta is plotted after every departure from the first R departure
# on (before it L_R = 0 and delta is not defined).

#' The replay's fixed settings (qcore-replay srd --param NAME=VALUE).
srd_schedule_params <- function() {
  c(rate_bps = 1000000, d_ns = 50000000, k = 1, n_d = 1, n_r = 1, sd_max_bytes = 400, sr_max_bytes = 1000,
    period_ns = 10000000000)
}

srd_schedule_slot_ns <- 8000000 # one 1000-byte packet at 1 Mbit/s

#' The events of one replay: the initial backlog, a D arrival in the middle
#' of every slot, p at the boundary `arrival_slot` (just after the dequeue
#' there), and a dequeue at every slot boundary. Column `p` marks p.
srd_schedule_events <- function(arrival_slot, slots = 14) {
  slot <- srd_schedule_slot_ns
  backlog <- tibble::tibble(t_ns = 0, op = "enq", len = c(rep(400, 4), rep(1000, 8)), cls = rep(0:1, c(4, 8)))
  refill <- tibble::tibble(t_ns = (seq_len(slots) - 0.5) * slot, op = "enq", len = 400, cls = 0)
  p <- tibble::tibble(t_ns = arrival_slot * slot, op = "enq", len = 400, cls = 0, p = TRUE)
  deq <- tibble::tibble(t_ns = seq_len(slots) * slot, op = "deq", len = NA, cls = NA)
  dplyr::bind_rows(backlog, refill, deq, p) |>
    dplyr::mutate(p = dplyr::coalesce(.data$p, FALSE)) |>
    # at a boundary the dequeue comes first: p sees the state after it
    dplyr::arrange(.data$t_ns, .data$op != "deq" & .data$t_ns > 0)
}

#' The path of qcore-replay: QLAB_QCORE_REPLAY, else the checkout's build.
qcore_replay_path <- function() {
  path <- Sys.getenv("QLAB_QCORE_REPLAY", "build/core/qcore-replay")
  if (!file.exists(path)) {
    stop(sprintf("srd schedules: %s must be built (make build; or set QLAB_QCORE_REPLAY)", path))
  }
  path
}

#' Run the core on `events`; the decisions with each packet's length and class.
replay_srd <- function(events, params = srd_schedule_params(), replay = qcore_replay_path()) {
  input <- tempfile(fileext = ".csv")
  on.exit(unlink(input), add = TRUE)
  csv <- dplyr::transmute(events, t_ns = sprintf("%.0f", .data$t_ns), op = .data$op,
                          len = ifelse(is.na(.data$len), "", .data$len), cls = ifelse(is.na(.data$cls), "", .data$cls),
                          prec = "", flow = ifelse(.data$op == "enq", "0", ""))
  readr::write_csv(csv, input, na = "")
  values <- vapply(params, function(v) format(v, scientific = FALSE, trim = TRUE), character(1))
  args <- shQuote(c("srd", as.vector(rbind("--param", paste0(names(params), "=", values)))))
  out <- suppressWarnings(system2(replay, args, stdin = input, stdout = TRUE, stderr = TRUE))
  status <- attr(out, "status") %||% 0L
  if (status != 0) stop(sprintf("srd schedules: qcore-replay failed (exit %d): %s", status, paste(out, collapse = " ")))
  decisions <- readr::read_csv(I(paste(out, collapse = "\n")), show_col_types = FALSE,
                               col_types = readr::cols(.default = readr::col_character()))
  enqueued <- dplyr::filter(events, .data$op == "enq") |> dplyr::mutate(pkt = as.character(dplyr::row_number() - 1))
  decisions |>
    dplyr::filter(.data$op == "deq", .data$verdict == "sent") |>
    dplyr::transmute(t_ns = as.numeric(.data$t_ns), pkt = .data$pkt, band = as.integer(.data$band)) |>
    dplyr::left_join(dplyr::select(enqueued, "pkt", "len", arrival_ns = "t_ns"), by = "pkt")
}

#' delta after each departure, and p's arrival and departure with delta there.
srd_schedule <- function(arrival_slot, replay = qcore_replay_path()) {
  events <- srd_schedule_events(arrival_slot)
  departures <- replay_srd(events, replay = replay) |>
    dplyr::mutate(l_d = cumsum(ifelse(.data$band == 0, .data$len, 0)),
                  l_r = cumsum(ifelse(.data$band == 1, .data$len, 0)),
                  delta = ifelse(.data$l_r > 0, .data$l_d / .data$l_r - 1, NA_real_))
  p_pkt <- as.character(which(events$p[events$op == "enq"]) - 1)
  # the state a time t sees: after the last departure at or before t
  delta_at <- function(t) {
    before <- departures[departures$t_ns <= t, ]
    if (nrow(before) == 0) NA_real_ else before$delta[[nrow(before)]]
  }
  t_a <- arrival_slot * srd_schedule_slot_ns
  t_d <- departures$t_ns[departures$pkt == p_pkt]
  list(departures = departures, t_a = t_a, t_d = if (length(t_d) == 1) t_d else NA_real_,
       delta_a = delta_at(t_a), delta_d = if (length(t_d) == 1) delta_at(t_d) else NA_real_)
}

#' The first arrival slot whose schedule has the case's signs.
srd_schedule_case <- function(case, replay = qcore_replay_path()) {
  holds <- switch(case,
    fig1 = function(s) isTRUE(s$delta_a > 0 && s$delta_d >= 0),
    fig2 = function(s) isTRUE(s$delta_a <= 0 && s$delta_d < 0),
    stop("srd schedules: case must be fig1 or fig2")
  )
  for (slot in 2:10) {
    s <- srd_schedule(slot, replay)
    if (holds(s)) return(c(s, arrival_slot = slot))
  }
  stop(sprintf("srd schedules: no arrival slot gives the signs of %s", case))
}

#' Both figures' rows (analytic_models()'s columns): delta after each
#' departure from the first R departure on, and p's wait as a segment at 0.
srd_schedule_figure_data <- function(replay = qcore_replay_path()) {
  params <- srd_schedule_params()
  method <- sprintf("qcore-replay srd %s; one dequeue per 8 ms slot",
                    paste(names(params), format(params, scientific = FALSE, trim = TRUE), sep = "=", collapse = " "))
  purrr::map_dfr(c("fig1", "fig2"), function(case) {
    s <- srd_schedule_case(case, replay)
    shown <- dplyr::filter(s$departures, !is.na(.data$delta))
    delta <- tibble::tibble(series = "delta after each departure (L_D / L_R - alpha)", x = shown$t_ns / 1e6,
                            mean = shown$delta)
    wait <- tibble::tibble(series = sprintf("packet p in the D queue (t_a = %g ms, t_d = %g ms)", s$t_a / 1e6,
                                            s$t_d / 1e6),
                           x = c(s$t_a, s$t_d) / 1e6, mean = 0)
    dplyr::bind_rows(delta, wait) |>
      dplyr::mutate(figure = paste0("srd/", case), metric = "delta", reading = "printed", x_variable = "time_ms",
                    ci_lo = .data$mean, ci_hi = .data$mean, unit = "1", method = method, backend = "model")
  }) |>
    dplyr::select(dplyr::all_of(model_columns()))
}

# The NCQ journal paper's analytic model (ncq-journal §4, Figs. 1-6) and the
# queueing theory it rests on.
#
# Two layers:
#  * textbook M/G/1 results, general and used by the model-vs-simulation
#    validation: the Pollaczek-Khinchine mean waiting time (FIFO) and Cobham's
#    mean waiting times under non-preemptive priority;
#  * the paper's equations (1)-(21) transcribed as printed, one function per
#    equation family, vectorised over the total utilisation u. Where the paper
#    is ambiguous (design/catalogue.yaml, key ncq-journal) the readings are
#    argument values and the first value of each is the printed reading.
#
# Time is in seconds throughout (`_s`, `_s2` for s^2), rates in packets per
# second (`_per_s`), sizes in bytes. All functions are pure.

# ---------------------------------------------------------------------------
# Queueing theory
# ---------------------------------------------------------------------------

#' Second moment E[S^2] of a service time of mean `mean_s`.
#'
#' Deterministic: E[S^2] = T^2; exponential: E[S^2] = 2 T^2 (its variance is
#' T^2). An empirical distribution's second moment is `mean(s^2)` of the sample.
mg1_service_second_moment_s2 <- function(mean_s, distribution = c("deterministic", "exponential")) {
  distribution <- match.arg(distribution)
  ncq_model_check_nonnegative(mean_s, "mean_s")
  switch(distribution, deterministic = mean_s^2, exponential = 2 * mean_s^2)
}

#' Mean waiting time (before service) in a FIFO M/G/1 queue: the
#' Pollaczek-Khinchine formula W = lambda E[S^2] / (2 (1 - rho)), rho = lambda E[S].
#'
#' Sources: Pollaczek (1930), Khinchine (1932); Kleinrock, Queueing Systems
#' vol. 1 (1975), ch. 5 (the M/G/1 mean-value result); Larson & Odoni, Urban
#' Operations Research (1981), §4.8 (FCFS M/G/1, the expression their §4.9
#' priority results reduce to with one class). For several classes sharing one
#' FIFO queue, lambda is the total rate, E[S] and E[S^2] the rate-weighted
#' mixture moments (`mg1_mixture_moments()`): the mixture's E[S^2], not the
#' square of its mean.
#'
#' Vectorised over all arguments (recycled).
mg1_fifo_waiting_s <- function(lambda_per_s, mean_service_s, second_moment_s2) {
  ncq_model_check_nonnegative(lambda_per_s, "lambda_per_s")
  rho <- lambda_per_s * mean_service_s
  ncq_model_check_stable(rho, "lambda_per_s * mean_service_s")
  lambda_per_s * second_moment_s2 / (2 * (1 - rho))
}

#' Rate-weighted mean and second moment of the service time of a mixture of
#' classes (the service time of an arbitrary arriving packet).
#'
#' @param lambda_per_s Matrix (one row per point, one column per class) or a
#'   vector (one point).
#' @param mean_service_s,second_moment_s2 Per class: vectors of length K, or
#'   matrices shaped like `lambda_per_s`.
#' @return list(lambda_per_s, mean_s, second_moment_s2), one value per point.
mg1_mixture_moments <- function(lambda_per_s, mean_service_s, second_moment_s2) {
  lambda <- ncq_model_as_class_matrix(lambda_per_s)
  mean_s <- ncq_model_per_class_matrix(mean_service_s, lambda, "mean_service_s")
  second <- ncq_model_per_class_matrix(second_moment_s2, lambda, "second_moment_s2")
  total <- rowSums(lambda)
  list(lambda_per_s = total,
       mean_s = rowSums(lambda * mean_s) / total,
       second_moment_s2 = rowSums(lambda * second) / total)
}

#' Mean waiting times (before service) per class in an M/G/1 queue with
#' non-preemptive (head-of-line) priority, class 1 highest: Cobham's formula
#'
#'   W_k = W0 / ((1 - sigma_{k-1}) (1 - sigma_k)),
#'   W0 = sum_i lambda_i E[S_i^2] / 2,   sigma_k = sum_{i <= k} lambda_i E[S_i].
#'
#' W0 is the mean residual work of the packet in service seen by an arrival.
#' Sources: A. Cobham, "Priority assignment in waiting line problems",
#' Operations Research 2(1), 1954; Kleinrock, Queueing Systems vol. 2 (1976),
#' §3.6 (the same formula, his eq. for W_p with sigma's); Larson & Odoni, Urban
#' Operations Research (1981), §4.9; B. Sinclair, "Priority M/G/1 Queue with
#' and without Preemption", Connexions m10820 (2002). With one class it is the
#' Pollaczek-Khinchine formula (a test checks this).
#'
#' @param lambda_per_s Matrix (rows = points, columns = classes in priority
#'   order) or a vector (one point).
#' @param mean_service_s,second_moment_s2 Per class: vectors of length K or
#'   matrices shaped like `lambda_per_s`.
#' @return Matrix of waiting times, shaped like `lambda_per_s` as a matrix.
mg1_priority_waiting_s <- function(lambda_per_s, mean_service_s, second_moment_s2) {
  lambda <- ncq_model_as_class_matrix(lambda_per_s)
  ncq_model_check_nonnegative(lambda, "lambda_per_s")
  mean_s <- ncq_model_per_class_matrix(mean_service_s, lambda, "mean_service_s")
  second <- ncq_model_per_class_matrix(second_moment_s2, lambda, "second_moment_s2")
  rho <- lambda * mean_s
  sigma <- t(apply(rho, 1, cumsum))
  if (ncol(lambda) == 1) sigma <- t(sigma)
  ncq_model_check_stable(sigma[, ncol(sigma)], "the total utilisation sum(lambda_i * mean_service_s_i)")
  sigma_before <- cbind(0, sigma[, -ncol(sigma), drop = FALSE])
  w0 <- rowSums(lambda * second) / 2
  w0 / ((1 - sigma_before) * (1 - sigma))
}

# ---------------------------------------------------------------------------
# The paper's two-class model (§4.1): notation of Table 1
# ---------------------------------------------------------------------------

#' Arrival rates of the two classes at total utilisation u.
#'
#' Class 1 (non-congestive) is a fraction `share1` of the arriving packets;
#' u = lambda1 Ts1 + lambda2 Ts2 (Table 1's cumulative utilisation u2, the
#' x axis of Figs. 1-6), so lambda = u / (share1 Ts1 + (1 - share1) Ts2).
#' @return tibble u, lambda, lambda1, lambda2 (per second).
ncq_journal_rates <- function(u, share1, ts1_s, ts2_s) {
  ncq_model_check_utilisation(u)
  ncq_model_check_fraction(share1, "share1")
  ncq_model_check_positive(c(ts1_s, ts2_s), "ts1_s, ts2_s")
  lambda <- u / (share1 * ts1_s + (1 - share1) * ts2_s)
  ncq_model_tibble(u = u, lambda = lambda, lambda1 = share1 * lambda, lambda2 = (1 - share1) * lambda)
}

#' The two FIFO service-time moments of eq. (9)'s ambiguity: the square of the
#' mean service time (eq. (9) as printed: u_np T_Snp = lambda T_Snp^2) and the
#' mixture's second moment E[S^2] (the Pollaczek-Khinchine formula). For the
#' Fig. 1 classes (10 % at 0.5 ms, 90 % at 5 ms): 4.55^2 = 20.70 ms^2 against
#' 0.1 * 0.25 + 0.9 * 25 = 22.53 ms^2, so the printed FIFO waiting time is
#' 20.70 / 22.53 = 0.919 of the M/G/1 value (8.1 % low).
ncq_journal_service_moments <- function(share1, ts1_s, ts2_s) {
  mean_s <- share1 * ts1_s + (1 - share1) * ts2_s
  tibble::tibble(mean_s = mean_s,
                 squared_mean_s2 = mean_s^2,
                 second_moment_s2 = share1 * ts1_s^2 + (1 - share1) * ts2_s^2)
}

#' Case 1, full priority for class 1: eqs. (1)-(6) as printed.
#'
#' (1) TW1 = (lambda1 Ts1^2 + lambda2 Ts2^2) / (2 (1 - u1))
#' (2) TW2 = (lambda1 Ts1^2 + lambda2 Ts2^2) / (2 (1 - u1)(1 - u2))
#' (3) TW  = lambda1/lambda TW1 + lambda2/lambda TW2
#' (4) TQ1 = TW1 + Ts1   (5) TQ2 = TW2 + Ts2   (6) TQ = lambda1/lambda TQ1 + lambda2/lambda TQ2
#'
#' With deterministic service per class these are Cobham's formula
#' (`mg1_priority_waiting_s()`); Ts^2 = E[S^2] is what makes them so.
#' @return tibble u, tw1_s, tw2_s, tw_s, tq1_s, tq2_s, tq_s.
ncq_journal_priority <- function(u, share1, ts1_s, ts2_s) {
  r <- ncq_journal_rates(u, share1, ts1_s, ts2_s)
  u1 <- r$lambda1 * ts1_s
  u2 <- u1 + r$lambda2 * ts2_s
  numerator <- r$lambda1 * ts1_s^2 + r$lambda2 * ts2_s^2
  tw1 <- numerator / (2 * (1 - u1))
  tw2 <- numerator / (2 * (1 - u1) * (1 - u2))
  ncq_model_two_class_delays(u, share1, tw1, tw2, ts1_s, ts2_s)
}

#' Case 2, no priority (FIFO): eqs. (7)-(12).
#'
#' (7) u_np = lambda1 Ts1 + lambda2 Ts2
#' (8) T_Snp = lambda1/lambda Ts1 + lambda2/lambda Ts2
#' (9) TW1np = TW2np = u_np T_Snp / (2 (1 - u_np))
#' (10) TQ1np = TWnp + Ts1  (11) TQ2np = TWnp + Ts2  (12) TQnp = lambda1/lambda TQ1np + lambda2/lambda TQ2np
#'
#' @param service_moment "squared_mean": eq. (9) as printed, u_np T_Snp =
#'   lambda T_Snp^2 (the square of the mean service time); "second_moment":
#'   lambda E[S^2], the Pollaczek-Khinchine formula for the two-size mixture
#'   (`mg1_fifo_waiting_s()`).
ncq_journal_fifo <- function(u, share1, ts1_s, ts2_s, service_moment = c("squared_mean", "second_moment")) {
  service_moment <- match.arg(service_moment)
  r <- ncq_journal_rates(u, share1, ts1_s, ts2_s)
  u_np <- r$lambda1 * ts1_s + r$lambda2 * ts2_s
  ts_np <- r$lambda1 / r$lambda * ts1_s + r$lambda2 / r$lambda * ts2_s
  tw_np <- switch(service_moment,
    squared_mean = u_np * ts_np / (2 * (1 - u_np)),
    second_moment = (r$lambda1 * ts1_s^2 + r$lambda2 * ts2_s^2) / (2 * (1 - u_np)))
  # lambda = 0 (u = 0) leaves the rate weights 0/0; the delays are then the
  # bare service times whatever the weights, so take them from the mix
  tw_np[u == 0] <- 0
  ncq_model_two_class_delays(u, share1, tw_np, tw_np, ts1_s, ts2_s)
}

#' kthresh: the fraction of the non-congestive packets that NCQ favours.
#'
#' "printed": kthresh = lambda1/lambda * ncqthresh (§4.1 Case 3 as printed,
#'   lambda'1 = lambda1^2/lambda * ncqthresh).
#' "verbal": the paper's words, "ncqthresh represents the percentage of the
#'   total traffic that can be favored": lambda'1 = ncqthresh * lambda (capped
#'   at all of class 1), so kthresh = min(1, ncqthresh / share1). This is also
#'   what the NCQ pseudo-code does (favoured / received < ncqthresh over all
#'   received packets).
ncq_journal_kthresh <- function(share1, ncqthresh, kthresh = c("printed", "verbal")) {
  kthresh <- match.arg(kthresh)
  ncq_model_check_fraction(ncqthresh, "ncqthresh")
  switch(kthresh,
    printed = share1 * ncqthresh,
    verbal = pmin(1, ncqthresh / share1))
}

#' Case 3, priority bounded by ncqthresh: the definitions before eq. (13) and
#' eqs. (13)-(19).
#'
#'   lambda'1 = k lambda1,  lambda'2 = (1 - k) lambda1 + lambda2,  (k = kthresh)
#'   T'S1 = Ts1,  T'S2 = ((1 - k) lambda1 Ts1 + lambda2 Ts2) / lambda'2
#'   u'1 = lambda'1 T'S1,  u'2 = u'1 + lambda'2 T'S2 (= u)
#'   (13) T'W1 = (lambda'1 T'S1^2 + lambda'2 T'S2^2) / (2 (1 - u'1))
#'   (14) T'W2 = (lambda'1 T'S1^2 + lambda'2 T'S2^2) / (2 (1 - u'1)(1 - u'2))
#'   (15) TW1 = k T'W1 + (1 - k) T'W2   (16) TW2 = T'W2
#'   (17) TQ1 = TW1 + Ts1  (18) TQ2 = TW2 + Ts2  (19) TQ = lambda1/lambda TQ1 + lambda2/lambda TQ2
#'
#' @param kthresh See `ncq_journal_kthresh()`.
#' @param service_moment "squared_mean": (13), (14) as printed, T'S2^2 for the
#'   mixed class 2'; "second_moment": class 2's E[S^2], ((1 - k) lambda1 Ts1^2 +
#'   lambda2 Ts2^2) / lambda'2, which makes (13), (14) Cobham's formula.
#' k = 1 gives Case 1 and k = 0 Case 2 under either moment (tests check both).
ncq_journal_thresh <- function(u, share1, ts1_s, ts2_s, ncqthresh,
                               kthresh = c("printed", "verbal"),
                               service_moment = c("squared_mean", "second_moment")) {
  kthresh <- match.arg(kthresh)
  service_moment <- match.arg(service_moment)
  k <- ncq_journal_kthresh(share1, ncqthresh, kthresh)
  ncq_journal_favoured_fraction(u, share1, ts1_s, ts2_s, k, service_moment)
}

#' Case 3's equations for a given favoured fraction k of class 1 (0 <= k <= 1).
ncq_journal_favoured_fraction <- function(u, share1, ts1_s, ts2_s, k,
                                          service_moment = c("squared_mean", "second_moment")) {
  service_moment <- match.arg(service_moment)
  ncq_model_check_fraction(k, "kthresh")
  r <- ncq_journal_rates(u, share1, ts1_s, ts2_s)
  lambda1p <- k * r$lambda1
  lambda2p <- (1 - k) * r$lambda1 + r$lambda2
  ts2p <- ((1 - k) * r$lambda1 * ts1_s + r$lambda2 * ts2_s) / lambda2p
  ts2p[lambda2p == 0] <- 0 # no class 2' at u = 0 with k = 1 and no class 2
  u1p <- lambda1p * ts1_s
  u2p <- u1p + lambda2p * ts2p
  class2_second <- switch(service_moment,
    squared_mean = lambda2p * ts2p^2,
    second_moment = (1 - k) * r$lambda1 * ts1_s^2 + r$lambda2 * ts2_s^2)
  numerator <- lambda1p * ts1_s^2 + class2_second
  tw1p <- numerator / (2 * (1 - u1p))
  tw2p <- numerator / (2 * (1 - u1p) * (1 - u2p))
  tw1 <- k * tw1p + (1 - k) * tw2p
  ncq_model_two_class_delays(u, share1, tw1, tw2p, ts1_s, ts2_s)
}

# ---------------------------------------------------------------------------
# Design strategies of applications (§4.2, Figs. 3-6): eqs. (20), (21)
# ---------------------------------------------------------------------------

#' Eq. (20): packets needed for a task, NP = task / (packet size - overhead).
#'
#' @param overhead "in_packet": the 40 header bytes are part of the packet
#'   size (eq. (20) as printed); "on_top": the size named is the payload and
#'   the header is added on the wire (NP = task / size; the wire size, size +
#'   overhead, sets the service time: `ncq_journal_wire_bytes()`).
ncq_journal_task_packets <- function(task_bytes, packet_bytes, overhead_bytes = 40,
                                     overhead = c("in_packet", "on_top")) {
  overhead <- match.arg(overhead)
  payload <- switch(overhead, in_packet = packet_bytes - overhead_bytes, on_top = packet_bytes)
  if (any(payload <= 0)) stop("task packets: the payload (packet size - overhead) must be positive")
  task_bytes / payload
}

#' Bytes a packet occupies on the link under each overhead reading.
ncq_journal_wire_bytes <- function(packet_bytes, overhead_bytes = 40, overhead = c("in_packet", "on_top")) {
  overhead <- match.arg(overhead)
  switch(overhead, in_packet = packet_bytes, on_top = packet_bytes + overhead_bytes)
}

#' Eq. (21): the service time of a task, ST = TQ1 * NP (the time-in-system of
#' one packet of the class times the number of packets, as printed).
ncq_journal_task_time_s <- function(tq1_s, packets) tq1_s * packets

#' The paper's "X % performance decrease" of a task service time against the
#' baseline (undefined in the paper; positive = the task takes longer).
#'
#' "relative_to_baseline": 100 (new - base) / base;
#' "relative_to_new": 100 (new - base) / new;
#' "ratio": 100 new / base (a "240 % decrease" read as 2.4 times the time).
ncq_journal_percent_change <- function(new, base, percent = c("relative_to_baseline", "relative_to_new", "ratio")) {
  percent <- match.arg(percent)
  switch(percent,
    relative_to_baseline = 100 * (new - base) / base,
    relative_to_new = 100 * (new - base) / new,
    ratio = 100 * new / base)
}

#' The readings of §4.2 and their printed (first) values. `kilobyte_bytes`
#' is what "1KB" means (the task, "5MB", cancels out of every comparison).
ncq_journal_strategy_readings <- function() {
  list(kthresh = c("printed", "verbal"),
       service_moment = c("squared_mean", "second_moment"),
       overhead = c("in_packet", "on_top"),
       baseline_model = c("fifo", "priority"),
       class1_rate = c("packet_share", "same_packet_rate", "same_payload_rate"),
       kilobyte_bytes = c(1000, 1024),
       percent = c("relative_to_baseline", "relative_to_new", "ratio"))
}

#' One application strategy of §4.2: class 1 (a fraction `share1` of the
#' packets, `class1_bytes` each) against class 2 (`class2_bytes`), and the
#' same application after it switches to `small_bytes` packets, with NCQ
#' favouring them fully (Case 1) or up to `ncqthresh` (Case 3).
#'
#' Service times are proportional to the bytes on the wire at
#' `link_rate_bps`; the default 1.6 Mb/s makes 1000 bytes take 5 ms, Fig. 1's
#' congestive service time (the paper gives no rate; every percentage is a
#' ratio at equal u, so the rate cancels out of them).
#'
#' Readings beyond the shared ones (`kthresh`, `service_moment`, `overhead`):
#' @param baseline_model "fifo": the baseline's class-1 packets are too long
#'   for NCQ (>= 130 bytes), so Case 2 (eqs. (7)-(12)); "priority": Case 1's
#'   equations with the baseline sizes (class 1 still first).
#' @param class1_rate "packet_share": class 1 stays `share1` of the packets
#'   and u is the total utilisation of the system computed (the x axis);
#'   "same_packet_rate": the arrival rates are the baseline's at utilisation u
#'   and class 1 keeps its packet rate with smaller packets; "same_payload_rate":
#'   as before, and class 1 sends more packets to keep its payload rate. With
#'   the last two u is the baseline's utilisation, and points whose actual
#'   utilisation reaches 1 are NA.
#' @return tibble u, series ("baseline", "ncq_without_thresh",
#'   "ncq_with_thresh"), u_actual, tq1_s, packets, task_time_s.
ncq_journal_strategy <- function(u, class1_bytes, class2_bytes, small_bytes, share1 = 0.1, ncqthresh = 0.05,
                                 task_bytes = 5e6, overhead_bytes = 40, link_rate_bps = 1.6e6,
                                 kthresh = "printed", service_moment = "squared_mean", overhead = "in_packet",
                                 baseline_model = c("fifo", "priority"),
                                 class1_rate = c("packet_share", "same_packet_rate", "same_payload_rate")) {
  baseline_model <- match.arg(baseline_model)
  class1_rate <- match.arg(class1_rate)
  ncq_model_check_utilisation(u)
  service_s <- function(bytes) ncq_journal_wire_bytes(bytes, overhead_bytes, overhead) * 8 / link_rate_bps
  ts1_base <- service_s(class1_bytes)
  ts1_small <- service_s(small_bytes)
  ts2 <- service_s(class2_bytes)
  packets_base <- ncq_journal_task_packets(task_bytes, class1_bytes, overhead_bytes, overhead)
  packets_small <- ncq_journal_task_packets(task_bytes, small_bytes, overhead_bytes, overhead)

  baseline <- switch(baseline_model,
    fifo = ncq_journal_fifo(u, share1, ts1_base, ts2, service_moment),
    priority = ncq_journal_priority(u, share1, ts1_base, ts2))

  # the small-packet system: its class-1 share and its utilisation
  if (class1_rate == "packet_share") {
    share_small <- rep(share1, length(u))
    u_small <- u
  } else {
    rates <- ncq_journal_rates(u, share1, ts1_base, ts2)
    scale <- if (class1_rate == "same_packet_rate") 1 else packets_small / packets_base
    lambda1 <- rates$lambda1 * scale
    share_small <- lambda1 / (lambda1 + rates$lambda2)
    u_small <- lambda1 * ts1_small + rates$lambda2 * ts2
  }
  stable <- u_small < 1
  small <- function(model) {
    tq1 <- rep(NA_real_, length(u))
    for (share in unique(share_small[stable])) {
      at <- stable & share_small == share
      tq1[at] <- model(u_small[at], share)$tq1_s
    }
    tq1
  }
  without <- small(function(x, share) ncq_journal_priority(x, share, ts1_small, ts2))
  with <- small(function(x, share) ncq_journal_thresh(x, share, ts1_small, ts2, ncqthresh, kthresh, service_moment))

  table <- dplyr::bind_rows(
    ncq_model_tibble(u = u, series = "baseline", u_actual = u, tq1_s = baseline$tq1_s, packets = packets_base),
    ncq_model_tibble(u = u, series = "ncq_without_thresh", u_actual = u_small, tq1_s = without,
                     packets = packets_small),
    ncq_model_tibble(u = u, series = "ncq_with_thresh", u_actual = u_small, tq1_s = with, packets = packets_small)
  )
  table$task_time_s <- ncq_journal_task_time_s(table$tq1_s, table$packets)
  table
}

#' The three applications of §4.2 (sizes in bytes; "1KB" = `kilobyte_bytes`).
#' Fig. 4's small packet size is not stated: 120 bytes, as in §4.2.1.
ncq_journal_applications <- function(kilobyte_bytes = 1000) {
  tibble::tribble(
    ~application,            ~class1_bytes,  ~class2_bytes,  ~small_bytes, ~task_figure, ~delay_figure,
    "ftp",                   kilobyte_bytes, kilobyte_bytes, 120,          "fig3",       NA,
    "congestive_multimedia", 500,            kilobyte_bytes, 120,          "fig4",       NA,
    "noncongestive_multimedia", 140,         kilobyte_bytes, 120,          "fig6",       "fig5"
  )
}

# ---------------------------------------------------------------------------
# Figure data (Figs. 1-6) and the stated percentages
# ---------------------------------------------------------------------------

#' The utilisations plotted: 0.01 to 0.95 in steps of 0.01 (the paper gives no
#' range; its text cites 0.23, 0.3, 0.48, 0.6, all on this grid).
ncq_journal_u_grid <- function() round(seq(0.01, 0.95, by = 0.01), 2)

ncq_journal_fig1_ms <- c(ts1 = 0.5e-3, ts2 = 5e-3)

#' Figs. 1(a)-(d): per-class and system delay, priority (Case 1) and no
#' priority (Case 2), 10 % and 20 % non-congestive packets, Ts1 = 0.5 ms,
#' Ts2 = 5 ms. Readings: "printed" and "service_moment=second_moment" (eq. (9)
#' with E[S^2]; only the no-priority curves differ).
ncq_journal_fig1 <- function(u = ncq_journal_u_grid()) {
  ts <- ncq_journal_fig1_ms
  panels <- tibble::tribble(~share1, ~per_class, ~system,
                            0.1, "ncq-journal/fig1a", "ncq-journal/fig1b",
                            0.2, "ncq-journal/fig1c", "ncq-journal/fig1d")
  readings <- c(printed = "squared_mean", "service_moment=second_moment" = "second_moment")
  purrr::pmap_dfr(panels, function(share1, per_class, system) {
    priority <- ncq_journal_priority(u, share1, ts[["ts1"]], ts[["ts2"]])
    purrr::imap_dfr(readings, function(moment, reading) {
      fifo <- ncq_journal_fifo(u, share1, ts[["ts1"]], ts[["ts2"]], moment)
      dplyr::bind_rows(
        ncq_model_figure_rows(per_class, "Non-congestive, priority", reading, u, priority$tq1_s, "eq. (4)"),
        ncq_model_figure_rows(per_class, "Congestive, priority", reading, u, priority$tq2_s, "eq. (5)"),
        ncq_model_figure_rows(per_class, "Non-congestive, no priority", reading, u, fifo$tq1_s, "eq. (10)"),
        ncq_model_figure_rows(per_class, "Congestive, no priority", reading, u, fifo$tq2_s, "eq. (11)"),
        ncq_model_figure_rows(system, "Priority", reading, u, priority$tq_s, "eq. (6)"),
        ncq_model_figure_rows(system, "No priority", reading, u, fifo$tq_s, "eq. (12)"))
    })
  })
}

#' Figs. 2(a)-(d): Case 3 with ncqthresh 0.01, 0.03, 0.05 (the paper's "e.g.,
#' 0.01 - 0.05"), with the full-priority and no-priority curves for reference.
#' Readings: "printed", "kthresh=verbal", "service_moment=second_moment".
ncq_journal_fig2 <- function(u = ncq_journal_u_grid(), ncqthresh = c(0.01, 0.03, 0.05)) {
  ts <- ncq_journal_fig1_ms
  panels <- tibble::tribble(~share1, ~noncongestive, ~congestive,
                            0.1, "ncq-journal/fig2a", "ncq-journal/fig2b",
                            0.2, "ncq-journal/fig2c", "ncq-journal/fig2d")
  readings <- tibble::tribble(~reading, ~kthresh, ~service_moment,
                              "printed", "printed", "squared_mean",
                              "kthresh=verbal", "verbal", "squared_mean",
                              "service_moment=second_moment", "printed", "second_moment")
  purrr::pmap_dfr(panels, function(share1, noncongestive, congestive) {
    priority <- ncq_journal_priority(u, share1, ts[["ts1"]], ts[["ts2"]])
    purrr::pmap_dfr(readings, function(reading, kthresh, service_moment) {
      fifo <- ncq_journal_fifo(u, share1, ts[["ts1"]], ts[["ts2"]], service_moment)
      curves <- purrr::map_dfr(ncqthresh, function(thresh) {
        d <- ncq_journal_thresh(u, share1, ts[["ts1"]], ts[["ts2"]], thresh, kthresh, service_moment)
        series <- sprintf("ncqthresh %.2f", thresh)
        dplyr::bind_rows(ncq_model_figure_rows(noncongestive, series, reading, u, d$tq1_s, "eq. (17)"),
                         ncq_model_figure_rows(congestive, series, reading, u, d$tq2_s, "eq. (18)"))
      })
      dplyr::bind_rows(
        curves,
        ncq_model_figure_rows(noncongestive, "Full priority", reading, u, priority$tq1_s, "eq. (4)"),
        ncq_model_figure_rows(congestive, "Full priority", reading, u, priority$tq2_s, "eq. (5)"),
        ncq_model_figure_rows(noncongestive, "No priority", reading, u, fifo$tq1_s, "eq. (10)"),
        ncq_model_figure_rows(congestive, "No priority", reading, u, fifo$tq2_s, "eq. (11)"))
    })
  })
}

#' The one-at-a-time readings of §4.2: the printed reading and each option
#' changed alone (the percentage reading changes no curve, only
#' `ncq_journal_stated_percentages()`).
ncq_journal_reading_sets <- function() {
  readings <- ncq_journal_strategy_readings()
  readings$percent <- NULL
  printed <- lapply(readings, `[[`, 1)
  alternatives <- purrr::imap(readings, function(values, option) {
    purrr::map(values[-1], function(value) {
      chosen <- printed
      chosen[[option]] <- value
      list(reading = paste0(option, "=", value), options = chosen)
    })
  })
  c(list(list(reading = "printed", options = printed)), purrr::flatten(alternatives))
}

#' Figs. 3-6: the §4.2 strategies under each one-at-a-time reading.
#' Fig. 3 (FTP) and Fig. 4 (congestive multimedia): task service time, eq. (21);
#' Fig. 5: class-1 delay TQ1; Fig. 6: task service time (non-congestive multimedia).
ncq_journal_fig3_to_6 <- function(u = ncq_journal_u_grid(), ncqthresh = 0.05) {
  purrr::map_dfr(ncq_journal_reading_sets(), function(set) {
    o <- set$options
    apps <- ncq_journal_applications(o$kilobyte_bytes)
    purrr::pmap_dfr(apps, function(application, class1_bytes, class2_bytes, small_bytes, task_figure, delay_figure) {
      s <- ncq_journal_strategy(u, class1_bytes, class2_bytes, small_bytes, ncqthresh = ncqthresh,
                                kthresh = o$kthresh, service_moment = o$service_moment, overhead = o$overhead,
                                baseline_model = o$baseline_model, class1_rate = o$class1_rate)
      names <- ncq_strategy_series_names(class1_bytes, small_bytes, ncqthresh, o$kilobyte_bytes)
      s$series <- unname(names[s$series])
      rows <- ncq_model_figure_rows(paste0("ncq-journal/", task_figure), s$series, set$reading, s$u, s$task_time_s,
                          "eqs. (20), (21)", metric = "task_service_time")
      if (!is.na(delay_figure)) {
        delay_rows <- ncq_model_figure_rows(paste0("ncq-journal/", delay_figure), s$series, set$reading,
                                            s$u, s$tq1_s, "eq. (4)/(10)/(17)")
        rows <- dplyr::bind_rows(rows, delay_rows)
      }
      rows
    })
  }) |>
    dplyr::filter(!is.na(.data$mean))
}

ncq_strategy_series_names <- function(class1_bytes, small_bytes, ncqthresh, kilobyte_bytes) {
  base <- if (class1_bytes == kilobyte_bytes) "1KB packets" else sprintf("%d-byte packets", as.integer(class1_bytes))
  c(baseline = base,
    ncq_without_thresh = sprintf("%d-byte packets, NCQ without ncqthresh", as.integer(small_bytes)),
    ncq_with_thresh = sprintf("%d-byte packets, NCQ with ncqthresh %.2f", as.integer(small_bytes), ncqthresh))
}

#' Every figure's data, one tibble per figure file (fig1 ... fig6); the
#' `figure` column holds the catalogue item id (fig1a ... fig1d etc.).
ncq_journal_figure_data <- function(u = ncq_journal_u_grid()) {
  all <- dplyr::bind_rows(ncq_journal_fig1(u), ncq_journal_fig2(u), ncq_journal_fig3_to_6(u))
  file <- sub("^ncq-journal/(fig[0-9]+)[a-z]?$", "\\1", all$figure)
  split(all, factor(file, levels = paste0("fig", 1:6)))
}

#' The percentages §4.2 states at utilisation 0.60 (positive: the task takes
#' longer, the paper's "performance decrease"; negative: an improvement).
ncq_journal_stated <- function() {
  tibble::tribble(
    ~figure,             ~application,               ~series,              ~stated_pct, ~where,
    "ncq-journal/fig3",  "ftp",                      "ncq_without_thresh",  240,
    "§4.2.1: '240% decrease for utilization 0.60' (NCQ without ncqthresh)",
    "ncq-journal/fig3",  "ftp",                      "ncq_with_thresh",     371,
    "§4.2.1: 'the performance decrease reaches 371% (for 0.60 utilization)' (ncqthresh 0.05)",
    "ncq-journal/fig4",  "congestive_multimedia",    "ncq_without_thresh",  143,
    "§4.2.2: 'the performance decrease in case of NCQ without ncqthresh is 143%' (u = 0.60)",
    "ncq-journal/fig4",  "congestive_multimedia",    "ncq_with_thresh",     253,
    "§4.2.2: 'in case of NCQ with ncqthresh 0.05 is 253%' (u = 0.60)",
    "ncq-journal/fig6",  "noncongestive_multimedia", "ncq_without_thresh",  -21,
    "§4.2.3: 'an improvement ... (e.g., 21% for utilization 0.60)' (NCQ without ncqthresh)",
    "ncq-journal/fig6",  "noncongestive_multimedia", "ncq_with_thresh",      19,
    "§4.2.3: 'a performance decrease for all utilizations (e.g., 19% for utilization 0.60)' (ncqthresh 0.05)"
  )
}

#' Each stated percentage under every combination of the §4.2 readings (the
#' full factorial: `reading` names the options that differ from the printed
#' reading). A value matches when it is within `tolerance_pp` percentage
#' points of the stated one (default 1: the paper prints whole percentages).
ncq_journal_stated_percentages <- function(u = 0.6, ncqthresh = 0.05, tolerance_pp = 1) {
  readings <- ncq_journal_strategy_readings()
  grid <- do.call(tidyr::expand_grid, readings)
  stated <- ncq_journal_stated()
  curve_options <- setdiff(names(readings), "percent")
  curves <- dplyr::distinct(grid[curve_options])
  values <- purrr::pmap_dfr(curves, function(kthresh, service_moment, overhead, baseline_model, class1_rate,
                                             kilobyte_bytes) {
    apps <- ncq_journal_applications(kilobyte_bytes)
    purrr::pmap_dfr(apps, function(application, class1_bytes, class2_bytes, small_bytes, ...) {
      s <- ncq_journal_strategy(u, class1_bytes, class2_bytes, small_bytes, ncqthresh = ncqthresh,
                                kthresh = kthresh, service_moment = service_moment, overhead = overhead,
                                baseline_model = baseline_model, class1_rate = class1_rate)
      base <- s$task_time_s[s$series == "baseline"]
      ncq_model_tibble(kthresh = kthresh, service_moment = service_moment, overhead = overhead,
                       baseline_model = baseline_model, class1_rate = class1_rate, kilobyte_bytes = kilobyte_bytes,
                       application = application, series = c("ncq_without_thresh", "ncq_with_thresh"),
                       baseline_s = base,
                       new_s = s$task_time_s[match(c("ncq_without_thresh", "ncq_with_thresh"), s$series)])
    })
  })
  printed <- lapply(readings, `[[`, 1)
  rows <- dplyr::inner_join(stated, values, by = c("application", "series")) |>
    tidyr::expand_grid(percent = readings$percent)
  rows$u <- u
  rows$value_pct <- purrr::pmap_dbl(list(rows$new_s, rows$baseline_s, rows$percent), ncq_journal_percent_change)
  rows$reading <- ncq_model_reading_label(rows[names(readings)], printed)
  rows |>
    dplyr::mutate(abs_error_pp = abs(.data$value_pct - .data$stated_pct),
                  tolerance_pp = tolerance_pp,
                  match = !is.na(.data$value_pct) & .data$abs_error_pp <= tolerance_pp) |>
    dplyr::select("figure", "series", "u", "stated_pct", "where", "reading", dplyr::all_of(names(readings)),
                  "baseline_s", "new_s", "value_pct", "abs_error_pp", "tolerance_pp", "match")
}

ncq_model_reading_label <- function(options, printed) {
  parts <- purrr::imap(printed, function(value, option) {
    ifelse(options[[option]] == value, NA_character_, paste0(option, "=", options[[option]]))
  })
  labels <- apply(do.call(cbind, parts), 1, function(row) paste(stats::na.omit(row), collapse = "+"))
  ifelse(labels == "", "printed", labels)
}

# ---------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------

#' tibble::tibble() of named columns, recycled as tibble() recycles them
#' (length 1 to the common length), without its checks: about 0.5 ms a call,
#' and the stated percentages call the model's equations hundreds of times
#' (most of the ncq-journal analysis's model time).
ncq_model_tibble <- function(...) {
  columns <- vctrs::vec_recycle_common(...)
  tibble::new_tibble(columns, nrow = vctrs::vec_size_common(...))
}

ncq_model_two_class_delays <- function(u, share1, tw1, tw2, ts1_s, ts2_s) {
  # the rate weights of eqs. (3), (6), (12), (19) are the packet shares
  share2 <- 1 - share1
  ncq_model_tibble(u = u, tw1_s = tw1, tw2_s = tw2, tw_s = share1 * tw1 + share2 * tw2,
                   tq1_s = tw1 + ts1_s, tq2_s = tw2 + ts2_s,
                   tq_s = share1 * (tw1 + ts1_s) + share2 * (tw2 + ts2_s))
}

ncq_model_figure_rows <- function(figure, series, reading, u, value_s, equations, metric = "queuing_delay") {
  tibble::tibble(figure = figure, metric = metric, series = series, reading = reading,
                 x = u, x_variable = "utilisation", mean = value_s, ci_lo = value_s, ci_hi = value_s,
                 unit = "s", method = paste("analytic,", equations))
}

ncq_model_as_class_matrix <- function(x) if (is.matrix(x)) x else matrix(x, nrow = 1)

ncq_model_per_class_matrix <- function(x, like, name) {
  if (is.matrix(x)) {
    if (!identical(dim(x), dim(like))) {
      stop(sprintf("%s: a matrix must have one row per point and one column per class", name))
    }
    return(x)
  }
  if (length(x) != ncol(like)) stop(sprintf("%s must have one value per class (%d)", name, ncol(like)))
  matrix(x, nrow = nrow(like), ncol = ncol(like), byrow = TRUE)
}

ncq_model_check_utilisation <- function(u) {
  if (!is.numeric(u) || any(is.na(u)) || any(u < 0 | u >= 1)) stop("u (total utilisation) must lie in [0, 1)")
}

ncq_model_check_stable <- function(rho, what) {
  if (any(is.na(rho)) || any(rho >= 1)) stop(sprintf("%s must be below 1 (a stable queue)", what))
}

ncq_model_check_fraction <- function(x, name) {
  if (!is.numeric(x) || any(is.na(x)) || any(x < 0 | x > 1)) stop(sprintf("%s must lie in [0, 1]", name))
}

ncq_model_check_nonnegative <- function(x, name) {
  if (!is.numeric(x) || any(is.na(x)) || any(x < 0)) stop(sprintf("%s must be non-negative", name))
}

ncq_model_check_positive <- function(x, name) {
  if (!is.numeric(x) || any(is.na(x)) || any(x <= 0)) stop(sprintf("%s must be positive", name))
}

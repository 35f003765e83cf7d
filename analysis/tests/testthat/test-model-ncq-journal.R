# The NCQ journal's analytic model (analysis/R/model-ncq-journal.R): Fig. 1
# worked by hand, the M/G/1 formulas against hand values and their limits,
# eq. (9)'s service-time moment, and what each reading changes.

ms <- 1e-3
fig1 <- ncq_journal_fig1_ms # Ts1 = 0.5 ms, Ts2 = 5 ms

test_that("Fig. 1(a)/(b) at u = 0.3, 0.6, 0.9 follow eqs. (1)-(12) as printed (worked by hand)", {
  # 10 % of the packets at Ts1 = 0.5 ms, 90 % at Ts2 = 5 ms:
  #   mean service 0.1*0.5 + 0.9*5 = 4.55 ms, so lambda = u / 4.55 ms;
  #   lambda1 Ts1^2 + lambda2 Ts2^2 = lambda (0.1*0.25 + 0.9*25) = u * 22.525 / 4.55 ms;
  #   u1 = lambda1 Ts1 = u * 0.05 / 4.55; so (1) TW1 = (u 22.525) / (2 (4.55 - 0.05 u)) ms
  #   and (2) TW2 = TW1 / (1 - u).
  # u = 0.3: TW1 = 6.7575 / (2 * 4.535) = 6.7575 / 9.07   = 0.745039 ms; TW2 = TW1 / 0.7 = 1.064341 ms
  # u = 0.6: TW1 = 13.515 / (2 * 4.52)  = 13.515 / 9.04   = 1.495022 ms; TW2 = TW1 / 0.4 = 3.737555 ms
  # u = 0.9: TW1 = 20.2725 / (2 * 4.505) = 20.2725 / 9.01 = 2.25 ms;     TW2 = TW1 / 0.1 = 22.5 ms
  # (4) TQ1 = TW1 + 0.5, (5) TQ2 = TW2 + 5, (6) TQ = 0.1 TQ1 + 0.9 TQ2:
  #   u = 0.3: 1.245039, 6.064341, 0.1245039 + 5.4579069 = 5.582411 ms
  #   u = 0.6: 1.995022, 8.737555, 0.1995022 + 7.8637995 = 8.063302 ms
  #   u = 0.9: 2.75,     27.5,     0.275 + 24.75         = 25.025 ms
  # (9) TWnp = u Tsnp / (2 (1 - u)) with Tsnp = 4.55 ms:
  #   u = 0.3: 1.365 / 1.4 = 0.975 ms;  u = 0.6: 2.73 / 0.8 = 3.4125 ms;  u = 0.9: 4.095 / 0.2 = 20.475 ms
  # (10) TQ1np = TWnp + 0.5, (11) TQ2np = TWnp + 5, (12) TQnp = TWnp + 4.55:
  #   u = 0.3: 1.475, 5.975, 5.525 ms;  u = 0.6: 3.9125, 8.4125, 7.9625 ms;  u = 0.9: 20.975, 25.475, 25.025 ms
  hand <- tibble::tribble(
    ~x,  ~series,                        ~figure,             ~mean_ms,
    0.3, "Non-congestive, priority",     "ncq-journal/fig1a", 6.7575 / 9.07 + 0.5,
    0.6, "Non-congestive, priority",     "ncq-journal/fig1a", 13.515 / 9.04 + 0.5,
    0.9, "Non-congestive, priority",     "ncq-journal/fig1a", 2.75,
    0.3, "Congestive, priority",         "ncq-journal/fig1a", 6.7575 / 9.07 / 0.7 + 5,
    0.6, "Congestive, priority",         "ncq-journal/fig1a", 13.515 / 9.04 / 0.4 + 5,
    0.9, "Congestive, priority",         "ncq-journal/fig1a", 27.5,
    0.3, "Non-congestive, no priority",  "ncq-journal/fig1a", 1.475,
    0.6, "Non-congestive, no priority",  "ncq-journal/fig1a", 3.9125,
    0.9, "Non-congestive, no priority",  "ncq-journal/fig1a", 20.975,
    0.3, "Congestive, no priority",      "ncq-journal/fig1a", 5.975,
    0.6, "Congestive, no priority",      "ncq-journal/fig1a", 8.4125,
    0.9, "Congestive, no priority",      "ncq-journal/fig1a", 25.475,
    0.3, "Priority",                     "ncq-journal/fig1b",
    0.1 * (6.7575 / 9.07 + 0.5) + 0.9 * (6.7575 / 9.07 / 0.7 + 5),
    0.6, "Priority",                     "ncq-journal/fig1b",
    0.1 * (13.515 / 9.04 + 0.5) + 0.9 * (13.515 / 9.04 / 0.4 + 5),
    0.9, "Priority",                     "ncq-journal/fig1b", 25.025,
    0.3, "No priority",                  "ncq-journal/fig1b", 5.525,
    0.6, "No priority",                  "ncq-journal/fig1b", 7.9625,
    0.9, "No priority",                  "ncq-journal/fig1b", 25.025
  )
  expect_equal(hand$mean_ms[hand$x == 0.6 & hand$series == "Priority"], 8.063302, tolerance = 1e-6)
  data <- ncq_journal_fig1() |> dplyr::filter(.data$reading == "printed")
  got <- dplyr::inner_join(hand, data, by = c("x", "series", "figure"))
  expect_equal(nrow(got), nrow(hand))
  expect_equal(got$mean, got$mean_ms * ms, tolerance = 1e-12)
  expect_true(all(got$unit == "s"))
})

test_that("Fig. 1(c)/(d) use 20 % non-congestive packets (one point by hand)", {
  # 20 % at 0.5 ms, 80 % at 5 ms: mean 0.1 + 4 = 4.1 ms; E[S^2] = 0.05 + 20 = 20.05 ms^2.
  # u = 0.5: lambda E[S^2] = 0.5 * 20.05 / 4.1 = 2.445122 ms; u1 = 0.5 * 0.1 / 4.1 = 0.0121951
  #   TW1 = 10.025 / (2 * (4.1 - 0.05)) = 10.025 / 8.1 = 1.237654 ms, TQ1 = 1.737654 ms
  #   TWnp = 0.5 * 4.1 / (2 * 0.5) = 2.05 ms, TQ2np = 7.05 ms
  data <- ncq_journal_fig1(u = 0.5) |> dplyr::filter(.data$reading == "printed")
  at <- function(figure, series) data$mean[data$figure == figure & data$series == series]
  expect_equal(at("ncq-journal/fig1c", "Non-congestive, priority"), (10.025 / 8.1 + 0.5) * ms, tolerance = 1e-12)
  expect_equal(at("ncq-journal/fig1c", "Congestive, no priority"), 7.05 * ms, tolerance = 1e-12)
  expect_equal(at("ncq-journal/fig1d", "No priority"), (2.05 + 4.1) * ms, tolerance = 1e-12)
})

test_that("Pollaczek-Khinchine against hand-worked M/M/1 and M/D/1 values", {
  # M/M/1, lambda = 50/s, E[S] = 10 ms: E[S^2] = 2 * 1e-4 s^2,
  # W = 50 * 2e-4 / (2 * 0.5) = 0.01 s = rho / (mu - lambda) = 0.5 / 50
  expect_equal(mg1_fifo_waiting_s(50, 0.01, mg1_service_second_moment_s2(0.01, "exponential")), 0.01)
  # M/D/1: half of it, W = rho E[S] / (2 (1 - rho)) = 0.5 * 0.01 / 1 = 0.005 s
  expect_equal(mg1_fifo_waiting_s(50, 0.01, mg1_service_second_moment_s2(0.01)), 0.005)
  # vectorised over the rate
  expect_equal(mg1_fifo_waiting_s(c(0, 25, 50), 0.01, 1e-4), c(0, 25 * 1e-4 / 1.5, 0.005))
  expect_error(mg1_fifo_waiting_s(100, 0.01, 1e-4), "below 1")
})

test_that("Cobham's formula against hand-worked values for two and three classes", {
  # lambda = (100, 50, 20)/s; E[S] = (1, 4, 10) ms; classes 1, 2 deterministic,
  # class 3 exponential: E[S^2] = (1e-6, 16e-6, 2e-4) s^2.
  # rho = (0.1, 0.2, 0.2), sigma = (0.1, 0.3, 0.5).
  # W0 = (100 * 1e-6 + 50 * 16e-6 + 20 * 2e-4) / 2 = (1e-4 + 8e-4 + 4e-3) / 2 = 2.45e-3 s
  # then W1 is W0 / (1 * 0.9) = 2.7222e-3, W2 is W0 / (0.9 * 0.7) = 3.8889e-3, W3 is W0 / (0.7 * 0.5) = 7e-3
  w <- mg1_priority_waiting_s(c(100, 50, 20), c(1e-3, 4e-3, 10e-3), c(1e-6, 16e-6, 2e-4))
  expect_equal(as.vector(w), c(2.45e-3 / 0.9, 2.45e-3 / 0.63, 7e-3))
  # two classes: W0 = (1e-4 + 8e-4) / 2 = 4.5e-4; W1 = 4.5e-4 / 0.9 = 5e-4; W2 = 4.5e-4 / (0.9 * 0.7)
  w2 <- mg1_priority_waiting_s(c(100, 50), c(1e-3, 4e-3), c(1e-6, 16e-6))
  expect_equal(as.vector(w2), c(5e-4, 4.5e-4 / 0.63))
  # one row per point
  rows <- mg1_priority_waiting_s(rbind(c(100, 50), c(0, 0)), c(1e-3, 4e-3), c(1e-6, 16e-6))
  expect_equal(dim(rows), c(2L, 2L))
  expect_equal(rows[2, ], c(0, 0))
  expect_error(mg1_priority_waiting_s(c(500, 200), c(1e-3, 4e-3), c(1e-6, 16e-6)), "below 1")
  expect_error(mg1_priority_waiting_s(c(100, 50), 1e-3, 1e-6), "one value per class")
})

test_that("Cobham: one class is Pollaczek-Khinchine, and the conservation law holds", {
  lambda <- c(10, 40, 70)
  expect_equal(as.vector(mg1_priority_waiting_s(matrix(lambda), 0.01, 1.7e-4)),
               mg1_fifo_waiting_s(lambda, 0.01, 1.7e-4))
  # Kleinrock's conservation law (non-preemptive, work-conserving):
  # sum_k rho_k W_k = rho * W_FIFO
  lambda <- c(100, 50, 20)
  mean_s <- c(1e-3, 4e-3, 10e-3)
  second <- c(1e-6, 16e-6, 2e-4)
  w <- as.vector(mg1_priority_waiting_s(lambda, mean_s, second))
  mix <- mg1_mixture_moments(lambda, mean_s, second)
  expect_equal(sum(lambda * mean_s * w), 0.5 * mg1_fifo_waiting_s(mix$lambda_per_s, mix$mean_s, mix$second_moment_s2))
})

test_that("waiting times vanish as u -> 0 and the delays tend to the service times", {
  u <- c(0, 1e-9)
  p <- ncq_journal_priority(u, 0.1, fig1[["ts1"]], fig1[["ts2"]])
  f <- ncq_journal_fifo(u, 0.1, fig1[["ts1"]], fig1[["ts2"]])
  t <- ncq_journal_thresh(u, 0.1, fig1[["ts1"]], fig1[["ts2"]], 0.05)
  for (d in list(p, f, t)) {
    expect_equal(d$tw1_s, c(0, 0), tolerance = 1e-9)
    expect_equal(d$tq1_s, rep(0.5 * ms, 2), tolerance = 1e-9)
    expect_equal(d$tq2_s, rep(5 * ms, 2), tolerance = 1e-9)
    expect_equal(d$tq_s, rep(4.55 * ms, 2), tolerance = 1e-9)
  }
  expect_error(ncq_journal_priority(1, 0.1, 1, 2), "u \\(total utilisation\\) must lie in \\[0, 1\\)")
})

test_that("eqs. (1), (2) are Cobham's formula with deterministic service per class", {
  u <- c(0.1, 0.5, 0.9)
  r <- ncq_journal_rates(u, 0.1, fig1[["ts1"]], fig1[["ts2"]])
  lambda <- cbind(r$lambda1, r$lambda2)
  cobham <- mg1_priority_waiting_s(lambda, fig1, mg1_service_second_moment_s2(fig1))
  p <- ncq_journal_priority(u, 0.1, fig1[["ts1"]], fig1[["ts2"]])
  expect_equal(p$tw1_s, cobham[, 1])
  expect_equal(p$tw2_s, cobham[, 2])
})

test_that("eq. (9): squared mean 20.70 ms^2 against E[S^2] 22.53 ms^2 for the Fig. 1 classes", {
  # mean 0.1 * 0.5 + 0.9 * 5 = 4.55 ms; 4.55^2 = 20.7025 ms^2;
  # E[S^2] = 0.1 * 0.25 + 0.9 * 25 = 22.525 ms^2
  m <- ncq_journal_service_moments(0.1, fig1[["ts1"]], fig1[["ts2"]])
  expect_equal(round(m$squared_mean_s2 / ms^2, 2), 20.70)
  expect_equal(round(m$second_moment_s2 / ms^2, 2), 22.53)
  u <- c(0.2, 0.6, 0.9)
  printed <- ncq_journal_fifo(u, 0.1, fig1[["ts1"]], fig1[["ts2"]], "squared_mean")
  correct <- ncq_journal_fifo(u, 0.1, fig1[["ts1"]], fig1[["ts2"]], "second_moment")
  # the second-moment reading is Pollaczek-Khinchine for the mixture ...
  lambda <- u / (4.55 * ms)
  expect_equal(correct$tw1_s, mg1_fifo_waiting_s(lambda, 4.55 * ms, 22.525 * ms^2))
  # ... and the printed waiting time is 20.7025 / 22.525 = 0.919 of it (8.1 % low) at every u
  expect_equal(printed$tw1_s / correct$tw1_s, rep(20.7025 / 22.525, 3))
  expect_equal(1 - 20.7025 / 22.525, 0.0809, tolerance = 1e-3)
})

test_that("Case 3: kthresh = 1 is Case 1 and kthresh = 0 is Case 2, under either moment", {
  u <- c(0.2, 0.5, 0.8)
  for (share1 in c(0.1, 0.2)) {
    p <- ncq_journal_priority(u, share1, fig1[["ts1"]], fig1[["ts2"]])
    for (moment in c("squared_mean", "second_moment")) {
      all <- ncq_journal_favoured_fraction(u, share1, fig1[["ts1"]], fig1[["ts2"]], 1, moment)
      none <- ncq_journal_favoured_fraction(u, share1, fig1[["ts1"]], fig1[["ts2"]], 0, moment)
      f <- ncq_journal_fifo(u, share1, fig1[["ts1"]], fig1[["ts2"]], moment)
      expect_equal(all$tq1_s, p$tq1_s)
      expect_equal(all$tq2_s, p$tq2_s)
      expect_equal(none$tq1_s, f$tq1_s)
      expect_equal(none$tq2_s, f$tq2_s)
    }
  }
})

test_that("Case 3 by hand at u = 0.6, 10 %, ncqthresh 0.05, printed kthresh", {
  # kthresh = 0.1 * 0.05 = 0.005; lambda = 0.6 / 4.55 ms = 131.868/s,
  # lambda1 = 13.1868, lambda2 = 118.681;
  # lambda'1 = 0.005 * 13.1868 = 0.065934; lambda'2 = 0.995 * 13.1868 + 118.681 = 131.8022
  # T'S2 = (0.995 * 13.1868 * 0.5 + 118.681 * 5) ms / 131.8022 = (6.56044 + 593.4066) / 131.8022 = 4.552017 ms
  # u'1 = 0.065934 * 0.5 ms = 3.2967e-5; u'2 = 0.6
  # numerator = 0.065934 * 0.25e-6 + 131.8022 * (4.552017e-3)^2 = 1.64835e-8 + 2.731027e-3 = 2.731044e-3 s
  # T'W1 = numerator / (2 (1 - 3.2967e-5)) = 1.365567e-3 s; T'W2 = T'W1 / 0.4 = 3.413918e-3 s
  # (15) TW1 = 0.005 T'W1 + 0.995 T'W2 = 6.82784e-6 + 3.396848e-3 = 3.403676e-3 s; (17) TQ1 = 3.903676 ms
  lambda <- 0.6 / (4.55 * ms)
  lambda1 <- 0.1 * lambda
  lambda2 <- 0.9 * lambda
  l1p <- 0.005 * lambda1
  l2p <- 0.995 * lambda1 + lambda2
  ts2p <- (0.995 * lambda1 * 0.5 * ms + lambda2 * 5 * ms) / l2p
  expect_equal(ts2p, 4.552017 * ms, tolerance = 1e-6)
  num <- l1p * (0.5 * ms)^2 + l2p * ts2p^2
  tw1p <- num / (2 * (1 - l1p * 0.5 * ms))
  tw2p <- tw1p / 0.4
  d <- ncq_journal_thresh(0.6, 0.1, fig1[["ts1"]], fig1[["ts2"]], 0.05)
  expect_equal(d$tq1_s, 0.005 * tw1p + 0.995 * tw2p + 0.5 * ms)
  expect_equal(d$tq1_s, 3.903676 * ms, tolerance = 1e-6)
  expect_equal(d$tq2_s, tw2p + 5 * ms)
})

test_that("kthresh: printed (lambda1/lambda) ncqthresh against the verbal share of all traffic", {
  expect_equal(ncq_journal_kthresh(0.1, 0.05, "printed"), 0.005)
  expect_equal(ncq_journal_kthresh(0.1, 0.05, "verbal"), 0.5)
  expect_equal(ncq_journal_kthresh(0.2, c(0.01, 0.05), "verbal"), c(0.05, 0.25))
  expect_equal(ncq_journal_kthresh(0.02, 0.05, "verbal"), 1) # capped: all of class 1
  expect_error(ncq_journal_kthresh(0.1, 1.5), "ncqthresh must lie in \\[0, 1\\]")
})

test_that("eqs. (20), (21) and the percentage readings by hand", {
  # 5 MB in 1000-byte packets with 40 bytes of header: 5e6 / 960 = 5208.33 packets
  expect_equal(ncq_journal_task_packets(5e6, 1000), 5e6 / 960)
  expect_equal(ncq_journal_task_packets(5e6, 120), 62500) # 80 bytes of payload each: 5e6 / 80
  expect_equal(ncq_journal_task_packets(5e6, 120, overhead = "on_top"), 5e6 / 120)
  expect_equal(ncq_journal_wire_bytes(120, overhead = "on_top"), 160)
  expect_error(ncq_journal_task_packets(5e6, 40), "payload")
  expect_equal(ncq_journal_task_time_s(2e-3, 62500), 125)
  # a task 3.4 times longer: 240 % more, 70.6 % of the new time, a ratio of 340 %
  expect_equal(ncq_journal_percent_change(3.4, 1, "relative_to_baseline"), 240)
  expect_equal(ncq_journal_percent_change(3.4, 1, "relative_to_new"), 100 * 2.4 / 3.4)
  expect_equal(ncq_journal_percent_change(3.4, 1, "ratio"), 340)
})

test_that("Fig. 3 at u = 0.6 under the printed reading, by hand", {
  # baseline: 1000-byte packets in both classes at 1.6 Mb/s: 5 ms each; FIFO,
  #   (9) TW = 0.6 * 5 / (2 * 0.4) = 3.75 ms, TQ1 = 8.75 ms; NP = 5e6 / 960;
  #   ST = 8.75 ms * 5208.33 = 45.5729 s
  # 120-byte packets, full priority: Ts1 = 120 * 8 / 1.6e6 = 0.6 ms; mean 0.06 + 4.5 = 4.56 ms;
  #   lambda E[S^2] = 0.6 (0.1 * 0.36 + 0.9 * 25) / 4.56 = 13.5216 / 4.56 ms; u1 = 0.6 * 0.06 / 4.56
  #   TW1 = 13.5216 / (2 (4.56 - 0.036)) = 13.5216 / 9.048 = 1.494430 ms, TQ1 = 2.094430 ms;
  #   NP = 62500; ST = 130.9019 s; (130.9019 / 45.5729 - 1) = 187.2 %, not the paper's 240 %
  s <- ncq_journal_strategy(0.6, 1000, 1000, 120)
  expect_equal(s$task_time_s[s$series == "baseline"], 8.75 * ms * 5e6 / 960)
  expect_equal(s$task_time_s[s$series == "ncq_without_thresh"], (13.5216 / 9.048 + 0.6) * ms * 62500)
  stated <- ncq_journal_stated_percentages()
  printed <- stated[stated$reading == "printed" & stated$figure == "ncq-journal/fig3" &
                      stated$series == "ncq_without_thresh", ]
  expect_equal(printed$value_pct, 100 * ((13.5216 / 9.048 + 0.6) * 62500 / (8.75 * 5e6 / 960) - 1))
  expect_false(printed$match)
})

test_that("each reading changes the curves it should and no other", {
  # service_moment in Fig. 1: the no-priority curves only, and upwards
  f1 <- ncq_journal_fig1(u = c(0.3, 0.6))
  wide <- tidyr::pivot_wider(f1[c("figure", "series", "x", "reading", "mean")],
                             names_from = "reading", values_from = "mean")
  moved <- wide$`service_moment=second_moment` != wide$printed
  expect_equal(sort(unique(wide$series[moved])),
               sort(c("Non-congestive, no priority", "Congestive, no priority", "No priority")))
  expect_true(all(wide$`service_moment=second_moment`[moved] > wide$printed[moved]))

  # kthresh in Fig. 2: the ncqthresh curves only; the verbal reading favours
  # more packets, so the non-congestive delay falls and the congestive rises
  f2 <- ncq_journal_fig2(u = c(0.3, 0.6))
  wide <- tidyr::pivot_wider(f2[c("figure", "series", "x", "reading", "mean")],
                             names_from = "reading", values_from = "mean")
  thresh <- grepl("^ncqthresh", wide$series)
  expect_equal(wide$`kthresh=verbal`[!thresh], wide$printed[!thresh])
  noncongestive <- thresh & wide$figure %in% c("ncq-journal/fig2a", "ncq-journal/fig2c")
  expect_true(all(wide$`kthresh=verbal`[noncongestive] < wide$printed[noncongestive]))
  expect_true(all(wide$`kthresh=verbal`[thresh & !noncongestive] > wide$printed[thresh & !noncongestive]))
  # service_moment in Fig. 2: the ncqthresh and no-priority curves, not full priority
  moved <- wide$`service_moment=second_moment` != wide$printed
  expect_false(any(moved[wide$series == "Full priority"]))
  expect_true(all(moved[thresh | wide$series == "No priority"]))

  # Figs. 3-6: which series each reading moves
  f36 <- ncq_journal_fig3_to_6(u = c(0.3, 0.6))
  f36$kind <- ifelse(grepl("NCQ without", f36$series), "without",
                     ifelse(grepl("NCQ with ncq", f36$series), "with", "baseline"))
  printed <- f36[f36$reading == "printed", ]
  moves <- function(reading) {
    other <- f36[f36$reading == reading, ]
    joined <- dplyr::inner_join(printed, other, by = c("figure", "kind", "x"), suffix = c("", "_alt"))
    sort(unique(joined$kind[abs(joined$mean_alt - joined$mean) > 1e-12 * joined$mean]))
  }
  expect_equal(moves("kthresh=verbal"), "with")
  expect_equal(moves("service_moment=second_moment"), c("baseline", "with")) # FIFO baseline and Case 3
  expect_equal(moves("baseline_model=priority"), "baseline")
  expect_equal(moves("class1_rate=same_packet_rate"), c("with", "without"))
  expect_equal(moves("class1_rate=same_payload_rate"), c("with", "without"))
  expect_equal(moves("overhead=on_top"), c("baseline", "with", "without"))
  expect_equal(moves("kilobyte_bytes=1024"), c("baseline", "with", "without"))
  # "1KB" appears in Figs. 3 and 4 (class 2 of Figs. 4-6 too): Fig. 3's baseline moves by 1000/1024 packets
  fig3 <- f36[f36$figure == "ncq-journal/fig3" & f36$kind == "baseline" & f36$x == 0.6, ]
  expect_equal(fig3$mean[fig3$reading == "kilobyte_bytes=1024"] / fig3$mean[fig3$reading == "printed"],
               (960 / 984) * (1024 / 1000)) # fewer packets, each 1024/1000 as long at the same u

  # the percentage reading changes the stated percentages, never a curve
  stated <- ncq_journal_stated_percentages()
  expect_false("percent=ratio" %in% f36$reading)
  a <- stated[stated$reading == "printed", ]
  b <- stated[stated$reading == "percent=ratio", ]
  expect_equal(b$value_pct, a$value_pct + 100)
})

test_that("the stated percentages: six claims under every combination of readings", {
  stated <- ncq_journal_stated_percentages()
  combos <- prod(lengths(ncq_journal_strategy_readings()))
  expect_equal(nrow(stated), 6 * combos)
  expect_equal(sort(unique(stated$stated_pct)), sort(c(240, 371, 143, 253, -21, 19)))
  expect_equal(sum(stated$reading == "printed"), 6)
  expect_equal(stated$match, stated$abs_error_pp <= 1)
  expect_true(all(is.finite(stated$value_pct)))
})

test_that("the figure data: one table per figure file, every catalogue item, the printed reading in each", {
  data <- ncq_journal_figure_data(u = c(0.1, 0.6))
  expect_equal(names(data), paste0("fig", 1:6))
  items <- sort(unique(unlist(lapply(data, `[[`, "figure"))))
  expect_equal(items, sort(paste0("ncq-journal/", c(paste0("fig1", letters[1:4]), paste0("fig2", letters[1:4]),
                                                    "fig3", "fig4", "fig5", "fig6"))))
  for (table in data) {
    expect_equal(names(table), c("figure", "metric", "series", "reading", "x", "x_variable", "mean",
                                 "ci_lo", "ci_hi", "unit", "method"))
    expect_true("printed" %in% table$reading)
    expect_true(all(is.finite(table$mean) & table$mean > 0))
    # one value per figure, series, reading and x
    expect_equal(nrow(dplyr::distinct(table, .data$figure, .data$series, .data$reading, .data$x)), nrow(table))
  }
  expect_equal(sort(unique(data$fig2$series)),
               c("Full priority", "ncqthresh 0.01", "ncqthresh 0.03", "ncqthresh 0.05", "No priority"))
  expect_equal(sort(unique(data$fig3$series)),
               c("120-byte packets, NCQ with ncqthresh 0.05", "120-byte packets, NCQ without ncqthresh", "1KB packets"))
})

test_that("M/M/1/K blocking and mean number, worked by hand", {
  # rho 0.5, K 2: p0 = 0.5 / 0.875 = 4/7, p1 = 2/7, p2 = 1/7; L = 2/7 + 2/7 = 4/7
  expect_equal(mm1k_blocking(0.5, 2), 1 / 7)
  expect_equal(mm1k_mean_number(0.5, 2), 4 / 7)
  # rho 1: every state equally likely
  expect_equal(mm1k_blocking(1, 4), 1 / 5)
  expect_equal(mm1k_mean_number(1, 4), 2)
  # K large at rho < 1: M/M/1, no blocking, L = rho / (1 - rho)
  expect_equal(mm1k_mean_number(0.5, 200), 1, tolerance = 1e-12)
  expect_lt(mm1k_blocking(0.5, 200), 1e-12)
  expect_error(mm1k_blocking(0.5, 0), "K must be")
  expect_error(mm1k_blocking(-1, 3), "rho must be")
})

test_that("the service's second moment: deterministic, or the contract's shifted exponential sizes", {
  # 1250 bytes + 2 of framing at 2 Mb/s: 5.008 ms, squared
  expect_equal(service_second_moment_s2(1250, FALSE, 2, 2e6), (8 * 1252 / 2e6)^2)
  # mean 140: 40 + Exp(100); c = 42: E = 42^2 + 2*42*100 + 2*100^2 = 1764 + 8400 + 20000 = 30164 bytes^2
  expect_equal(service_second_moment_s2(140, TRUE, 2, 8e6), 30164 / 1e12)
})

test_that("the M/M/1 and M/M/1/K closed forms of a validation scenario", {
  scenario <- list(topology = list(bottleneck_rate_bps = 8e6),
                   workload = list(groups = list(stream = list(app = "poisson", packet_share = 1, pkt_bytes = 65507,
                                                               size_mean_bytes = 140))))
  # u 0.5 at 8 Mb/s, mean 140 bytes: lambda = 0.5 * 8e6 / 1120 = 3571.4/s; S = 142 us on the wire
  classes <- validation_poisson_classes(scenario, 0.5, 2)
  expect_equal(classes$lambda_per_s, 0.5 * 8e6 / (8 * 140))
  expect_equal(classes$service_s, 142e-6)
  models <- validation_models()
  rho <- classes$lambda_per_s * 142e-6
  # P-K: lambda E[S^2] / (2 (1 - rho)), E[S^2] = 30164e-12 s^2 (above)
  expect_equal(models$mm1_fifo$wait(classes, list()), classes$lambda_per_s * 30164e-12 / (2 * (1 - rho)))
  # limit 4 queued + 1 on the wire: K = 5
  expect_equal(models$mm1k_blocking$wait(classes, list(params = list(limit_pkts = 4))), mm1k_blocking(rho, 5))
})

test_that("M/G/1/K with shifted exponential service: M/M/1/K without the shift, Erlang at K = 1, by hand at K = 2", {
  expect_equal(mg1k_shifted_exp_blocking(0.9, 0, 1, 5), mm1k_blocking(0.9, 5), tolerance = 1e-9)
  expect_equal(mg1k_shifted_exp_blocking(0.7, 0.3, 0.5, 1), 0.56 / 1.56, tolerance = 1e-9)
  # M/D/1/2, lambda 0.5, S = 1: the chain's pi_0 is a_0 = exp(-0.5), p_2 = 1 - 1 / (a_0 + 0.5)
  expect_equal(mg1k_shifted_exp_blocking(0.5, 1, 0, 2), 1 - 1 / (exp(-0.5) + 0.5), tolerance = 1e-9)
  # a little less variable than exponential, a little less blocking
  expect_lt(mg1k_shifted_exp_blocking(0.9, 0.01, 0.99, 5), mm1k_blocking(0.9, 5))
  expect_error(mg1k_shifted_exp_blocking(0, 0, 1, 5), "lambda_per_s")
  expect_error(mg1k_shifted_exp_blocking(1, 0, 0, 5), "not both 0")
})

test_that("mg1k_blocking: the validation scenario's exponential sizes on the wire (40 + framing bytes of shift)", {
  scenario <- list(topology = list(kind = "dumbbell", bottleneck_rate_bps = 2e6),
                   workload = list(groups = list(stream = list(app = "poisson", pkt_bytes = 65507,
                                                               size_mean_bytes = 5000, packet_share = 1))),
                   series = list(k5 = list(kind = "droptail", params = list(limit_pkts = 4))))
  lambda <- 0.9 * 2e6 / (8 * 5000)
  want <- mg1k_shifted_exp_blocking(lambda, 8 * 42 / 2e6, 8 * 4960 / 2e6, 5)
  expect_equal(validation_theory_wait_s("mg1k_blocking", scenario, "k5", "stream", 0.9, "ns3"), want)
  # 0.7% below M/M/1/K's formula at the same rho
  expect_equal(want / mm1k_blocking(lambda * 8 * 5002 / 2e6, 5), 0.9929, tolerance = 1e-3)
})

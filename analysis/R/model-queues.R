# Closed forms of single queues for the validation page beside the M/G/1
# ones (model-validation.R): M/M/1 (scenarios/validation/mm1.yaml) and M/M/1/K
# (mm1k.yaml), Poisson arrivals at rate lambda, exponential service of mean
# 1/mu, M/M/1/K with room for K packets in the system (the one in service
# included), rho = lambda / mu (Kleinrock, Queueing Systems vol. 1, §3.2,
# §3.6); M/D/1 is model-validation.R's Pollaczek-Khinchine with one class.
# tests/test_queueing.py holds ns-3's M/M/1/K blocking to the same formula.

#' Blocking probability of M/M/1/K: the share of arrivals that find K in the
#' system (PASTA), p_K = (1 - rho) rho^K / (1 - rho^(K + 1)); 1 / (K + 1) at rho = 1.
mm1k_blocking <- function(rho, k) {
  mm1k_check(rho, k)
  ifelse(abs(rho - 1) < 1e-12, 1 / (k + 1), (1 - rho) * rho^k / (1 - rho^(k + 1)))
}

#' Mean number in an M/M/1/K system, L = rho / (1 - rho) - (K + 1) rho^(K+1) /
#' (1 - rho^(K + 1)); K / 2 at rho = 1.
mm1k_mean_number <- function(rho, k) {
  mm1k_check(rho, k)
  ifelse(abs(rho - 1) < 1e-12, k / 2, rho / (1 - rho) - (k + 1) * rho^(k + 1) / (1 - rho^(k + 1)))
}

#' Blocking probability of M/G/1/K (room for K in the system) with the
#' contract's shifted exponential service S = c + Exp(mean m): the embedded
#' Markov chain at departures (Gross & Harris, Fundamentals of Queueing
#' Theory, §5.1.9 (4th ed.)): a_j = P(j arrivals during a service), the
#' chain on 0..K-1 solved for pi, then the time-average blocking
#' p_K = 1 - 1 / (pi_0 + rho), rho = lambda E[S] (PASTA: the share of
#' arrivals lost). With c = 0 it is M/M/1/K's closed form; with K = 1 it is
#' rho / (1 + rho) for any service (Erlang's loss formula).
#'
#' @param lambda_per_s Arrival rate.
#' @param shift_s,exp_mean_s The service time's constant part c and the mean
#'   m of its exponential part.
#' @param k Room in the system (>= 1).
mg1k_shifted_exp_blocking <- function(lambda_per_s, shift_s, exp_mean_s, k) {
  if (length(lambda_per_s) != 1 || !is.finite(lambda_per_s) || lambda_per_s <= 0) {
    stop("M/G/1/K: lambda_per_s must be one positive number")
  }
  if (length(shift_s) != 1 || shift_s < 0 || length(exp_mean_s) != 1 || exp_mean_s < 0 || shift_s + exp_mean_s <= 0) {
    stop("M/G/1/K: shift_s and exp_mean_s must be non-negative numbers, not both 0")
  }
  mm1k_check(lambda_per_s * (shift_s + exp_mean_s), k)
  # a_j = E[e^{-lambda S} (lambda S)^j / j!], S = c + X: integrate over X's density
  a <- vapply(0:(k - 1), function(j) {
    if (exp_mean_s == 0) return(stats::dpois(j, lambda_per_s * shift_s))
    stats::integrate(function(x) stats::dpois(j, lambda_per_s * (shift_s + x)) * stats::dexp(x, 1 / exp_mean_s),
                     0, Inf, rel.tol = 1e-12)$value
  }, numeric(1))
  # departures leave i in the system; the next departure leaves max(i - 1, 0) + arrivals, at most K - 1
  p <- matrix(0, k, k)
  for (i in 0:(k - 1)) {
    base <- max(i - 1, 0)
    for (j in base:(k - 1)) {
      p[i + 1, j + 1] <- if (j < k - 1) a[j - base + 1] else 1 - sum(p[i + 1, seq_len(k - 1)])
    }
  }
  # pi (P - I) = 0 with sum(pi) = 1
  system <- rbind(t(p) - diag(k), rep(1, k))
  pi <- qr.solve(system, c(rep(0, k), 1))
  rho <- lambda_per_s * (shift_s + exp_mean_s)
  1 - 1 / (pi[[1]] + rho)
}

mm1k_check <- function(rho, k) {
  if (!is.numeric(rho) || any(is.na(rho) | rho < 0)) stop("M/M/1/K: rho must be non-negative numbers")
  if (!is.numeric(k) || any(is.na(k) | k < 1 | k != round(k))) stop("M/M/1/K: K must be whole numbers >= 1")
}

#' Second moment of the service time on the wire of a packet of mean IP
#' length `bytes`: deterministic, or with exponential sizes the contract's
#' 40 + Exp(bytes - 40) (docs/jobs.md): with c = 40 + framing and a = bytes -
#' 40, E[(c + X)^2] = c^2 + 2 c a + 2 a^2 bytes^2, times (8 / C)^2 (the cap
#' at 65,507 bytes is left out: 2e-4 of the second moment at a mean of 5,000).
service_second_moment_s2 <- function(bytes, exponential, framing_bytes, capacity_bps) {
  scale <- 8 / capacity_bps
  c0 <- 40 + framing_bytes
  a <- bytes - 40
  ifelse(exponential, scale^2 * (c0^2 + 2 * c0 * a + 2 * a^2), (scale * (bytes + framing_bytes))^2)
}

#' The closed forms of this file as validation_models() entries: each maps
#' the classes (validation_poisson_classes) and the series' discipline to a
#' value per group (its name says what: a waiting time, or a probability).
queue_validation_models <- function() {
  list(
    mm1_fifo = list(
      label = "M/M/1 (Pollaczek-Khinchine with the exponential sizes' moments)",
      wait = function(classes, series) {
        m <- mg1_mixture_moments(classes$lambda_per_s, classes$service_s, classes$second_moment_s2)
        rep(mg1_fifo_waiting_s(m$lambda_per_s, m$mean_s, m$second_moment_s2), nrow(classes))
      }),
    mm1k_blocking = list(
      label = "M/M/1/K blocking probability",
      wait = function(classes, series) {
        limit <- as.numeric(series$params$limit_pkts %||%
                              stop("validation: mm1k_blocking needs a droptail series (limit_pkts)"))
        rho <- sum(classes$lambda_per_s * classes$service_s)
        # the one on the wire is in the system too: K = limit + 1 (scenarios/validation/mm1k.yaml)
        rep(mm1k_blocking(rho, limit + 1), nrow(classes))
      }),
    mg1k_blocking = list(
      label = "M/G/1/K blocking probability (the contract's shifted exponential sizes)",
      wait = function(classes, series) {
        limit <- as.numeric(series$params$limit_pkts %||%
                              stop("validation: mg1k_blocking needs a droptail series (limit_pkts)"))
        if (nrow(classes) != 1 || !classes$exponential) {
          stop("validation: mg1k_blocking needs one poisson group with exponential sizes (size_mean_bytes)")
        }
        # service on the wire: (40 + framing) bytes, then the exponential part of mean (mean - 40) bytes
        per_byte_s <- classes$service_s / (classes$pkt_bytes + classes$framing_bytes)
        shift_s <- (40 + classes$framing_bytes) * per_byte_s
        rep(mg1k_shifted_exp_blocking(classes$lambda_per_s, shift_s, classes$service_s - shift_s, limit + 1),
            nrow(classes))
      })
  )
}

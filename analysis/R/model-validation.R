# The closed forms qlab's own simulation is validated against (the
# `validation` report page, scenarios/validation): a validation scenario
# feeds a dumbbell's bottleneck with Poisson streams (the job contract's
# `poisson` application) whose groups take a `packet_share` of a stream that
# loads the bottleneck to `workload.poisson_load`, one packet size per
# group. The textbook results are model-ncq-journal.R's (one place):
# Pollaczek-Khinchine for FIFO, Cobham for non-preemptive priority.

#' The Poisson classes of a validation scenario at load `u`, as the backend
#' runs them: per group, the arrival rate (from the IP bytes, as qlab.plan
#' draws it) and the service time (8 (pkt_bytes + framing) / C on the
#' bottleneck, deterministic). The offered load on the wire is a little
#' above `u` (ns-3's PPP header): the theory is evaluated at it.
#'
#' @param scenario A resolved validation scenario (scenario.json).
#' @param u The sweep value of `workload.poisson_load`.
#' @param framing_bytes `bottleneck_framing_bytes` of the backend.
#' @return tibble group, pkt_bytes (a group's mean with exponential sizes),
#'   lambda_per_s, exponential (its sizes are), framing_bytes, service_s
#'   (mean), second_moment_s2, ordered by pkt_bytes (smaller first).
validation_poisson_classes <- function(scenario, u, framing_bytes) {
  capacity <- as.numeric(scenario$topology$bottleneck_rate_bps %||% NA)
  groups <- purrr::keep(scenario$workload$groups, function(g) identical(g$app, "poisson") && !is.null(g$packet_share))
  if (is.na(capacity) || length(groups) == 0) {
    stop("validation: the scenario needs a dumbbell (bottleneck_rate_bps) and poisson groups with a packet_share")
  }
  if (length(u) != 1 || !is.finite(u) || u <= 0) stop("validation: u must be one positive load")
  share <- vapply(groups, function(g) as.numeric(g$packet_share), numeric(1))
  # a group with exponential sizes (size_mean_bytes) loads the link with its mean
  bytes <- vapply(groups, function(g) as.numeric(g$size_mean_bytes %||% g$pkt_bytes), numeric(1))
  exponential <- vapply(groups, function(g) !is.null(g$size_mean_bytes), logical(1))
  lambda <- u * capacity / (8 * sum(share * bytes))
  tibble::tibble(group = names(groups), pkt_bytes = unname(bytes), lambda_per_s = unname(lambda * share),
                 exponential = unname(exponential), framing_bytes = framing_bytes,
                 service_s = unname(8 * (bytes + framing_bytes) / capacity),
                 second_moment_s2 = unname(service_second_moment_s2(bytes, exponential, framing_bytes, capacity))) |>
    dplyr::arrange(.data$pkt_bytes)
}

#' The closed forms by name: each maps the classes (validation_poisson_classes)
#' and the series' discipline to each group's mean waiting time (seconds).
validation_models <- function() {
  c(queue_validation_models(), list(
    mg1_fifo = list(
      label = "Pollaczek-Khinchine (FIFO M/G/1)",
      wait = function(classes, series) {
        m <- mg1_mixture_moments(classes$lambda_per_s, classes$service_s, classes$service_s^2)
        rep(mg1_fifo_waiting_s(m$lambda_per_s, m$mean_s, m$second_moment_s2), nrow(classes))
      }),
    ncq_journal_eq9 = list(
      label = "NCQ journal eq. (9) as printed (squared mean service time)",
      wait = function(classes, series) {
        m <- mg1_mixture_moments(classes$lambda_per_s, classes$service_s, classes$service_s^2)
        rho <- m$lambda_per_s * m$mean_s
        rep(rho * m$mean_s / (2 * (1 - rho)), nrow(classes))
      }),
    mg1_priority = list(
      label = "Cobham (non-preemptive priority M/G/1)",
      wait = function(classes, series) {
        # the discipline's favoured class first: NCQ favours packets shorter
        # than size_bytes (with thresh 1, every one of them)
        limit <- as.numeric(series$params$size_bytes %||%
                              stop("validation: mg1_priority needs an ncq series (size_bytes)"))
        order <- order(classes$pkt_bytes >= limit, classes$pkt_bytes)
        w <- mg1_priority_waiting_s(classes$lambda_per_s[order], classes$service_s[order], classes$service_s[order]^2)
        w[1, match(seq_along(order), order)]
      })
  ))
}

#' One closed form's mean waiting time of a group at load u.
validation_theory_wait_s <- function(model, scenario, series, group, u, backend) {
  models <- validation_models()
  if (!model %in% names(models)) {
    stop(sprintf("validation: model `%s` must be one of %s", model, paste(names(models), collapse = ", ")))
  }
  framing <- bottleneck_framing_bytes[backend]
  if (is.na(framing)) stop(sprintf("validation: no bottleneck framing is known for backend `%s`", backend))
  spec <- scenario$series[[series]] %||% stop(sprintf("validation: no series `%s` in the scenario", series))
  vapply(u, function(x) {
    classes <- validation_poisson_classes(scenario, x, unname(framing))
    wait <- models[[model]]$wait(classes, spec)
    i <- match(group, classes$group)
    if (is.na(i)) stop(sprintf("validation: no poisson group `%s` with a packet_share", group))
    wait[[i]]
  }, numeric(1))
}

#' The expected offered_load of a validation scenario's runs at load u on a
#' backend (metric-offered-load.R): the Poisson classes' rates times their
#' mean service times on the wire, the known expectation of the claims'
#' control variate (claims.R, evaluate_theory).
validation_offered_load <- function(scenario, u, backend) {
  framing <- bottleneck_framing_bytes[backend]
  if (is.na(framing)) stop(sprintf("validation: no bottleneck framing is known for backend `%s`", backend))
  classes <- validation_poisson_classes(scenario, u, unname(framing))
  sum(classes$lambda_per_s * classes$service_s)
}

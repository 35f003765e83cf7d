# The srd proof's schedules (Figs. 1-2) from a replay through the core.

replay <- Sys.getenv("QLAB_QCORE_REPLAY", file.path("..", "..", "..", "build", "core", "qcore-replay"))

test_that("the replay serves D while L_D <= alpha L_R, worked by hand", {
  skip_if_not(file.exists(replay), "qcore-replay is not built (make build)")
  got <- replay_srd(srd_schedule_events(arrival_slot = 20, slots = 5), replay = replay)
  # alpha = 1: D (0 <= 0), then L_D = 400 > L_R = 0: R; 400 <= 1000: D; 800 <= 1000: D; 1200 > 1000: R
  expect_equal(got$band, c(0L, 1L, 0L, 0L, 1L))
  expect_equal(got$len, c(400, 1000, 400, 400, 1000))
  # the D buffer: B_D = floor((d - w) R_D / 8), w = 2 (400 + 1000) 8 / 1e6 = 22.4 ms, R_D = 0.5 Mbit/s:
  # 27.6 ms x 62500 bytes/s = 1725 bytes: of 6 D packets of 400 bytes queued at 0, 4 are admitted
  six <- tibble::tibble(t_ns = c(rep(0, 8), (1:10) * 8e6), op = rep(c("enq", "deq"), c(8, 10)),
                        len = c(rep(400, 6), 1000, 1000, rep(NA, 10)), cls = c(rep(0, 6), 1, 1, rep(NA, 10)))
  expect_equal(sum(replay_srd(six, replay = replay)$band == 0), 4)
})

test_that("each figure's schedule has its case's signs of delta at t_a and t_d", {
  skip_if_not(file.exists(replay), "qcore-replay is not built (make build)")
  one <- srd_schedule_case("fig1", replay)
  expect_gt(one$delta_a, 0)
  expect_gte(one$delta_d, 0)
  two <- srd_schedule_case("fig2", replay)
  expect_lte(two$delta_a, 0)
  expect_lt(two$delta_d, 0)
  # p waits: it departs after it arrives, and both queues are still backlogged at the end
  expect_gt(one$t_d, one$t_a)
  # both queues stay backlogged: D departures alternate with R ones to the end
  expect_true(all(c(0L, 1L) %in% utils::tail(one$departures$band, 4)))
  expect_lt(sum(one$departures$band == 1), 8)
  rows <- srd_schedule_figure_data(replay)
  expect_setequal(unique(rows$figure), c("srd/fig1", "srd/fig2"))
  expect_equal(names(rows), model_columns())
})

test_that("a missing replay tool is an error that says what to build", {
  withr::local_envvar(QLAB_QCORE_REPLAY = "/nonexistent/qcore-replay")
  expect_error(qcore_replay_path(), "must be built")
})

# owl(): DTRlearn2's K-stage outcome weighted learning, privately (pydpowl.DPMultiStageOWL through the worker).
# Cases and matched settings in helper-owl.R (validation/multistage.py's).

test_that("at epsilon = Inf owl() is the Python engine's regime on sim_Kstage (2 and 3 stages) and adhd", {
  require_dtrlearn2()
  cases <- list(owl_sim_case(2, 2), owl_sim_case(3, 2), owl_adhd_case())
  # any gammas will do (the same for both); these are close to the matched ones
  settings <- lapply(cases, function(cs) owl_matched(cs, followers = rep(cs$n, cs$K) - 10 * seq_len(cs$K)))
  direct <- python_multistage(cases, settings)
  for (i in seq_along(cases)) {
    fit <- owl_fit_matched(cases[[i]], settings[[i]])
    for (k in seq_len(cases[[i]]$K)) {
      expect_identical(unname(coef(fit)[[k]]), direct[[i]][[k]], label = sprintf("case %d, stage %d", i, k))
    }
  }
})

test_that("at epsilon = Inf owl() recommends DTRlearn2's owl() treatment for >= 95% of subjects at every stage", {
  require_dtrlearn2()
  for (cs in list(owl_sim_case(2, 2), owl_adhd_case())) {
    ref <- dtrlearn2_owl(cs)
    settings <- owl_matched(cs, dtrlearn2_followers(cs, ref$predicted))
    fit <- owl_fit_matched(cs, settings)
    ours <- predict(fit, H = cs$H, K = cs$K)
    agreement <- vapply(seq_len(cs$K), function(k) mean(ours$treatment[[k]] == ref$predicted$treatment[[k]]), 1)
    expect_true(all(agreement >= 0.95), label = sprintf("agreement %s", paste(format(agreement), collapse = ", ")))
    # predict() answers with DTRlearn2's structure: names, classes, dims and types, for recommendations (all or the
    # first stage only) and for the evaluation on data with AA, RR and pi
    expect_identical(value_shape(ours), value_shape(ref$predicted))
    expect_identical(value_shape(predict(fit, H = cs$H[[1L]], K = 1)),
                     value_shape(predict(ref$fit, H = cs$H[[1L]], K = 1)))
    pi <- rep(list(rep(0.5, cs$n)), cs$K)
    ev <- predict(fit, H = cs$H, AA = cs$AA, RR = cs$RR, K = cs$K, pi = pi)
    ev_ref <- predict(ref$fit, H = cs$H, AA = cs$AA, RR = cs$RR, K = cs$K, pi = pi)
    expect_identical(value_shape(ev), value_shape(ev_ref))
    # DTRlearn2's value and benefit formulas applied to our regime, by hand
    follow <- Reduce(`&`, lapply(seq_len(cs$K), function(k) ours$treatment[[k]][, 1L] == cs$AA[[k]]))
    Y <- Reduce(`+`, cs$RR)
    w <- 1 / 0.5^cs$K
    expect_equal(ev$valuefun, sum(Y * follow * w) / sum(follow * w), tolerance = 1e-12)
    expect_equal(ev$benefit, ev$valuefun - sum(Y * (!follow) * w) / sum((!follow) * w), tolerance = 1e-12)
  }
})

small_case <- function(n = 300, seed = 4) {
  set.seed(seed)
  X <- matrix(rnorm(n * 3), n, dimnames = list(NULL, c("a", "b", "c")))
  A1 <- sample(c(-1, 1), n, TRUE)
  A2 <- sample(c(-1, 1), n, TRUE)
  R2 <- (A1 == sign(X[, 1])) + (A2 == sign(X[, 2])) + rnorm(n, 0, 0.5)
  list(H = list(X, cbind(X, a1 = A1)), AA = list(A1, A2), RR = list(rep(0, n), R2), n = n)
}

fit_small <- function(.case = small_case(), ...) {  # .case: owl()'s c = would partially match an argument cs
  args <- list(H = .case$H, AA = .case$AA, RR = .case$RR, n = .case$n, K = 2, pi = 0.5, epsilon = Inf, gamma = 20,
               bounds = 3, reward_bounds = list(c(0, 0.1), c(-1, 4)), res.lasso = FALSE)
  new <- list(...)
  args[names(new)] <- new
  do.call(owl, args)
}

test_that("DTRlearn2's shapes: H as one matrix or a list, pi as one number, a list of numbers or of vectors", {
  require_backends(dppack = FALSE)
  cs <- small_case()
  fit <- fit_small(cs)
  n <- cs$n
  same <- function(other) expect_identical(coef(other), coef(fit))
  same(fit_small(cs, pi = list(0.5, 0.5)))
  same(fit_small(cs, pi = list(c("-1" = 0.5, "1" = 0.5), 0.5)))
  same(fit_small(cs, pi = list(rep(0.5, n), rep(0.5, n)), weight_sensitivity = 0, propensity_floor = 0.5))
  same(fit_small(cs, pi = list(cbind(rep(0.5, n), rep(0.5, n)), 0.5), weight_sensitivity = 0, propensity_floor = 0.5))
  same(fit_small(cs, bounds = list(3, 3)))
  same(fit_small(cs, bounds = list(list(lower = rep(-3, 3), upper = rep(3, 3)),
                                   list(lower = c(a1 = -3, c = -3, b = -3, a = -3), upper = c(c = 3, b = 3, a = 3, a1 = 3)))))
  # DTRlearn2's c (one value) is gamma_k = n / (c d_k s_k^2) with the stage's largest bound s_k
  expect_identical(coef(fit_small(cs, c = 0.5, gamma = NULL)),
                   coef(fit_small(cs, gamma = c(n / (0.5 * 4 * 9), n / (0.5 * 5 * 9)))))
  one <- fit_small(cs, H = cs$H[[1L]], bounds = 3)  # one history for every stage
  expect_identical(coef(one)$stage1, coef(fit_small(cs, H = list(cs$H[[1L]], cs$H[[1L]]), bounds = 3))$stage1)
  expect_identical(value_shape(predict(one, H = cs$H[[1L]], K = 2))$names, c("fit", "probability", "treatment"))
  # columns matched by name in prediction
  expect_identical(predict(fit, H = list(cs$H[[1L]][, 3:1], cs$H[[2L]][, c(4, 1:3)]), K = 2),
                   predict(fit, H = cs$H, K = 2))
  expect_named(fit$stage1, c("beta0", "beta", "arms", "coding", "vertices", "epsilon", "epsilon_baseline", "gamma",
                             "sensitivity", "weights_upper_bound", "release_grid", "baseline_coef", "noise", "mechanism", "residual",
                             "huber_h", "mean_baseline", "stage"))
  expect_identical(dim(fit$stage2$beta), c(4L, 1L))
  expect_equal(drop(predict(fit, H = cs$H, K = 2)$fit[[2L]]), drop(fit$stage2$beta0 + cs$H[[2L]] %*% fit$stage2$beta))
})

test_that("a stage with three arms: factor levels in, a factor of the levels out, a coefficient matrix", {
  require_backends(dppack = FALSE)
  cs <- small_case(600)
  arms <- c("low", "mid", "high")
  set.seed(9)
  A2 <- factor(sample(arms, cs$n, TRUE), levels = arms)
  X <- cs$H[[1L]]
  best <- arms[max.col(cbind(X[, "b"], -0.5 * X[, "b"] + 0.87 * X[, "c"], -0.5 * X[, "b"] - 0.87 * X[, "c"]))]
  R2 <- (cs$AA[[1L]] == sign(cs$H[[1L]][, 1])) + 2 * (A2 == best) + rnorm(cs$n, 0, 0.3)
  fit <- fit_small(cs, H = cs$H[[1L]], AA = list(cs$AA[[1L]], A2), RR = list(rep(0, cs$n), R2), pi = list(0.5, 1 / 3),
                   bounds = 3, reward_bounds = list(c(0, 0.1), c(-1, 4)), gamma = 10)
  theta <- coef(fit)$stage2
  expect_identical(dimnames(theta), list(c("f1", "f2"), c("(Intercept)", "a", "b", "c")))
  p <- predict(fit, H = cs$H[[1L]], K = 2)
  expect_s3_class(p$treatment[[2L]], "factor")
  expect_identical(levels(p$treatment[[2L]]), arms)
  expect_gt(mean(as.character(p$treatment[[2L]]) == best), 0.8)
  expect_identical(dim(p$fit[[2L]]), c(as.integer(cs$n), 2L))
  expect_equal(rowSums(p$probability[[2L]]), rep(1, cs$n))
  # the unequal allocation of a named vector, and its mistakes
  expect_error(fit_small(cs, H = cs$H[[1L]], bounds = 3, AA = list(cs$AA[[1L]], A2), RR = list(rep(0, cs$n), R2),
                         pi = list(0.5, c(low = 0.5, mid = 0.25, hihg = 0.25))),
               regexp = "^pi\\[\\[2\\]\\] as a named vector must give one probability per arm, named by the levels \"low\", \"mid\", \"high\"; missing \"high\"; not a level: \"hihg\"\\.$")
})

test_that("bad input gets R errors naming the argument", {
  require_backends(dppack = FALSE)
  cs <- small_case()
  expect_error(fit_small(cs, AA = list(cs$AA[[1L]], rep(1, cs$n))),
               regexp = paste0("^AA\\[\\[2\\]\\] \\(stage 2's treatments\\) must contain at least two arms \\(a rule ",
                               "chooses between treatments\\); it has one level only, 1\\.$"), class = "pydpowl_argument_error")
  expect_error(fit_small(cs, pi = list(c("-1" = 0.5, "1" = 0.6), 0.5)),
               regexp = paste0("^pi\\[\\[1\\]\\]: the probabilities of the 2 arms must sum to 1 \\(they are the ",
                               "randomisation probabilities\\), got 1\\.1\\.$"), class = "pydpowl_value_error")
  m <- cbind(rep(0.5, cs$n), rep(0.6, cs$n))
  expect_error(fit_small(cs, pi = list(m, 0.5), weight_sensitivity = 0, propensity_floor = 0.4),
               regexp = "^pi\\[\\[1\\]\\]: each row must sum to 1 across the 2 arms .*300 of 300 rows do not \\(first at row 1\\)\\.$")
  expect_error(fit_small(cs, H = list(cs$H[[1L]], cs$H[[2L]][-1L, ])),
               regexp = paste0("^H\\[\\[2\\]\\] \\(stage 2's history\\) has 299 rows but H\\[\\[1\\]\\] has 300: every stage's ",
                               "history must have one row per subject"))
  expect_error(fit_small(cs, H = list(cs$H[[1L]][-1L, ], cs$H[[2L]][-1L, ])),
               regexp = "^H\\[\\[1\\]\\] \\(stage 1's history\\) has 299 rows but n = 300: every stage's history needs one row")
  expect_error(fit_small(cs, RR = list(rep(0, cs$n), cs$RR[[2L]][-1L])),
               regexp = "^RR\\[\\[2\\]\\] must have length 300 \\(one per subject\\), got length 299\\.$")
  expect_error(fit_small(cs, AA = list(cs$AA[[1L]], cs$AA[[2L]][-1L])),
               regexp = "^AA\\[\\[2\\]\\] \\(stage 2's treatments\\) must have length 300 \\(one entry per subject\\), got length 299\\.$")
  expect_error(fit_small(cs, AA = cs$AA[1L]), regexp = "^AA must have one entry per stage \\(K = 2\\), got 1\\.$")
  expect_error(fit_small(cs, pi = list(rep(0.5, cs$n), 0.5)),
               regexp = "^pi\\[\\[1\\]\\] was given as an array of P\\(A_i \\| x_i\\): state how it was obtained with weight_sensitivity=")
  expect_error(fit_small(cs, pi = list(rep(0.5, cs$n), 0.5), weight_sensitivity = 0),
               regexp = "^propensity_floor is needed: pi\\[\\[1\\]\\] gives one probability per subject")
  expect_error(fit_small(cs, pi = "estimated"), regexp = "^pi must be given: .*pi = \"estimated\" fits them on the private data")
  expect_error(fit_small(cs, epsilon = 0), regexp = "^epsilon must be in \\(0, Inf\\], got epsilon = 0\\.$",
               class = "pydpowl_value_error")
  expect_error(fit_small(cs, epsilon = c(1, 1, 1)),
               regexp = "^epsilon must be one number \\(the total\\) or one per stage \\(T = 2\\), got 3 numbers\\.$")
  expect_error(fit_small(cs, c = 2^(-2:2), gamma = NULL),
               regexp = "^c must be one number \\(DTRlearn2's cost; no cross-validation over the private data\\)")
  expect_error(fit_small(cs, c = 1), regexp = "^give either gamma .* or c .*, not both\\.$")
  expect_error(fit_small(cs, reward_bounds = c(4, -1)),
               regexp = "^reward_bounds must be finite with lower < upper .*, got reward_bounds = c\\(4, -1\\)\\.$")
  expect_error(fit_small(cs, bounds = -1), regexp = "^bounds as one number s means \\[-s, s\\]")
  expect_error(fit_small(cs, bounds = list(lower = c(a = -3), upper = c(a = 3))),
               regexp = "^bounds\\$lower has no value for feature\\(s\\) 'b', 'c'")
  expect_error(fit_small(cs, loss = "ramp"), regexp = "^loss = \"ramp\" is not supported: .*Huber hinge",
               class = "pydpowl_not_supported")
  expect_error(fit_small(cs, kernel = "rbf"), regexp = "^kernel = \"rbf\" is not supported", class = "pydpowl_not_supported")
  expect_error(fit_small(cs, augment = TRUE), regexp = "^augment = TRUE is not supported", class = "pydpowl_not_supported")
  expect_error(fit_small(cs, m = 3), regexp = "^m is DTRlearn2's number of cross-validation folds", class = "pydpowl_not_supported")
  expect_error(fit_small(cs, sigma = 0.05), regexp = "^sigma is DTRlearn2's RBF-kernel parameter")
  expect_error(fit_small(cs, solver = "svm"), regexp = "^solver chooses DTRlearn2's quadratic-programming solver")
  expect_error(fit_small(cs, baseline = "lower"), regexp = "^give res.lasso or baseline, not both")
  expect_error(fit_small(cs, typo = 1), regexp = "unknown argument\\(s\\) 'typo'")
  expect_error(owl(cs$H, cs$AA, cs$RR, cs$n, 2, pi = 0.5), regexp = "^epsilon, bounds, reward_bounds must be given \\(the privacy budget")
  fit <- fit_small(cs)
  expect_error(fit$valuefun, regexp = "^object\\$valuefun: DTRlearn2's value of the regime on the training data is computed from the private data",
               class = "pydpowl_not_kept")
  expect_error(fit$stage1$treatment, regexp = "^stage1\\$treatment: see fit: use predict\\(object, H, K\\)")
  expect_error(predict(fit, H = cs$H, K = 3), regexp = "^K \\(the number of stages to predict\\) must be a whole number in 1\\.\\.2")
  expect_error(predict(fit, H = cs$H, AA = cs$AA, RR = cs$RR, K = 2), regexp = "^pi is needed to evaluate the regime")
  expect_error(predict(fit, H = cs$H, AA = list(cs$AA[[1L]], cs$AA[[2L]] * 2), RR = cs$RR, K = 2, pi = 0.5),
               regexp = "^AA\\[\\[2\\]\\] \\(stage 2's treatments\\) must hold the stage's arms \\(-1, 1\\)")
  expect_error(predict(fit, H = list(cs$H[[1L]][, 1:2], cs$H[[2L]]), K = 2),
               regexp = "^H\\[\\[1\\]\\] lacks the column\\(s\\) 'c' of stage 1's history")
})

test_that("private fits: the budget on a ledger, OS entropy by default, R's stream on request; nothing of the data kept", {
  require_backends(dppack = FALSE)
  cs <- small_case()
  args <- list(epsilon = 2, res.lasso = TRUE, mechanism = "output", huber_h = 0.5)
  a <- do.call(fit_small, c(list(cs), args))
  b <- do.call(fit_small, c(list(cs), args))
  expect_false(identical(coef(a), coef(b)))
  expect_identical(a$ledger$release,
                   c("stage 2 baseline (linear, KST)", "stage 2 rule (2 arms, output perturbation)",
                     "stage 1 baseline (linear, KST)", "stage 1 rule (2 arms, output perturbation)"))
  expect_equal(a$ledger$epsilon, c(0.25, 0.75, 0.25, 0.75))
  expect_equal(a$epsilon, 2)
  set.seed(5)
  replay <- function(w) if (inherits(w, "pydpowl_replay_stream")) invokeRestart("muffleWarning")  # tested below
  r1 <- withCallingHandlers(do.call(fit_small, c(list(cs), args, rng = "R")), warning = replay)
  set.seed(5)
  r2 <- withCallingHandlers(do.call(fit_small, c(list(cs), args, rng = "R")), warning = replay)
  expect_identical(coef(r1), coef(r2))
  expect_true(any(grepl("NOTE: rng = \"R\".*NOT private", capture.output(print(r1)))))
  expect_warning(do.call(fit_small, c(list(cs), args, rng = "R")), class = "pydpowl_replay_stream")
  # W_1 = (range of R_1 + range of R_2) / (1/2)^2, W_2 = range of R_2 / (1/2); Delta = (2W + 2 n tol) / gamma
  expect_equal(c(a$stage1$weights_upper_bound, a$stage2$weights_upper_bound), c(5.1 / 0.25, 5 / 0.5))
  expect_equal(a$stage2$sensitivity, (2 * 10 + 2 * cs$n * 1e-10) / 20, tolerance = 1e-14)
  seen <- character(0)
  withCallingHandlers(fit_small(cs, epsilon = 0.5, gamma = 0.5, mechanism = "output"), pydpowl_noise_dominated = function(w) {
    seen <<- c(seen, conditionMessage(w))
    invokeRestart("muffleWarning")
  })
  expect_match(seen, "^stage [12]: the release is noise-dominated: .*From public quantities only")
  expect_length(seen, 2L)
  values <- function(x) if (is.list(x)) unlist(lapply(unclass(x), values)) else length(x)
  expect_true(all(values(a) < cs$n))  # no vector with one entry per subject
  s <- capture.output(print(summary(a)))
  expect_true(any(grepl("^Privacy: epsilon = 2 in total", s)))
  expect_false(any(grepl("NON-PRIVATE", s)))
  d <- capture.output(print(summary(a, diagnostics = TRUE)))
  expect_true(any(grepl("^NON-PRIVATE diagnostics", d)))
  expect_identical(unname(a$diagnostics[, "followed"])[2L], cs$n)
  expect_true(any(grepl("^Stage 2 \\(-1, 1\\): recommend 1 where beta0 \\+ H2 beta > 0", capture.output(print(a)))))
})

test_that("owl() releases by the engine's default: objective perturbation with residual weights per two-arm stage", {
  require_backends(dppack = FALSE)
  cs <- small_case()
  args <- list(H = cs$H, AA = cs$AA, RR = cs$RR, n = cs$n, K = 2, pi = 0.5, epsilon = 2, gamma = 20, bounds = 3,
               reward_bounds = list(c(0, 0.1), c(-1, 4)))
  a <- do.call(owl, args)  # neither res.lasso nor baseline: the engine's residual weights (a private mean first)
  expect_identical(a$ledger$release,
                   c("stage 2 baseline (mean, Laplace)", "stage 2 rule (2 arms, objective perturbation)",
                     "stage 1 baseline (mean, Laplace)", "stage 1 rule (2 arms, objective perturbation)"))
  expect_equal(sum(a$ledger$epsilon), 2, tolerance = 1e-12)
  expect_identical(c(a$stage1$mechanism, a$stage2$mechanism), c("objective", "objective"))
  expect_true(a$stage1$residual && a$stage2$residual)
  expect_equal(a$huber_h, c(1, 1))  # objective perturbation's default h
  expect_true(is.nan(a$stage2$sensitivity) && is.finite(a$stage2$noise$expected_norm))
  expect_true(any(grepl("objective perturbation, residual weights", capture.output(print(a)))))
  s <- capture.output(print(summary(a)))
  expect_true(any(grepl("objective\\+residual", s)))
  # mechanism = "output": the classic BOWL weights and Algorithm 1 at every stage
  o <- do.call(owl, c(args, mechanism = "output"))
  expect_identical(o$ledger$release, c("stage 2 baseline (linear, KST)", "stage 2 rule (2 arms, output perturbation)",
                                       "stage 1 baseline (linear, KST)", "stage 1 rule (2 arms, output perturbation)"))
  expect_equal(o$huber_h, c(0.5, 0.5))
  # res.lasso = TRUE asks for DTRlearn2's residual (a private linear baseline): objective perturbation without
  # residual weights
  l <- do.call(owl, c(args, res.lasso = TRUE))
  expect_identical(l$ledger$release[2L], "stage 2 rule (2 arms, objective perturbation)")
  expect_false(l$stage2$residual)
  expect_error(do.call(owl, c(args, mechanism = "objective")), regexp = "^mechanism must be \"auto\"")
})

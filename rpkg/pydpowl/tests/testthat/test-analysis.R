test_that("dpowl_analysis releases a rule, its value with an interval and a ledger within the budget", {
  require_backends(dppack = FALSE)
  d <- pydpowl_data("cyp_guides_style", n = 800, seed = 3)
  X <- d[, c("age", "male", "nonwhite", "mdd")]
  run <- function(...) {
    dpowl_analysis(X, treatment = d$treatment, benefit = d$benefit, bounds = attr(d, "bounds"),
                   benefit_bounds = c(0, log(24 * 365)),
                   weights_upper_bound = attr(d, "weights_upper_bound"), total_epsilon = 1.5,
                   propensity = 2 / 3, ...)
  }
  set.seed(11)
  a <- with_replay(run())
  expect_s3_class(a, "dpowl_analysis")
  expect_named(coef(a), c("(Intercept)", "age", "male", "nonwhite", "mdd"))  # as dpowl() names it
  expect_true(a$value$ci_low <= a$value$estimate && a$value$estimate <= a$value$ci_high)
  expect_equal(a$value$level, 0.95)
  releases <- vapply(a$ledger$releases, function(r) r$epsilon, 0)
  expect_equal(a$ledger$total_epsilon, 1.5)
  expect_lte(sum(releases), 1.5 * (1 + 1e-12))  # sequential composition: the releases add up to at most E
  # n is private unless declared public (issue 21.1): not kept, not printed; public_n = TRUE states the sizes
  expect_null(a$n)
  expect_false(any(grepl("800|400", capture.output(print(a)))))
  expect_output(print(a), "n not released \\(not declared public\\)")
  shown <- run(public_n = TRUE)
  expect_equal(shown$n_learning + shown$n_evaluation, 800L)
  expect_output(print(shown), "n = 800 \\(400 learning, 400 evaluation rows\\)")
  after <- .Random.seed
  set.seed(11)
  b <- with_replay(run())
  expect_identical(coef(b), coef(a))  # replay: one draw of R's stream seeds the analysis, set.seed reproduces it
  expect_identical(.Random.seed, after)
  expect_identical(b$value, a$value)
  rule <- predict(a, X)
  expect_length(rule, 800L)
  expect_output(print(a), "Value of the rule: .*Gain over the better single arm")
  # the engine's defaults: objective perturbation with residual weights and the public gamma rule, named
  expect_match(a$mechanism, "^weighted objective perturbation with residual weights")
  expect_output(print(a), "Rule released by weighted objective perturbation")
  expect_match(a$model$tuning, "public rule")
})

test_that("dpowl_analysis checks its arguments in the engine and names them", {
  require_backends(dppack = FALSE)
  d <- pydpowl_data("cyp_guides_style", n = 200, seed = 4)
  args <- list(x = d[, c("age", "male", "nonwhite", "mdd")], treatment = d$treatment, benefit = d$benefit,
               bounds = attr(d, "bounds"), benefit_bounds = c(0, log(24 * 365)),
               weights_upper_bound = attr(d, "weights_upper_bound"), total_epsilon = 1, propensity = 0.5)
  expect_error(do.call(dpowl_analysis, modifyList(args, list(total_epsilon = -1))),
               regexp = "^total_epsilon must be in \\(0, Inf\\), got total_epsilon = -1\\.$",
               class = "pydpowl_value_error")
  expect_error(do.call(dpowl_analysis, modifyList(args, list(benefit_bounds = c(5, 1)))),
               regexp = "^benefit_bounds must satisfy lower < upper, got benefit_bounds = c\\(5, 1\\)\\.$",
               class = "pydpowl_value_error")
  expect_error(do.call(dpowl_analysis, modifyList(args, list(rng = "sometimes"))),
               regexp = "^rng must be \"R\" \\(replay R.s stream, not private\\) or \"system\"")
})

test_that("dpowl_analysis takes a treatment factor with K levels: the rule, each arm's value and the ledger", {
  require_backends(dppack = FALSE)
  set.seed(5)
  n <- 900
  X <- data.frame(x1 = runif(n, -1, 1), x2 = runif(n, -1, 1))
  arm <- factor(sample(c("placebo", "low", "high"), n, replace = TRUE), levels = c("placebo", "low", "high"))
  best <- ifelse(X$x1 > 0.3, "high", ifelse(X$x2 > 0, "low", "placebo"))
  B <- 2 + 2 * (as.character(arm) == best) + runif(n, -1, 1)
  run <- function(...) {
    dpowl_analysis(X, treatment = arm, benefit = B, bounds = list(lower = c(-1, -1), upper = c(1, 1)),
                   benefit_bounds = c(0, 6), weights_upper_bound = 30, total_epsilon = 3, ...)
  }
  a <- with_replay(run(propensity = c(high = 1 / 3, low = 1 / 3, placebo = 1 / 3)))
  expect_equal(dim(coef(a)), c(2L, 3L))
  expect_equal(dimnames(coef(a)), list(c("f1", "f2"), c("(Intercept)", "x1", "x2")))
  expect_setequal(names(a$value$value_of_arm), c("placebo", "low", "high"))
  expect_true(a$value$ci_low <= a$value$estimate && a$value$estimate <= a$value$ci_high)
  releases <- vapply(a$ledger$releases, function(r) r$epsilon, 0)
  expect_equal(sum(releases), 3, tolerance = 1e-12)
  expect_match(a$ledger$releases[[1L]]$name, "3 arms")
  rule <- predict(a, X)
  expect_s3_class(rule, "factor")
  expect_identical(levels(rule), levels(arm))
  # predict() scores the levels in their own order: the same rule as model.json (arms sorted as text)
  st <- a$model$stages[[1L]]
  theta <- cbind(unlist(st$intercept), do.call(rbind, lapply(st$coef, unlist)))
  V <- do.call(rbind, lapply(st$vertices, unlist))
  scores <- (cbind(1, as.matrix(X)) %*% t(theta)) %*% t(V)
  expect_identical(as.character(rule), unlist(st$arms)[max.col(scores, ties.method = "first")])
  expect_output(print(a), "Everyone on placebo: .*Gain over the best single arm")
  expect_error(run(propensity = 0.5), regexp = "1/K", class = "pydpowl_value_error")
  expect_error(run(propensity = 1 / 3, gammas = c(20, 200)), regexp = "private selection of gamma",
               class = "pydpowl_value_error")
})

test_that("several stages (DTRlearn2's lists): the regime, its value and each fixed sequence's, the ledger per stage", {
  require_backends(dppack = FALSE)
  set.seed(11)
  n <- 2000
  X <- cbind(x1 = runif(n, -1, 1), x2 = runif(n, -1, 1))
  A1 <- sample(c(-1, 1), n, replace = TRUE)
  A2 <- factor(sample(c("a", "b"), n, replace = TRUE))
  R2 <- 1 + (A1 == ifelse(X[, "x1"] > 0, 1, -1)) + (as.character(A2) == ifelse(X[, "x2"] > 0, "a", "b")) +
    runif(n, -0.5, 0.5)
  H <- list(X, cbind(X, a1 = A1))
  out <- tempfile("regime-")
  run <- function(...) {
    args <- list(x = H, treatment = list(A1, A2), benefit = list(rep(0, n), R2), bounds = 1,
                 benefit_bounds = list(c(0, 0.1), c(0, 3.5)), total_epsilon = 6, propensity = 0.5, gamma = 40)
    new <- list(...)
    args[names(new)] <- new
    do.call(dpowl_analysis, args)
  }
  a <- run(stage_split = c(1, 2), out_dir = out)
  expect_s3_class(a, "dpowl_regime_analysis")
  expect_equal(a$ledger$epsilon[!is.na(a$ledger$stage)], c(1.2, 2.4))  # the rule's 0.6 of E = 6, split 1:2
  expect_equal(sum(a$ledger$epsilon), 6, tolerance = 1e-12)
  expect_identical(a$privacy$stage_split, c(1, 2))
  expect_setequal(names(a$value$value_of_sequence), c("-1 | a", "-1 | b", "1 | a", "1 | b"))
  expect_true(a$value$ci_low < a$value$estimate && a$value$estimate < a$value$ci_high)
  expect_gt(a$value$estimate, max(vapply(a$value$value_of_sequence, function(s) s$estimate, 0)))  # 3 vs 2
  expect_identical(names(coef(a)), c("stage1", "stage2"))
  expect_identical(names(coef(a)$stage2), c("(Intercept)", "x1", "x2", "a1"))
  rec <- predict(a, H)
  expect_gt(mean(as.numeric(rec$stage1) == ifelse(X[, "x1"] > 0, 1, -1)), 0.8)
  expect_gt(mean(rec$stage2 == ifelse(X[, "x2"] > 0, "a", "b")), 0.8)
  printed <- capture.output(print(a))
  expect_true(any(grepl("^n not released", printed)) && !any(grepl("^n = ", printed)))
  expect_true(any(grepl("^Value of the regime .*interval", printed)) &&
                any(grepl("^Gain over the best fixed sequence", printed)))
  expect_true(all(file.exists(file.path(out, c("model.json", "ledger.json", "value.json", "report.md")))))
  expect_null(a$n)
  expect_equal(run(public_n = TRUE)$n, n)
  # bad input: named errors
  expect_error(run(treatment = list(A1, rep("a", n))), regexp = "^treatment\\[\\[2\\]\\] \\(stage 2's treatments\\) must contain at least two arms")
  expect_error(run(propensity = list(0.5, c(a = 0.5, b = 0.6))), regexp = "propensity.*must sum to 1")
  expect_error(run(weights_upper_bound = 10), regexp = "^weights_upper_bound must not be given: with several stages")
  expect_error(run(stage_split = c(1, 0)), regexp = "stage_split\\[2\\] must be in \\(0, Inf\\), got 0 ")
  expect_error(run(benefit = list(R2)), regexp = "^benefit must have one entry per stage \\(K = 2\\), got 1")
  expect_error(run(x = list(X)), regexp = "^x must be a matrix \\(the same history at every stage\\) or a list")
  expect_error(dpowl_analysis(X, A1, R2, bounds = 1, benefit_bounds = c(0, 4), weights_upper_bound = 10,
                              total_epsilon = 1, propensity = 0.5, stage_split = c(1, 2)),
               regexp = "^stage_split divides the budget across stages")
})

test_that("dpowl_analysis keeps the weights_upper_bound given and the one used, and says when it was lowered", {
  require_backends(dppack = FALSE)
  set.seed(8)
  n <- 400
  X <- data.frame(x1 = runif(n), x2 = runif(n))
  A <- sample(c(-1, 1), n, replace = TRUE)
  B <- runif(n, 0, 10)
  run <- function(W) {
    dpowl_analysis(X, treatment = A, benefit = B, bounds = list(lower = c(0, 0), upper = c(1, 1)),
                   benefit_bounds = c(0, 10), weights_upper_bound = W, total_epsilon = 2, propensity = 0.5)
  }
  # every weight is at most (U - L) / min(P, 1 - P) = 10 / 0.5 = 20 (public): W = 30 is lowered to 20, and said
  a <- run(30)
  expect_equal(a$weights_upper_bound, list(given = 30, used = 20))
  line <- paste0("weights_upper_bound: 30 given; 20 used = (U - L) / smallest public propensity (the weights ",
                 "cannot exceed it)")
  expect_output(print(a), line, fixed = TRUE)
  b <- run(12)
  expect_equal(b$weights_upper_bound, list(given = 12, used = 12))
  expect_output(print(b), "weights_upper_bound: 12 given and used", fixed = TRUE)
})

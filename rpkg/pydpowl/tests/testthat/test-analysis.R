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
               regexp = "^benefit_bounds must be c\\(lower, upper\\) with lower < upper", class = "pydpowl_value_error")
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

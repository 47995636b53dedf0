# Private fits replaying R's stream (rng = "R", the validation opt-in): after the same set.seed(),
# pydpowl::svmDP and DPpack::svmDP add the same noise vector, release the same coefficients (up to DPpack's
# optimiser tolerance on the exact part), predict the same treatments and leave R's generator in the same state.
# The default (operating-system entropy, R's generator untouched) is tested in test-rng.R.

check_private <- function(data, eps, gamma, seed, label) {
  both <- fit_both(data, eps, gamma, add.bias = TRUE, weighted = TRUE, seed = seed)
  ref <- ref_scaled_design(data$X, data$lower, data$upper, TRUE)
  d <- ncol(ref$Z)
  b <- ref_noise(seed, d, rate = gamma * eps / (2 * data$W))  # DPpack's draw, reproduced with R's rgamma/rnorm
  theta_r <- both$models$DPpack$coeff * ref$scale - b
  theta_py <- both$models$pydpowl$coeff * ref$scale - b
  y <- 2 * data$y - 1
  chk <- convexity_check(theta_r, theta_py, ref$Z, y, pmin(data$w, data$W), gamma, 0.5)
  expect_within_convexity_bound(chk, label)
  expect_identical(both$states$pydpowl, both$states$DPpack,
                   info = paste(label, ": .Random.seed after the fit must equal DPpack's"))
  # same predictions, except possibly where |f(x)| is within the coefficient tolerance of 0
  f_r <- both$models$DPpack$predict(data$X, add.bias = TRUE, raw.value = TRUE)
  p_r <- both$models$DPpack$predict(data$X, add.bias = TRUE)
  p_py <- both$models$pydpowl$predict(data$X, add.bias = TRUE)
  z_norm <- sqrt(rowSums(ref$Z^2))
  explained <- abs(f_r) <= chk$bound * z_norm * 2
  disagree <- p_r != p_py
  expect_true(all(!disagree | explained),
              info = sprintf("%s: %d predictions differ outside the tolerance band", label, sum(disagree & !explained)))
  expect_equal(sum(disagree), 0, info = paste(label, ": predictions should be identical"))
  expect_identical(dim(p_py), dim(p_r))
  expect_identical(dimnames(p_py), dimnames(p_r))
  expect_true(all(p_py %in% c(0, 1)))
}

test_that("set.seed gives DPpack's release: CYP-GUIDES-style data", {
  require_backends()
  data <- svm_data("cyp_guides_style", 1459, seed = 8)
  check_private(data, eps = 1, gamma = 75, seed = 2024, label = "CYP-style eps=1 seed=2024")
  check_private(data, eps = 0.1, gamma = 75, seed = 7, label = "CYP-style eps=0.1 seed=7")
})

test_that("set.seed gives DPpack's release: synthetic design", {
  require_backends()
  data <- svm_data("synthetic", 600, seed = 21)
  check_private(data, eps = 5, gamma = 1, seed = 99, label = "synthetic eps=5 seed=99")
})

test_that("with replay, the noise differs between seeds and follows R's stream", {
  require_backends(dppack = FALSE)
  data <- svm_data("cyp_guides_style", 400, seed = 1)
  fit <- function(seed) {
    if (!is.null(seed)) set.seed(seed)
    m <- svmDP$new("l2", 1, 75, perturbation.method = "output", rng = "R")
    with_replay(m$fit(data$X, data$y, data$upper, data$lower, add.bias = TRUE, weights = data$w,
                      weights.upper.bound = data$W))
    m$coeff
  }
  a <- fit(1)
  b <- fit(1)
  c <- fit(2)
  expect_identical(a, b)
  expect_false(isTRUE(all.equal(a, c)))
  # the generator continues: two fits in a row differ, and the second equals a fit
  # started from the state the first left behind
  set.seed(3)
  first <- fit(NULL)
  saved <- .Random.seed
  second <- fit(NULL)
  assign(".Random.seed", saved, envir = globalenv())
  expect_identical(fit(NULL), second)
  expect_false(isTRUE(all.equal(first, second)))
})

test_that("with replay and without a prior set.seed the fit seeds R's generator like a first draw", {
  require_backends(dppack = FALSE)
  data <- svm_data("synthetic", 100, seed = 1)
  had <- exists(".Random.seed", envir = globalenv(), inherits = FALSE)
  old <- if (had) get(".Random.seed", envir = globalenv())
  on.exit(if (had) assign(".Random.seed", old, envir = globalenv()))
  rm(".Random.seed", envir = globalenv())
  m <- svmDP$new("l2", 1, 1, perturbation.method = "output", rng = "R")
  suppressWarnings(m$fit(data$X, data$y, data$upper, data$lower, add.bias = TRUE, weights = data$w,
                         weights.upper.bound = data$W))
  expect_true(exists(".Random.seed", envir = globalenv(), inherits = FALSE))
  expect_length(m$coeff, 5L)
})

test_that("replay: sample.kind = 'Rounding' is accepted and kept; other generators are refused", {
  require_backends()
  data <- svm_data("synthetic", 200, seed = 4)
  old_kind <- RNGkind()
  on.exit(RNGkind(old_kind[1], old_kind[2], old_kind[3]))
  suppressWarnings(RNGkind(sample.kind = "Rounding"))
  both <- fit_both(data, 2, 1, seed = 5)
  expect_identical(both$states$pydpowl, both$states$DPpack)
  expect_identical(both$states$pydpowl[1], 403L)
  RNGkind("L'Ecuyer-CMRG")
  set.seed(1)
  m <- svmDP$new("l2", 1, 1, perturbation.method = "output", rng = "R")
  expect_error(m$fit(data$X, data$y, data$upper, data$lower, add.bias = TRUE),
               class = "pydpowl_rng_error", regexp = "L'Ecuyer-CMRG")
})

test_that("the default release is floating-point safe; reproduce.dppack = TRUE gives DPpack's noise", {
  require_backends()
  data <- svm_data("synthetic", 300, seed = 31)
  ref <- ref_scaled_design(data$X, data$lower, data$upper, TRUE)
  fit <- function(...) {  # replay, so that the noise is the same draw for the three fits
    set.seed(77)
    m <- svmDP$new("l2", 1, 20, perturbation.method = "output", ...)
    with_replay(m$fit(data$X, data$y, data$upper, data$lower, add.bias = TRUE, weights = data$w,
                      weights.upper.bound = data$W))
    m
  }
  safe <- fit()
  expect_warning(exact <- fit(reproduce.dppack = TRUE), regexp = "reproduce.dppack = TRUE")
  set.seed(77)
  exact_inf <- svmDP$new("l2", Inf, 20, perturbation.method = "output")
  with_replay(exact_inf$fit(data$X, data$y, data$upper, data$lower, add.bias = TRUE, weights = data$w,
                            weights.upper.bound = data$W))
  # reproduce.dppack adds DPpack's noise draw exactly (to the rounding of one addition)
  b <- ref_noise(77, 5, rate = 20 * 1 / (2 * data$W))
  expect_equal(exact$coeff * ref$scale, exact_inf$coeff * ref$scale + b, tolerance = 1e-12)
  # the default: the scaled release lies on a power-of-two grid about 1/1000 of the noise scale
  lam <- (2 * data$W + 2 * 300 * 1e-10) / 20
  g <- 2^(floor(log2(lam)) - 10)
  scaled <- safe$coeff * ref$scale
  expect_equal(scaled / g, round(scaled / g), tolerance = 1e-9)
  expect_lt(max(abs(scaled - exact$coeff * ref$scale)), g)
  expect_false(isTRUE(all.equal(safe$coeff, exact$coeff, tolerance = 0)))
  expect_error(svmDP$new("l2", 1, 20, reproduce.dppack = "yes"), regexp = "reproduce.dppack must be TRUE or FALSE")
})

# dpowl() with three or more treatments (the engine's angle-based rule): factor levels in and out, the
# coefficient matrix, propensities per arm, and two arms unchanged.

three_arms <- function(n = 1500, seed = 3) {
  set.seed(seed)
  X <- data.frame(x1 = runif(n, -1, 1), x2 = runif(n, -1, 1), x3 = runif(n, -1, 1))
  arms <- c("dose 0", "dose 1", "dose 2")
  A <- factor(sample(arms, n, replace = TRUE), levels = arms)
  sector <- max.col(cbind(X$x1, -0.5 * X$x1 + 0.87 * X$x2, -0.5 * X$x1 - 0.87 * X$x2))  # the best arm's position
  B <- pmin(pmax(1 + 0.5 * X$x1 + 2 * (as.integer(A) == sector) + rnorm(n, 0, 0.5), 0), 5)
  list(X = X, A = A, B = B, best = arms[sector], n = n)
}

# the paper's mechanism (output perturbation, OWL weights): the angle-based objective these tests write out;
# the default (objective perturbation, residual weights) is tested at the end
fit_arms <- function(d, treatment = d$A, propensity = 1 / 3, epsilon = Inf, mechanism = "output", residual = FALSE,
                     ...) {
  dpowl(d$X, treatment = treatment, benefit = d$B, propensity = propensity, epsilon = epsilon, gamma = 0.05 * d$n,
        weights_upper_bound = 15, bounds = list(lower = rep(-1, 3), upper = rep(1, 3)), mechanism = mechanism,
        residual = residual, ...)
}

test_that("three arms: the K-1 x (p+1) matrix minimises the angle-based objective; predictions are the levels", {
  require_backends(dppack = FALSE)
  d <- three_arms()
  fit <- fit_arms(d)
  theta <- coef(fit)
  expect_identical(dimnames(theta), list(c("f1", "f2"), c("(Intercept)", "x1", "x2", "x3")))
  # the arms' vertices: unit vectors with pairwise inner products -1/(K-1) (a regular simplex centred at 0)
  V <- fit$vertices
  expect_equal(V %*% t(V), matrix(-1 / 2, 3, 3) + diag(3 / 2, 3), tolerance = 1e-14)
  # the gradient of F(Theta) = (1/n) sum w_i l(<V_a, Theta z_i>) + gamma/(2n) ||Theta||_F^2 vanishes at the release
  # (epsilon = Inf), written here from the definition in DPpack's scaled space (helper-reference.R)
  ref <- ref_scaled_design(d$X, rep(-1, 3), rep(1, 3), TRUE)
  scaled <- sweep(theta, 2L, ref$scale, "*")
  Va <- V[as.integer(d$A), ]
  m <- rowSums(Va * (ref$Z %*% t(scaled)))
  w <- pmin(d$B / (1 / 3), 15) * ref_huber_d(m, 0.5)
  grad <- t(Va * w) %*% ref$Z / d$n + 0.05 * d$n / d$n * scaled
  expect_lt(sqrt(sum(grad^2)), 1e-9)
  p <- predict(fit, d$X)
  expect_s3_class(p, "factor")
  expect_identical(levels(p), levels(d$A))
  expect_gt(mean(as.character(p) == d$best), 0.9)
  s <- predict(fit, d$X, type = "decision")
  expect_identical(colnames(s), levels(d$A))
  expect_equal(s, (as.matrix(d$X) %*% t(theta[, -1]) + rep(theta[, 1], each = d$n)) %*% t(V),
               tolerance = 1e-12, ignore_attr = TRUE)
  expect_identical(predict(fit, d$X, type = "label"), max.col(s, ties.method = "first"))
  expect_identical(p, factor(levels(d$A)[max.col(s, ties.method = "first")], levels = levels(d$A)))
})

test_that("three arms in any coding and order give the same rule; per-arm propensities by name", {
  require_backends(dppack = FALSE)
  d <- three_arms()
  base <- predict(fit_arms(d), d$X)
  # the levels in another order (the rule is the same up to the simplex's symmetry), characters, numbers
  reordered <- factor(d$A, levels = rev(levels(d$A)))
  expect_identical(as.character(predict(fit_arms(d, reordered), d$X)), as.character(base))
  chr <- predict(fit_arms(d, as.character(d$A)), d$X)
  expect_type(chr, "character")
  expect_identical(chr, as.character(base))
  doses <- as.numeric(sub("dose ", "", as.character(d$A))) * 10
  num <- predict(fit_arms(d, doses), d$X)
  expect_type(num, "double")
  expect_identical(num, as.numeric(sub("dose ", "", as.character(base))) * 10)
  # 1/3 each, named in any order, or a matrix with named columns: the same weights, the same exact rule
  ref <- coef(fit_arms(d))
  expect_identical(coef(fit_arms(d, propensity = c("dose 2" = 1 / 3, "dose 0" = 1 / 3, "dose 1" = 1 / 3))), ref)
  P <- matrix(1 / 3, d$n, 3, dimnames = list(NULL, c("dose 1", "dose 2", "dose 0")))
  expect_identical(coef(fit_arms(d, propensity = P, weight_sensitivity = 0)), ref)
  expect_identical(coef(fit_arms(d, propensity = rep(1 / 3, d$n), weight_sensitivity = 0)), ref)
  # unequal allocation changes the weights and says so
  uneq <- fit_arms(d, propensity = c("dose 0" = 0.5, "dose 1" = 0.25, "dose 2" = 0.25))
  expect_false(identical(coef(uneq), ref))
  expect_match(capture.output(print(summary(uneq))), "Propensity: P\\(A = a\\) by design: dose 0 0.5, dose 1 0.25, dose 2 0.25",
               all = FALSE)
})

test_that("three arms: bad propensities and print/summary/coef", {
  require_backends(dppack = FALSE)
  d <- three_arms(300)
  expect_error(fit_arms(d, propensity = c("dose 0" = 0.5, "dose 1" = 0.25, "dose 2" = 0.35)),
               regexp = "^propensity: the probabilities of the 3 arms must sum to 1 \\(they are the randomisation probabilities\\), got 1\\.1",
               class = "pydpowl_value_error")
  expect_error(fit_arms(d, propensity = c("dose 0" = 0.5, "dose 1" = 0.5)),
               regexp = "^propensity as a named vector must give one probability per arm, named by the levels \"dose 0\", \"dose 1\", \"dose 2\"; missing \"dose 2\"\\.$")
  expect_error(fit_arms(d, propensity = matrix(0.5, d$n, 2)), regexp = "^propensity as a matrix must have one column per arm \\(3: ")
  expect_error(fit_arms(d, propensity = matrix(0.4, d$n, 3), weight_sensitivity = 0),
               regexp = "^propensity: each row must sum to 1 across the 3 arms .* 300 of 300 rows do not \\(first at row 1\\)\\.$")
  expect_error(fit_arms(d, propensity = propensity_logistic(benefit_bound = 5)),
               regexp = "^propensity: propensity_logistic\\(\\) models two arms; with 3 arms give the design's probabilities",
               class = "pydpowl_type_error")
  fit <- fit_arms(d, epsilon = 1)
  expect_identical(dim(coef(fit)), c(2L, 4L))
  out <- capture.output(print(fit))
  expect_match(out, "^Released coefficients of f\\(x\\) in R\\^2 \\(3 arms: dose 0, dose 1, dose 2", all = FALSE)
  s <- summary(fit)
  # the noise per coefficient: sqrt(D + 1) Delta / epsilon in the scaled space (D = 8 released coefficients), on the
  # features' scale divided by sqrt(d) = 2 and the bound 1 (the intercept's scale is 1)
  expect_equal(s$noise_sd, matrix(sqrt(9) * fit$sensitivity / 1 / 2, 2, 4), tolerance = 1e-14, ignore_attr = TRUE)
  expect_identical(dimnames(s$noise_sd), dimnames(coef(fit)))
  expect_equal(s$settings[["expected_noise_norm"]], 8 * fit$sensitivity)
  txt <- capture.output(print(s))
  expect_match(txt, "^f2:x3 ", all = FALSE)
  expect_match(txt, "Gamma\\(8, rate = epsilon/Delta\\)", all = FALSE)
  expect_match(txt, "Delta bounds the Frobenius norm of the 2 x 4 coefficient matrix", all = FALSE)
})

test_that("two arms behave as before: a named per-arm propensity is the scalar probability of the second level", {
  require_backends(dppack = FALSE)
  d <- pydpowl_data("cyp_guides_style", n = 400, seed = 2)
  d$arm <- factor(ifelse(d$treatment > 0, "guided", "standard"), levels = c("standard", "guided"))
  one <- function(p) {  # (not `propensity`: the formula interface would find d$propensity first)
    set.seed(10)
    with_replay(dpowl(~ age + male + nonwhite + mdd, data = d, treatment = arm, benefit = benefit,
                      propensity = p, epsilon = 1, gamma = 75, weights_upper_bound = 30,
                      bounds = attr(d, "bounds")))
  }
  base <- one(2 / 3)
  expect_identical(coef(one(c(guided = 2 / 3, standard = 1 / 3))), coef(base))
  expect_named(coef(base), c("(Intercept)", "age", "male", "nonwhite", "mdd"))
  expect_null(base$vertices)
  expect_true(is.null(dim(predict(base, d, type = "decision"))))
})

test_that("three arms by default: weighted objective perturbation with residual weights, as two arms", {
  require_backends(dppack = FALSE)
  d <- three_arms(600)
  set.seed(4)
  fit <- dpowl(d$X, treatment = d$A, benefit = d$B, propensity = 1 / 3, epsilon = 1, weights_upper_bound = 15,
               bounds = list(lower = rep(-1, 3), upper = rep(1, 3)))
  expect_identical(fit$mechanism, "objective")
  expect_true(fit$residual)
  expect_equal(fit$huber_h, 1)
  expect_true(is.nan(fit$sensitivity))
  expect_identical(dim(coef(fit)), c(2L, 4L))
  expect_true(any(grepl("weighted objective perturbation with residual weights", capture.output(print(fit)))))
  expect_true(any(grepl("objective perturbation", capture.output(print(summary(fit))))))
  expect_identical(levels(predict(fit, d$X)), levels(d$A))
})

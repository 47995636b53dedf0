# Columns matched by name (issue 22.1): bounds given by name meet a data frame's columns in any order, and
# prediction reads new data's columns by name, in dpowl() and in the family's drop-ins.

test_that("dpowl() fits a reordered data frame with bounds per feature as the ordered one, and predicts by name", {
  require_backends(dppack = FALSE)
  d <- pydpowl_data("cyp_guides_style", n = 800, seed = 3)
  feats <- c("age", "male", "nonwhite", "mdd")
  b <- attr(d, "bounds")
  fit <- function(x, bounds) {
    dpowl(x, treatment = d$treatment, benefit = d$benefit, propensity = d$propensity, epsilon = Inf, gamma = 75,
          weights_upper_bound = attr(d, "weights_upper_bound"), bounds = bounds, weight_sensitivity = 0)
  }
  ordered <- fit(d[feats], list(lower = unname(b$lower), upper = unname(b$upper)))
  reordered <- d[rev(feats)]
  per_feature <- list(mdd = c(0, 1), male = c(0, 1), age = c(18, 89), nonwhite = c(0, 1))  # any order
  for (bounds in list(per_feature, as.data.frame(per_feature),
                      data.frame(lower = b$lower, upper = b$upper, row.names = feats))) {
    m <- fit(reordered, bounds)
    expect_equal(coef(m)[c("(Intercept)", feats)], coef(ordered), tolerance = 1e-10)
    expect_equal(summary(m, diagnostics = TRUE)$diagnostics[["clipped_features"]], 0)  # nothing clipped
  }
  expect_identical(predict(ordered, reordered), predict(ordered, d[feats]))
  expect_identical(predict(m, d[feats]), predict(ordered, d[feats]))
  expect_error(predict(ordered, d[c("age", "male", "nonwhite")]), class = "pydpowl_argument_error",
               regexp = "lacks the feature\\(s\\) 'mdd'")
})

test_that("the drop-ins match named bounds vectors to a data frame's columns and predict by name", {
  require_backends(dppack = FALSE)
  set.seed(4)
  n <- 300
  X <- data.frame(age = runif(n, 18, 89), dose = runif(n, 0, 2), male = rbinom(n, 1, 0.5))
  score <- (X$age - 50) / 20 + X$dose - 1 + 0.5 * X$male
  y <- as.numeric(score + rnorm(n, sd = 0.5) > 0)
  up <- c(age = 89, dose = 2, male = 1)
  lo <- c(age = 18, dose = 0, male = 0)
  R <- X[c("male", "dose", "age")]
  for (make in list(function() svmDP$new("l2", Inf, 1), function() LogisticRegressionDP$new("l2", Inf, 1))) {
    ordered <- make()
    ordered$fit(X, y, unname(up), unname(lo), add.bias = TRUE)
    named <- make()
    named$fit(R, y, up[c("dose", "male", "age")], lo[c("male", "age", "dose")], add.bias = TRUE)
    expect_equal(named$coeff, ordered$coeff[c(1, 4, 3, 2)], tolerance = 1e-8)
    expect_identical(named$feature.names, c("male", "dose", "age"))
    expect_equal(ordered$predict(R, add.bias = TRUE, raw.value = TRUE),
                 ordered$predict(X, add.bias = TRUE, raw.value = TRUE))
    expect_error(ordered$predict(X[c("age", "dose")], add.bias = TRUE), class = "pydpowl_argument_error",
                 regexp = "lacks the column\\(s\\) 'male' used in the fit")
    expect_error(make()$fit(R, y, c(agee = 89, dose = 2, male = 1), lo, add.bias = TRUE),
                 class = "pydpowl_argument_error", regexp = "upper.bounds has no value for column\\(s\\) 'age'")
    expect_error(make()$fit(as.matrix(unname(R)), y, up, lo), class = "pydpowl_argument_error",
                 regexp = "upper.bounds has names .* but X has no column names")
  }
  lin <- function(X, up, lo) {
    m <- LinearRegressionDP$new("l2", Inf, 0, 1)
    m$fit(X, score, up, lo, add.bias = TRUE)
    m
  }
  ordered <- lin(X, c(unname(up), 5), c(unname(lo), -5))
  named <- lin(R, c(y = 5, up[c("male", "age", "dose")]), c(lo, y = -5))
  expect_equal(named$coeff, ordered$coeff[c(1, 4, 3, 2)], tolerance = 1e-8)
  expect_equal(named$predict(X, add.bias = TRUE), ordered$predict(X, add.bias = TRUE), tolerance = 1e-8)
})

# Non-private fits (eps = Inf): pydpowl::svmDP is the exact minimiser of DPpack's
# objective, and DPpack's optim() answer lies within the strong-convexity bound.

check_against_dppack <- function(data, gamma, add.bias, weighted, label, huber.h = 0.5) {
  both <- fit_both(data, Inf, gamma, add.bias = add.bias, weighted = weighted, huber.h = huber.h)
  ref <- ref_scaled_design(data$X, data$lower, data$upper, add.bias)
  w <- if (weighted) pmin(data$w, data$W) else rep(1, nrow(ref$Z))
  y <- 2 * data$y - 1
  theta_r <- both$models$DPpack$coeff * ref$scale
  theta_py <- both$models$pydpowl$coeff * ref$scale
  chk <- convexity_check(theta_r, theta_py, ref$Z, y, w, gamma, huber.h)
  expect_within_convexity_bound(chk, label)
  expect_identical(both$states$pydpowl, both$states$DPpack,
                   info = paste(label, ": R's generator must advance as in DPpack (rnorm(d) even for eps = Inf)"))
  invisible(chk)
}

test_that("synthetic design: non-private fit matches DPpack within the strong-convexity bound", {
  require_backends()
  data <- svm_data("synthetic", 800, seed = 11)
  check_against_dppack(data, gamma = 1, add.bias = TRUE, weighted = TRUE, label = "synthetic, gamma=1")
  check_against_dppack(data, gamma = 10, add.bias = FALSE, weighted = TRUE, label = "synthetic, gamma=10, no bias")
  check_against_dppack(data, gamma = 5, add.bias = TRUE, weighted = FALSE, label = "synthetic, unweighted",
                       huber.h = 0.2)
})

test_that("CYP-GUIDES-style data: non-private fit matches DPpack within the strong-convexity bound", {
  require_backends()
  data <- svm_data("cyp_guides_style", 1459, seed = 5)
  check_against_dppack(data, gamma = 75, add.bias = TRUE, weighted = TRUE, label = "CYP-style, gamma=75")
})

test_that("weights above weights.upper.bound are clipped as in DPpack, silently: no condition depends on the data", {
  require_backends()
  data <- svm_data("synthetic", 300, seed = 2)
  W <- stats::quantile(data$w, 0.8)[[1]]
  # every warning and message a fit sends to R, and its coefficients
  conditions <- function(w) {
    seen <- character(0)
    m <- svmDP$new("l2", Inf, 2, perturbation.method = "output")
    withCallingHandlers(
      m$fit(data$X, data$y, data$upper, data$lower, add.bias = TRUE, weights = w, weights.upper.bound = W),
      warning = function(c) {
        seen <<- c(seen, conditionMessage(c))
        invokeRestart("muffleWarning")
      },
      message = function(c) {
        seen <<- c(seen, conditionMessage(c))
        invokeRestart("muffleMessage")
      })
    list(seen = seen, coeff = m$coeff)
  }
  below <- pmin(data$w, W)  # no weight above the bound
  above <- below
  above[1] <- 10 * W        # a neighbouring dataset: one record above the bound
  a <- conditions(above)
  b <- conditions(below)
  expect_identical(a$seen, character(0))  # DPpack clips silently; a count would tell one record from another
  expect_identical(a$seen, b$seen)
  expect_identical(conditions(data$w)$seen, character(0))
  expect_identical(conditions(data$w)$coeff, b$coeff)  # the weights above W are clipped to it
})

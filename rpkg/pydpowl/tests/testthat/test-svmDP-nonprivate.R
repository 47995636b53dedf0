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

test_that("weights above weights.upper.bound are clipped as in DPpack, with a classed warning", {
  require_backends()
  data <- svm_data("synthetic", 300, seed = 2)
  W <- stats::quantile(data$w, 0.8)[[1]]
  m <- svmDP$new("l2", Inf, 2, perturbation.method = "output")
  expect_warning(
    m$fit(data$X, data$y, data$upper, data$lower, add.bias = TRUE, weights = data$w, weights.upper.bound = W),
    class = "pydpowl_weights_clipped", regexp = sprintf("%d of 300 weights exceed", sum(data$w > W)))
  m_clip <- svmDP$new("l2", Inf, 2, perturbation.method = "output")
  m_clip$fit(data$X, data$y, data$upper, data$lower, add.bias = TRUE, weights = pmin(data$w, W),
             weights.upper.bound = W)
  expect_identical(m$coeff, m_clip$coeff)
})

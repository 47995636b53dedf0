# Independent reference for the tests: DPpack's preprocessing and objective,
# written here from their definitions (not taken from the package under test).

# Skip when the Python engine or DPpack is missing; a failure instead when
# PYDPOWL_REQUIRE_R=1 (set by the project's Makefile and scripts/run_r_tests.R).
require_backends <- function(dppack = TRUE) {
  strict <- identical(Sys.getenv("PYDPOWL_REQUIRE_R"), "1")
  missing <- c(if (!pydpowl::pydpowl_available()) "the Python engine (pydpowl_available() is FALSE)",
               if (dppack && !requireNamespace("DPpack", quietly = TRUE)) "the R package DPpack")
  if (length(missing) > 0L) {
    msg <- paste("needs", paste(missing, collapse = " and "))
    if (strict) stop(msg, "; PYDPOWL_REQUIRE_R=1 turns this skip into an error.", call. = FALSE)
    testthat::skip(msg)
  }
}

# DPpack svmDP (linear kernel): clip to bounds, optional bias column first with
# bounds [1, 1], divide each column by max(|l|, |u|), then all by sqrt(d).
ref_scaled_design <- function(X, lower, upper, add.bias) {
  X <- as.matrix(X)
  if (add.bias) {
    X <- cbind(1, X)
    lower <- c(1, lower)
    upper <- c(1, upper)
  }
  for (j in seq_len(ncol(X))) X[, j] <- pmin(pmax(X[, j], lower[j]), upper[j])
  col_scale <- pmax(abs(lower), abs(upper))
  total <- col_scale * sqrt(length(lower))
  list(Z = sweep(X, 2L, total, "/"), scale = total)
}

ref_huber <- function(m, h) ifelse(m > 1 + h, 0, ifelse(m < 1 - h, 1 - m, (1 + h - m)^2 / (4 * h)))
ref_huber_d <- function(m, h) ifelse(m > 1 + h, 0, ifelse(m < 1 - h, -1, -(1 + h - m) / (2 * h)))

# F(theta) = (1/n) sum w_i l(y_i z_i'theta) + gamma/(2n) ||theta||^2, y in {-1, 1}
ref_objective <- function(theta, Z, y, w, gamma, h) {
  n <- nrow(Z)
  m <- y * drop(Z %*% theta)
  sum(w * ref_huber(m, h)) / n + gamma / (2 * n) * sum(theta^2)
}

ref_gradient <- function(theta, Z, y, w, gamma, h) {
  n <- nrow(Z)
  m <- y * drop(Z %*% theta)
  drop(crossprod(Z, w * y * ref_huber_d(m, h))) / n + gamma / n * theta
}

# Compare two solutions of the same strongly convex problem (modulus mu = gamma/n)
# in the scaled space. theta_py should be the exact minimiser; theta_r is DPpack's
# optim() answer. With g = ||grad F(theta_py)||:
#   ||theta_r - theta*|| <= sqrt(2 (F(theta_r) - F(theta_py)) / mu + (g/mu)^2),
#   ||theta* - theta_py|| <= g / mu,
# so ||theta_r - theta_py|| <= that sum (+ 1e-9 for rounding). Returns the pieces.
convexity_check <- function(theta_r, theta_py, Z, y, w, gamma, h) {
  mu <- gamma / nrow(Z)
  f_r <- ref_objective(theta_r, Z, y, w, gamma, h)
  f_py <- ref_objective(theta_py, Z, y, w, gamma, h)
  g <- sqrt(sum(ref_gradient(theta_py, Z, y, w, gamma, h)^2))
  gap <- f_r - f_py
  bound <- sqrt(2 * max(gap, 0) / mu + (g / mu)^2) + g / mu + 1e-9
  list(distance = sqrt(sum((theta_r - theta_py)^2)), bound = bound, gap = gap, grad_norm = g,
       rounding = 1e-12 * max(1, abs(f_py)))
}

expect_within_convexity_bound <- function(chk, label) {
  expect_true(chk$grad_norm <= 1e-9,
              info = sprintf("%s: ||grad F(theta_py)|| = %.3g should be <= 1e-9 (pydpowl solves DPpack's objective)",
                             label, chk$grad_norm))
  expect_true(chk$gap >= -chk$rounding,
              info = sprintf("%s: F(theta_DPpack) - F(theta_py) = %.3g should be >= -%.1g (pydpowl is the minimiser)",
                             label, chk$gap, chk$rounding))
  expect_true(chk$distance <= chk$bound,
              info = sprintf("%s: ||theta_DPpack - theta_py|| = %.3g should be <= strong-convexity bound %.3g",
                             label, chk$distance, chk$bound))
}

# DPpack's noise after set.seed(seed), drawn here with R's own functions.
ref_noise <- function(seed, d, rate) {
  set.seed(seed)
  radius <- rgamma(1, d, rate = rate)
  z <- rnorm(d)
  radius * z / sqrt(sum(z^2))
}

# Data in DPpack's svmDP form from the Python generators.
svm_data <- function(name, n, seed) {
  d <- pydpowl::pydpowl_data(name, n = n, seed = seed)
  b <- attr(d, "bounds")
  feats <- names(b$lower)
  list(X = d[, feats], y = (d$treatment + 1) / 2, A = d$treatment, w = d$benefit / d$propensity,
       benefit = d$benefit, propensity = d$propensity,
       lower = unname(b$lower), upper = unname(b$upper), W = attr(d, "weights_upper_bound"), frame = d)
}

# Both engines after the same set.seed(). pydpowl replays R's stream (rng = "R") with reproduce.dppack = TRUE,
# the validation switches that reproduce DPpack's draws and arithmetic bit for bit (their warnings are expected
# here and muffled); its default release draws from operating-system entropy and is floating-point safe instead.
fit_both <- function(data, eps, gamma, add.bias = TRUE, weighted = TRUE, seed = 1L, huber.h = 0.5) {
  fits <- list()
  states <- list()
  for (pkg in c("DPpack", "pydpowl")) {
    cls <- getExportedValue(pkg, "svmDP")
    set.seed(seed)
    m <- if (pkg == "pydpowl") {
      cls$new("l2", eps, gamma, perturbation.method = "output", huber.h = huber.h, reproduce.dppack = TRUE,
              rng = "R")
    } else {
      cls$new("l2", eps, gamma, perturbation.method = "output", huber.h = huber.h)
    }
    withCallingHandlers(
      m$fit(data$X, data$y, upper.bounds = data$upper, lower.bounds = data$lower, add.bias = add.bias,
            weights = if (weighted) data$w else NULL, weights.upper.bound = if (weighted) data$W else NULL),
      pydpowl_replay_stream = function(w) invokeRestart("muffleWarning"),
      warning = function(w) {
        if (grepl("reproduce.dppack = TRUE", conditionMessage(w), fixed = TRUE)) invokeRestart("muffleWarning")
      })
    fits[[pkg]] <- m
    states[[pkg]] <- .Random.seed
  }
  list(models = fits, states = states)
}

# Replay of R's stream (options(pydpowl.rng = "R"), the opt-in of R/rng.R) for the tests that compare numbers
# with DPpack or between two fits after the same set.seed(). The replay warning (class pydpowl_replay_stream:
# such a release is not private) is expected there and muffled; every other warning passes.
with_replay <- function(expr) {
  old <- options(pydpowl.rng = "R")
  on.exit(options(old))
  withCallingHandlers(expr, pydpowl_replay_stream = function(w) invokeRestart("muffleWarning"))
}

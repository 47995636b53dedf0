# DPpack's weighted ERM, fitted once per seed in one R call. Called from
# r_reference/dppack.py with named arguments; an argument left out takes the
# default below (Python's None means "left out").

# One fit per seed (set.seed(seed) before each fit, each fit timed alone), and
# DPpack's own preprocessing of the data (scaling, labels, clipped weights),
# read once: the linear kernel draws no random numbers there.
fit_seeds <- function(model, X, y, weights, weights_upper_bound, upper, lower, add_bias, seeds) {
  X <- as.data.frame(X)
  y <- as.numeric(y)
  upper <- as.numeric(upper)
  lower <- as.numeric(lower)
  w <- if (!is.null(weights)) as.numeric(weights)
  b <- if (!is.null(weights)) weights_upper_bound  # DPpack ignores the bound without weights
  prep <- model$.__enclos_env__$private$preprocess_data(
    X, y, upper.bounds = upper, lower.bounds = lower, add.bias = add_bias,
    weights = w, weights.upper.bound = b)
  seeds <- as.integer(seeds)
  coef <- matrix(NA_real_, length(seeds), ncol(prep$X))
  secs <- numeric(length(seeds))
  for (k in seq_along(seeds)) {
    set.seed(seeds[k])
    t0 <- Sys.time()
    model$fit(X, y, upper.bounds = upper, lower.bounds = lower, add.bias = add_bias,
              weights = w, weights.upper.bound = b)
    secs[k] <- as.numeric(Sys.time()) - as.numeric(t0)
    coef[k, ] <- as.numeric(model$coeff)
  }
  list(coef = coef, prep = prep, seconds = secs)
}

# The result read by dppack.py: coefficients in the original and in DPpack's
# scaled space, the scales, the times and, on request, the preprocessed data.
fits_result <- function(fits, scale1, scale2, return_data, weighted) {
  list(coef = fits$coef, scaled = sweep(fits$coef, 2, scale1 * scale2, "*"), scale1 = as.numeric(scale1),
       scale2 = as.numeric(scale2), seconds = fits$seconds,
       Z = if (return_data) fits$prep$X,
       y = if (return_data) as.numeric(fits$prep$y),
       w = if (return_data && weighted) as.numeric(fits$prep$weights))
}

# svmDP$new("l2", eps, gamma, perturbation.method = "output", kernel = "linear",
# huber.h = huber_h), fitted with y in {0, 1} and the bounds passed by name.
svmdp_fits <- function(X, y, upper, lower, eps, gamma, weights = NULL, weights_upper_bound = NULL,
                       add_bias = TRUE, huber_h = 0.5, seeds = 1L, return_data = FALSE) {
  m <- DPpack::svmDP$new("l2", eps, gamma, perturbation.method = "output", kernel = "linear", huber.h = huber_h)
  fits <- fit_seeds(m, X, y, weights, weights_upper_bound, upper, lower, add_bias, seeds)
  fits_result(fits, fits$prep$scale1, fits$prep$scale2, return_data, !is.null(weights))
}

# WeightedERMDP.CMS with mapXy.linear (y.hat = X theta), labels in {-1, 1} and
# either DPpack's Huber hinge or a weighted logistic loss written here (DPpack's
# loss.cross.entropy takes no weights): l(y.hat, y, w) = w log(1 + exp(-y y.hat))
# in its stable form, with derivative -w y / (1 + exp(y y.hat)); |l'| <= w and
# l'' <= w / 4. DPpack does not scale the data here.
cms_fits <- function(X, y, upper, lower, eps, gamma, loss = c("huber", "logistic"), weights = NULL,
                     weights_upper_bound = NULL, add_bias = FALSE, huber_h = 0.5, seeds = 1L, return_data = FALSE) {
  loss <- match.arg(loss)
  if (loss == "huber") {
    loss_fn <- DPpack::generate.loss.huber(huber_h)
    loss_gr <- DPpack::generate.loss.gr.huber(huber_h)
    c2 <- 1 / (2 * huber_h)
  } else {
    loss_fn <- function(y.hat, y, w = NULL) {
      w <- if (is.null(w)) rep(1, length(y)) else as.numeric(w)
      z <- y * y.hat
      w * (pmax(-z, 0) + log1p(exp(-abs(z))))
    }
    loss_gr <- function(y.hat, y, w = NULL) {
      w <- if (is.null(w)) rep(1, length(y)) else as.numeric(w)
      -w * y / (1 + exp(y * y.hat))
    }
    c2 <- 1 / 4
  }
  m <- DPpack::WeightedERMDP.CMS$new(DPpack::mapXy.linear, loss_fn, "l2", eps, gamma,
                                     perturbation.method = "output", c = c2,
                                     mapXy.gr = DPpack::mapXy.gr.linear, loss.gr = loss_gr)
  fits <- fit_seeds(m, X, y, weights, weights_upper_bound, upper, lower, add_bias, seeds)
  fits_result(fits, rep(1, ncol(fits$coef)), 1, return_data, !is.null(weights))
}

# Bad input from R gives R errors that name the argument.

small <- function() {
  set.seed(1)
  X <- data.frame(a = runif(20), b = runif(20))
  list(X = X, y = rep(c(0, 1), 10), lower = c(0, 0), upper = c(1, 1))
}

new_model <- function(...) svmDP$new("l2", 1, 1, perturbation.method = "output", ...)

test_that("a custom regularizer function is refused with a classed error naming DPpack; never replaced", {
  for (cls in list(svmDP, LogisticRegressionDP)) {
    err <- expect_error(cls$new(function(coeff) sum(abs(coeff)), 1, 1), class = "pydpowl_not_supported")
    expect_match(conditionMessage(err), "does not support a custom regularizer function.*Use DPpack::")
  }
  expect_error(LinearRegressionDP$new(function(coeff) sum(coeff^2) / 2, 1, 0, 1), class = "pydpowl_not_supported",
               regexp = "Use DPpack::LinearRegressionDP for a custom regularizer")
  expect_error(svmDP$new("l1", 1, 1), regexp = "^regularizer must be 'l2' \\(pydpowl's one regularizer; for a custom ",
               class = "pydpowl_value_error")
  expect_error(svmDP$new("l1", 1, 1), regexp = "got regularizer = \"l1\"\\.$")
  # with "l2", DPpack ignores regularizer.gr (its own help example passes one): so does pydpowl
  m <- LinearRegressionDP$new("l2", 1, 0, 1, function(coeff) coeff)
  expect_identical(m$regularizer.gr(c(1, 2)), c(1, 2))
})

test_that("DPpack's defaults: objective perturbation, the Gaussian kernel needs D", {
  require_backends(dppack = FALSE)
  expect_identical(svmDP$new("l2", 1, 1)$perturbation.method, "objective")
  expect_identical(LogisticRegressionDP$new("l2", 1, 1)$perturbation.method, "objective")
  expect_identical(formals(svmDP$new)$perturbation.method, formals(DPpack::svmDP$new)$perturbation.method)
  expect_error(svmDP$new("l2", 1, 1, kernel = "Gaussian"), regexp = "^D \\(the number of random Fourier features\\) must",
               class = "pydpowl_value_error")
  expect_error(svmDP$new("l2", 1, 1, kernel = "gaussian", D = 5),
               regexp = "^kernel must be one of c\\(\"linear\", \"Gaussian\"\\), got kernel = \"gaussian\"\\.$")
  expect_error(svmDP$new("l2", 1, 1, perturbation.method = "input"), regexp = "^perturbation.method must be one of")
  d <- small()
  m <- svmDP$new("l2", 1, 1)
  expect_error(m$fit(d$X, d$y, d$upper, d$lower, weights = rep(1, 20), weights.upper.bound = 1),
               regexp = "^weights are supported with perturbation.method = \"output\" only \\(DPpack: \"Weighted SVM is only",
               class = "pydpowl_value_error")
})

test_that("constructor settings are checked by the engine, with its message in R's words and Python's classes", {
  require_backends(dppack = FALSE)
  err <- expect_error(svmDP$new("l2", 0, 1), regexp = "^eps must be in \\(0, Inf\\], got eps = 0\\.$",
                      class = "pydpowl_value_error")
  expect_s3_class(err, c("pydpowl_value_error", "pydpowl_argument_error", "pydpowl_engine_error", "pydpowl_error",
                         "error", "condition"), exact = TRUE)
  expect_identical(err$python_type, "ValueError")
  expect_identical(deparse(conditionCall(err)), "svmDP$new(\"l2\", 0, 1)")
  expect_error(svmDP$new("l2", -1, 1), regexp = "^eps must be in \\(0, Inf\\], got eps = -1\\.$")
  expect_error(svmDP$new("l2", 1e-7 - 1, 1), regexp = "^eps must be in \\(0, Inf\\], got eps = -0\\.9999999\\.$")
  expect_error(svmDP$new("l2", NA, 1), regexp = "^eps must not be NA \\(a missing value\\): give the setting\\.$",
               class = "pydpowl_argument_error")
  expect_error(svmDP$new("l2", NaN, 1), regexp = "^eps must not be NaN")
  expect_error(svmDP$new("l2", NULL, 1), regexp = "^eps must be a real number, got NULL\\.$",
               class = "pydpowl_type_error")
  expect_error(svmDP$new("l2", "1", 1), regexp = "^eps must be a real number, got character\\.$",
               class = "pydpowl_type_error")
  expect_error(svmDP$new("l2", TRUE, 1), regexp = "^eps must be a real number, got logical\\.$")
  expect_error(svmDP$new("l2", c(1, 2), 1), regexp = "^eps must be a real number, got a vector of length 2\\.$")
  expect_error(svmDP$new("l2", factor(1), 1), regexp = "^eps must be a single value, got factor\\.$",
               class = "pydpowl_argument_error")
  expect_error(svmDP$new("l2", 1, 0), regexp = "^gamma must be in \\(0, Inf\\), got gamma = 0\\.$")
  expect_error(svmDP$new("l2", 1, Inf), regexp = "^gamma must be in \\(0, Inf\\), got gamma = Inf\\.$")
  expect_error(svmDP$new("l2", 1, 1e5 + 0.5), NA)
  expect_error(svmDP$new("l2", 1, -1e5), regexp = "got gamma = -1e\\+05\\.$")
  expect_error(svmDP$new("l2", 1, 1, huber.h = 0), regexp = "^huber.h must be in \\(0, Inf\\), got huber.h = 0\\.$")
  expect_s3_class(svmDP$new("l2", Inf, 2L), "svmDP")  # eps = Inf is the non-private fit; integers are numbers
  m <- new_model()
  m$eps <- 0  # fields are public, so fit() checks them again
  d <- small()
  expect_error(m$fit(d$X, d$y, d$upper, d$lower), regexp = "^eps must be in \\(0, Inf\\]",
               class = "pydpowl_value_error")
  m$eps <- 1
  m$perturbation.method <- "both"
  expect_error(m$fit(d$X, d$y, d$upper, d$lower), regexp = "^perturbation.method must be one of",
               class = "pydpowl_value_error")
})

test_that("data errors name the argument, with counts and positions counted from 1", {
  require_backends(dppack = FALSE)
  d <- small()
  m <- new_model()
  Xna <- d$X
  Xna$b[c(3, 7)] <- NA
  expect_error(m$fit(Xna, d$y, d$upper, d$lower), class = "pydpowl_value_error",
               regexp = paste0("^X must be finite; it has 2 NaN and 0 infinite entries of 40 in column\\(s\\) 'b' ",
                               "\\(rows 3, 7\\)\\. Nothing is dropped silently: remove or impute them first\\.$"))
  Xinf <- as.matrix(d$X)
  Xinf[5, 1] <- -Inf
  expect_error(m$fit(Xinf, d$y, d$upper, d$lower),
               regexp = "X must be finite; it has 0 NaN and 1 infinite entries of 40 in column\\(s\\) 'a' \\(rows 5\\)")
  expect_error(m$fit(unname(Xinf), d$y, d$upper, d$lower), regexp = "in column\\(s\\) 1 \\(rows 5\\)")
  expect_error(m$fit(data.frame(bmi = Xna$b), d$y, 1, 0), regexp = "in column\\(s\\) 'bmi' \\(rows 3, 7\\)")
  yna <- d$y
  yna[4] <- NA
  expect_error(m$fit(d$X, yna, d$upper, d$lower),
               regexp = "^y must be finite; it has 1 NaN and 0 infinite entries of 20 at position\\(s\\) 4\\.")
  expect_error(m$fit(d$X, 2 * d$y - 1, d$upper, d$lower),
               regexp = paste0("^y must take values in \\{0, 1\\}; 10 of 20 entries do not \\(first at position 1\\)\\. ",
                               "DPpack codes labels 0 and 1; for labels in \\{-1, 1\\} use \\(y \\+ 1\\) / 2\\.$"))
  expect_error(m$fit(d$X, factor(d$y), d$upper, d$lower), regexp = "y must be numeric labels 0 and 1.*factor",
               class = "pydpowl_argument_error")
  expect_error(m$fit(d$X, as.character(d$y), d$upper, d$lower), regexp = "^y must be numeric, got a character\\.$")
  expect_error(m$fit(d$X, d$y[-1], d$upper, d$lower),
               regexp = "^y must have length 20 \\(one per row of X\\), got length 19\\.$")
  expect_error(m$fit(d$X, d$y, c(1, 1, 1), d$lower),
               regexp = "^upper.bounds must have length 2 \\(one per feature\\), got length 3\\.$")
  expect_error(m$fit(d$X, d$y, d$upper, 0),
               regexp = "^lower.bounds must have length 2 \\(one per feature\\), got length 1\\.$")
  expect_error(m$fit(d$X, d$y, c(1, NA), d$lower),
               regexp = "^upper.bounds must be finite; it has 1 NaN and 0 infinite entries of 2 at position\\(s\\) 2\\.")
  expect_error(m$fit(d$X, d$y, c(0, 0.5), c(1, 1)),
               regexp = "^lower.bounds must be <= upper.bounds for every feature; reversed at position\\(s\\) 1, 2\\.$")
  expect_error(m$fit(d$X, d$y, c(0, 1), c(0, 0)),
               regexp = paste0("^max\\(\\|lower.bounds\\|, \\|upper.bounds\\|\\) must be > 0 for every feature ",
                               "\\(used as its scale\\); it is 0 at position\\(s\\) 1\\.$"))
  expect_error(m$fit(d$X, d$y, c("1", "1"), d$lower), regexp = "^upper.bounds must be numeric, got a character\\.$")
  Xf <- d$X
  Xf$g <- factor(rep(c("u", "v"), 10))
  expect_error(m$fit(Xf, d$y, c(1, 1, 1), c(0, 0, 0)), regexp = "X must have numeric .*'g' are factor")
  expect_error(m$fit(as.list(d$X), d$y, d$upper, d$lower), regexp = "X must be a data frame or a numeric matrix")
  expect_error(m$fit(d$X[0, ], d$y[0], d$upper, d$lower), regexp = "^X must have at least 1 row\\(s\\), got 0\\.$")
  expect_error(m$fit(d$X, d$y, d$upper, d$lower, add.bias = NA),
               regexp = "^add.bias must not be NA \\(a missing value\\)", class = "pydpowl_argument_error")
  expect_error(m$fit(d$X, d$y, d$upper, d$lower, add.bias = "yes"),
               regexp = "^add.bias must be TRUE or FALSE, got character\\.$", class = "pydpowl_type_error")
  expect_error(m$fit(d$X, d$y, d$upper, d$lower, add.bias = 1), regexp = "^add.bias must be TRUE or FALSE, got numeric\\.$")
  expect_null(m$coeff)  # nothing was released by the failed fits
})

test_that("weight errors name the argument", {
  require_backends(dppack = FALSE)
  d <- small()
  m <- new_model()
  w <- rep(1, 20)
  expect_error(m$fit(d$X, d$y, d$upper, d$lower, weights = w),
               regexp = paste0("^weights.upper.bound must be given with weights \\(the public bound W on every weight\\), ",
                               "got weights.upper.bound = NULL\\.$"))
  expect_error(m$fit(d$X, d$y, d$upper, d$lower, weights = w, weights.upper.bound = 0),
               regexp = "^weights.upper.bound must be in \\(0, Inf\\), got weights.upper.bound = 0\\.$")
  w[5] <- -1
  expect_error(m$fit(d$X, d$y, d$upper, d$lower, weights = w, weights.upper.bound = 2),
               regexp = "^weights must be non-negative; 1 of 20 entries are negative \\(first at position 5\\)\\.$")
  w[5] <- NA
  expect_error(m$fit(d$X, d$y, d$upper, d$lower, weights = w, weights.upper.bound = 2),
               regexp = "^weights must be finite; it has 1 NaN and 0 infinite entries of 20 at position\\(s\\) 5\\.")
  expect_error(m$fit(d$X, d$y, d$upper, d$lower, weights = rep(1, 3), weights.upper.bound = 2),
               regexp = "^weights must have length 20 \\(one per row of X\\), got length 3\\.$")
  expect_error(m$fit(d$X, d$y, d$upper, d$lower, weights = factor(w), weights.upper.bound = 2),
               regexp = "^weights must be numeric, got a factor\\.$")
})

test_that("predict checks its input and needs a fit", {
  require_backends(dppack = FALSE)
  d <- small()
  m <- new_model()
  expect_error(m$predict(d$X), regexp = "not fitted yet")
  m$fit(d$X, d$y, d$upper, d$lower, add.bias = TRUE)
  expect_error(m$predict(d$X), regexp = "X must have 3 columns to match the 3 fitted coefficients, got 2")
  expect_error(m$predict(unname(as.matrix(d$X[, 1, drop = FALSE])), add.bias = TRUE),
               regexp = "X must have 2 columns \\(plus the bias\\)")
  expect_error(m$predict(d$X[, 1, drop = FALSE], add.bias = TRUE),  # fitted on named columns: matched by name
               regexp = "X lacks the column\\(s\\) 'b' used in the fit")
  Xna <- d$X
  Xna$a[2] <- NA
  p <- m$predict(Xna, add.bias = TRUE)
  expect_true(is.na(p[2]) && !anyNA(p[-2]))
})

test_that("Python exceptions surface as R errors with the message in R's words and one class per Python type", {
  require_backends(dppack = FALSE)
  err <- tryCatch(pydpowl:::engine("make_data", list(name = "nope", n = 10, seed = 1)), error = identity)
  expect_s3_class(err, c("pydpowl_value_error", "pydpowl_argument_error", "pydpowl_engine_error", "pydpowl_error"))
  expect_identical(conditionMessage(err), "name must be 'synthetic' or 'cyp_guides_style', got name = \"nope\".")
  expect_match(err$traceback, "ValueError: name must be")
  err <- tryCatch(pydpowl:::engine("make_data", list(name = "synthetic", n = 2.5, seed = 1)), error = identity)
  expect_s3_class(err, "pydpowl_type_error")
  expect_identical(conditionMessage(err), "n must be an integer, got numeric.")
  # a check only the engine makes (not the worker's argument checks) reaches the user verbatim
  err <- tryCatch(pydpowl:::engine("fit_owl", list(
    x = matrix(0.5, 3, 1), treatment = array(c(1, 1, 1)), benefit = array(c(1, 1, 1)), propensity = 0.5,
    lower = array(0), upper = array(1), intercept = TRUE, epsilon = 1, gamma = 1, weights_upper_bound = 5,
    huber_h = 0.5, random_seed = NULL)), error = identity)
  expect_s3_class(err, "pydpowl_value_error")
  expect_identical(conditionMessage(err),
                   paste("treatment must contain at least two arms (a rule chooses between treatments); all 3",
                         "entries are 1 (one class only)."))
  err <- tryCatch(pydpowl:::engine("no_such_function", list()), error = identity)
  expect_identical(conditionMessage(err), "the Python worker has no function 'no_such_function'")
  expect_true(pydpowl_available())  # an error leaves the worker usable
})

test_that("settings that passed the worker's check are not sent again; bad ones fail every time", {
  require_backends(dppack = FALSE)
  LogisticRegressionDP$new("l2", 0.7, 3)            # checked by the worker (started if needed)
  pydpowl:::worker_stop()
  m <- LogisticRegressionDP$new("l2", 0.7, 3)       # the same values: no round trip, no worker started
  expect_null(pydpowl:::.pydpowl$worker)
  expect_identical(m$eps, 0.7)
  LogisticRegressionDP$new("l2", 0.7, 3.5)          # other values: checked by a new worker
  expect_false(is.null(pydpowl:::.pydpowl$worker))
  for (i in 1:2) {
    expect_error(LogisticRegressionDP$new("l2", -1, 3), regexp = "eps", class = "pydpowl_value_error")
    expect_error(svmDP$new("l2", 1, 1, kernel = "Gaussian"), class = "pydpowl_value_error")
  }
})

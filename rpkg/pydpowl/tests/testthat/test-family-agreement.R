# Every configuration of DPpack's family (class x perturbation x kernel), the same script run with DPpack
# and with pydpowl replaying R's stream (options(pydpowl.rng = "R"), the validation opt-in; the default draws
# from operating-system entropy) after the same set.seed: .Random.seed identical after the fit, coefficients within 1e-2
# relative (DPpack's optimiser error plus pydpowl's solver-smoothing noise; see test-dppack-examples.R),
# predictions agreeing, the public fields equal. PYDPOWL_REPORT_EXAMPLES=1 prints the figures.

family_data <- function(n = 1000L, seed = 7L) {
  set.seed(seed)
  X <- data.frame(age = runif(n, 18, 89), score = rnorm(n, 0, 0.6))
  X$score[1:5] <- 3  # some values outside their bounds (clipped by both)
  eta <- -2 + 0.05 * X$age - 1.2 * X$score
  list(X = X, y = as.numeric(runif(n) < 1 / (1 + exp(-eta))), t = 0.5 - 0.01 * X$age + 0.3 * X$score + rnorm(n, 0, 0.3),
       w = runif(n, 0, 1.5), upper = c(89, 2), lower = c(18, -2))
}

configurations <- list(
  "svmDP objective linear" = list(cls = "svmDP", args = list("l2", 1, 1), fit = list(add.bias = TRUE)),
  "svmDP output linear weighted" = list(cls = "svmDP", args = list("l2", 1, 1, "output"),
                                        fit = list(add.bias = TRUE, weights = "w", weights.upper.bound = 1)),
  "svmDP objective Gaussian D = 20" = list(cls = "svmDP", args = list("l2", 1, 1, kernel = "Gaussian", D = 20)),
  "svmDP output Gaussian D = 20 weighted" = list(cls = "svmDP", args = list("l2", 1, 1, "output", kernel = "Gaussian",
                                                                           D = 20, kernel.param = 0.5),
                                                 fit = list(weights = "w", weights.upper.bound = 1)),
  "LogisticRegressionDP objective" = list(cls = "LogisticRegressionDP", args = list("l2", 1, 1),
                                          fit = list(add.bias = TRUE)),
  "LogisticRegressionDP output" = list(cls = "LogisticRegressionDP", args = list("l2", 1, 1, "output"),
                                       fit = list(add.bias = TRUE)),
  "LinearRegressionDP delta = 0" = list(cls = "LinearRegressionDP", args = list("l2", 1, 0, 1),
                                        fit = list(add.bias = TRUE)),
  "LinearRegressionDP delta = 0.01" = list(cls = "LinearRegressionDP", args = list("l2", 1, 0.01, 1),
                                           fit = list(add.bias = TRUE))
)

run_configuration <- function(pkg, conf, d, seed) {
  cls <- getExportedValue(pkg, conf$cls)
  regression <- conf$cls == "LinearRegressionDP"
  fit_args <- conf$fit
  if (!is.null(fit_args$weights)) fit_args$weights <- d[[fit_args$weights]]
  set.seed(seed)
  m <- do.call(cls$new, conf$args)
  fit <- function() {
    do.call(m$fit, c(list(d$X, if (regression) d$t else d$y, if (regression) c(d$upper, 3) else d$upper,
                          if (regression) c(d$lower, -3) else d$lower), fit_args))
  }
  if (pkg == "pydpowl") with_replay(fit()) else fit()
  state <- .Random.seed
  add.bias <- isTRUE(conf$fit$add.bias)
  list(model = m, state = state, pred = m$predict(d$X, add.bias = add.bias),
       raw = if (!regression) m$predict(d$X, add.bias = add.bias, raw.value = TRUE))
}

for (name in names(configurations)) {
  test_that(sprintf("%s: the same script with DPpack and pydpowl agrees", name), {
    require_backends()
    conf <- configurations[[name]]
    d <- family_data()
    for (seed in c(3L, 11L)) {
      a <- run_configuration("DPpack", conf, d, seed)
      b <- run_configuration("pydpowl", conf, d, seed)
      expect_identical(b$state, a$state, info = sprintf("%s seed %d: .Random.seed", name, seed))
      gap <- max(abs(a$model$coeff - b$model$coeff)) / max(1, abs(a$model$coeff))
      expect_lte(gap, 1e-2, label = sprintf("%s seed %d: relative coefficient gap", name, seed))
      expect_identical(dim(b$pred), dim(a$pred))
      if (conf$cls == "LinearRegressionDP") {
        agreement <- max(abs(a$pred - b$pred))
        expect_lte(agreement, 1e-2 * max(1, abs(a$pred)))
      } else {
        agreement <- mean(a$pred == b$pred)
        expect_gte(agreement, 0.98)
      }
      for (field in c("eps", "gamma", "delta", "perturbation.method", "kernel", "D", "kernel.param", "prefilter",
                      "zeta", "lambda", "c")) {
        expect_identical(b$model[[field]], a$model[[field]], info = sprintf("%s: field %s", name, field))
      }
      if (nzchar(Sys.getenv("PYDPOWL_REPORT_EXAMPLES"))) {
        message(sprintf("[family] %s seed %d: coefficient gap / max(1, |coeff|) %.2e, %s %.4g, .Random.seed identical %s",
                        name, seed, gap, if (conf$cls == "LinearRegressionDP") "max prediction gap" else
                          "prediction agreement", agreement, identical(a$state, b$state)))
      }
    }
  })
}

test_that("tuning fits every candidate in place and returns the selected object, as DPpack", {
  require_backends()
  d <- family_data(600L)
  make <- function(pkg) lapply(c(100, 1, 1e-4), function(g) getExportedValue(pkg, "svmDP")$new("l2", 1, g, "output"))
  set.seed(5)
  ma <- make("DPpack")
  ta <- DPpack::tune_classification_model(ma, d$X, d$y, d$upper, d$lower, add.bias = TRUE)
  sa <- .Random.seed
  set.seed(5)
  mb <- make("pydpowl")
  tb <- with_replay(tune_classification_model(mb, d$X, d$y, d$upper, d$lower, add.bias = TRUE))
  expect_identical(.Random.seed, sa)
  expect_identical(tb$gamma, ta$gamma)
  selected <- which(vapply(mb, function(m) identical(m, tb), logical(1)))
  expect_length(selected, 1L)  # the very object, fitted in place
  for (i in 1:3) expect_false(is.null(mb[[i]]$coeff))
  expect_error(tune_classification_model(ma, d$X, d$y, d$upper, d$lower), class = "pydpowl_not_supported",
               regexp = "DPmodels\\[\\[1\\]\\] must be a pydpowl svmDP or LogisticRegressionDP object")
})

test_that("reproduce.dppack = TRUE gives DPpack's objective-perturbation coefficients, with a warning", {
  require_backends()
  d <- family_data(500L)
  set.seed(9)
  a <- DPpack::LogisticRegressionDP$new("l2", 1, 1)
  a$fit(d$X, d$y, d$upper, d$lower, add.bias = TRUE)
  b <- LogisticRegressionDP$new("l2", 1, 1, reproduce.dppack = TRUE, rng = "R")
  sa <- .Random.seed
  set.seed(9)
  expect_warning(with_replay(b$fit(d$X, d$y, d$upper, d$lower, add.bias = TRUE)), class = "pydpowl_privacy_leak",
                 regexp = "reproduce.dppack = TRUE")
  expect_identical(.Random.seed, sa)
  expect_lte(max(abs(a$coeff - b$coeff)), 5e-3 * max(1, abs(a$coeff)))  # DPpack's BFGS stops early
})

test_that("the drop-ins have DPpack's class hierarchy, so code dispatching on DPpack's classes keeps working", {
  require_backends()
  d <- family_data(300L)
  pairs <- list(
    list(pydpowl::svmDP$new("l2", 1, 1), DPpack::svmDP$new("l2", 1, 1)),
    list(pydpowl::LogisticRegressionDP$new("l2", 1, 1), DPpack::LogisticRegressionDP$new("l2", 1, 1)),
    list(pydpowl::LinearRegressionDP$new("l2", 1, 0, 1), DPpack::LinearRegressionDP$new("l2", 1, 0, 1)))
  for (p in pairs) expect_identical(class(p[[1L]]), class(p[[2L]]))
  m <- pairs[[1L]][[1L]]
  m$fit(d$X, d$y, d$upper, d$lower, add.bias = TRUE)  # fitted, the classes stay
  expect_true(inherits(m, "WeightedERMDP.CMS") && inherits(m, "EmpiricalRiskMinimizationDP.CMS"))
  describe <- function(x, ...) UseMethod("describe")
  # S3 methods named after DPpack's classes (not snake_case, longer than 30 characters).
  # nolint start: object_name_linter, object_length_linter.
  describe.EmpiricalRiskMinimizationDP.CMS <- function(x, ...) "CMS"
  describe.EmpiricalRiskMinimizationDP.KST <- function(x, ...) "KST"
  # nolint end
  describe.default <- function(x, ...) "other"
  registerS3method("describe", "EmpiricalRiskMinimizationDP.CMS", describe.EmpiricalRiskMinimizationDP.CMS)
  registerS3method("describe", "EmpiricalRiskMinimizationDP.KST", describe.EmpiricalRiskMinimizationDP.KST)
  expect_identical(vapply(pairs, function(p) describe(p[[1L]]), ""), c("CMS", "CMS", "KST"))
  for (p in pairs) {  # DPpack's fields, at the level where DPpack declares them
    expect_true(all(names(p[[2L]]) %in% names(p[[1L]])),
                info = paste(setdiff(names(p[[2L]]), names(p[[1L]])), collapse = ", "))
  }
})

test_that("a very small eps is certified: the solver's target follows the objective's curvature", {
  # issue 22.7 named the smallest eps that worked with an absolute tol; the target is now set from the
  # curvature (issue 24.3), so eps = 1e-8 fits (Python still explains an explicit tol that is too small)
  require_backends(dppack = FALSE)
  d <- family_data(1459L)
  m <- LinearRegressionDP$new("l2", 1e-8, 0, 1)
  for (i in 1:3) expect_length(m$fit(d$X, d$t, c(d$upper, 3), c(d$lower, -3), add.bias = TRUE)$coeff, 3L)
})

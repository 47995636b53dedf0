# One R script of DPpack's family, as a user runs it: read a CSV, fit one model once, print the coefficients.
# The same code for both engines: only the package changes (DPpack:: or pydpowl::).
# Run as: Rscript family_r.R PACKAGE CONFIG CSV [WARM_REPEATS]
# With WARM_REPEATS > 0 the fit is repeated in the same process after one warm-up, and the median time of
# one $fit() (seconds; each sample a batch of fits lasting at least about 50 ms, divided by its size) is
# printed instead (the warm comparison).
args <- commandArgs(trailingOnly = TRUE)
pkg <- args[1]
cfg <- args[2]
repeats <- if (length(args) >= 4) as.integer(args[4]) else 0L
d <- read.csv(args[3])
X <- d[, c("x1", "x2")]
cls <- function(name) getExportedValue(pkg, name)
ub <- c(1, 1); lb <- c(-1, -1)
fit <- function() {
  if (cfg == "svm_objective_linear") {
    m <- cls("svmDP")$new("l2", 1, 1); m$fit(X, d$y, ub, lb, add.bias = TRUE)
  } else if (cfg == "svm_output_linear") {
    m <- cls("svmDP")$new("l2", 1, 1, perturbation.method = "output"); m$fit(X, d$y, ub, lb, add.bias = TRUE)
  } else if (cfg == "svm_objective_gaussian") {
    m <- cls("svmDP")$new("l2", 1, 1, kernel = "Gaussian", D = 20); m$fit(X, d$y, ub, lb)
  } else if (cfg == "svm_output_gaussian_weighted") {
    m <- cls("svmDP")$new("l2", 1, 1, perturbation.method = "output", kernel = "Gaussian", D = 20)
    suppressWarnings(m$fit(X, d$y, ub, lb, weights = d$w, weights.upper.bound = 1))
  } else if (cfg == "logistic_objective") {
    m <- cls("LogisticRegressionDP")$new("l2", 1, 1); m$fit(X, d$y, ub, lb, add.bias = TRUE)
  } else if (cfg == "logistic_output") {
    m <- cls("LogisticRegressionDP")$new("l2", 1, 1, perturbation.method = "output")
    m$fit(X, d$y, ub, lb, add.bias = TRUE)
  } else if (cfg %in% c("linreg_pure", "linreg_approx")) {
    m <- cls("LinearRegressionDP")$new("l2", 1, if (cfg == "linreg_pure") 0 else 1e-3, 1)
    m$fit(X, d$t, c(ub, 3), c(lb, -3), add.bias = TRUE)
  } else if (cfg == "tune_classification") {
    ms <- lapply(c(100, 1, 1e-4), function(g) cls("svmDP")$new("l2", 1, g, perturbation.method = "output"))
    m <- cls("tune_classification_model")(ms, X, d$y, ub, lb, add.bias = TRUE)
  } else if (cfg == "tune_linear_regression") {
    ms <- lapply(c(100, 1, 1e-4), function(g) cls("LinearRegressionDP")$new("l2", 1, 0.01, g))
    m <- cls("tune_linear_regression_model")(ms, X, d$t, c(ub, 3), c(lb, -3), add.bias = TRUE)
  } else stop("unknown config ", cfg)
  m
}
set.seed(1)
if (repeats > 0L) {
  fit()  # warm-up: the worker, the imports, the compiled code
  # each sample times a batch of fits lasting about 50 ms or more (system.time counts in ms), per fit
  first <- system.time(fit())[["elapsed"]]
  batch <- max(1L, as.integer(ceiling(0.05 / max(first, 1e-4))))
  times <- vapply(seq_len(repeats), function(i) system.time(for (k in seq_len(batch)) fit())[["elapsed"]] / batch,
                  numeric(1))
  cat(sprintf("%.6f\n", stats::median(times)))
} else {
  print(fit()$coeff)
}

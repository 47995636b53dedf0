# A user's R script: read a CSV, fit one DPpack model once, print it (timed as a whole process).
# Run as: Rscript family_dppack.R CONFIG CSV
args <- commandArgs(trailingOnly = TRUE)
cfg <- args[1]
d <- read.csv(args[2])
X <- d[, c("x1", "x2")]
set.seed(1)
ub <- c(1, 1); lb <- c(-1, -1)
if (cfg == "svm_objective_linear") {
  m <- DPpack::svmDP$new("l2", 1, 1); m$fit(X, d$y, ub, lb, add.bias = TRUE)
} else if (cfg == "svm_output_linear") {
  m <- DPpack::svmDP$new("l2", 1, 1, perturbation.method = "output"); m$fit(X, d$y, ub, lb, add.bias = TRUE)
} else if (cfg == "svm_objective_gaussian") {
  m <- DPpack::svmDP$new("l2", 1, 1, kernel = "Gaussian", D = 20); m$fit(X, d$y, ub, lb)
} else if (cfg == "svm_output_gaussian_weighted") {
  m <- DPpack::svmDP$new("l2", 1, 1, perturbation.method = "output", kernel = "Gaussian", D = 20)
  m$fit(X, d$y, ub, lb, weights = d$w, weights.upper.bound = 1)
} else if (cfg == "logistic_objective") {
  m <- DPpack::LogisticRegressionDP$new("l2", 1, 1); m$fit(X, d$y, ub, lb, add.bias = TRUE)
} else if (cfg == "logistic_output") {
  m <- DPpack::LogisticRegressionDP$new("l2", 1, 1, perturbation.method = "output")
  m$fit(X, d$y, ub, lb, add.bias = TRUE)
} else if (cfg %in% c("linreg_pure", "linreg_approx")) {
  m <- DPpack::LinearRegressionDP$new("l2", 1, if (cfg == "linreg_pure") 0 else 1e-3, 1)
  m$fit(X, d$t, c(ub, 3), c(lb, -3), add.bias = TRUE)
} else stop("unknown config")
print(m$coeff)

# DPpack's ERM family on the Python engine: svmDP, LogisticRegressionDP, LinearRegressionDP and the tuning
# functions, drop-ins for DPpack's (same constructor arguments and defaults, fields, fit and predict
# arguments, and DPpack's class hierarchy, so that code dispatching on DPpack's classes keeps working). The
# noise comes from operating-system entropy and R's generator is left alone, unless replay of DPpack's draws is
# asked for (rng = "R", or options(pydpowl.rng = "R"); see R/rng.R): then .Random.seed is left where DPpack
# leaves it, and the release is not private.
#
# R turns its objects into numbers (data frames, one-column frames for y) and refuses what only R can
# judge (a regularizer given as an R function, DPpack objects passed to pydpowl's tuning); every value is
# checked in Python (pydpowl.interop.dppack, under DPpack's argument names) and comes back as a classed condition.

# The functions DPpack's objects keep as fields (its model's map, loss and regulariser), written from their
# definitions so that code reading them keeps working; the engine does not call them.
.fields_l2 <- list(regularizer = function(coeff) sum(coeff * coeff) / 2, regularizer.gr = function(coeff) coeff)
.map_linear <- function(X, coeff) X %*% coeff
.map_linear_gr <- function(X, coeff) t(X)
.map_sigmoid <- function(X, coeff) 1 / (1 + exp(-(X %*% coeff)))
.map_sigmoid_gr <- function(X, coeff) {
  s <- as.numeric(1 / (1 + exp(-(X %*% coeff))))
  (s * (1 - s)) * t(X)
}
.huber <- function(h) {
  function(y.hat, y, w = NULL) {
    if (is.null(w)) w <- rep(1, length(y))
    m <- y.hat * y
    ifelse(m > 1 + h, 0, ifelse(m < 1 - h, w * (1 - m), w * (1 + h - m)^2 / (4 * h)))
  }
}
.huber_gr <- function(h) {
  function(y.hat, y, w = NULL) {
    if (is.null(w)) w <- rep(1, length(y))
    m <- y.hat * y
    ifelse(m > 1 + h, 0, ifelse(m < 1 - h, -w * y, -w * y * (1 + h - m) / (2 * h)))
  }
}
.cross_entropy <- function(y.hat, y) -(y * log(y.hat) + (1 - y) * log(1 - y.hat))
.cross_entropy_gr <- function(y.hat, y) (1 - y) / (1 - y.hat) - y / y.hat
.squared_error <- function(y.hat, y) (y.hat - y)^2 / 2
.squared_error_gr <- function(y.hat, y) y.hat - y

# A regulariser given as an R function cannot be proven here: DPpack's objective perturbation needs a
# 1-strongly convex, doubly differentiable regulariser, which pydpowl cannot check for an arbitrary function.
# Refused (never silently replaced by l2); the check of a string (only "l2") is the engine's.
check_regularizer <- function(regularizer, cls, call) {
  if (is.function(regularizer)) {
    arg_error(sprintf(paste0(
      "regularizer must be \"l2\": pydpowl::%s does not support a custom regularizer function (its privacy ",
      "proof needs a 1-strongly convex, doubly differentiable regulariser, which pydpowl cannot check for an R ",
      "function). Use DPpack::%s for a custom regularizer."), cls, cls), call, class = "pydpowl_not_supported")
  }
  as_setting(regularizer, "regularizer", call)
}

# 0/1 labels in DPpack's coding: a factor's numbers would be its level codes.
labels01_arg <- function(y, call) {
  if (is.factor(y)) {
    arg_error(sprintf(paste0("y must be numeric labels 0 and 1 (DPpack's coding), got a factor with ",
                             "levels %s. Code it explicitly, e.g. y = as.numeric(f == \"%s\")."),
                      paste(dQuote(levels(y), FALSE), collapse = ", "), utils::tail(levels(y), 1L)), call)
  }
  as_numeric_arg(y, "y", call)
}

add_bias_column <- function(M) {
  out <- cbind(1, M)
  if (!is.null(colnames(M))) colnames(out) <- c("bias", colnames(M))
  out
}

# A constructor's settings, checked by the worker (values and their combinations, under DPpack's names) at
# $new(), as DPpack checks them there. The check is a pure function of the values, so settings that passed
# once pass again: they are remembered for the session (at most .SETTINGS_KEPT of them) and a model built
# again with the same values costs no round trip (0.3 ms, a tenth of a warm 20,000-row fit). Settings whose
# check warned are not remembered, so the warning comes every time.
.SETTINGS_KEPT <- 256L
.checked_settings <- new.env(parent = emptyenv())

check_settings <- function(fun, args, call) {
  key <- paste0(fun, ":", rawToChar(serialize(args, NULL, ascii = TRUE)))
  if (!is.null(.checked_settings[[key]])) return(invisible(NULL))
  warned <- FALSE
  withCallingHandlers(engine(fun, args, call), warning = function(w) warned <<- TRUE)
  if (!warned) {
    if (length(.checked_settings) >= .SETTINGS_KEPT) rm(list = ls(.checked_settings), envir = .checked_settings)
    .checked_settings[[key]] <- TRUE
  }
  invisible(NULL)
}

# Prediction of the linear kernel and of the regressions as DPpack computes it (mapXy on as.matrix(X)).
linear_scores <- function(self, X, add.bias, call) {
  if (is.null(self$coeff)) {
    arg_error(sprintf("this %s model is not fitted yet; call $fit() first.", class(self)[1L]), call)
  }
  M <- as_feature_matrix(columns_by_name(X, self$feature.names, "X", call), "X", call = call)  # NA rows: NA
  if (check_flag(add.bias, "add.bias", call = call)) M <- add_bias_column(M)
  if (ncol(M) != length(self$coeff)) {
    arg_error(sprintf("X must have %d columns%s to match the %d fitted coefficients, got %d.",
                      length(self$coeff) - add.bias, if (add.bias) " (plus the bias)" else "",
                      length(self$coeff), ncol(M) - add.bias), call)
  }
  M %*% self$coeff
}

print_model <- function(self, what) {
  cat(sprintf("<pydpowl::%s> %s (Python engine)\n", class(self)[1L], what))
  rd <- if (isTRUE(self$reproduce.dppack)) " (reproduce.dppack = TRUE: DPpack's arithmetic, validation only)" else ""
  cat(sprintf("  eps = %s, gamma = %s%s%s\n", format(self$eps), format(self$gamma),
              if (!is.null(self$delta)) paste0(", delta = ", format(self$delta)) else "", rd))
  cat(sprintf("  noise: %s\n", rng_label(self$rng)))
  if (is.null(self$coeff)) cat("  not fitted\n") else cat("  coeff:", format(signif(self$coeff, 6)), "\n")
  invisible(self)
}

# What a model's rng field means, for print().
rng_label <- function(rng) {
  if (is.null(rng)) {
    rng <- getOption("pydpowl.rng", "system")
    how <- "options(pydpowl.rng)"
  } else {
    how <- "rng"
  }
  if (identical(rng, "R")) sprintf("replays R's stream (%s = \"R\"): NOT private, for validation only", how)
  else "operating-system entropy"
}

# A constructor's rng: NULL (follow options(pydpowl.rng) at each fit), "R" or "system"; checked now.
rng_setting <- function(rng, call) {
  if (!is.null(rng)) rng_choice(rng, call)
  rng
}

# DPpack's parent classes (R6 inheritance as in DPpack 0.2.2: svmDP < WeightedERMDP.CMS <
# EmpiricalRiskMinimizationDP.CMS, LogisticRegressionDP < EmpiricalRiskMinimizationDP.CMS, LinearRegressionDP <
# EmpiricalRiskMinimizationDP.KST), holding DPpack's fields, so that inherits(m, "EmpiricalRiskMinimizationDP.CMS")
# and S3 methods written for DPpack's classes apply to pydpowl's models. Not exported: pydpowl fits the drop-ins
# only (DPpack's general classes take arbitrary R loss functions, which the engine cannot prove private).
# DPpack's own class names (not snake_case, longer than 30 characters) so that S3 methods for them apply.
# nolint start: object_name_linter, object_length_linter.
EmpiricalRiskMinimizationDP.CMS <- R6::R6Class("EmpiricalRiskMinimizationDP.CMS",
  public = list(
    mapXy = NULL, mapXy.gr = NULL, loss = NULL, loss.gr = NULL, regularizer = NULL, regularizer.gr = NULL,
    gamma = NULL, eps = NULL, perturbation.method = NULL, c = NULL, coeff = NULL, kernel = NULL, D = NULL,
    sampling = NULL, phi = NULL, kernel.param = NULL, prefilter = NULL, reproduce.dppack = NULL, rng = NULL,
    feature.names = NULL  # pydpowl's: X's column names at the fit (predict() matches a data frame's by name)
  )
)

WeightedERMDP.CMS <- R6::R6Class("WeightedERMDP.CMS", inherit = EmpiricalRiskMinimizationDP.CMS)

EmpiricalRiskMinimizationDP.KST <- R6::R6Class("EmpiricalRiskMinimizationDP.KST",
  public = list(
    mapXy = NULL, mapXy.gr = NULL, loss = NULL, loss.gr = NULL, regularizer = NULL, regularizer.gr = NULL,
    gamma = NULL, eps = NULL, delta = NULL, domain = NULL, zeta = NULL, lambda = NULL, coeff = NULL,
    reproduce.dppack = NULL, rng = NULL, feature.names = NULL
  )
)
# nolint end

# The fit results that R keeps (DPpack's fields).
set_classifier_fit <- function(self, res, columns = NULL) {
  self$coeff <- as.numeric(res$coeff)
  self$feature.names <- columns
  if (identical(self$kernel, "Gaussian")) {
    self$kernel.param <- res$kernel_param  # as DPpack: set at the first fit, kept afterwards
    self$prefilter <- res$prefilter
    g <- res$kernel_param
    self$sampling <- function(d) c(stats::rnorm(d, sd = sqrt(2 * g)), stats::runif(1, -pi, pi))
  }
  invisible(self)
}

# Documented in man/svmDP.Rd.
svmDP <- R6::R6Class("svmDP", inherit = WeightedERMDP.CMS,
  public = list(
    huber.h = NULL,

    initialize = function(regularizer, eps, gamma, perturbation.method = "objective", kernel = "linear",
                          D = NULL, kernel.param = NULL, regularizer.gr = NULL, huber.h = 0.5,
                          reproduce.dppack = FALSE, rng = NULL) {
      call <- sys.call(-1L)
      if (missing(regularizer)) regularizer <- "l2"
      reg <- check_regularizer(regularizer, "svmDP", call)
      self$reproduce.dppack <- check_flag(reproduce.dppack, "reproduce.dppack", call = call)
      self$rng <- rng_setting(rng, call)
      check_settings("svmdp_settings", list(
        regularizer = reg, eps = as_setting(eps, "eps", call), gamma = as_setting(gamma, "gamma", call),
        perturbation.method = as_setting(perturbation.method, "perturbation.method", call),
        kernel = as_setting(kernel, "kernel", call), D = as_setting(D, "D", call),
        kernel.param = as_setting(kernel.param, "kernel.param", call),
        huber.h = as_setting(huber.h, "huber.h", call)), call)
      self$regularizer <- .fields_l2$regularizer
      self$regularizer.gr <- .fields_l2$regularizer.gr  # DPpack ignores regularizer.gr with "l2"
      self$eps <- eps
      self$gamma <- gamma
      self$perturbation.method <- perturbation.method
      self$huber.h <- huber.h
      self$c <- 1 / (2 * huber.h)
      self$mapXy <- .map_linear
      self$mapXy.gr <- .map_linear_gr
      self$loss <- .huber(huber.h)
      self$loss.gr <- .huber_gr(huber.h)
      self$kernel <- kernel
      if (identical(kernel, "Gaussian")) {
        self$D <- D
        self$kernel.param <- kernel.param
        self$phi <- function(x, theta) cos(sum(x * theta[seq_along(x)]) + theta[length(x) + 1L])
      }
      invisible(self)
    },

    fit = function(X, y, upper.bounds, lower.bounds, add.bias = FALSE, weights = NULL, weights.upper.bound = NULL) {
      call <- sys.call()
      M <- wire_features(X, "X", call = call)
      args <- list(X = M$values, y = labels01_arg(y, call),
                   upper.bounds = bounds_by_name(upper.bounds, M$columns, "upper.bounds", call),
                   lower.bounds = bounds_by_name(lower.bounds, M$columns, "lower.bounds", call),
                   add.bias = as_setting(add.bias, "add.bias", call),
                   weights = if (!is.null(weights)) as_numeric_arg(weights, "weights", call),
                   weights.upper.bound = as_setting(weights.upper.bound, "weights.upper.bound", call),
                   regularizer = "l2", eps = as_setting(self$eps, "eps", call),
                   gamma = as_setting(self$gamma, "gamma", call),
                   perturbation.method = as_setting(self$perturbation.method, "perturbation.method", call),
                   kernel = as_setting(self$kernel, "kernel", call), D = as_setting(self$D, "D", call),
                   kernel.param = as_setting(self$kernel.param, "kernel.param", call),
                   huber.h = as_setting(self$huber.h, "huber.h", call), columns = M$columns,
                   reproduce.dppack = isTRUE(self$reproduce.dppack))
      set_classifier_fit(self, engine_with_rng("svmdp_fit", args, rng_choice(self$rng, call), call), M$columns)
    },

    XtoV = function(X) {
      call <- sys.call()
      M <- as_feature_matrix(X, "X", call = call)
      engine("svmdp_features", list(X = wire_matrix(M), prefilter = self$prefilter), call)$V
    },

    predict = function(X, add.bias = FALSE, raw.value = FALSE) {
      call <- sys.call()
      check_flag(raw.value, "raw.value", call = call)
      if (!identical(self$kernel, "Gaussian")) {
        vals <- linear_scores(self, X, add.bias, call)
      } else {
        if (is.null(self$coeff)) arg_error("this svmDP model is not fitted yet; call $fit() first.", call)
        M <- as_feature_matrix(columns_by_name(X, self$feature.names, "X", call), "X", call = call)
        vals <- engine("svmdp_predict", list(X = wire_matrix(M), coeff = self$coeff,
                                             add.bias = check_flag(add.bias, "add.bias", call = call),
                                             raw.value = TRUE, kernel = "Gaussian", prefilter = self$prefilter),
                       call)$values
        vals <- matrix(vals, ncol = 1L)
      }
      if (raw.value) return(vals)
      vals <- sign(vals)
      vals[vals == -1] <- 0
      vals
    },

    print = function(...) {
      print_model(self, sprintf("%s kernel%s, %s perturbation", self$kernel,
                                if (identical(self$kernel, "Gaussian")) paste0(" (D = ", self$D, ")") else "",
                                self$perturbation.method))
    }
  )
)

# Documented in man/LogisticRegressionDP.Rd.
LogisticRegressionDP <- R6::R6Class("LogisticRegressionDP", inherit = EmpiricalRiskMinimizationDP.CMS,
  public = list(
    initialize = function(regularizer, eps, gamma, perturbation.method = "objective", regularizer.gr = NULL,
                          reproduce.dppack = FALSE, rng = NULL) {
      call <- sys.call(-1L)
      if (missing(regularizer)) regularizer <- "l2"
      reg <- check_regularizer(regularizer, "LogisticRegressionDP", call)
      self$reproduce.dppack <- check_flag(reproduce.dppack, "reproduce.dppack", call = call)
      self$rng <- rng_setting(rng, call)
      check_settings("logistic_regression_dp_settings", list(
        regularizer = reg, eps = as_setting(eps, "eps", call), gamma = as_setting(gamma, "gamma", call),
        perturbation.method = as_setting(perturbation.method, "perturbation.method", call)), call)
      self$regularizer <- .fields_l2$regularizer
      self$regularizer.gr <- .fields_l2$regularizer.gr
      self$eps <- eps
      self$gamma <- gamma
      self$perturbation.method <- perturbation.method
      self$c <- 1 / 4
      self$mapXy <- .map_sigmoid
      self$mapXy.gr <- .map_sigmoid_gr
      self$loss <- .cross_entropy
      self$loss.gr <- .cross_entropy_gr
      invisible(self)
    },

    fit = function(X, y, upper.bounds, lower.bounds, add.bias = FALSE) {
      call <- sys.call()
      M <- wire_features(X, "X", call = call)
      args <- list(X = M$values, y = labels01_arg(y, call),
                   upper.bounds = bounds_by_name(upper.bounds, M$columns, "upper.bounds", call),
                   lower.bounds = bounds_by_name(lower.bounds, M$columns, "lower.bounds", call),
                   add.bias = as_setting(add.bias, "add.bias", call), regularizer = "l2",
                   eps = as_setting(self$eps, "eps", call), gamma = as_setting(self$gamma, "gamma", call),
                   perturbation.method = as_setting(self$perturbation.method, "perturbation.method", call),
                   columns = M$columns, reproduce.dppack = isTRUE(self$reproduce.dppack))
      set_classifier_fit(self, engine_with_rng("logistic_regression_dp_fit", args, rng_choice(self$rng, call), call),
                         M$columns)
    },

    predict = function(X, add.bias = FALSE, raw.value = FALSE) {
      call <- sys.call()
      check_flag(raw.value, "raw.value", call = call)
      p <- 1 / (1 + exp(-linear_scores(self, X, add.bias, call)))  # DPpack's sigmoid
      if (raw.value) p else round(p)
    },

    print = function(...) print_model(self, sprintf("logistic regression, %s perturbation", self$perturbation.method))
  )
)

# Documented in man/LinearRegressionDP.Rd.
LinearRegressionDP <- R6::R6Class("LinearRegressionDP", inherit = EmpiricalRiskMinimizationDP.KST,
  public = list(
    initialize = function(regularizer, eps, delta, gamma, regularizer.gr = NULL, reproduce.dppack = FALSE,
                          rng = NULL) {
      call <- sys.call(-1L)
      if (missing(regularizer)) regularizer <- "l2"
      reg <- check_regularizer(regularizer, "LinearRegressionDP", call)
      self$reproduce.dppack <- check_flag(reproduce.dppack, "reproduce.dppack", call = call)
      self$rng <- rng_setting(rng, call)
      check_settings("linear_regression_dp_settings", list(
        regularizer = reg, eps = as_setting(eps, "eps", call), delta = as_setting(delta, "delta", call),
        gamma = as_setting(gamma, "gamma", call)), call)
      self$regularizer <- .fields_l2$regularizer
      self$regularizer.gr <- .fields_l2$regularizer.gr
      self$eps <- eps
      self$delta <- delta
      self$gamma <- gamma
      self$mapXy <- .map_linear
      self$mapXy.gr <- .map_linear_gr
      self$loss <- .squared_error
      self$loss.gr <- .squared_error_gr
      self$domain <- list(constraints = function(coeff) sum(coeff * coeff) - length(coeff),
                          jacobian = function(coeff) 2 * coeff)
      invisible(self)
    },

    fit = function(X, y, upper.bounds, lower.bounds, add.bias = FALSE) {
      call <- sys.call()
      M <- wire_features(X, "X", call = call)
      args <- list(X = M$values, y = as_numeric_arg(y, "y", call),
                   upper.bounds = bounds_by_name(upper.bounds, M$columns, "upper.bounds", call, extra = 1L),
                   lower.bounds = bounds_by_name(lower.bounds, M$columns, "lower.bounds", call, extra = 1L),
                   add.bias = as_setting(add.bias, "add.bias", call), regularizer = "l2",
                   eps = as_setting(self$eps, "eps", call), delta = as_setting(self$delta, "delta", call),
                   gamma = as_setting(self$gamma, "gamma", call), columns = M$columns,
                   reproduce.dppack = isTRUE(self$reproduce.dppack))
      set_regression_fit(self, engine_with_rng("linear_regression_dp_fit", args, rng_choice(self$rng, call), call),
                         M$columns)
    },

    predict = function(X, add.bias = FALSE) linear_scores(self, X, add.bias, sys.call()),

    print = function(...) print_model(self, "linear regression, objective perturbation")
  )
)

set_regression_fit <- function(self, res, columns = NULL) {
  self$coeff <- as.numeric(res$coeff)
  self$feature.names <- columns
  self$zeta <- res$zeta
  self$lambda <- res$lambda
  invisible(self)
}

# ---- tuning ---------------------------------------------------------------------------------------------

# The candidates as a list of pydpowl models of the allowed classes (DPpack's c(m1, m2, ...) gives a list).
tuning_candidates <- function(DPmodels, allowed, fun, call) {
  models <- if (inherits(DPmodels, "R6")) list(DPmodels) else DPmodels
  if (!is.list(models) || length(models) == 0L) {
    arg_error(sprintf("DPmodels must be a non-empty list of %s objects, got %s.", paste(allowed, collapse = " or "),
                      fmt_value(DPmodels)), call)
  }
  for (i in seq_along(models)) {
    m <- models[[i]]
    # pydpowl's objects carry reproduce.dppack (DPpack's have no such field)
    if (!inherits(m, "R6") || !(class(m)[1L] %in% allowed) || is.null(m$reproduce.dppack)) {
      arg_error(sprintf(paste0("DPmodels[[%d]] must be a pydpowl %s object (created with pydpowl::%s$new()), ",
                               "got %s. DPpack's objects are tuned by DPpack::%s."),
                        i, paste(allowed, collapse = " or "), allowed[1L],
                        if (inherits(m, "R6")) paste0("an object of class ", class(m)[1L]) else fmt_value(m), fun),
                call, class = "pydpowl_not_supported")
    }
  }
  models
}

# One stream for the whole tuning (every candidate's fit and the choice draw from it in turn): the candidates'
# rng (or the session's option) must agree.
tuning_rng <- function(models, call) {
  rngs <- vapply(models, function(m) rng_choice(m$rng, call), character(1))
  if (length(unique(rngs)) > 1L) {
    arg_error(sprintf(paste0("DPmodels must all draw from the same stream (one stream serves every candidate and ",
                             "the choice), got rng = %s."),
                      paste0("c(", paste(dQuote(rngs, FALSE), collapse = ", "), ")")), call)
  }
  rngs[[1L]]
}

classifier_spec <- function(m, call) {
  if (inherits(m, "svmDP")) {
    list(class = "svmDP", regularizer = "l2", eps = as_setting(m$eps, "eps", call),
         gamma = as_setting(m$gamma, "gamma", call),
         perturbation.method = as_setting(m$perturbation.method, "perturbation.method", call),
         kernel = as_setting(m$kernel, "kernel", call), D = as_setting(m$D, "D", call),
         kernel.param = as_setting(m$kernel.param, "kernel.param", call),
         huber.h = as_setting(m$huber.h, "huber.h", call), reproduce.dppack = isTRUE(m$reproduce.dppack))
  } else {
    list(class = "LogisticRegressionDP", regularizer = "l2", eps = as_setting(m$eps, "eps", call),
         gamma = as_setting(m$gamma, "gamma", call),
         perturbation.method = as_setting(m$perturbation.method, "perturbation.method", call),
         reproduce.dppack = isTRUE(m$reproduce.dppack))
  }
}

# Documented in man/tune_classification_model.Rd.
tune_classification_model <- function(DPmodels, X, y, upper.bounds, lower.bounds, add.bias = FALSE, weights = NULL,
                                      weights.upper.bound = NULL) {
  call <- sys.call()
  models <- tuning_candidates(DPmodels, c("svmDP", "LogisticRegressionDP"), "tune_classification_model", call)
  M <- wire_features(X, "X", call = call)
  args <- list(DPmodels = lapply(models, classifier_spec, call = call), X = M$values,
               y = labels01_arg(y, call),
               upper.bounds = bounds_by_name(upper.bounds, M$columns, "upper.bounds", call),
               lower.bounds = bounds_by_name(lower.bounds, M$columns, "lower.bounds", call),
               add.bias = as_setting(add.bias, "add.bias", call),
               weights = if (!is.null(weights)) as_numeric_arg(weights, "weights", call),
               weights.upper.bound = as_setting(weights.upper.bound, "weights.upper.bound", call),
               columns = M$columns)
  res <- engine_with_rng("tune_classification_model", args, tuning_rng(models, call), call)
  for (i in seq_along(models)) set_classifier_fit(models[[i]], res$models[[i]], M$columns)  # in place (DPpack)
  models[[res$index]]
}

# Documented in man/tune_linear_regression_model.Rd.
tune_linear_regression_model <- function(DPmodels, X, y, upper.bounds, lower.bounds, add.bias = FALSE) {
  call <- sys.call()
  models <- tuning_candidates(DPmodels, "LinearRegressionDP", "tune_linear_regression_model", call)
  M <- wire_features(X, "X", call = call)
  specs <- lapply(models, function(m) {
    list(class = "LinearRegressionDP", regularizer = "l2", eps = as_setting(m$eps, "eps", call),
         delta = as_setting(m$delta, "delta", call), gamma = as_setting(m$gamma, "gamma", call),
         reproduce.dppack = isTRUE(m$reproduce.dppack))
  })
  args <- list(DPmodels = specs, X = M$values, y = as_numeric_arg(y, "y", call),
               upper.bounds = bounds_by_name(upper.bounds, M$columns, "upper.bounds", call, extra = 1L),
               lower.bounds = bounds_by_name(lower.bounds, M$columns, "lower.bounds", call, extra = 1L),
               add.bias = as_setting(add.bias, "add.bias", call), columns = M$columns)
  res <- engine_with_rng("tune_linear_regression_model", args, tuning_rng(models, call), call)
  for (i in seq_along(models)) set_regression_fit(models[[i]], res$models[[i]], M$columns)
  models[[res$index]]
}

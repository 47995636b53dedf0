# svmDP: DPpack's svmDP interface (linear kernel, output perturbation) on the Python engine.

# DPpack options this class does not implement are refused here, in R: they
# choose between R-level features (some of them functions, which do not cross
# to Python). The numeric settings are checked by the worker.
refuse_unsupported <- function(self, call) {
  refuse <- function(msg) arg_error(msg, call, class = "pydpowl_not_supported")
  if (!identical(self$regularizer, "l2")) {
    refuse(sprintf(paste0("regularizer must be \"l2\" (the only regularizer pydpowl supports; custom ",
                          "regularizer functions are not supported), got %s."), fmt_value(self$regularizer)))
  }
  if (!identical(self$perturbation.method, "output")) {
    refuse(sprintf(paste0("perturbation.method must be \"output\": pydpowl implements output perturbation ",
                          "only (objective perturbation is available in DPpack::svmDP), got %s."),
                   fmt_value(self$perturbation.method)))
  }
  if (!identical(self$kernel, "linear")) {
    refuse(sprintf(paste0("kernel must be \"linear\": the Gaussian (random Fourier feature) kernel is not ",
                          "supported by pydpowl yet (use DPpack::svmDP for it), got %s."), fmt_value(self$kernel)))
  }
  invisible(TRUE)
}

svm_settings <- function(self, call) {
  list(eps = as_setting(self$eps, "eps", call), gamma = as_setting(self$gamma, "gamma", call),
       huber.h = as_setting(self$huber.h, "huber.h", call))
}

# 0/1 labels in DPpack's coding: a factor's numbers would be its level codes.
labels01_arg <- function(y, call) {
  if (is.factor(y)) {
    arg_error(sprintf(paste0("y must be numeric labels 0 and 1 (DPpack's svmDP coding), got a factor with ",
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

# Documented in man/svmDP.Rd.
svmDP <- R6::R6Class("svmDP",
  public = list(
    regularizer = NULL,
    eps = NULL,
    gamma = NULL,
    perturbation.method = NULL,
    kernel = NULL,
    huber.h = NULL,
    reproduce.dppack = NULL,
    coeff = NULL,

    initialize = function(regularizer = "l2", eps, gamma, perturbation.method = "output", kernel = "linear",
                          D = NULL, kernel.param = NULL, regularizer.gr = NULL, huber.h = 0.5,
                          reproduce.dppack = FALSE) {
      call <- sys.call(-1L)
      self$regularizer <- regularizer
      self$eps <- eps
      self$gamma <- gamma
      self$perturbation.method <- perturbation.method
      self$kernel <- kernel
      self$huber.h <- huber.h
      self$reproduce.dppack <- check_flag(reproduce.dppack, "reproduce.dppack", call = call)
      for (arg in c("D", "kernel.param", "regularizer.gr")) {
        if (!is.null(get(arg))) {
          arg_error(sprintf(paste0("%s is not supported by pydpowl::svmDP (linear kernel and the l2 ",
                                   "regularizer only); leave it NULL or use DPpack::svmDP."), arg), call,
                    class = "pydpowl_not_supported")
        }
      }
      refuse_unsupported(self, call)
      engine("svm_settings", svm_settings(self, call), call)
      invisible(self)
    },

    fit = function(X, y, upper.bounds, lower.bounds, add.bias = FALSE, weights = NULL,
                   weights.upper.bound = NULL) {
      call <- sys.call()
      refuse_unsupported(self, call)
      M <- as_feature_matrix(X, "X", call = call)
      args <- c(list(X = wire_matrix(M), y = labels01_arg(y, call),
                     upper.bounds = as_numeric_arg(upper.bounds, "upper.bounds", call),
                     lower.bounds = as_numeric_arg(lower.bounds, "lower.bounds", call),
                     add.bias = as_setting(add.bias, "add.bias", call),
                     weights = if (!is.null(weights)) as_numeric_arg(weights, "weights", call),
                     weights.upper.bound = as_setting(weights.upper.bound, "weights.upper.bound", call)),
                svm_settings(self, call), list(columns = colnames(M), reproduce.dppack = isTRUE(self$reproduce.dppack)))
      args$random_seed <- state <- r_rng_state(call)
      res <- engine("fit_svm", args, call)
      r_rng_restore(res$random_seed, state)
      self$coeff <- as.numeric(res$coeff)
      invisible(self)
    },

    predict = function(X, add.bias = FALSE, raw.value = FALSE) {
      call <- sys.call()
      if (is.null(self$coeff)) {
        arg_error("this svmDP model is not fitted yet; call $fit() first.", call)
      }
      M <- as_feature_matrix(X, "X", call = call)  # NA rows predict NA, as in DPpack
      if (check_flag(add.bias, "add.bias", call = call)) M <- add_bias_column(M)
      check_flag(raw.value, "raw.value", call = call)
      if (ncol(M) != length(self$coeff)) {
        arg_error(sprintf("X must have %d columns%s to match the %d fitted coefficients, got %d.",
                          length(self$coeff) - add.bias, if (add.bias) " (plus the bias)" else "",
                          length(self$coeff), ncol(M) - add.bias), call)
      }
      vals <- M %*% self$coeff
      if (raw.value) return(vals)
      vals <- sign(vals)
      vals[vals == -1] <- 0
      vals
    },

    print = function(...) {
      cat("<pydpowl::svmDP> linear kernel, output perturbation (Python engine)\n")
      cat(sprintf("  eps = %s, gamma = %s, huber.h = %s%s\n", format(self$eps), format(self$gamma),
                  format(self$huber.h), if (isTRUE(self$reproduce.dppack))
                    " (reproduce.dppack = TRUE: full precision, validation only)" else ""))
      if (is.null(self$coeff)) cat("  not fitted\n")
      else cat("  coeff:", format(signif(self$coeff, 6)), "\n")
      invisible(self)
    }
  )
)

# svmDP: DPpack's svmDP interface (linear kernel, output perturbation) on the Python engine.

check_svm_settings <- function(self, call) {
  check_number(self$eps, "eps", 0, Inf, upper_open = FALSE, call = call)
  check_number(self$gamma, "gamma", 0, Inf, call = call)
  check_number(self$huber.h, "huber.h", 0, Inf, call = call)
  if (!identical(self$regularizer, "l2")) {
    arg_error(sprintf(paste0("regularizer must be \"l2\" (the only regularizer pydpowl supports; custom ",
                             "regularizer functions are not supported), got %s."),
                      if (is.function(self$regularizer)) "a function" else fmt_value(self$regularizer)), call)
  }
  if (!identical(self$perturbation.method, "output")) {
    arg_error(sprintf(paste0("perturbation.method must be \"output\": pydpowl implements output perturbation ",
                             "only (objective perturbation is available in DPpack::svmDP), got %s."),
                      fmt_value(self$perturbation.method)), call)
  }
  if (!identical(self$kernel, "linear")) {
    arg_error(sprintf(paste0("kernel must be \"linear\": the Gaussian (random Fourier feature) kernel is not ",
                             "supported by pydpowl yet (use DPpack::svmDP for it), got %s."),
                      fmt_value(self$kernel)), call)
  }
  invisible(TRUE)
}

# 0/1 labels in DPpack's coding.
check_labels01 <- function(y, n, call) {
  if (is.factor(y)) {
    arg_error(sprintf(paste0("y must be numeric labels 0 and 1 (DPpack's svmDP coding), got a factor with ",
                             "levels %s. Code it explicitly, e.g. y = as.numeric(f == \"%s\")."),
                      paste(dQuote(levels(y), FALSE), collapse = ", "), utils::tail(levels(y), 1L)), call)
  }
  y <- check_numeric_vector(y, "y", n, call = call)
  bad <- !(y %in% c(0, 1))
  if (any(bad)) {
    hint <- if (all(y %in% c(-1, 1))) " For labels in {-1, 1} use (y + 1) / 2." else ""
    arg_error(sprintf("y must take the values 0 and 1 (DPpack's svmDP coding); %d of %d entries do not (first at position %d).%s",
                      sum(bad), n, which(bad)[1L], hint), call)
  }
  y
}

# Weights in [0, W], clipped at W like DPpack, with a classed warning giving the count.
prepare_weights <- function(weights, weights.upper.bound, n, call) {
  if (is.null(weights)) return(list(weights = rep(1, n), bound = 1))
  if (is.null(weights.upper.bound)) {
    arg_error("weights.upper.bound must be given when weights are given (the public bound W on every weight).", call)
  }
  W <- check_number(weights.upper.bound, "weights.upper.bound", 0, Inf, call = call)
  w <- check_numeric_vector(weights, "weights", n, call = call)
  if (any(w < 0)) {
    arg_error(sprintf("weights must be non-negative; %d of %d entries are negative (first at position %d).",
                      sum(w < 0), n, which(w < 0)[1L]), call)
  }
  over <- w > W
  if (any(over)) {
    warning(structure(class = c("pydpowl_weights_clipped", "warning", "condition"), list(
      message = sprintf(paste0("%d of %d weights exceed weights.upper.bound = %s and were clipped to it ",
                               "(as DPpack does)."), sum(over), n, format(W)),
      call = call
    )))
    w[over] <- W
  }
  list(weights = w, bound = W)
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
                                   "regularizer only); leave it NULL or use DPpack::svmDP."), arg), call)
        }
      }
      check_svm_settings(self, call)
      invisible(self)
    },

    fit = function(X, y, upper.bounds, lower.bounds, add.bias = FALSE, weights = NULL,
                   weights.upper.bound = NULL) {
      call <- sys.call()
      check_svm_settings(self, call)
      M <- as_feature_matrix(X, "X", call = call)
      n <- nrow(M)
      y <- check_labels01(y, n, call)
      b <- check_bounds(lower.bounds, upper.bounds, ncol(M), "lower.bounds", "upper.bounds", call = call)
      add.bias <- check_flag(add.bias, "add.bias", call = call)
      wt <- prepare_weights(weights, weights.upper.bound, n, call)
      state <- r_rng_state(call)
      res <- engine_call(bridge()$fit_svm(
        M, y, b$lower, b$upper, add.bias, wt$weights, wt$bound,
        as.numeric(self$eps), as.numeric(self$gamma), as.numeric(self$huber.h), state,
        reproduce_dppack = isTRUE(self$reproduce.dppack)
      ), call = call)
      r_rng_restore(res$r_state, state)
      relay_warnings(res$warnings)
      self$coeff <- as.numeric(res$coeff)
      invisible(self)
    },

    predict = function(X, add.bias = FALSE, raw.value = FALSE) {
      call <- sys.call()
      if (is.null(self$coeff)) {
        arg_error("this svmDP model is not fitted yet; call $fit() first.", call)
      }
      M <- as_feature_matrix(X, "X", allow_na = TRUE, call = call)
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

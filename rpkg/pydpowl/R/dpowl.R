# dpowl(): idiomatic R interface to DP-OWL (pydpowl.DPOWL), with S3 methods.

dpowl <- function(x, ...) UseMethod("dpowl")

# ---- treatment coding -------------------------------------------------------

# Two arms (dpowl_analysis()): the coding of code_arms() (R/arms.R), the first level -1 and the second +1.
code_treatment <- function(a, n, call) {
  tr <- code_arms(a, n, "treatment", call)
  if (length(tr$coding$levels) != 2L) {
    arg_error(sprintf("treatment must have exactly 2 arms here, got %d: %s.", length(tr$coding$levels),
                      paste(arm_text(tr$coding$levels), collapse = ", ")), call)
  }
  tr
}

# Two-arm labels -1/+1 in the user's coding.
decode_treatment <- function(label, coding) decode_arms(ifelse(label > 0, 2L, 1L), coding)

# ---- propensity ---------------------------------------------------------------

propensity_logistic <- function(benefit_bound, logit_bound = 3, ridge = 0, hessian_lower_bound = NULL,
                                hessian_bound_kind = c("hessian", "second_moment"), assume_hessian_bound = FALSE,
                                fitted_on = c("private", "external")) {
  call <- sys.call()
  fitted_on <- match.arg(fitted_on)
  spec <- engine("propensity_logistic", list(
    benefit_bound = as_setting(benefit_bound, "benefit_bound", call),
    logit_bound = as_setting(logit_bound, "logit_bound", call),
    ridge = as_setting(ridge, "ridge", call),
    hessian_lower_bound = as_setting(hessian_lower_bound, "hessian_lower_bound", call),
    hessian_bound_kind = match.arg(hessian_bound_kind),
    assume_hessian_bound = as_setting(assume_hessian_bound, "assume_hessian_bound", call)
  ), call)
  spec <- spec[c("benefit_bound", "logit_bound", "ridge", "hessian_lower_bound", "hessian_bound_kind",
                 "assume_hessian_bound")]
  spec$fitted_on <- fitted_on
  structure(spec, class = "pydpowl_propensity_logistic")
}

print.pydpowl_propensity_logistic <- function(x, ...) {
  cat(sprintf("<logistic propensity model, fitted on %s data> benefit_bound = %s, logit_bound = %s, ridge = %s%s\n",
              x$fitted_on, format(x$benefit_bound), format(x$logit_bound), format(x$ridge),
              if (is.null(x$hessian_lower_bound)) "" else
                paste0(", hessian_lower_bound = ", format(x$hessian_lower_bound), " (", x$hessian_bound_kind,
                       if (isTRUE(x$assume_hessian_bound)) ", assumed" else "", ")")))
  invisible(x)
}

# A propensity_logistic() specification (two arms), or the propensities of arm_propensity_arg() (R/arms.R).
propensity_arg <- function(propensity, coding, n, call) {
  if (inherits(propensity, "pydpowl_propensity_logistic")) {
    return(list(spec = unclass(propensity), label = sprintf("logistic model fitted on %s data", propensity$fitted_on)))
  }
  arm_propensity_arg(propensity, coding, n, "propensity", call)
}

# ---- bounds -------------------------------------------------------------------

# bounds = list(lower = , upper = ): unnamed vectors give one value per column of
# the design (in order); named vectors are matched to column names, and columns
# coming from factor/logical terms (0/1 dummies) default to [0, 1]. Bounds given
# per feature (list(age = c(18, 89), ...), bounds_per_feature()) are named vectors.
resolve_bounds <- function(bounds, cols, dummy, call) {
  p <- length(cols)
  bounds <- bounds_per_feature(bounds)
  if (is.matrix(bounds) && nrow(bounds) == 2L) bounds <- list(lower = bounds[1L, ], upper = bounds[2L, ])
  if (!is.list(bounds) || length(bounds) != 2L) {
    arg_error(sprintf(paste0("bounds must be list(lower = , upper = ) with public bounds for the %d feature(s) ",
                             "%s, got %s."), p, paste(sQuote(cols, FALSE), collapse = ", "),
                      paste(class(bounds), collapse = "/")), call)
  }
  if (!is.null(names(bounds)) && all(c("lower", "upper") %in% names(bounds))) {
    lower <- bounds[["lower"]]
    upper <- bounds[["upper"]]
  } else {
    lower <- bounds[[1L]]
    upper <- bounds[[2L]]
  }
  fill <- function(v, side, default) {
    nm <- paste0("bounds$", side)
    if (!is.numeric(v) || is.factor(v)) {
      arg_error(sprintf("%s must be numeric, got %s.", nm, paste(class(v), collapse = "/")), call)
    }
    if (is.null(names(v))) {
      if (length(v) != p) {
        arg_error(sprintf(paste0("%s must have length %d (one bound per feature: %s), got length %d. ",
                                 "Named vectors may omit 0/1 dummy columns."), nm, p,
                          paste(sQuote(cols, FALSE), collapse = ", "), length(v)), call)
      }
      return(as.numeric(v))
    }
    unknown <- setdiff(names(v), cols)
    if (length(unknown) > 0L) {
      arg_error(sprintf("%s names unknown feature(s) %s; the features are %s.", nm,
                        paste(sQuote(unknown, FALSE), collapse = ", "),
                        paste(sQuote(cols, FALSE), collapse = ", ")), call)
    }
    out <- rep(NA_real_, p)
    names(out) <- cols
    out[dummy] <- default
    out[names(v)] <- as.numeric(v)
    if (anyNA(out)) {
      arg_error(sprintf("%s has no value for feature(s) %s (public bounds are needed for every numeric feature).",
                        nm, paste(sQuote(cols[is.na(out)], FALSE), collapse = ", ")), call)
    }
    unname(out)
  }
  list(lower = stats::setNames(fill(lower, "lower", 0), cols), upper = stats::setNames(fill(upper, "upper", 1), cols))
}

# ---- fitting ------------------------------------------------------------------

dpowl_fit <- function(M, treatment, benefit, propensity, epsilon, gamma, weights_upper_bound, bounds,
                      intercept, huber_h, rng, dummy, call, weight_sensitivity = NULL, reproduce_dppack = FALSE,
                      mechanism = "auto", residual = "auto", benefit_bounds = NULL) {
  n <- nrow(M)
  cols <- colnames(M)
  if (is.null(cols)) cols <- paste0("x", seq_len(ncol(M)))
  colnames(M) <- cols
  rng <- rng_choice(rng, call)
  tr <- code_arms(treatment, n, "treatment", call)
  prop <- propensity_arg(propensity, tr$coding, n, call)
  b <- resolve_bounds(bounds, cols, dummy, call)
  K <- length(tr$coding$levels)
  res <- engine_with_rng("fit_owl", list(
    x = wire_matrix(M), treatment = as_numeric_arg(tr$A, "treatment", call),
    benefit = as_numeric_arg(benefit, "benefit", call), propensity = prop$spec,
    lower = as_numeric_arg(unname(b$lower), "bounds$lower", call),
    upper = as_numeric_arg(unname(b$upper), "bounds$upper", call),
    intercept = as_setting(intercept, "intercept", call), epsilon = as_setting(epsilon, "epsilon", call),
    gamma = as_setting(gamma, "gamma", call),
    weights_upper_bound = as_setting(weights_upper_bound, "weights_upper_bound", call),
    huber_h = as_setting(huber_h, "huber_h", call), columns = cols,
    weight_sensitivity = as_setting(weight_sensitivity, "weight_sensitivity", call),
    reproduce_dppack = as_setting(reproduce_dppack, "reproduce_dppack", call),
    mechanism = as_setting(mechanism, "mechanism", call), residual = as_setting(residual, "residual", call),
    benefit_bounds = if (is.null(benefit_bounds)) NULL else as_numeric_arg(benefit_bounds, "benefit_bounds", call),
    levels = arm_names(tr$coding)
  ), rng, call, state_arg = "random_seed")
  intercept <- isTRUE(intercept)
  if (K == 2L) {
    coef <- as.numeric(res$coef)
    names(coef) <- cols
    if (intercept) coef <- c("(Intercept)" = res$intercept, coef)
  } else {  # Theta: the K - 1 coordinates of the decision function f(x), one row each
    coef <- matrix(as.numeric(res$coef), nrow = K - 1L)
    if (intercept) coef <- cbind(as.numeric(res$intercept), coef)
    dimnames(coef) <- list(paste0("f", seq_len(K - 1L)), c(if (intercept) "(Intercept)", cols))
  }
  noise <- res$noise
  noise$sd <- if (K == 2L) stats::setNames(as.numeric(noise$sd), names(coef)) else
    array(as.numeric(noise$sd), dim(coef), dimnames(coef))
  structure(list(
    coefficients = coef,
    epsilon = as.numeric(epsilon), gamma = res$gamma, weights_upper_bound = as.numeric(weights_upper_bound),
    huber_h = res$huber_h, sensitivity = res$sensitivity, C = res$C, release_grid = res$release_grid,
    mechanism = res$mechanism, residual = res$residual, mechanism_description = res$mechanism_description,
    rule_weights_upper_bound = res$rule_weights_upper_bound, weight_bound_notes = unlist(res$weight_bound_notes),
    noise = noise, bounds = b, intercept = intercept, propensity = prop$label,
    treatment_coding = tr$coding, vertices = res$vertices, rng = rng,
    diagnostics = nonprivate(c(clipped_weights = res$n_clipped_weights, clipped_features = res$n_clipped_features,
                               clipped_logits = res$n_clipped_logits, clipped_benefits = res$n_clipped_benefits)),
    call = call
  ), class = "dpowl")
}

# Counts computed from the private data (how many values were clipped to the public bounds): not covered by
# epsilon, so kept apart, labelled wherever they are printed and shown by summary() only on request.
nonprivate <- function(x) structure(x, class = "pydpowl_nonprivate")

print.pydpowl_nonprivate <- function(x, ...) {
  cat("NON-PRIVATE diagnostics (computed from the private data, not covered by the privacy guarantee; do not",
      "publish):\n")
  print(unclass(x), ...)
  invisible(x)
}

dpowl.default <- function(x, treatment, benefit, propensity = 0.5, epsilon, gamma = NULL, weights_upper_bound,
                          bounds, intercept = TRUE, huber_h = NULL, rng = NULL, weight_sensitivity = NULL,
                          reproduce_dppack = FALSE, mechanism = "auto", residual = "auto", benefit_bounds = NULL,
                          ...) {
  call <- match.call()
  call[[1L]] <- as.name("dpowl")
  check_dots(list(...), call)
  M <- as_feature_matrix(x, "x", call = call)
  fit <- dpowl_fit(M, treatment, benefit, propensity, epsilon, gamma, weights_upper_bound, bounds,
                   intercept, huber_h, rng, dummy = rep(FALSE, ncol(M)), call = call,
                   weight_sensitivity = weight_sensitivity, reproduce_dppack = reproduce_dppack,
                   mechanism = mechanism, residual = residual, benefit_bounds = benefit_bounds)
  fit$feature_names <- names(fit$bounds$lower)
  fit$named_features <- !is.null(colnames(x))
  fit
}

dpowl.formula <- function(x, data, treatment, benefit, propensity = 0.5, epsilon, gamma = NULL, weights_upper_bound,
                          bounds, huber_h = NULL, rng = NULL, weight_sensitivity = NULL,
                          reproduce_dppack = FALSE, mechanism = "auto", residual = "auto", benefit_bounds = NULL,
                          ...) {
  call <- match.call()
  call[[1L]] <- as.name("dpowl")
  check_dots(list(...), call)
  formula <- x
  if (missing(data) || !is.data.frame(data)) {
    arg_error("data must be a data frame holding the variables of the formula.", call)
  }
  if (length(formula) != 2L) {
    arg_error(paste0("formula must be one-sided (~ x1 + x2): the outcome enters through benefit = and ",
                     "treatment =, not through a left-hand side."), call)
  }
  env <- parent.frame()
  treatment <- eval(substitute(treatment), data, env)
  benefit <- eval(substitute(benefit), data, env)
  propensity <- eval(substitute(propensity), data, env)
  tt <- stats::terms(formula, data = data)
  mf <- stats::model.frame(tt, data, na.action = stats::na.pass, drop.unused.levels = TRUE)
  na_rows <- !stats::complete.cases(mf)
  if (any(na_rows)) {
    vars <- names(mf)[vapply(mf, anyNA, logical(1))]
    arg_error(sprintf(paste0("data has missing values (NA) in %s (%d row(s): %s). Nothing is dropped ",
                             "silently: remove or impute them first."), paste(sQuote(vars, FALSE), collapse = ", "),
                      sum(na_rows), positions(na_rows)), call)
  }
  M <- stats::model.matrix(tt, mf)
  keep <- colnames(M) != "(Intercept)"
  assign_ <- attr(M, "assign")[keep]
  contrasts_ <- attr(M, "contrasts")
  M <- M[, keep, drop = FALSE]
  if (ncol(M) == 0L) arg_error("formula must name at least one feature.", call)
  # columns from terms made only of factors/characters/logicals are 0/1 dummies
  fac <- attr(tt, "factors")
  categorical <- vapply(mf, function(v) is.factor(v) || is.character(v) || is.logical(v), logical(1))
  dummy <- vapply(assign_, function(k) {
    vars <- rownames(fac)[fac[, k] > 0]
    all(categorical[vars])
  }, logical(1))
  fit <- dpowl_fit(M, treatment, benefit, propensity, epsilon, gamma, weights_upper_bound, bounds,
                   intercept = attr(tt, "intercept") == 1L, huber_h = huber_h, rng = rng,
                   dummy = dummy, call = call, weight_sensitivity = weight_sensitivity,
                   reproduce_dppack = reproduce_dppack, mechanism = mechanism, residual = residual,
                   benefit_bounds = benefit_bounds)
  fit$terms <- stats::delete.response(tt)
  fit$xlevels <- stats::.getXlevels(tt, mf)
  fit$contrasts <- contrasts_
  fit$feature_names <- colnames(M)
  fit
}

check_dots <- function(dots, call) {
  if (length(dots) > 0L) {
    nm <- names(dots)
    nm[is.null(nm) | nm == ""] <- "<unnamed>"
    arg_error(sprintf("unknown argument(s) %s.", paste(sQuote(nm, FALSE), collapse = ", ")), call)
  }
}

# ---- methods ------------------------------------------------------------------

coef.dpowl <- function(object, ...) object$coefficients

dpowl_design <- function(object, newdata, call) {
  if (!is.null(object$terms)) {
    if (!is.data.frame(newdata)) arg_error("newdata must be a data frame (the model was fitted with a formula).", call)
    mf <- stats::model.frame(object$terms, newdata, na.action = stats::na.pass, xlev = object$xlevels)
    M <- stats::model.matrix(object$terms, mf, contrasts.arg = object$contrasts)
    M <- M[, colnames(M) != "(Intercept)", drop = FALSE]
  } else {
    # features fitted with names are matched by name, unnamed ones by position
    given <- if (is.data.frame(newdata)) names(newdata) else colnames(newdata)
    if (isTRUE(object$named_features) && !is.null(given)) {
      absent <- setdiff(object$feature_names, given)
      if (length(absent) > 0L) {
        arg_error(sprintf("newdata lacks the feature(s) %s used in the fit.",
                          paste(sQuote(absent, FALSE), collapse = ", ")), call)
      }
      newdata <- newdata[, object$feature_names, drop = FALSE]
    }
    M <- as_feature_matrix(newdata, "newdata", call = call)  # NA rows predict NA
  }
  if (ncol(M) != length(object$feature_names)) {
    arg_error(sprintf("newdata must give the %d feature(s) %s, got %d column(s).", length(object$feature_names),
                      paste(sQuote(object$feature_names, FALSE), collapse = ", "), ncol(M)), call)
  }
  M
}

predict.dpowl <- function(object, newdata, type = c("treatment", "decision", "label"), ...) {
  call <- match.call()
  type <- match.arg(type)
  if (missing(newdata)) {
    arg_error("newdata is required: a dpowl fit keeps no copy of the training data.", call)
  }
  M <- dpowl_design(object, newdata, call)
  beta <- object$coefficients
  if (is.matrix(beta)) return(predict_arms(beta, object$intercept, object$vertices, M, object$treatment_coding, type))
  f <- if (object$intercept) beta[[1L]] + drop(M %*% beta[-1L]) else drop(M %*% beta)
  f <- unname(f)
  if (type == "decision") return(f)
  label <- ifelse(f > 0, 1, -1)
  if (type == "label") return(label)
  decode_treatment(label, object$treatment_coding)
}

# K >= 3 arms: the decision function f(x) = Theta [1, x] in R^(K-1), the arms' scores <V_a, f(x)> (n x K, one
# column per level: type = "decision"), the best arm's position ("label") or label ("treatment").
predict_arms <- function(theta, intercept, vertices, M, coding, type) {
  f <- if (intercept) sweep(M %*% t(theta[, -1L, drop = FALSE]), 2L, theta[, 1L], "+") else M %*% t(theta)
  scores <- f %*% t(vertices)
  dimnames(scores) <- list(NULL, arm_names(coding))
  if (type == "decision") return(scores)
  idx <- best_arm(scores)
  if (type == "label") return(idx)
  decode_arms(idx, coding)
}

eps_label <- function(eps) if (is.infinite(eps)) "Inf (non-private)" else format(eps)

print.dpowl <- function(x, digits = max(3L, getOption("digits") - 3L), ...) {
  cat(sprintf("Differentially private OWL rule (pydpowl, %s)\n", x$mechanism_description))
  if (!is.null(x$call)) cat("Call: ", paste(deparse(x$call), collapse = "\n"), "\n", sep = "")
  # no n: the number of rows is computed from the private data and is not a release (issue 21.1)
  cat(sprintf("epsilon = %s, gamma = %s, weights_upper_bound = %s\n", eps_label(x$epsilon),
              format(x$gamma), format(x$weights_upper_bound)))
  if (is.matrix(x$coefficients)) {
    cat(sprintf(paste0("Released coefficients of f(x) in R^%d (%d arms: %s; recommend the arm a with the largest ",
                       "<V_a, f(x)>, V_a the vertices of a regular simplex):\n"), nrow(x$coefficients),
                length(x$treatment_coding$levels), paste(arm_names(x$treatment_coding), collapse = ", ")))
  } else {
    cat("Released coefficients (recommend the treatment coded +1 where the decision value is > 0):\n")
  }
  print.default(format(x$coefficients, digits = digits), print.gap = 2L, quote = FALSE)
  note_noise_dominated(x$noise, digits)
  note_replay(x$rng)
  invisible(x)
}

# From public quantities only (see pydpowl.interop.noise.owl_noise_scale).
note_noise_dominated <- function(noise, digits) {
  if (isTRUE(noise$dominated)) {
    cat(sprintf(paste0("NOTE: the release is noise-dominated (public quantities only): expected noise norm %s >= %s, ",
                       "the largest norm any minimiser can have; the rule is essentially random. See the fit's ",
                       "warning and ?dpowl, 'Scaling features'.\n"),
                format(noise$expected_norm, digits = digits), format(noise$minimiser_norm_bound, digits = digits)))
  }
}

note_replay <- function(rng) {
  if (identical(rng, "R")) {
    cat("NOTE: rng = \"R\": the noise replays R's stream (set.seed); this release is NOT private.\n")
  }
}

summary.dpowl <- function(object, diagnostics = FALSE, ...) {
  check_flag(diagnostics, "diagnostics", call = sys.call())
  structure(list(
    call = object$call,
    coefficients = object$coefficients,
    settings = c(epsilon = object$epsilon, gamma = object$gamma, weights_upper_bound = object$weights_upper_bound,
                 huber_h = object$huber_h, C = object$C, sensitivity = object$sensitivity,
                 expected_noise_norm = object$noise$expected_norm,
                 minimiser_norm_bound = object$noise$minimiser_norm_bound,
                 release_grid = if (is.null(object$release_grid)) NA_real_ else object$release_grid),
    noise_sd = object$noise$sd,
    noise_dominated = isTRUE(object$noise$dominated),
    bounds = object$bounds,
    propensity = object$propensity,
    treatment_coding = object$treatment_coding,
    rng = object$rng,
    mechanism = object$mechanism,
    mechanism_description = object$mechanism_description,
    weight_bound_notes = object$weight_bound_notes,
    diagnostics = if (diagnostics) object$diagnostics
  ), class = "summary.dpowl")
}

print.summary.dpowl <- function(x, digits = max(3L, getOption("digits") - 3L), ...) {
  s <- x$settings
  cat(sprintf("Differentially private OWL rule (pydpowl: DP-wERM, Huber hinge loss, %s)\n",
              x$mechanism_description))
  if (!is.null(x$call)) cat("Call: ", paste(deparse(x$call), collapse = "\n"), "\n", sep = "")
  output <- identical(x$mechanism, "output")
  if (output) {
    cat(sprintf(paste0("\nPrivacy: epsilon = %s; sensitivity Delta = (C + 2W + 2 n tol)/gamma = %s (W = %s, C = %s, ",
                       "gamma = %s, tol = 1e-10)\n"),
                eps_label(s[["epsilon"]]), format(s[["sensitivity"]], digits = digits),
                format(s[["weights_upper_bound"]]), format(s[["C"]]), format(s[["gamma"]])))
  } else {
    cat(sprintf("\nPrivacy: epsilon = %s; objective perturbation (W = %s, C = 0, gamma = %s)\n",
                eps_label(s[["epsilon"]]), format(s[["weights_upper_bound"]]), format(s[["gamma"]], digits = digits)))
  }
  for (note in x$weight_bound_notes) cat("Weights: ", note, "\n", sep = "")
  if (!is.na(s[["release_grid"]])) {
    cat(sprintf(paste0("Release: floating-point safe, the exact sum rounded to multiples of 2^%d in the noise ",
                       "space\n"), as.integer(round(log2(s[["release_grid"]])))))
  } else if (is.finite(s[["epsilon"]])) {
    cat("Release: full precision (reproduce_dppack = TRUE, validation only: NOT floating-point safe)\n")
  }
  cat(sprintf(paste0(if (output) "Noise: ||b|| ~ Gamma(%d, rate = epsilon/Delta), expected norm %s" else
                       "Noise: ||b|| ~ Gamma(%d, rate), moving the rule by at most %s in expectation",
                     " (scaled space; any minimiser has norm <= %s); drawn from %s\n"),
              length(x$coefficients), format(s[["expected_noise_norm"]], digits = digits),
              format(s[["minimiser_norm_bound"]], digits = digits),
              if (x$rng == "R") "R's stream (rng = \"R\": replay of set.seed, NOT private)" else
                "operating-system entropy"))
  if (x$noise_dominated) {
    cat("NOTE: noise-dominated release: the expected noise norm reaches the bound on any minimiser's norm,",
        "so the rule is essentially random (public quantities only; see ?dpowl, 'Scaling features').\n")
  }
  cat(sprintf("Propensity: %s\n", x$propensity))
  lv <- x$treatment_coding$levels
  if (length(lv) == 2L) {
    cat(sprintf("Treatment coding: %s -> -1, %s -> +1\n", format(lv[1L]), format(lv[2L])))
  } else {
    cat(sprintf(paste0("Arms: %s (%d, the vertices V_1..V_%d of a regular simplex in R^%d, in this order); rule: ",
                       "the arm with the largest <V_a, f(x)>; Delta bounds the Frobenius norm of the %d x %d ",
                       "coefficient matrix\n"), paste(format(lv), collapse = ", "), length(lv), length(lv),
                length(lv) - 1L, nrow(x$coefficients), ncol(x$coefficients)))
  }
  cat(sprintf("huber_h = %s\n\n", format(s[["huber_h"]])))
  coefs <- x$coefficients
  sds <- x$noise_sd
  rows <- names(coefs)
  if (is.matrix(coefs)) {  # one row per coefficient: f1:(Intercept), f1:x1, ..., f2:(Intercept), ...
    rows <- paste0(rep(rownames(coefs), each = ncol(coefs)), ":", rep(colnames(coefs), nrow(coefs)))
    coefs <- as.vector(t(coefs))
    sds <- as.vector(t(sds))
  }
  reps <- if (is.matrix(x$coefficients)) nrow(x$coefficients) else 1L
  k <- length(x$coefficients) %/% reps - length(x$bounds$lower)  # 1 with an intercept, else 0
  tab <- data.frame(estimate = unname(coefs), noise_sd = unname(sds),
                    lower_bound = rep(c(rep(NA, k), x$bounds$lower), reps),
                    upper_bound = rep(c(rep(NA, k), x$bounds$upper), reps), row.names = rows)
  print(tab, digits = digits)
  cat("noise_sd: the standard deviation of the noise added to each coefficient, on the features' scale",
      "(public: from Delta, epsilon and the bounds).\n")
  cat("No standard errors: the release is one noisy draw.\n")
  if (!is.null(x$diagnostics)) {
    d <- x$diagnostics
    cat(sprintf(paste0("\nNON-PRIVATE diagnostics (summary(diagnostics = TRUE); computed from the private data and ",
                       "not covered by the privacy guarantee: do not publish): clipped to the public bounds by ",
                       "design %d weight(s), %d feature value(s), %d propensity logit(s), %d benefit(s) (at the ",
                       "propensity model's benefit_bound).\n"),
                d[["clipped_weights"]], d[["clipped_features"]], d[["clipped_logits"]], d[["clipped_benefits"]]))
  }
  invisible(x)
}

# ---- data for examples and tests ---------------------------------------------------

pydpowl_data <- function(name = c("cyp_guides_style", "synthetic"), n = NULL, seed = 1L) {
  call <- sys.call()
  name <- match.arg(name)
  if (is.null(n)) n <- if (name == "cyp_guides_style") 1459L else 1000L
  d <- engine("make_data", list(name = name, n = as_setting(n, "n", call), seed = as_setting(seed, "seed", call)),
              call)
  X <- as.data.frame(matrix(d$X, ncol = length(d$names), dimnames = list(NULL, unlist(d$names))))
  out <- cbind(X, treatment = as.numeric(d$treatment), benefit = as.numeric(d$benefit),
               propensity = as.numeric(d$propensity))
  if (!is.null(d$optimal)) out$optimal <- as.numeric(d$optimal)
  lower <- stats::setNames(as.numeric(d$lower), unlist(d$names))
  upper <- stats::setNames(as.numeric(d$upper), unlist(d$names))
  attr(out, "bounds") <- list(lower = lower, upper = upper)
  attr(out, "weights_upper_bound") <- d$weights_upper_bound
  attr(out, "description") <- d$description
  out
}

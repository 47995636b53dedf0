# dpowl_analysis(): the whole private treatment-rule analysis under one budget
# (pydpowl.interop.analysis.analyze_arrays: split, private propensities or known ones,
# private gamma, the DP-OWL rule, its value and gain with intervals, the ledger).
# Documented in man/dpowl_analysis.Rd.

dpowl_analysis <- function(x, treatment, benefit, bounds, benefit_bounds, weights_upper_bound, total_epsilon,
                           propensity = NULL, propensity_model = NULL, gamma = NULL, gammas = NULL,
                           level = 0.95, budget_split = NULL, rng = NULL, out_dir = NULL, public_n = FALSE) {
  call <- match.call()
  rng <- rng_choice(rng, call)
  public_n <- check_flag(public_n, "public_n", call = call)
  M <- as_feature_matrix(x, "x", call = call)
  cols <- colnames(M)
  if (is.null(cols)) cols <- paste0("x", seq_len(ncol(M)))
  colnames(M) <- cols
  tr <- code_arms(treatment, nrow(M), "treatment", call)
  K <- length(tr$coding$levels)
  b <- resolve_bounds(bounds, cols, dummy = rep(FALSE, length(cols)), call = call)
  # two arms: the labels of the arms coded +1 and -1; K arms: the levels (the engine's classes, in their order)
  labels <- if (K == 2L) as.character(decode_treatment(c(1, -1), tr$coding)) else arm_names(tr$coding)
  if (K > 2L && !is.null(propensity)) propensity <- arm_propensity_arg(propensity, tr$coding, nrow(M), "propensity",
                                                                        call)$spec
  # OS entropy by default; with rng = "R" one draw of R's stream seeds the analysis, so that set.seed() reproduces
  # it (the engine then warns that the analysis is not private)
  seed <- if (rng == "R") sample.int(.Machine$integer.max, 1L) else NULL
  res <- engine("analyze", list(
    x = wire_matrix(M), treatment = as_numeric_arg(tr$A, "treatment", call),
    benefit = as_numeric_arg(benefit, "benefit", call),
    lower = as_numeric_arg(unname(b$lower), "bounds$lower", call),
    upper = as_numeric_arg(unname(b$upper), "bounds$upper", call),
    benefit_bounds = as_numeric_arg(benefit_bounds, "benefit_bounds", call),
    weights_upper_bound = as_setting(weights_upper_bound, "weights_upper_bound", call),
    total_epsilon = as_setting(total_epsilon, "total_epsilon", call),
    propensity = if (K > 2L) propensity else as_setting(propensity, "propensity", call),
    propensity_model = as_setting(propensity_model, "propensity_model", call),
    gamma = as_setting(gamma, "gamma", call), gammas = as_setting(gammas, "gammas", call),
    level = as_setting(level, "level", call), budget_split = as_setting(budget_split, "budget_split", call),
    seed = if (is.null(seed)) NULL else as.double(seed), treatment_labels = labels, columns = cols,
    out_dir = as_setting(out_dir, "out_dir", call), public_n = public_n
  ), call)
  if (K == 2L) {
    coefs <- unlist(res$coefficients)
    names(coefs)[1L] <- "(Intercept)"  # the engine lists the intercept first; R names it as dpowl() and lm() do
    vertices <- NULL
  } else {  # Theta: one row per coordinate of f(x) in R^(K-1), the intercept first (as a K-arm dpowl() fit)
    st <- res$model$stages[[1L]]
    coefs <- cbind(as.double(unlist(st$intercept)), do.call(rbind, lapply(st$coef, function(r) as.double(unlist(r)))))
    dimnames(coefs) <- list(paste0("f", seq_len(K - 1L)), c("(Intercept)", cols))
    vertices <- do.call(rbind, lapply(st$vertices, function(r) as.double(unlist(r))))
    # the engine's arms are the levels as text, sorted; predict() scores the levels in their own order
    vertices <- vertices[match(arm_names(tr$coding), as.character(unlist(st$arms))), , drop = FALSE]
  }
  structure(list(
    call = call, coefficients = coefs, vertices = vertices, gamma = res$gamma, mechanism = res$mechanism,
    value = res$value,
    ledger = res$ledger,
    # the sizes only when the analyst declared n public (issue 21.1), as the engine's outputs
    model = res$model, public_n = public_n, n = if (public_n) res$n, n_learning = if (public_n) res$n_learning,
    n_evaluation = if (public_n) res$n_evaluation,
    treatment_coding = tr$coding, feature_names = cols, intercept = TRUE, named_features = TRUE,
    terms = NULL, files = res$files, rng = rng
  ), class = "dpowl_analysis")
}

coef.dpowl_analysis <- function(object, ...) object$coefficients

predict.dpowl_analysis <- function(object, newdata, type = c("treatment", "decision", "label"), ...) {
  predict.dpowl(object, newdata, type = type, ...)  # the released rule, as a dpowl fit's
}

print.dpowl_analysis <- function(x, digits = max(3L, getOption("digits") - 3L), ...) {
  v <- x$value
  cat("Private treatment-rule analysis (pydpowl): one total epsilon\n")
  if (!is.null(x$call)) cat("Call: ", paste(deparse(x$call), collapse = "\n"), "\n", sep = "")
  sizes <- if (isTRUE(x$public_n)) {
    sprintf("n = %d (%d learning, %d evaluation rows)", x$n, x$n_learning, x$n_evaluation)
  } else {
    "n not released (not declared public)"
  }
  cat(sprintf("%s; gamma = %s\n", sizes, format(x$gamma, digits = digits)))
  cat(sprintf("Rule released by %s\n", x$mechanism))
  multi <- is.matrix(x$coefficients)
  if (multi) {
    cat(sprintf(paste0("Released rule (%d arms: %s; recommend the arm a with the largest <V_a, f(x)>, f(x) in R^%d, ",
                       "V_a the vertices of a regular simplex):\n"), nrow(x$coefficients) + 1L,
                paste(arm_names(x$treatment_coding), collapse = ", "), nrow(x$coefficients)))
  } else {
    cat("Released rule (recommend the treatment coded +1 where the decision value is > 0):\n")
  }
  print.default(format(x$coefficients, digits = digits), print.gap = 2L, quote = FALSE)
  ci <- function(e) {
    sprintf("%s [%s, %s]", format(e$estimate, digits = digits), format(e$ci_low, digits = digits),
            format(e$ci_high, digits = digits))
  }
  cat(sprintf("Value of the rule: %s (%g%% interval)\n", ci(v), 100 * v$level))
  if (multi) {
    for (a in names(v$value_of_arm)) {
      cat(sprintf("Everyone on %s: %s; the rule minus it: %s\n", a, ci(v$value_of_arm[[a]]), ci(v$versus_arm[[a]])))
    }
    cat(sprintf("Gain over the best single arm: %s\n", ci(v$difference_from_best_arm)))
  } else {
    cat(sprintf("Gain over the better single arm: %s\n", ci(v$difference_from_better_arm)))
  }
  led <- x$ledger
  cat(sprintf("Privacy: epsilon %s spent of %s (%s)\n", format(led$spent), format(led$total_epsilon),
              led$composition))
  note_replay(x$rng)
  invisible(x)
}

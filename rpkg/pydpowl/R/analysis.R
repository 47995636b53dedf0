# dpowl_analysis(): the whole private treatment-rule analysis under one budget
# (pydpowl.interop.analysis.analyze_arrays: split, private propensities or known ones,
# private gamma, the DP-OWL rule, its value and gain with intervals, the ledger).
# Documented in man/dpowl_analysis.Rd.

dpowl_analysis <- function(x, treatment, benefit, bounds, benefit_bounds, weights_upper_bound, total_epsilon,
                           propensity = NULL, propensity_model = NULL, gamma = NULL, gammas = NULL,
                           level = 0.95, budget_split = NULL, rng = NULL, out_dir = NULL, public_n = FALSE,
                           stage_split = NULL) {
  call <- match.call()
  rng <- rng_choice(rng, call)
  public_n <- check_flag(public_n, "public_n", call = call)
  if (is.list(treatment) && !is.data.frame(treatment)) {  # several stages: DTRlearn2's lists (H, AA, RR)
    refused <- c(weights_upper_bound = !missing(weights_upper_bound), propensity_model = !is.null(propensity_model),
                 gammas = !is.null(gammas))
    why <- c(weights_upper_bound = paste0("with several stages each stage's W is computed from benefit_bounds (the ",
                                          "rewards' bounds) and the propensities"),
             propensity_model = "with several stages the propensities are the design's (give propensity)",
             gammas = "with several stages gamma is fixed in advance (gamma) or the engine's public rule (NULL)")
    if (any(refused)) {
      arg_error(sprintf("%s must not be given: %s.", names(refused)[refused][1L], why[refused][1L]), call)
    }
    if (missing(total_epsilon)) arg_error("total_epsilon must be given (the analysis' total privacy budget).", call)
    return(regime_analysis(x, treatment, benefit, bounds, benefit_bounds, total_epsilon, propensity, gamma, level,
                           budget_split, stage_split, rng, out_dir, public_n, call))
  }
  if (!is.null(stage_split)) {
    arg_error(paste0("stage_split divides the budget across stages: give treatment, benefit and x as lists with one ",
                     "entry per stage (DTRlearn2's AA, RR and H)."), call)
  }
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
    # the analyst's W and the W the rule used (lowered to (U - L) / smallest public propensity when larger)
    weights_upper_bound = res$weights_upper_bound[c("given", "used")],
    weight_bound_note = res$weights_upper_bound$note,
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
  if (!is.null(x$weight_bound_note)) cat(x$weight_bound_note, "\n", sep = "")
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

# ---- several stages: dpowl_analysis() with DTRlearn2's lists ---------------------------------------------------------

# The analysis of a K-stage regime (pydpowl.analysis_regime.run_regime_analysis through the worker's
# analyze_regime): x, treatment and benefit as DTRlearn2's H, AA and RR (one entry per stage; x may be one matrix for
# every stage), bounds as owl()'s, benefit_bounds the rewards' public bounds (one pair or one per stage).
regime_analysis <- function(x, treatment, benefit, bounds, benefit_bounds, total_epsilon, propensity, gamma, level,
                            budget_split, stage_split, rng, out_dir, public_n, call) {
  K <- length(treatment)
  if (K < 2L) {
    arg_error(sprintf(paste0("treatment as a list gives one entry per stage; a regime needs at least two, got %d ",
                             "(one stage: give a vector)."), K), call)
  }
  benefit <- stage_list(benefit, "benefit", K, call)
  hist <- owl_histories(x, K, call, arg = "x")
  n <- length(treatment[[1L]])
  codings <- positions <- props <- vector("list", K)
  if (is.null(propensity)) {
    arg_error(paste0("propensity must be given: each stage's design probabilities (a number: two arms, the ",
                     "probability of the second level; K arms, 1/K; or a named vector with one probability per ",
                     "level), one for every stage or a list with one per stage."), call)
  }
  pis <- if (is.list(propensity)) stage_list(propensity, "propensity", K, call) else rep(list(propensity), K)
  for (k in seq_len(K)) {
    tr <- code_arms(treatment[[k]], n, sprintf("treatment[[%d]] (stage %d's treatments)", k, k), call)
    codings[[k]] <- tr$coding
    positions[[k]] <- as_numeric_arg(if (length(tr$coding$levels) == 2L) ifelse(tr$A > 0, 2, 1) else tr$A,
                                     sprintf("treatment[[%d]]", k), call)
    props[[k]] <- arm_propensity_arg(pis[[k]], tr$coding, n, sprintf("propensity[[%d]]", k), call)$spec
  }
  if (missing(bounds)) arg_error("bounds must be given (public bounds of every stage's history columns).", call)
  if (missing(benefit_bounds)) {
    arg_error("benefit_bounds must be given (public bounds of each stage's reward: c(lower, upper) or a list).", call)
  }
  stage_bounds <- owl_bounds(bounds, hist$columns, K, call)
  bb <- if (is.list(benefit_bounds)) stage_list(benefit_bounds, "benefit_bounds", K, call) else
    rep(list(benefit_bounds), K)
  seed <- if (rng == "R") sample.int(.Machine$integer.max, 1L) else NULL
  res <- engine("analyze_regime", list(
    H = if (is.list(hist$wire)) hist$wire else rep(list(hist$wire), K), treatment = positions,
    levels = lapply(codings, arm_names),
    benefit = lapply(seq_len(K), function(k) as_numeric_arg(benefit[[k]], sprintf("benefit[[%d]]", k), call)),
    bounds = stage_bounds,
    benefit_bounds = lapply(seq_len(K), function(k) as_numeric_arg(bb[[k]], sprintf("benefit_bounds[[%d]]", k), call)),
    total_epsilon = as_setting(total_epsilon, "total_epsilon", call), propensity = props,
    gamma = if (is.null(gamma)) NULL else as_numeric_arg(gamma, "gamma", call),
    level = as_setting(level, "level", call), budget_split = as_setting(budget_split, "budget_split", call),
    stage_split = if (is.null(stage_split)) NULL else as_numeric_arg(stage_split, "stage_split", call),
    seed = if (is.null(seed)) NULL else as.double(seed), columns = hist$columns,
    out_dir = as_setting(out_dir, "out_dir", call), public_n = public_n
  ), call)
  stages <- lapply(seq_len(K), function(k) regime_stage(res$model$stages[[k]], res$stages[[k]]))
  names(stages) <- paste0("stage", seq_len(K))
  rel <- res$ledger$releases
  ledger <- data.frame(
    release = vapply(rel, function(r) r$name, ""),
    stage = vapply(rel, function(r) if (is.null(r$stage)) NA_integer_ else as.integer(r$stage), integer(1)),
    epsilon = vapply(rel, function(r) as.double(r$epsilon), numeric(1)),
    delta = vapply(rel, function(r) as.double(r$delta), numeric(1)),
    part = vapply(rel, function(r) r$part, ""), stringsAsFactors = FALSE)
  structure(list(
    call = call, stages = stages, value = res$value, ledger = ledger,
    privacy = list(spent = res$ledger$spent, spent_delta = res$ledger$spent_delta,
                   total_epsilon = res$ledger$total_epsilon, composition = res$ledger$composition,
                   stage_split = unlist(res$ledger$stage_split), guarantee = res$ledger$guarantee),
    model = res$model, public_n = public_n, n = if (public_n) res$n, n_learning = if (public_n) res$n_learning,
    n_evaluation = if (public_n) res$n_evaluation, codings = codings, columns = hist$columns, files = res$files,
    rng = rng
  ), class = "dpowl_regime_analysis")
}

# One released stage of the regime: its arms (the engine's order), coefficients ((Intercept) and the history's
# columns: a named vector for two arms, a (arms - 1) x (p + 1) matrix for more), the simplex vertices, how it
# was released.
regime_stage <- function(st, how) {
  arms <- as.character(unlist(st$arms))
  cols <- as.character(unlist(st$feature_names))
  theta <- cbind(as.double(unlist(st$intercept)), do.call(rbind, lapply(st$coef, function(r) as.double(unlist(r)))))
  dimnames(theta) <- list(if (length(arms) > 2L) paste0("f", seq_len(length(arms) - 1L)), c("(Intercept)", cols))
  list(arms = arms, coefficients = if (length(arms) == 2L) theta[1L, ] else theta,
       vertices = do.call(rbind, lapply(st$vertices, function(r) as.double(unlist(r)))), columns = cols,
       epsilon = how$epsilon, mechanism = how$mechanism, residual = isTRUE(how$residual), gamma = st$gamma)
}

coef.dpowl_regime_analysis <- function(object, ...) lapply(object$stages, function(st) st$coefficients)

# Each stage's recommended treatment (the engine's arm labels, as text) for the histories in newdata: a list with
# one history per stage (or one matrix for every stage), columns matched by name.
predict.dpowl_regime_analysis <- function(object, newdata, ...) {
  call <- match.call()
  check_dots(list(...), call)
  K <- length(object$stages)
  if (missing(newdata)) {
    arg_error("newdata is required: the histories (a list with one per stage, or one matrix).", call)
  }
  out <- lapply(seq_len(K), function(k) {
    st <- object$stages[[k]]
    h <- if (is.list(newdata) && !is.data.frame(newdata)) newdata[[k]] else newdata
    M <- as_feature_matrix(h, sprintf("newdata[[%d]]", k), call)
    if (!is.null(colnames(M))) {
      absent <- setdiff(st$columns, colnames(M))
      if (length(absent)) {
        arg_error(sprintf("newdata[[%d]] lacks the column(s) %s of stage %d's history.", k,
                          paste(sQuote(absent, FALSE), collapse = ", "), k), call)
      }
      M <- M[, st$columns, drop = FALSE]
    } else if (ncol(M) != length(st$columns)) {
      arg_error(sprintf("newdata[[%d]] must have the %d columns of stage %d's history (%s), got %d.", k,
                        length(st$columns), k, paste(st$columns, collapse = ", "), ncol(M)), call)
    }
    theta <- if (is.matrix(st$coefficients)) st$coefficients else matrix(st$coefficients, nrow = 1L)
    f <- cbind(1, M) %*% t(theta)
    st$arms[best_arm(f %*% t(st$vertices))]
  })
  names(out) <- paste0("stage", seq_len(K))
  out
}

print.dpowl_regime_analysis <- function(x, digits = max(3L, getOption("digits") - 3L), ...) {
  v <- x$value
  K <- length(x$stages)
  cat(sprintf("Private analysis of a %d-stage treatment regime (pydpowl): one total epsilon\n", K))
  if (!is.null(x$call)) cat("Call: ", paste(deparse(x$call), collapse = "\n"), "\n", sep = "")
  cat(if (isTRUE(x$public_n)) sprintf("n = %d (%d learning, %d evaluation rows)\n", x$n, x$n_learning,
                                      x$n_evaluation) else "n not released (not declared public)\n")
  for (k in seq_len(K)) {
    st <- x$stages[[k]]
    cat(sprintf("\nStage %d (%s; %s perturbation%s, epsilon %s, gamma %s): ", k, paste(st$arms, collapse = ", "),
                st$mechanism, if (st$residual) " with residual weights" else "", format(st$epsilon),
                format(st$gamma, digits = digits)))
    cat(if (length(st$arms) == 2L) sprintf("recommend %s where the decision value is > 0\n", st$arms[2L]) else
      "recommend the arm a with the largest <V_a, f(H)>\n")
    print.default(format(st$coefficients, digits = digits), print.gap = 2L, quote = FALSE)
  }
  ci <- function(e) {
    sprintf("%s [%s, %s]", format(e$estimate, digits = digits), format(e$ci_low, digits = digits),
            format(e$ci_high, digits = digits))
  }
  cat(sprintf("\nValue of the regime (mean total reward): %s (%g%% interval)\n", ci(v), 100 * v$level))
  for (s in names(v$value_of_sequence)) {
    cat(sprintf("Everyone on %s: %s; the regime minus it: %s\n", s, ci(v$value_of_sequence[[s]]),
                ci(v$versus_sequence[[s]])))
  }
  cat(sprintf("Gain over the best fixed sequence: %s\n", ci(v$difference_from_best_sequence)))
  p <- x$privacy
  cat(sprintf("Privacy: epsilon %s spent of %s (%s); the rule's share split %s across the stages\n", format(p$spent),
              format(p$total_epsilon), p$composition, paste(format(p$stage_split), collapse = ":")))
  print(x$ledger, digits = digits, row.names = FALSE)
  note_replay(x$rng)
  invisible(x)
}

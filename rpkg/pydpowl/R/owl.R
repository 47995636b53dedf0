# owl(): a private counterpart of DTRlearn2::owl() (K-stage backward outcome weighted learning with the hinge
# loss and linear rules), with DTRlearn2's argument names and shapes, driving pydpowl.DPMultiStageOWL in the
# worker (owl_fit in inst/python/pydpowl_rcalls.py). predict() answers as DTRlearn2's predict.owl() does.
# Documented in man/owl.Rd and man/predict.pydpowl_owl.Rd; docs/multiarm_multistage.md has a worked example.

# DTRlearn2's arguments that have no private counterpart here: what each is, and what to do instead.
.OWL_UNSUPPORTED <- c(
  sigma = "is DTRlearn2's RBF-kernel parameter; pydpowl::owl() learns linear rules (kernel = \"linear\")",
  s = "is DTRlearn2's ramp-loss slope; pydpowl::owl() fits the hinge loss (loss = \"hinge\")",
  m = paste0("is DTRlearn2's number of cross-validation folds (to tune c and the lasso); pydpowl::owl() does not ",
             "tune on the private data: give one gamma (or one c)"),
  solver = paste0("chooses DTRlearn2's quadratic-programming solver; pydpowl solves every stage with its own ",
                  "certified Newton solver: drop the argument")
)

owl <- function(H, AA, RR, n, K, pi, ..., epsilon, bounds, reward_bounds, gamma = NULL, c = NULL,
                res.lasso = TRUE, loss = "hinge", kernel = "linear", augment = FALSE, baseline = NULL,
                baseline_share = 0.25, propensity_floor = NULL, weight_sensitivity = NULL, huber_h = NULL,
                mechanism = "auto", sigma = NULL, s = NULL, m = NULL, solver = NULL, rng = NULL) {
  call <- match.call()
  call[[1L]] <- as.name("owl")
  check_dots(list(...), call)
  if (!is.character(mechanism) || length(mechanism) != 1L || !(mechanism %in% c("auto", "output"))) {
    arg_error(sprintf(paste0("mechanism must be \"auto\" (objective perturbation with residual weights for two-arm ",
                             "stages) or \"output\" (output perturbation with the classic weights), got %s."),
                      fmt_value(mechanism)), call)
  }
  for (arg in names(.OWL_UNSUPPORTED)) {
    if (!is.null(get(arg))) arg_error(sprintf("%s %s.", arg, .OWL_UNSUPPORTED[[arg]]), call, "pydpowl_not_supported")
  }
  if (!identical(loss, "hinge")) {
    arg_error(sprintf(paste0("loss = %s is not supported: pydpowl::owl() fits the hinge loss (loss = \"hinge\", ",
                             "approximated by the Huber hinge of width huber_h); DTRlearn2's \"ramp\", \"logit\", ",
                             "\"logit.lasso\", \"l2\" and \"l2.lasso\" have no private counterpart here."),
                      fmt_value(loss)), call, "pydpowl_not_supported")
  }
  if (!identical(kernel, "linear")) {
    arg_error(sprintf(paste0("kernel = %s is not supported: pydpowl::owl() learns linear rules (kernel = ",
                             "\"linear\"); a kernel rule is a function of its support vectors, patients' data."),
                      fmt_value(kernel)), call, "pydpowl_not_supported")
  }
  if (!identical(augment, FALSE)) {
    arg_error(paste0("augment = TRUE is not supported: augmented outcomes (Liu et al. 2018) give the subjects who ",
                     "did not follow the later rules outcomes fitted from the other subjects' data. Residual weights ",
                     "are the private alternative: res.lasso = TRUE (a linear baseline released privately, ",
                     "baseline = \"linear\") or baseline = \"lower\"."), call, "pydpowl_not_supported")
  }
  if (missing(pi) || (is.character(pi) && identical(pi, "estimated"))) {
    arg_error(paste0("pi must be given: the design's treatment probabilities (a number for every stage, or a list ",
                     "with one entry per stage). DTRlearn2's pi = \"estimated\" fits them on the private data, which ",
                     "pydpowl::owl() does not do."), call)
  }
  absent <- c(n = missing(n), K = missing(K), epsilon = missing(epsilon), bounds = missing(bounds),
              reward_bounds = missing(reward_bounds))
  if (any(absent)) {
    why <- c(n = "the number of subjects", K = "the number of stages",
             epsilon = "the privacy budget: the total, or one per stage",
             bounds = paste0("public bounds of the histories' columns: a number s for [-s, s], list(lower = , ",
                             "upper = ), or a list with one per stage"),
             reward_bounds = "public bounds of each stage's reward: c(lower, upper), or a list with one pair per stage")
    arg_error(sprintf("%s must be given (%s).", paste(names(absent)[absent], collapse = ", "),
                      paste(why[absent], collapse = "; ")), call)
  }
  rng <- rng_choice(rng, call)
  K <- as_setting(K, "K", call)
  if (!is.numeric(K) || K < 1 || K != round(K)) {
    arg_error(sprintf("K (the number of stages) must be a whole number >= 1, got %s.", fmt_value(K)), call)
  }
  K <- as.integer(K)
  n <- as_setting(n, "n", call)
  if (K == 1L) {  # DTRlearn2: vectors for one stage
    if (!is.list(AA)) AA <- list(AA)
    if (!is.list(RR)) RR <- list(RR)
  }
  AA <- stage_list(AA, "AA", K, call)
  RR <- stage_list(RR, "RR", K, call)
  pi <- if (is.list(pi) && !is.data.frame(pi)) stage_list(pi, "pi", K, call) else
    if (K == 1L || (is.numeric(pi) && length(pi) == 1L && is.null(dim(pi)))) rep(list(pi), K) else
      arg_error(sprintf("pi must be a list with one entry per stage (K = %d), or one number for every stage.", K), call)
  hist <- owl_histories(H, K, call)
  n_rows <- if (is.numeric(n) && length(n) == 1L) n else NA
  codings <- vector("list", K)
  A <- vector("list", K)
  props <- vector("list", K)
  for (k in seq_len(K)) {
    tr <- code_arms(AA[[k]], if (is.na(n_rows)) length(AA[[k]]) else n_rows,
                    sprintf("AA[[%d]] (stage %d's treatments)", k, k), call)
    codings[[k]] <- tr$coding
    A[[k]] <- as_numeric_arg(tr$A, sprintf("AA[[%d]]", k), call)
    props[[k]] <- arm_propensity_arg(pi[[k]], tr$coding, length(tr$A), sprintf("pi[[%d]]", k), call)$spec
  }
  stage_bounds <- owl_bounds(bounds, hist$columns, K, call)
  if (is.null(baseline)) {
    # the engine's default (residual weights: a private mean baseline) unless res.lasso asks for DTRlearn2's residual
    baseline <- if (missing(res.lasso) && mechanism == "auto") "lower" else
      if (!isTRUE(res.lasso) && all(is.infinite(epsilon))) "ols" else "linear"
  } else if (!missing(res.lasso)) {
    arg_error("give res.lasso or baseline, not both (res.lasso = TRUE is baseline = \"linear\").", call)
  }
  res <- engine_with_rng("owl_fit", list(
    H = hist$wire, AA = A, RR = lapply(seq_len(K), function(k) as_numeric_arg(RR[[k]], sprintf("RR[[%d]]", k), call)),
    n = n, pi = props, epsilon = as_numeric_arg(epsilon, "epsilon", call), bounds = stage_bounds,
    reward_bounds = if (is.list(reward_bounds)) lapply(seq_along(reward_bounds), function(k) {
      as_numeric_arg(reward_bounds[[k]], sprintf("reward_bounds[[%d]]", k), call)
    }) else
        as_numeric_arg(reward_bounds, "reward_bounds", call),
    gamma = if (is.null(gamma)) NULL else as_numeric_arg(gamma, "gamma", call),
    c = if (is.null(c)) NULL else as_numeric_arg(c, "c", call),
    propensity_floor = if (is.null(propensity_floor)) NULL else
      as_numeric_arg(propensity_floor, "propensity_floor", call),
    baseline = if (is.character(baseline) && length(baseline) == 1L) baseline else
      lapply(baseline, function(b) if (is.character(b)) b else as.double(b)),
    baseline_share = as_setting(baseline_share, "baseline_share", call),
    huber_h = if (is.null(huber_h)) NULL else as_setting(huber_h, "huber_h", call), mechanism = mechanism,
    weight_sensitivity = as_setting(weight_sensitivity, "weight_sensitivity", call),
    levels = lapply(codings, arm_names), columns = hist$columns
  ), rng, call, state_arg = "random_seed")
  stages <- lapply(seq_len(K), function(k) owl_stage(res$stages[[k]], codings[[k]], hist$columns[[k]], k))
  names(stages) <- paste0("stage", seq_len(K))
  ledger <- data.frame(release = unlist(res$ledger$release), epsilon = as.numeric(res$ledger$epsilon),
                       stringsAsFactors = FALSE)
  diagnostics <- cbind(followed = res$n_followed, clipped_rewards = res$n_clipped_rewards,
                       clipped_features = res$n_clipped_features, clipped_weights = res$n_clipped_weights)
  rownames(diagnostics) <- names(stages)
  structure(c(stages, list(
    K = K, n = as.integer(n), epsilon = sum(ledger$epsilon), ledger = ledger,
    floating_point_delta = res$floating_point_delta, baseline = baseline,
    huber_h = unname(vapply(stages, function(st) st$huber_h, numeric(1))),
    named_features = hist$named, rng = rng, call = call, diagnostics = nonprivate(diagnostics)
  )), class = "pydpowl_owl")
}

# A list with one entry per stage (DTRlearn2's lists of K vectors).
stage_list <- function(x, name, K, call) {
  if (!is.list(x) || is.data.frame(x)) {
    arg_error(sprintf("%s must be a list with one entry per stage (K = %d), got %s.", name, K,
                      paste(class(x), collapse = "/")), call)
  }
  if (length(x) != K) {
    arg_error(sprintf("%s must have one entry per stage (K = %d), got %d.", name, K, length(x)), call)
  }
  x
}

# The histories as the worker receives them: one matrix for every stage (DTRlearn2's H as a matrix or vector) or a
# list with one per stage; their column names (x1, x2, ... when unnamed).
owl_histories <- function(H, K, call, arg = "H") {
  one <- function(h, name) {
    if (is.numeric(h) && is.null(dim(h))) h <- matrix(h, ncol = 1L)
    M <- as_feature_matrix(h, name, call)
    if (is.null(colnames(M))) colnames(M) <- paste0("x", seq_len(ncol(M)))
    M
  }
  if (is.list(H) && !is.data.frame(H)) {
    if (length(H) != K) {
      arg_error(sprintf(paste("%s must be a matrix (the same history at every stage) or a list with one per stage",
                              "(K = %d), got a list of %d."), arg, K, length(H)), call)
    }
    Ms <- lapply(seq_len(K), function(k) one(H[[k]], sprintf("%s[[%d]]", arg, k)))
    named <- vapply(H, function(h) !is.null(colnames(h)), logical(1))
    return(list(wire = lapply(Ms, wire_matrix), columns = lapply(Ms, colnames), named = named))
  }
  M <- one(H, arg)
  list(wire = wire_matrix(M), columns = rep(list(colnames(M)), K), named = rep(!is.null(colnames(H)), K))
}

# Public bounds of each stage's history: a number s ([-s, s] for every column), list(lower = , upper = ) (or a
# 2 x p matrix) for every stage, or a list with one of those per stage; named vectors are matched to the columns.
owl_bounds <- function(bounds, columns, K, call) {
  per_stage <- is.list(bounds) && !is.data.frame(bounds) && length(bounds) == K && is.null(names(bounds)) &&
    all(vapply(bounds, function(b) is.list(b) || is.matrix(b) || (is.numeric(b) && length(b) == 1L), logical(1)))
  lapply(seq_len(K), function(k) {
    b <- if (per_stage) bounds[[k]] else bounds
    p <- length(columns[[k]])
    if (is.numeric(b) && length(b) == 1L && is.null(dim(b))) {
      if (!is.finite(b) || b <= 0) {
        arg_error(sprintf(paste("bounds as one number s means [-s, s] for every column and must be positive and",
                                "finite, got %s."), format(b)), call)
      }
      b <- list(lower = rep(-b, p), upper = rep(b, p))
    }
    r <- resolve_bounds(b, columns[[k]], rep(FALSE, p), call)
    list(lower = as_numeric_arg(unname(r$lower), "bounds$lower", call),
         upper = as_numeric_arg(unname(r$upper), "bounds$upper", call))
  })
}

# One stage's release in DTRlearn2's terms (beta0, beta: predictions are beta0 + H %*% beta) with the public facts
# of the release.
owl_stage <- function(r, coding, columns, k) {
  arms <- length(coding$levels)
  beta <- matrix(as.numeric(r$coef), nrow = arms - 1L)  # (arms - 1) x p in the engine: DTRlearn2's beta is p x 1
  beta <- t(beta)
  dimnames(beta) <- list(columns, if (arms > 2L) paste0("f", seq_len(arms - 1L)))
  structure(list(
    beta0 = stats::setNames(as.numeric(r$intercept), if (arms > 2L) paste0("f", seq_len(arms - 1L))),
    beta = beta, arms = coding$levels, coding = coding, vertices = r$vertices, epsilon = r$epsilon,
    epsilon_baseline = r$epsilon_baseline, gamma = r$gamma, sensitivity = r$sensitivity,
    weights_upper_bound = r$weights_upper_bound, release_grid = r$release_grid,
    baseline_coef = if (is.null(r$baseline_coef)) NULL else
      stats::setNames(as.numeric(r$baseline_coef), c("(Intercept)", columns)),
    noise = r$noise, mechanism = r$mechanism, residual = r$residual, huber_h = r$huber_h,
    mean_baseline = if (is.null(r$baseline)) NULL else as.numeric(r$baseline), stage = k
  ), class = "pydpowl_owl_stage")
}

# DTRlearn2's fields that pydpowl::owl() does not keep: what each was and where to look instead.
.OWL_NOT_KEPT <- c(
  valuefun = paste0("DTRlearn2's value of the regime on the training data is computed from the private data and ",
                    "is not kept; predict(object, H, AA, RR, K, pi) evaluates the regime on data you may compute on ",
                    "(NOT private on the training data)"),
  benefit = "see valuefun: DTRlearn2's benefit on the training data is computed from the private data and is not kept",
  pi = "the propensities are the design's, as given to owl(); they are not kept",
  type = "pydpowl::owl() fits linear hinge-loss rules (DTRlearn2's type \"owl_svmlinear\")",
  fit = paste0("DTRlearn2's fitted values on the training data are computed from the private data and are not kept; ",
               "use predict(object, H, K)"),
  probability = "see fit: use predict(object, H, K)",
  treatment = "see fit: use predict(object, H, K)",
  alpha1 = "a dual solution holds patients' data; only the released coefficients are kept",
  c = "pydpowl::owl() fits one gamma per stage (stage$gamma); there is no cross-validated c"
)

`$.pydpowl_owl` <- function(x, name) owl_field(x, name, "object")
`$.pydpowl_owl_stage` <- function(x, name) owl_field(x, name, paste0("stage", .subset2(x, "stage")))

owl_field <- function(x, name, what) {
  if (!(name %in% names(x)) && name %in% names(.OWL_NOT_KEPT)) {
    stop(structure(class = c("pydpowl_not_kept", "pydpowl_error", "error", "condition"), list(
      message = sprintf("%s$%s: %s.", what, name, .OWL_NOT_KEPT[[name]]), call = sys.call(-1L))))
  }
  .subset2(x, name)
}

owl_stages <- function(object) .subset2(object, "K")

# ---- methods ------------------------------------------------------------------

predict.pydpowl_owl <- function(object, H, AA = NULL, RR = NULL, K, pi = NULL, ...) {
  call <- match.call()
  check_dots(list(...), call)
  if (missing(H)) arg_error("H is required: the histories of the subjects to recommend treatments for.", call)
  fitted <- owl_stages(object)
  if (missing(K)) K <- fitted
  if (!is.numeric(K) || length(K) != 1L || K < 1 || K > fitted || K != round(K)) {
    arg_error(sprintf("K (the number of stages to predict) must be a whole number in 1..%d, got %s.", fitted,
                      fmt_value(K)), call)
  }
  K <- as.integer(K)
  if (is.list(H) && !is.data.frame(H) && length(H) < K) {
    arg_error(sprintf("H must be a matrix or a list with (at least) one history per stage (K = %d), got a list of %d.",
                      K, length(H)), call)
  }
  fit <- probability <- treatment <- idx <- vector("list", K)
  for (k in seq_len(K)) {
    st <- .subset2(object, paste0("stage", k))
    h <- if (is.list(H) && !is.data.frame(H)) H[[k]] else H
    h_name <- if (is.list(H) && !is.data.frame(H)) sprintf("H[[%d]]", k) else "H"
    M <- owl_design(h, st, .subset2(object, "named_features")[k], h_name, call)
    f <- sweep(M %*% st$beta, 2L, st$beta0, "+")
    scores <- f %*% t(st$vertices)
    colnames(scores) <- arm_names(st$coding)
    idx[[k]] <- best_arm(scores)
    dimnames(f) <- NULL
    fit[[k]] <- f
    probability[[k]] <- if (ncol(f) == 1L) exp(f) / (1 + exp(f)) else exp(scores) / rowSums(exp(scores))
    lab <- decode_arms(idx[[k]], st$coding)
    treatment[[k]] <- if (is.factor(lab)) lab else matrix(lab, ncol = 1L)
  }
  if (is.null(AA) || is.null(RR)) return(list(fit = fit, probability = probability, treatment = treatment))
  if (is.null(pi)) {
    arg_error(paste0("pi is needed to evaluate the regime on AA and RR: the design's treatment probabilities (a ",
                     "number for every stage, or a list with one entry per stage). DTRlearn2 estimates them with a ",
                     "lasso logistic regression; pydpowl does not."), call)
  }
  if (K == 1L) {
    if (!is.list(AA)) AA <- list(AA)
    if (!is.list(RR)) RR <- list(RR)
  }
  AA <- stage_list(AA[seq_len(min(K, length(AA)))], "AA", K, call)
  RR <- stage_list(RR[seq_len(min(K, length(RR)))], "RR", K, call)
  pis <- if (is.list(pi)) stage_list(pi[seq_len(min(K, length(pi)))], "pi", K, call) else rep(list(pi), K)
  n <- nrow(fit[[1L]])
  A <- rec <- props <- vector("list", K)
  for (k in seq_len(K)) {
    coding <- .subset2(object, paste0("stage", k))$coding
    A[[k]] <- as_numeric_arg(code_received(AA[[k]], coding, n, k, call), sprintf("AA[[%d]]", k), call)
    rec[[k]] <- as_numeric_arg(if (length(coding$levels) == 2L) ifelse(idx[[k]] == 2L, 1, -1) else idx[[k]],
                               "recommended", call)
    props[[k]] <- arm_propensity_arg(pis[[k]], coding, n, sprintf("pi[[%d]]", k), call)$spec
  }
  rewards <- lapply(seq_len(K), function(k) as_numeric_arg(RR[[k]], sprintf("RR[[%d]]", k), call))
  levels <- lapply(seq_len(K), function(k) arm_names(.subset2(object, paste0("stage", k))$coding))
  ev <- engine("owl_evaluate", list(recommended = rec, AA = A, RR = rewards, pi = props, levels = levels), call)
  list(fit = fit, treatment = treatment, probability = probability, valuefun = ev$valuefun, benefit = ev$benefit,
       pi = pis)
}

# Received treatments in a fitted stage's coding (-1/+1 for two arms, positions 1..K otherwise): every value must
# be one of the stage's arms.
code_received <- function(a, coding, n, k, call) {
  if (is.matrix(a) && ncol(a) == 1L) a <- a[, 1L]
  name <- sprintf("AA[[%d]] (stage %d's treatments)", k, k)
  if (length(a) != n) {
    arg_error(sprintf("%s must have length %d (one per row of H), got length %d.", name, n, length(a)), call)
  }
  idx <- match(as.character(a), arm_names(coding))
  if (anyNA(idx)) {
    arg_error(sprintf("%s must hold the stage's arms (%s); %d entries do not (first at position %d).", name,
                      paste(arm_text(coding$levels), collapse = ", "), sum(is.na(idx)), which(is.na(idx))[1L]), call)
  }
  if (length(coding$levels) == 2L) ifelse(idx == 2L, 1, -1) else as.double(idx)
}

# One stage's history for prediction: columns matched by name when both the fit and H have names, else by position.
owl_design <- function(h, st, named, name, call) {
  if (is.numeric(h) && is.null(dim(h))) h <- matrix(h, ncol = 1L)
  cols <- rownames(st$beta)
  given <- if (is.data.frame(h)) names(h) else colnames(h)
  if (isTRUE(named) && !is.null(given)) {
    absent <- setdiff(cols, given)
    if (length(absent) > 0L) {
      arg_error(sprintf("%s lacks the column(s) %s of stage %d's history.", name,
                        paste(sQuote(absent, FALSE), collapse = ", "), st$stage), call)
    }
    h <- h[, cols, drop = FALSE]
  }
  M <- as_feature_matrix(h, name, call)
  if (ncol(M) != length(cols)) {
    arg_error(sprintf("%s must have the %d column(s) of stage %d's history, got %d.", name, length(cols), st$stage,
                      ncol(M)), call)
  }
  M
}

coef.pydpowl_owl <- function(object, ...) {
  out <- lapply(seq_len(owl_stages(object)), function(k) owl_stage_coef(.subset2(object, paste0("stage", k))))
  stats::setNames(out, paste0("stage", seq_len(owl_stages(object))))
}

# (Intercept) and the history's columns: a named vector for two arms, a (arms - 1) x (p + 1) matrix for more.
owl_stage_coef <- function(st) {
  theta <- cbind("(Intercept)" = unname(st$beta0), t(st$beta))
  if (nrow(theta) == 1L) return(theta[1L, ])
  rownames(theta) <- paste0("f", seq_len(nrow(theta)))
  theta
}

print.pydpowl_owl <- function(x, digits = max(3L, getOption("digits") - 3L), ...) {
  K <- owl_stages(x)
  cat(sprintf("Differentially private %d-stage outcome weighted learning (pydpowl::owl: backward, linear rules, ",
              K), "Huber hinge; ", owl_mechanism_text(x), ")\n", sep = "")
  call <- .subset2(x, "call")
  if (!is.null(call)) cat("Call: ", paste(deparse(call), collapse = "\n"), "\n", sep = "")
  eps <- vapply(seq_len(K), function(k) {
    st <- .subset2(x, paste0("stage", k))
    st$epsilon + st$epsilon_baseline
  }, numeric(1))
  cat(sprintf("n = %d; epsilon = %s in total (%s), stage %d released first\n", .subset2(x, "n"),
              eps_label(sum(eps)), paste(sprintf("stage %d: %s", seq_len(K), vapply(eps, eps_label, "")),
                                         collapse = ", "), K))
  for (k in seq_len(K)) {
    st <- .subset2(x, paste0("stage", k))
    lev <- arm_names(st$coding)
    cat(sprintf("\nStage %d (%s): ", k, paste(lev, collapse = ", ")))
    cat(if (length(lev) == 2L) sprintf("recommend %s where beta0 + H%d beta > 0\n", lev[2L], k) else
      sprintf("recommend the arm with the largest <V_a, f(H%d)>\n", k))
    print.default(format(owl_stage_coef(st), digits = digits), print.gap = 2L, quote = FALSE)
    if (isTRUE(st$noise$dominated)) {
      cat("NOTE: this stage's release is noise-dominated (public quantities only): its rule is essentially random.\n")
    }
  }
  note_replay(.subset2(x, "rng"))
  invisible(x)
}

# How the stages were released: "output perturbation" or, per stage, "stage 1: objective perturbation, residual
# weights; ...".
owl_mechanism_text <- function(object) {
  K <- owl_stages(object)
  how <- vapply(seq_len(K), function(k) {
    st <- .subset2(object, paste0("stage", k))
    paste0(st$mechanism, " perturbation", if (isTRUE(st$residual)) ", residual weights" else "")
  }, "")
  if (length(unique(how)) == 1L) how[[1L]] else paste(sprintf("stage %d: %s", seq_len(K), how), collapse = "; ")
}

summary.pydpowl_owl <- function(object, diagnostics = FALSE, ...) {
  check_flag(diagnostics, "diagnostics", call = sys.call())
  K <- owl_stages(object)
  stages <- lapply(seq_len(K), function(k) .subset2(object, paste0("stage", k)))
  baseline <- .subset2(object, "baseline")
  tab <- data.frame(
    arms = vapply(stages, function(st) length(st$coding$levels), integer(1)),
    mechanism = vapply(stages, function(st) paste0(st$mechanism, if (isTRUE(st$residual)) "+residual" else ""), ""),
    epsilon_rule = vapply(stages, function(st) st$epsilon, numeric(1)),
    epsilon_baseline = vapply(stages, function(st) st$epsilon_baseline, numeric(1)),
    gamma = vapply(stages, function(st) st$gamma, numeric(1)),
    W = vapply(stages, function(st) st$weights_upper_bound, numeric(1)),
    Delta = vapply(stages, function(st) st$sensitivity, numeric(1)),
    expected_noise_norm = vapply(stages, function(st) st$noise$expected_norm, numeric(1)),
    minimiser_norm_bound = vapply(stages, function(st) st$noise$minimiser_norm_bound, numeric(1)),
    baseline = if (is.list(baseline) || length(baseline) > 1L) vapply(baseline, format, "") else
      rep(format(baseline), K),
    row.names = paste0("stage", seq_len(K)), stringsAsFactors = FALSE)
  structure(list(
    call = .subset2(object, "call"), stages = tab, coefficients = coef(object),
    noise_sd = lapply(stages, function(st) st$noise$sd), ledger = .subset2(object, "ledger"),
    epsilon = .subset2(object, "epsilon"), floating_point_delta = .subset2(object, "floating_point_delta"),
    n = .subset2(object, "n"), huber_h = .subset2(object, "huber_h"), rng = .subset2(object, "rng"),
    mechanism = owl_mechanism_text(object),
    noise_dominated = vapply(stages, function(st) isTRUE(st$noise$dominated), logical(1)),
    diagnostics = if (diagnostics) .subset2(object, "diagnostics")
  ), class = "summary.pydpowl_owl")
}

print.summary.pydpowl_owl <- function(x, digits = max(3L, getOption("digits") - 3L), ...) {
  cat("Differentially private K-stage OWL (pydpowl::owl: backward OWL, DP-wERM per stage, Huber hinge; ",
      x$mechanism, ")\n", sep = "")
  if (!is.null(x$call)) cat("Call: ", paste(deparse(x$call), collapse = "\n"), "\n", sep = "")
  cat(sprintf(paste0("\nPrivacy: epsilon = %s in total over the releases below (sequential composition), plus ",
                     "delta = %s for the floating-point-safe releases; n = %d, huber_h = %s; noise from %s\n"),
              eps_label(x$epsilon), format(x$floating_point_delta, digits = 3), x$n,
              paste(format(unique(x$huber_h)), collapse = "/"),
              if (x$rng == "R") "R's stream (rng = \"R\": replay of set.seed, NOT private)" else
                "operating-system entropy"))
  cat("Ledger (in the order released):\n")
  print(x$ledger, digits = digits, row.names = FALSE)
  cat("\nStages: W bounds the stage's weights (from the reward bounds and the propensity floors; times the residuals'",
      "clip share with residual weights); Delta = (C + 2W + 2 n tol)/gamma bounds the (Frobenius) norm of a change in",
      "an output-perturbation stage's scaled coefficients (NaN for objective perturbation, whose noise norms are",
      "bounds on the move of the minimiser); noise norms in the scaled space\n")
  print(x$stages, digits = digits)
  if (any(x$noise_dominated)) {
    cat(sprintf(paste("NOTE: noise-dominated stage(s) %s: the expected noise norm reaches the bound on any",
                      "minimiser's norm.\n"),
                paste(which(x$noise_dominated), collapse = ", ")))
  }
  for (k in seq_along(x$coefficients)) {
    cat(sprintf("\nStage %d coefficients (noise_sd: the noise's standard deviation per coefficient, public)\n", k))
    est <- x$coefficients[[k]]
    sd <- x$noise_sd[[k]]
    if (is.matrix(est)) {
      rows <- paste0(rep(rownames(est), each = ncol(est)), ":", rep(colnames(est), nrow(est)))
      print(data.frame(estimate = as.vector(t(est)), noise_sd = as.vector(t(matrix(as.numeric(sd), nrow(est)))),
                       row.names = rows), digits = digits)
    } else {
      print(data.frame(estimate = unname(est), noise_sd = as.numeric(sd), row.names = names(est)), digits = digits)
    }
  }
  cat("No standard errors: each stage's release is one noisy draw.\n")
  if (!is.null(x$diagnostics)) {
    cat("\n")
    print(x$diagnostics)
  }
  invisible(x)
}

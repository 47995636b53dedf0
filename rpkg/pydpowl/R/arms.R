# Treatment arms in R's terms: how dpowl() and owl() code the treatments they receive (K >= 2 arms), turn
# the engine's recommendations back into the user's labels, and pass the propensities of K arms.
#
# Coding (the engine sees numbers; predictions come back in the user's coding):
#   factor: its levels, in their order;  character: the sorted distinct values (as factor() sorts them);
#   logical: FALSE, TRUE;  numeric: the sorted distinct values.
# Two arms go to the engine as -1 (the first level) and +1 (the second), as glm codes a factor; three or more as
# the levels' positions 1..K (the engine's classes are then the levels in order). Every level must occur: a rule
# learns only arms that some subject received, and nothing is dropped silently.

code_arms <- function(a, n, name, call) {
  if (is.data.frame(a) && ncol(a) == 1L) a <- a[[1L]]
  if (is.matrix(a) && ncol(a) == 1L) a <- a[, 1L]
  if (length(a) != n) {
    arg_error(sprintf("%s must have length %d (one entry per subject), got length %d.", name, n, length(a)), call)
  }
  if (anyNA(a)) {
    arg_error(sprintf("%s has %d missing value(s) (NA) at position(s) %s; remove those subjects first.",
                      name, sum(is.na(a)), positions(is.na(a))), call)
  }
  if (is.factor(a)) {
    type <- "factor"
    lev <- levels(a)
    idx <- as.integer(a)
  } else if (is.character(a)) {
    type <- "character"
    lev <- levels(factor(a))
    idx <- match(a, lev)
  } else if (is.logical(a)) {
    type <- "logical"
    lev <- c(FALSE, TRUE)
    idx <- as.integer(a) + 1L
  } else {
    type <- "numeric"
    a <- as_numeric_arg(a, name, call)
    if (any(!is.finite(a))) {
      arg_error(sprintf("%s must be finite (arm labels); %d entries are infinite, at position(s) %s.", name,
                        sum(!is.finite(a)), positions(!is.finite(a))), call)
    }
    lev <- sort(unique(as.vector(a)))
    idx <- match(a, lev)
  }
  used <- tabulate(idx, length(lev))
  if (sum(used > 0L) < 2L) {
    # the level, not how many subjects received it (a count of private rows)
    arg_error(sprintf(paste0("%s must contain at least two arms (a rule chooses between treatments); it has one ",
                             "level only, %s."), name, arm_text(lev[idx[1L]])), call)
  }
  if (any(used == 0L)) {
    arg_error(sprintf(paste0("%s has level(s) %s that no subject received: a rule learns only arms that occur. Drop ",
                             "them first (droplevels())."), name, paste(arm_text(lev[used == 0L]), collapse = ", ")),
              call)
  }
  A <- if (length(lev) == 2L) ifelse(idx == 2L, 1, -1) else as.double(idx)
  list(A = A, coding = list(type = type, levels = lev))
}

# A label as R prints it in messages: "a" for strings and factor levels, 1 and TRUE otherwise.
arm_text <- function(x) if (is.character(x)) dQuote(x, FALSE) else vapply(x, function(v) format(v), "")

# The levels as strings (names of per-arm probabilities, column names of scores).
arm_names <- function(coding) as.character(coding$levels)

# Recommendations given as the levels' positions (NA stays NA) in the user's coding.
decode_arms <- function(idx, coding) {
  lev <- coding$levels
  if (coding$type == "factor") factor(lev[idx], levels = lev) else lev[idx]
}

# The arm whose score is largest, as the levels' position (the first on ties, as the engine: a decision value of 0
# recommends the first of two arms).
best_arm <- function(scores) max.col(scores, ties.method = "first")

# The propensity of K arms as the worker receives it, and how print() describes it:
#   a number: two arms, the probability of the second level (the arm coded +1); K arms, 1/K (checked there);
#   a named vector, one probability per level (names matched to the levels): list(per_arm = , in the levels' order);
#   an n x K matrix of P(A = a | x_i) (column names matched to the levels, else in their order);
#   a vector of P(A_i | x_i), one per subject.
# The values are checked by the worker (pydpowl_rcalls.py, _arm_propensity).
arm_propensity_arg <- function(propensity, coding, n, name, call) {
  lev <- arm_names(coding)
  K <- length(lev)
  if (is.numeric(propensity) && length(propensity) == 1L && is.null(dim(propensity)) && is.null(names(propensity))) {
    p <- as.double(propensity)
    label <- if (K == 2L) sprintf("P(treatment coded +1) = %s (randomised)", format(p)) else
      sprintf("%s for each of the %d arms (balanced randomisation)", format(p), K)
    return(list(spec = p, label = label))
  }
  if (is.numeric(propensity) && !is.null(names(propensity)) && is.null(dim(propensity)) && length(propensity) != n) {
    given <- names(propensity)
    unknown <- setdiff(given, lev)
    missing_ <- setdiff(lev, given)
    if (length(unknown) > 0L || length(missing_) > 0L || anyDuplicated(given)) {
      arg_error(sprintf(paste0("%s as a named vector must give one probability per arm, named by the levels %s; ",
                               "%s."), name, paste(dQuote(lev, FALSE), collapse = ", "),
                        paste(c(if (length(missing_)) paste("missing", paste(dQuote(missing_, FALSE), collapse = ", ")),
                                if (length(unknown)) {
                                  paste("not a level:", paste(dQuote(unknown, FALSE), collapse = ", "))
                                },
                                if (anyDuplicated(given)) "a name given twice"), collapse = "; ")), call)
    }
    p <- as.double(propensity[lev])
    dim(p) <- K
    return(list(spec = list(per_arm = p),
                label = paste0("P(A = a) by design: ", paste(sprintf("%s %s", lev, vapply(as.double(p), format, "")),
                                                             collapse = ", "))))
  }
  if (is.matrix(propensity) || is.data.frame(propensity)) {
    M <- as_feature_matrix(propensity, name, call)
    if (ncol(M) == 1L) return(list(spec = as_numeric_arg(M, name, call), label = "P(A_i | x_i) given per subject"))
    if (ncol(M) != K) {
      arg_error(sprintf("%s as a matrix must have one column per arm (%d: %s), got %d column(s).", name, K,
                        paste(dQuote(lev, FALSE), collapse = ", "), ncol(M)), call)
    }
    if (!is.null(colnames(M))) {
      if (!setequal(colnames(M), lev) || anyDuplicated(colnames(M))) {
        arg_error(sprintf("%s's column names must be the levels %s, got %s.", name,
                          paste(dQuote(lev, FALSE), collapse = ", "),
                          paste(dQuote(colnames(M), FALSE), collapse = ", ")), call)
      }
      M <- M[, lev, drop = FALSE]
    }
    return(list(spec = wire_matrix(M), label = "P(A = a | x_i) given per subject and arm"))
  }
  list(spec = as_numeric_arg(propensity, name, call), label = "P(A_i | x_i) given per subject")
}

# Argument checks. Messages name the argument, the allowed values and what was
# received; for data they give counts and positions, never values.

arg_error <- function(msg, call = sys.call(-1L)) {
  stop(structure(class = c("pydpowl_argument_error", "error", "condition"),
                 list(message = msg, call = call)))
}

fmt_value <- function(x) {
  if (is.null(x)) return("NULL")
  if (length(x) != 1L) return(paste0("a ", class(x)[1L], " of length ", length(x)))
  if (is.character(x)) return(dQuote(x, FALSE))
  format(x)
}

positions <- function(bad, max_shown = 5L) {
  idx <- which(bad)
  shown <- paste(utils::head(idx, max_shown), collapse = ", ")
  if (length(idx) > max_shown) paste0(shown, ", ...") else shown
}

# A single number in an interval; `lower_open`/`upper_open` choose the brackets.
check_number <- function(x, name, lower = -Inf, upper = Inf, lower_open = TRUE, upper_open = TRUE,
                         call = sys.call(-1L)) {
  interval <- paste0(if (lower_open) "(" else "[", format(lower), ", ", format(upper),
                     if (upper_open) ")" else "]")
  if (!is.numeric(x) || length(x) != 1L || is.na(x) || is.factor(x)) {
    arg_error(sprintf("%s must be a single number in %s, got %s.", name, interval, fmt_value(x)), call)
  }
  ok_low <- if (lower_open) x > lower else x >= lower
  ok_up <- if (upper_open) x < upper else x <= upper
  if (!(ok_low && ok_up)) {
    arg_error(sprintf("%s must be in %s, got %s = %s.", name, interval, name, format(x)), call)
  }
  as.numeric(x)
}

check_flag <- function(x, name, call = sys.call(-1L)) {
  if (!is.logical(x) || length(x) != 1L || is.na(x)) {
    arg_error(sprintf("%s must be TRUE or FALSE, got %s.", name, fmt_value(x)), call)
  }
  x
}

check_string <- function(x, name, allowed, call = sys.call(-1L)) {
  if (!is.character(x) || length(x) != 1L || is.na(x) || !(x %in% allowed)) {
    arg_error(sprintf("%s must be one of %s, got %s.", name,
                      paste(dQuote(allowed, FALSE), collapse = ", "), fmt_value(x)), call)
  }
  x
}

# A numeric feature matrix from a data frame or matrix; factors, characters,
# NA and non-finite values are errors naming the columns (NA/Inf are passed
# through with allow_na = TRUE, for prediction).
as_feature_matrix <- function(X, name = "X", allow_na = FALSE, call = sys.call(-1L)) {
  if (is.data.frame(X)) {
    if (ncol(X) == 0L) arg_error(sprintf("%s has no columns.", name), call)
    cols <- names(X)
    kinds <- vapply(X, function(v) {
      if (is.factor(v)) "factor" else if (is.character(v)) "character" else if (is.logical(v)) "logical"
      else if (is.numeric(v)) "numeric" else class(v)[1L]
    }, character(1))
    bad <- kinds %in% c("factor", "character") | !(kinds %in% c("numeric", "logical", "factor", "character"))
    if (any(bad)) {
      arg_error(sprintf(paste0(
        "%s must have numeric (or logical) columns only; column(s) %s are %s. Code categories as 0/1 ",
        "columns first (e.g. male = as.numeric(sex == \"M\")), so that their public bounds are [0, 1]."),
        name, paste(sQuote(cols[bad], FALSE), collapse = ", "),
        paste(unique(kinds[bad]), collapse = "/")), call)
    }
    X[] <- lapply(X, as.numeric)
    M <- as.matrix(X)  # row names kept exactly as DPpack's as.matrix() keeps them
  } else if (is.matrix(X) && (is.numeric(X) || is.logical(X))) {
    M <- X
    storage.mode(M) <- "double"
  } else {
    arg_error(sprintf("%s must be a data frame or a numeric matrix, got %s.", name,
                      paste(class(X), collapse = "/")), call)
  }
  if (nrow(M) == 0L) arg_error(sprintf("%s has no rows.", name), call)
  if (allow_na) return(M)  # prediction: NA rows give NA, as in DPpack
  if (anyNA(M)) {
    na_cols <- which(colSums(is.na(M)) > 0L)
    labels <- if (is.null(colnames(M))) as.character(na_cols) else sQuote(colnames(M)[na_cols], FALSE)
    arg_error(sprintf(paste0(
      "%s has %d missing value(s) (NA) in column(s) %s (rows %s). Nothing is dropped silently: ",
      "remove or impute them first."), name, sum(is.na(M)), paste(labels, collapse = ", "),
      positions(rowSums(is.na(M)) > 0L)), call)
  }
  if (any(!is.finite(M))) {
    arg_error(sprintf("%s has %d infinite value(s) (rows %s); features must be finite.", name,
                      sum(!is.finite(M)), positions(rowSums(!is.finite(M)) > 0L)), call)
  }
  M
}

# A finite numeric vector of length n (a one-column matrix is accepted).
check_numeric_vector <- function(x, name, n = NULL, call = sys.call(-1L)) {
  if (is.data.frame(x) && ncol(x) == 1L) x <- x[[1L]]
  if (is.matrix(x) && ncol(x) == 1L) x <- x[, 1L]
  if (is.factor(x) || is.character(x)) {
    arg_error(sprintf("%s must be numeric, got a %s.", name, class(x)[1L]), call)
  }
  if (!(is.numeric(x) || is.logical(x)) || !is.null(dim(x))) {
    arg_error(sprintf("%s must be a numeric vector, got %s.", name, paste(class(x), collapse = "/")), call)
  }
  if (!is.null(n) && length(x) != n) {
    arg_error(sprintf("%s must have length %d (one entry per row of X), got length %d.", name, n, length(x)), call)
  }
  if (anyNA(x)) {
    arg_error(sprintf(paste0("%s has %d missing value(s) (NA) at position(s) %s. Nothing is dropped ",
                             "silently: remove or impute them first."), name, sum(is.na(x)), positions(is.na(x))), call)
  }
  if (any(!is.finite(x))) {
    arg_error(sprintf("%s has %d infinite value(s) at position(s) %s.", name, sum(!is.finite(x)),
                      positions(!is.finite(x))), call)
  }
  as.numeric(x)
}

# Public feature bounds: one finite value per feature, lower <= upper, scale > 0.
check_bounds <- function(lower, upper, p, lower_name, upper_name, call = sys.call(-1L)) {
  for (arg in list(list(lower, lower_name), list(upper, upper_name))) {
    v <- arg[[1L]]
    nm <- arg[[2L]]
    if (!is.numeric(v) || is.factor(v)) {
      arg_error(sprintf("%s must be a numeric vector of length %d (one bound per column of X), got %s.",
                        nm, p, paste(class(v), collapse = "/")), call)
    }
    if (length(v) != p) {
      arg_error(sprintf("%s must have length %d (one bound per column of X), got length %d.",
                        nm, p, length(v)), call)
    }
    if (any(!is.finite(v))) {
      arg_error(sprintf("%s must be finite; entries %s are NA or infinite.", nm, positions(!is.finite(v))), call)
    }
  }
  if (any(lower > upper)) {
    arg_error(sprintf("%s must be <= %s for every feature; reversed at position(s) %s.",
                      lower_name, upper_name, positions(lower > upper)), call)
  }
  zero <- pmax(abs(lower), abs(upper)) == 0
  if (any(zero)) {
    arg_error(sprintf(paste0("max(|%s|, |%s|) must be > 0 for every feature (it is the column's scale); ",
                             "it is 0 at position(s) %s."), lower_name, upper_name, positions(zero)), call)
  }
  list(lower = as.numeric(lower), upper = as.numeric(upper))
}

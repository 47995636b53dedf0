# Turning R objects into what the Python worker receives.
#
# The checks of values (ranges, lengths, missing and infinite values, labels,
# bounds) are made in Python (inst/python/pydpowl_rcalls.py, with pydpowl's
# _validation functions under R's argument names) and come back as classed R
# errors. What stays here is what only R can judge: the type of an R object
# (data frames, factors, characters, functions) and how it becomes numbers.

arg_error <- function(msg, call = sys.call(-1L), class = NULL) {
  stop(structure(class = c(class, "pydpowl_argument_error", "pydpowl_error", "error", "condition"),
                 list(message = msg, call = call)))
}

fmt_value <- function(x) {
  if (is.null(x)) return("NULL")
  if (is.function(x)) return("a function")
  if (length(x) != 1L) return(paste0("a ", class(x)[1L], " of length ", length(x)))
  if (is.character(x)) return(dQuote(x, FALSE))
  format(x)
}

positions <- function(bad, max_shown = 5L) {
  idx <- which(bad)
  shown <- paste(utils::head(idx, max_shown), collapse = ", ")
  if (length(idx) > max_shown) paste0(shown, ", ...") else shown
}

# A setting (a single value) as the worker receives it: numbers, logicals and
# strings go as they are (Python says what is wrong with them); objects that
# have no meaning there are refused here.
as_setting <- function(x, name, call = sys.call(-1L)) {
  if (length(x) == 1L && is.atomic(x) && is.na(x)) {  # NA would arrive as Python's None, which reads as NULL
    arg_error(sprintf("%s must not be %s (a missing value): give the setting.", name,
                      if (is.nan(x)) "NaN" else "NA"), call)
  }
  if (is.null(x) || ((is.numeric(x) || is.logical(x) || is.character(x)) && !is.factor(x) && is.null(dim(x)))) {
    return(if (is.integer(x)) as.double(x) else unname(x))
  }
  arg_error(sprintf("%s must be a single value, got %s.", name,
                    if (is.function(x)) "a function" else paste(class(x), collapse = "/")), call)
}

# A numeric vector (a one-column data frame or matrix is accepted) as a 1-d
# array of doubles, so that it arrives as an array even when of length 1.
# Factors and character vectors are refused here: their numbers would not be
# the user's.
as_numeric_arg <- function(x, name, call = sys.call(-1L)) {
  if (is.data.frame(x) && ncol(x) == 1L) x <- x[[1L]]
  if (is.matrix(x) && ncol(x) == 1L) x <- x[, 1L]
  if (is.factor(x) || is.character(x)) {
    arg_error(sprintf("%s must be numeric, got a %s.", name, class(x)[1L]), call)
  }
  if (!(is.numeric(x) || is.logical(x)) || length(dim(x)) > 1L) {
    arg_error(sprintf("%s must be a numeric vector, got %s.", name, paste(class(x), collapse = "/")), call)
  }
  x <- as.double(x)
  dim(x) <- length(x)
  x
}

# A numeric feature matrix from a data frame or matrix. Factor and character
# columns are refused with the advice to code them as 0/1 columns (whose public
# bounds are then [0, 1]); logical columns count as 0/1. Missing and infinite
# values are left for the worker to report (or, in prediction, give NA).
as_feature_matrix <- function(X, name = "X", call = sys.call(-1L)) {
  if (is.data.frame(X)) {
    check_feature_columns(X, name, call)
    X[] <- lapply(X, as.numeric)
    M <- as.matrix(X)  # row names kept exactly as DPpack's as.matrix() keeps them
    if (ncol(X) == 0L) M <- matrix(numeric(0), nrow(X), 0L)
  } else if (is.matrix(X) && (is.numeric(X) || is.logical(X))) {
    M <- X
    storage.mode(M) <- "double"
  } else {
    arg_error(sprintf("%s must be a data frame or a numeric matrix, got %s.", name,
                      paste(class(X), collapse = "/")), call)
  }
  M
}

# A data frame's columns must be numeric or logical (the refusal as_feature_matrix and wire_features share).
check_feature_columns <- function(X, name, call) {
  cols <- names(X)
  kinds <- vapply(X, function(v) {
    if (is.factor(v)) "factor" else if (is.character(v)) "character" else if (is.logical(v)) "logical"
    else if (is.numeric(v)) "numeric" else class(v)[1L]
  }, character(1))
  bad <- !(kinds %in% c("numeric", "logical"))
  if (any(bad)) {
    arg_error(sprintf(paste0(
      "%s must have numeric (or logical) columns only; column(s) %s are %s. Code categories as 0/1 ",
      "columns first (e.g. male = as.numeric(sex == \"M\")), so that their public bounds are [0, 1]."),
      name, paste(sQuote(cols[bad], FALSE), collapse = ", "),
      paste(unique(kinds[bad]), collapse = "/")), call)
  }
  invisible(NULL)
}

# The features of a fit as the worker receives them: list(values = doubles with dim, columns = names), the
# numbers of as_feature_matrix(). A data frame of plain columns is unlisted in one copy (building R's matrix
# and then dropping its attributes took three times as long); anything else goes through as_feature_matrix().
wire_features <- function(X, name = "X", call = sys.call(-1L)) {
  if (is.data.frame(X) && ncol(X) > 0L) {
    check_feature_columns(X, name, call)
    values <- unlist(X, use.names = FALSE)
    if (length(values) == nrow(X) * ncol(X)) {  # no matrix or data frame columns
      values <- as.double(values)
      dim(values) <- dim(X)
      return(list(values = values, columns = names(X)))
    }
  }
  M <- as_feature_matrix(X, name, call)
  list(values = wire_matrix(M), columns = colnames(M))
}

# The matrix as sent to the worker: values and dim only.
wire_matrix <- function(M) {
  out <- as.vector(M)
  dim(out) <- dim(M)
  out
}

# TRUE or FALSE, for the R-only computations (prediction).
check_flag <- function(x, name, call = sys.call(-1L)) {
  if (!is.logical(x) || length(x) != 1L || is.na(x)) {
    arg_error(sprintf("%s must be TRUE or FALSE, got %s.", name, fmt_value(x)), call)
  }
  x
}

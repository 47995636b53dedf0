# The binary protocol between R and the Python worker (version 1).
#
# Specified in inst/python/pydpowl_worker.py (the Python side) and in
# docs/r_frontend.md. In short: little-endian int32 and float64; a value is a
# type code (0 NULL, 1 double, 2 integer, 3 logical, 4 character, 5 list)
# followed by its length, its dim (none for a plain vector) and its data; a
# request is "PDWQ", the function name and a named list of arguments; a
# response is "PDWS", the byte count of its body, then the body (status 0 and
# list(result, warnings), or status 1 and the error).

.PROTOCOL <- 1L
.REQUEST_MAGIC <- charToRaw("PDWQ")
.RESPONSE_MAGIC <- charToRaw("PDWS")
.TYPE <- c(null = 0L, double = 1L, integer = 2L, logical = 3L, character = 4L, list = 5L)

put_int <- function(x, con) writeBin(as.integer(x), con, size = 4L, endian = "little")

put_string <- function(s, con) {
  if (is.na(s)) return(put_int(-1L, con))
  bytes <- charToRaw(enc2utf8(s))
  put_int(length(bytes), con)
  writeBin(bytes, con)
}

# Write one value. Numeric data keep their dim (a matrix is sent column-major
# with its dims; dim(x) <- length(x) marks a vector that must arrive as an
# array even when of length 1); other attributes are not sent.
put_value <- function(x, con) {
  if (is.null(x)) return(put_int(.TYPE[["null"]], con))
  if (is.list(x)) {
    nms <- names(x)
    put_int(c(.TYPE[["list"]], length(x), !is.null(nms)), con)
    for (i in seq_along(x)) {
      if (!is.null(nms)) put_string(nms[[i]], con)
      put_value(x[[i]], con)
    }
    return(invisible(NULL))
  }
  if (is.character(x)) {
    put_int(c(.TYPE[["character"]], length(x)), con)
    for (s in x) put_string(s, con)
    return(invisible(NULL))
  }
  type <- if (is.factor(x)) NA_integer_ else if (is.double(x)) .TYPE[["double"]]
          else if (is.integer(x)) .TYPE[["integer"]] else if (is.logical(x)) .TYPE[["logical"]] else NA_integer_
  if (is.na(type)) stop("internal error: cannot send an object of class ", class(x)[1L], " to Python.")
  if (length(x) > .Machine$integer.max) {
    stop("cannot send a vector of ", length(x), " entries to Python (at most ", .Machine$integer.max, ").")
  }
  d <- dim(x)
  put_int(c(type, length(x), length(d), d), con)
  data <- if (is.null(attributes(x))) x else as.vector(x)
  if (type == .TYPE[["double"]]) writeBin(data, con, size = 8L, endian = "little")
  else writeBin(as.integer(data), con, size = 4L, endian = "little")
  invisible(NULL)
}

get_int <- function(con, n = 1L) readBin(con, "integer", n, size = 4L, endian = "little")

get_string <- function(con) {
  n <- get_int(con)
  if (n < 0L) return(NA_character_)
  s <- rawToChar(readBin(con, "raw", n))
  Encoding(s) <- "UTF-8"
  s
}

# Read one value from a connection holding a whole response body (in memory).
get_value <- function(con) {
  type <- get_int(con)
  if (type == .TYPE[["null"]]) return(NULL)
  if (type == .TYPE[["list"]]) {
    head <- get_int(con, 2L)
    out <- vector("list", head[1L])
    nms <- character(head[1L])
    for (i in seq_len(head[1L])) {
      if (head[2L] == 1L) nms[i] <- get_string(con)
      v <- get_value(con)
      if (!is.null(v)) out[[i]] <- v
    }
    if (head[2L] == 1L) names(out) <- nms
    return(out)
  }
  if (type == .TYPE[["character"]]) {
    n <- get_int(con)
    return(vapply(seq_len(n), function(i) get_string(con), character(1)))
  }
  if (!(type %in% .TYPE[c("double", "integer", "logical")])) {
    stop("internal error: the Python worker sent a value of unknown type ", type, ".")
  }
  head <- get_int(con, 2L)
  n <- head[1L]
  d <- if (head[2L] > 0L) get_int(con, head[2L])
  x <- if (type == .TYPE[["double"]]) readBin(con, "double", n, size = 8L, endian = "little")
       else get_int(con, n)
  if (type == .TYPE[["logical"]]) x <- as.logical(x)
  if (length(d) > 1L) dim(x) <- d
  x
}

write_request <- function(con, fun, args) {
  if (is.null(names(args))) names(args) <- character(length(args))  # always a named list, even when empty
  writeBin(.REQUEST_MAGIC, con)
  put_string(fun, con)
  put_value(args, con)
  flush(con)
}

# list(status = 0 or 1, payload = ...), or NULL when the worker has gone.
# `read(n)` returns exactly n bytes of the answer, fewer when the worker has
# gone first (see worker_reader() in worker.R: no wait is out of the reach of
# an interrupt, and a wait may end at a deadline).
read_response <- function(read) {
  head <- read(8L)
  if (length(head) < 8L) return(NULL)
  if (!identical(head[1:4], .RESPONSE_MAGIC)) {
    stop("internal error: the Python worker's answer does not follow the protocol.")
  }
  n <- readBin(head[5:8], "integer", 1L, size = 4L, endian = "little")
  body <- read(n)
  if (length(body) < n) return(NULL)
  rc <- rawConnection(body, "rb")
  on.exit(close(rc))
  list(status = get_int(rc), payload = get_value(rc))
}

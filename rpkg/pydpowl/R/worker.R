# The Python worker: one process per R session, started at the first call that
# needs the engine (never at library(pydpowl)), spoken to over two FIFOs.
#
# Start: a private directory (mode 0700) under tempdir() holds the FIFOs `req`
# (R writes) and `resp` (R reads), the worker's log and, once it has exited,
# its exit status. The worker (inst/python/pydpowl_worker.py) opens `req`, then
# `resp`; R waits until the worker holds `req` open (a non-blocking open for
# writing succeeds only then, so a Python that never starts cannot hang R),
# opens both FIFOs the same way round, and reads the worker's hello.
# Lifetime: the worker answers one request at a time and exits when R closes
# `req`: at the end of the session (a finalizer), when the namespace is
# unloaded, or when R discards it. A worker found dead is replaced at the next
# call, with a message; an exchange cut short (an interrupt, an error) makes
# the worker unusable, so R stops it and the next call starts a new one.

.pydpowl <- new.env(parent = emptyenv())

worker_error <- function(message, class, call = NULL) {
  stop(structure(class = c(class, "pydpowl_error", "error", "condition"),
                 list(message = message, call = call)))
}

# A FIFO without a helper process: R's fifo() creates the file when opening it
# for writing; O_RDWR does not wait for a reader. Falls back on mkfifo(1).
make_fifo <- function(path) {
  ok <- tryCatch({
    close(fifo(path, "w+b", blocking = FALSE))
    TRUE
  }, error = function(e) FALSE, warning = function(w) FALSE)
  if (!ok) {
    unlink(path)
    ok <- system2("mkfifo", c("-m", "600", shQuote(path)), stdout = FALSE, stderr = FALSE) == 0L
  }
  if (!ok) stop("could not create the FIFO ", path, ".")
  Sys.chmod(path, "600", use_umask = FALSE)
}

read_first_line <- function(path) {
  if (!file.exists(path)) return(NA_character_)
  x <- suppressWarnings(readLines(path, n = 1L, warn = FALSE))
  if (length(x) == 0L) NA_character_ else trimws(x)
}

log_tail <- function(w, n = 8L) {
  if (!file.exists(w$log)) return("")
  lines <- suppressWarnings(readLines(w$log, warn = FALSE))
  lines <- lines[nzchar(trimws(lines))]
  if (length(lines) == 0L) return("")
  paste0("; its output ends with:\n  ", paste(utils::tail(lines, n), collapse = "\n  "))
}

worker_start <- function() {
  if (.Platform$OS.type == "windows") {
    worker_error(paste0(
      "the R package pydpowl runs its Python engine in a worker process reached through FIFOs (named pipes), ",
      "which need a Unix-like system (Linux, macOS); Windows is not supported. Use the Python package ",
      "pydpowl directly, or run R under WSL."), "pydpowl_unsupported_platform")
  }
  choice <- python_choice()
  if (!nzchar(choice$path)) engine_not_found("no Python interpreter was found", choice)
  if (!file.exists(choice$path)) engine_not_found("the Python executable does not exist", choice)
  script <- system.file("python", "pydpowl_worker.py", package = "pydpowl")
  w <- new.env(parent = emptyenv())
  w$owner <- Sys.getpid()
  w$choice <- choice
  w$dir <- tempfile("pydpowl-worker-")
  dir.create(w$dir, mode = "0700")
  Sys.chmod(w$dir, "0700", use_umask = FALSE)
  w$req_path <- file.path(w$dir, "req")
  w$resp_path <- file.path(w$dir, "resp")
  w$log <- file.path(w$dir, "log")
  w$status <- file.path(w$dir, "status")
  w$pid_file <- file.path(w$dir, "pid")
  w$closed <- FALSE
  make_fifo(w$req_path)
  make_fifo(w$resp_path)
  # the shell records the worker's pid and, when it exits, its exit status
  system(sprintf("{ %s %s %s %s </dev/null >%s 2>&1 & echo $! >%s; wait $!; echo $? >%s; } 2>/dev/null",
                 shQuote(choice$path), shQuote(script), shQuote(w$req_path), shQuote(w$resp_path),
                 shQuote(w$log), shQuote(w$pid_file), shQuote(w$status)), wait = FALSE)
  timeout <- getOption("pydpowl.start_timeout", 60)
  deadline <- Sys.time() + timeout
  repeat {
    probe <- tryCatch(suppressWarnings(fifo(w$req_path, "wb", blocking = FALSE)), error = function(e) NULL)
    if (!is.null(probe)) {
      close(probe)
      break
    }
    if (file.exists(w$status)) {
      Sys.sleep(0.05)  # let the shell finish writing the status and the log
      detail <- sprintf("Python could not be started (exit status %s%s)", read_first_line(w$status), log_tail(w))
      worker_remove(w)
      engine_not_found(detail, choice)
    }
    if (Sys.time() > deadline) {
      worker_kill(w)
      worker_remove(w)
      engine_not_found(sprintf("Python did not start within %s s (options(pydpowl.start_timeout))", timeout),
                       choice)
    }
    Sys.sleep(0.002)
  }
  w$req <- fifo(w$req_path, "wb", blocking = TRUE)
  w$resp <- fifo(w$resp_path, "rb", blocking = TRUE)
  reg.finalizer(w, worker_close, onexit = TRUE)
  hello <- read_response(w$resp)
  if (is.null(hello) || hello$status != 0L) {
    detail <- if (is.null(hello)) paste0("the Python worker stopped while starting", log_tail(w))
              else hello$payload$message
    worker_close(w)
    worker_remove(w)
    engine_not_found(detail, choice)
  }
  w$info <- hello$payload$result
  if (!identical(as.integer(w$info$protocol), .PROTOCOL)) {
    worker_close(w)
    worker_remove(w)
    engine_not_found(sprintf("its worker speaks protocol %s, this R package protocol %d (reinstall the R package)",
                             format(w$info$protocol), .PROTOCOL), choice)
  }
  w
}

worker_alive <- function(w) !w$closed && !file.exists(w$status)

# Close the FIFOs: the worker reads end of file and exits.
worker_close <- function(w) {
  if (isTRUE(w$closed)) return(invisible(NULL))
  w$closed <- TRUE
  for (con in list(w$req, w$resp)) if (!is.null(con)) try(close(con), silent = TRUE)
  invisible(NULL)
}

worker_kill <- function(w) {
  pid <- suppressWarnings(as.integer(if (!is.null(w$info$pid)) w$info$pid else read_first_line(w$pid_file)))
  if (!is.na(pid) && !file.exists(w$status)) tools::pskill(pid)
  invisible(NULL)
}

worker_remove <- function(w) unlink(w$dir, recursive = TRUE)

# Stop a worker whose exchange was cut short: it may still be computing, and
# its next answer would be out of step.
worker_discard <- function(w) {
  if (!isTRUE(w$closed)) worker_kill(w)
  worker_close(w)
  worker_remove(w)
  if (identical(.pydpowl$worker, w)) .pydpowl$worker <- NULL
}

# Stop the session's worker (at unload; also usable by hand: pydpowl:::worker_stop()).
worker_stop <- function() {
  w <- .pydpowl$worker
  .pydpowl$worker <- NULL
  if (!is.null(w)) {
    worker_close(w)
    worker_remove(w)
  }
  invisible(NULL)
}

# The session's worker, started (or restarted) when needed. A forked R process
# (parallel::mclapply and the like) inherits its parent's worker but must not
# speak to it (their requests would interleave): it starts its own, leaving the
# parent's alone.
worker_get <- function() {
  w <- .pydpowl$worker
  if (!is.null(w) && !identical(w$owner, Sys.getpid())) {
    w <- NULL
    .pydpowl$worker <- NULL
  }
  if (!is.null(w) && worker_alive(w)) return(w)
  if (!is.null(w)) {
    message(sprintf("pydpowl: the Python worker (pid %s) had stopped (exit status %s); starting a new one.",
                    format(w$info$pid), read_first_line(w$status)))
    worker_close(w)
    worker_remove(w)
    .pydpowl$worker <- NULL
  }
  .pydpowl$worker <- worker_start()
  .pydpowl$worker
}

worker_died <- function(w, call) {
  Sys.sleep(0.05)  # let the shell record the exit status
  status <- read_first_line(w$status)
  detail <- log_tail(w)
  pid <- suppressWarnings(as.integer(w$info$pid))
  alive <- !is.na(pid) && isTRUE(tools::pskill(pid, 0L))  # signal 0: does the process exist?
  worker_discard(w)
  msg <- if (alive) {
    sprintf("the exchange with the Python worker (pid %s) was cut short, so the worker was stopped", format(w$info$pid))
  } else {
    sprintf("the Python worker (pid %s) stopped during the call (exit status %s%s)", format(w$info$pid),
            if (is.na(status)) "unknown" else status, detail)
  }
  worker_error(paste0(msg, ". The next call starts a new one."), "pydpowl_worker_died", call)
}

# Call the Python function `fun` (pydpowl_rcalls.py) with the named list `args`.
# Python's warnings become R warnings and its exceptions R errors, both with
# Python's message and classes built from the Python class names (see
# ?pydpowl::pydpowl, "Conditions"). Returns the result as a named list.
engine <- function(fun, args, call = sys.call(-1L)) {
  w <- worker_get()
  done <- FALSE
  on.exit(if (!done) worker_discard(w))
  res <- tryCatch({
    write_request(w$req, fun, args)
    read_response(w$resp)
  }, error = function(e) {
    if (grepl("SIGPIPE", conditionMessage(e), fixed = TRUE)) NULL else stop(e)
  })
  done <- TRUE
  if (is.null(res)) worker_died(w, call)
  p <- res$payload
  if (res$status != 0L) {
    stop(structure(class = c(p$class, "pydpowl_error", "error", "condition"),
                   list(message = p$message, call = call, python_type = p$python_type, traceback = p$traceback)))
  }
  for (wn in p$warnings) {
    warning(structure(class = c(wn$class, "pydpowl_warning", "warning", "condition"),
                      list(message = wn$message, call = call)))
  }
  p$result
}

# The Python worker: one process per R session, started at the first call that
# needs the engine (never at library(pydpowl)), spoken to over two FIFOs.
#
# Start: a private directory (mode 0700) under tempdir() holds the FIFOs `req`
# (R writes) and `resp` (R reads), the worker's log and, once it has exited,
# its exit status. The worker (inst/python/pydpowl_worker.py) opens `req`, then
# `resp`; R waits until the worker holds `req` open (a non-blocking open for
# writing succeeds only then, so a Python that never starts cannot hang R),
# opens `req` for writing and `resp` for reading without blocking, and reads
# the worker's hello, for at most options(pydpowl.start_timeout) seconds.
# Waiting: R reads `resp` in C (src/worker.c), through a non-blocking
# descriptor and select(), so that an interrupt (Ctrl-C) ends any wait at once
# (a blocking read in R cannot be interrupted); a worker that has gone is seen
# at end of file, and a wait may end at a deadline (the hello; a call's answer
# under options(pydpowl.call_timeout)).
# Lifetime: the worker answers one request at a time and exits when R closes
# `req`: at the end of the session (a finalizer), when the namespace is
# unloaded, or when R discards it. A worker found dead is replaced at the next
# call, with a message; an exchange cut short (an interrupt, an error, a
# timeout) would leave the worker out of step, so R kills it (its computation
# stops with it) and the next call starts a new one. The shell that starts the
# worker records its exit status when it ends, or, if the R process that
# started it has ended (a fork of parallel::mclapply), removes its directory.

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

# The shell that runs the worker: it records the worker's pid and, when the
# worker exits, its exit status, unless the R process that started it (`owner`)
# has ended or is a zombie (a fork of parallel::mclapply once its task is done):
# then nobody will read the status, and it removes the worker's directory.
worker_shell <- function(python, script, w) {
  owner <- Sys.getpid()
  sprintf(paste0(
    "{ %s %s %s %s </dev/null >%s 2>&1 & echo $! >%s; wait $!; s=$?; ",
    "st=; if [ -r /proc/%d/stat ]; then read -r st </proc/%d/stat; st=${st##*) }; ",
    "elif command -v ps >/dev/null; then st=$(ps -o stat= -p %d); fi; ",
    "if ! kill -0 %d || [ \"${st#Z}\" != \"$st\" ]; then rm -rf %s; else echo $s >%s; fi; } 2>/dev/null"),
    shQuote(python), shQuote(script), shQuote(w$req_path), shQuote(w$resp_path), shQuote(w$log),
    shQuote(w$pid_file), owner, owner, owner, owner, shQuote(w$dir), shQuote(w$status))
}

# R's temporary directory, created again (with a message) if it has been removed.
ensure_tempdir <- function() {
  old <- tempdir()
  if (dir.exists(old)) return(invisible(old))
  new <- tempdir(check = TRUE)
  message(sprintf(paste0("pydpowl: R's temporary directory %s had been removed (by a cleaner of /tmp?); ",
                         "R created %s in its place (tempdir(check = TRUE)), where the Python worker now runs."),
                  old, new))
  invisible(new)
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
  timeout <- timeout_option("pydpowl.start_timeout", 60)
  ensure_tempdir()
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
  started <- FALSE
  on.exit(if (!started) worker_discard(w))  # a timeout, an error or an interrupt: no half-started worker stays
  system(worker_shell(choice$path, script, w), wait = FALSE)
  deadline <- clock() + timeout
  exited <- function() {
    if (!file.exists(w$status)) return(FALSE)
    Sys.sleep(0.05)  # let the shell finish writing the status and the log
    TRUE
  }
  repeat {
    probe <- tryCatch(suppressWarnings(fifo(w$req_path, "wb", blocking = FALSE)), error = function(e) NULL)
    if (!is.null(probe)) {
      close(probe)
      break
    }
    if (exited()) {
      detail <- sprintf("Python could not be started (exit status %s%s)", read_first_line(w$status), log_tail(w))
      engine_not_found(detail, choice)
    }
    if (clock() > deadline) {
      engine_not_found(sprintf("Python did not start within %s s (options(pydpowl.start_timeout))", timeout),
                       choice)
    }
    Sys.sleep(0.002)
  }
  w$req <- fifo(w$req_path, "wb", blocking = TRUE)
  w$resp <- .Call(pydpowl_fifo_open, w$resp_path)
  reg.finalizer(w, worker_close, onexit = TRUE)
  # end of file: the worker has gone, which its exit status will show
  hello <- read_response(worker_reader(w, deadline, function() {
    engine_not_found(sprintf(paste0("the Python worker (pid %s) did not say hello within %s s ",
                                    "(options(pydpowl.start_timeout))%s"), worker_pid(w), timeout, log_tail(w)),
                     choice)
  }, gone = function() exited()))
  if (is.null(hello) || hello$status != 0L) {
    detail <- if (is.null(hello)) paste0("the Python worker stopped while starting", log_tail(w))
              else hello$payload$message
    engine_not_found(detail, choice)
  }
  w$info <- hello$payload$result
  if (!identical(as.integer(w$info$protocol), .PROTOCOL)) {
    engine_not_found(sprintf("its worker speaks protocol %s, this R package protocol %d (reinstall the R package)",
                             format(w$info$protocol), .PROTOCOL), choice)
  }
  started <- TRUE
  w
}

worker_alive <- function(w) !w$closed && !file.exists(w$status) && dir.exists(w$dir)

# Seconds, for deadlines (cheaper than date-time arithmetic, which a call would pay twice).
clock <- function() unclass(Sys.time())

# options(pydpowl.start_timeout) and options(pydpowl.call_timeout): seconds in (0, Inf] (NULL: `unset`).
timeout_option <- function(name, unset, call = NULL) {
  value <- getOption(name)
  if (is.null(value)) return(unset)
  if (!is.numeric(value) || length(value) != 1L || is.na(value) || value <= 0) {
    arg_error(sprintf("options(%s) must be a number of seconds in (0, Inf] or NULL (%s), got %s.", name,
                      if (is.infinite(unset)) "no limit" else paste0("the default, ", unset, " s"),
                      fmt_value(value)), call)
  }
  as.numeric(value)
}

# The `read` of read_response(): exactly n bytes of the answer (fewer when
# the worker has gone first), read in C (src/worker.c), where an interrupt ends
# the wait at once; `timed_out()` (which raises) is called if they have not
# come by `deadline` (a clock() time). After end of file, `gone()` may ask to
# wait on (while starting: the worker's exit status is yet to come).
worker_reader <- function(w, deadline, timed_out, gone = function() TRUE) {
  function(n) {
    bytes <- raw(0L)
    repeat {
      more <- .Call(pydpowl_fifo_read, w$resp, n - length(bytes), deadline - clock())
      if (is.null(more)) timed_out()
      bytes <- if (length(bytes)) c(bytes, more) else more
      if (length(bytes) == n || gone()) return(bytes)
      if (clock() > deadline) timed_out()
      Sys.sleep(0.01)
    }
  }
}

# Close the FIFOs: the worker reads end of file and exits.
worker_close <- function(w) {
  if (isTRUE(w$closed)) return(invisible(NULL))
  w$closed <- TRUE
  if (!is.null(w$req)) try(close(w$req), silent = TRUE)
  if (!is.null(w$resp)) .Call(pydpowl_fifo_close, w$resp)
  invisible(NULL)
}

# The worker's pid: from its hello, or, before that, as its shell recorded it
# (waiting up to 1 s for the record: the shell writes it as it starts Python).
worker_pid <- function(w) {
  if (!is.null(w$info$pid)) return(as.integer(w$info$pid))
  deadline <- clock() + 1
  while (is.na(pid <- suppressWarnings(as.integer(read_first_line(w$pid_file)))) && clock() < deadline &&
         dir.exists(w$dir)) {
    Sys.sleep(0.005)
  }
  pid
}

worker_kill <- function(w) {
  pid <- worker_pid(w)
  if (!is.na(pid) && !file.exists(w$status)) .Call(pydpowl_signal, pid, TRUE)
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
  if (!is.null(w) && isTRUE(w$busy)) {  # an exchange cut short (a second interrupt stopped its clean-up)
    worker_discard(w)
    w <- NULL
  }
  if (!is.null(w) && worker_alive(w)) return(w)
  if (!is.null(w)) {
    if (!dir.exists(w$dir)) {
      # removed from outside (with tempdir(), if worker_start has to say so): it can report nothing more
      if (dir.exists(tempdir())) {
        message(sprintf("pydpowl: the Python worker's directory %s had been removed; starting a new worker.", w$dir))
      }
      worker_discard(w)
    } else {
      message(sprintf("pydpowl: the Python worker (pid %s) had stopped (exit status %s); starting a new one.",
                      format(w$info$pid), read_first_line(w$status)))
      worker_close(w)
      worker_remove(w)
    }
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
  alive <- !is.na(pid) && .Call(pydpowl_signal, pid, FALSE)  # does the process exist?
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
# The wait for the answer ends at once on an interrupt, when the worker has
# gone, or after options(pydpowl.call_timeout) seconds (default: no limit);
# each leaves the worker out of step, so it is killed (on.exit) and the next
# call starts a new one.
engine <- function(fun, args, call = sys.call(-1L)) {
  timeout <- timeout_option("pydpowl.call_timeout", Inf, call)
  w <- worker_get()
  w$busy <- TRUE  # until its answer is read; a worker left busy is out of step (worker_get() replaces it)
  on.exit(if (w$busy) worker_discard(w))
  deadline <- clock() + timeout
  read <- worker_reader(w, deadline, function() {
    worker_error(sprintf(paste0("the Python worker (pid %s) did not answer within %s s ",
                                "(options(pydpowl.call_timeout)); it was stopped. The next call starts a new one."),
                         format(w$info$pid), timeout), "pydpowl_timeout", call)
  })
  res <- tryCatch({
    write_request(w$req, fun, args)
    read_response(read)
  }, error = function(e) {
    if (grepl("SIGPIPE", conditionMessage(e), fixed = TRUE)) NULL else stop(e)
  })
  w$busy <- FALSE
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

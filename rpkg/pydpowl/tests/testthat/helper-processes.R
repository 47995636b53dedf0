# Fresh R processes and the worker process, for the tests of starting and stopping Python.

# Rscript in a clean environment: the Python-choosing variables unset, then `env` set. `code` may span
# several lines. A run that outlives `timeout` seconds is killed and its output ends with "TIMED OUT".
run_fresh_r <- function(code, env = character(), timeout = 120) {
  script <- tempfile(fileext = ".R")
  on.exit(unlink(script))
  writeLines(code, script)
  rscript <- file.path(R.home("bin"), "Rscript")
  libs <- paste0("R_LIBS=", paste(.libPaths(), collapse = .Platform$path.sep))
  args <- c("-u", "RETICULATE_PYTHON", "-u", "PYDPOWL_PYTHON", libs, env, rscript, shQuote(script))
  out <- suppressWarnings(system2("env", args, stdout = TRUE, stderr = TRUE, timeout = timeout))
  if (identical(attr(out, "status"), 124L)) out <- c(out, sprintf("TIMED OUT after %s s", timeout))
  paste(out, collapse = "\n")
}

process_exists <- function(pid) {
  system2("kill", c("-0", as.integer(pid)), stdout = FALSE, stderr = FALSE) == 0L
}

wait_until <- function(cond, seconds = 10) {
  deadline <- Sys.time() + seconds
  while (!cond() && Sys.time() < deadline) Sys.sleep(0.02)
  cond()
}

# The value of `KEY=value` in a fresh process's output (NA when absent).
field <- function(out, key) {
  m <- regmatches(out, regexec(paste0(key, "=([^ \n]*)"), out))[[1L]]
  if (length(m) < 2L) NA_character_ else m[2L]
}

# R code for a fresh process: `interrupt_after(secs, expr)` evaluates expr, sending SIGINT to this R
# process `secs` seconds after it starts (from a forked child, as a terminal's Ctrl-C would), and
# returns list(outcome = "completed" or "interrupted", latency = seconds from the signal to R's handler).
INTERRUPT_AFTER <- c(
  "interrupt_after <- function(secs, expr) {",
  "  me <- Sys.getpid()",
  "  kill <- tools::pskill; sigint <- tools::SIGINT  # resolved before the fork: the child only signals",
  "  job <- parallel::mcparallel({ Sys.sleep(secs); sent <- Sys.time(); kill(me, sigint); sent })",
  "  outcome <- tryCatch({ force(expr); 'completed' }, interrupt = function(e) 'interrupted')",
  "  back <- Sys.time()",
  "  sent <- parallel::mccollect(job)[[1L]]",
  "  list(outcome = outcome, latency = as.numeric(back) - as.numeric(sent))",
  "}",
  "gone_within <- function(pid, secs) {",
  "  deadline <- Sys.time() + secs",
  "  while (isTRUE(tools::pskill(pid, 0L)) && Sys.time() < deadline) Sys.sleep(0.005)",
  "  !isTRUE(tools::pskill(pid, 0L))",
  "}"
)

# An `import pydpowl` that never returns (a hung network file system, a lock): a directory to put first
# on PYTHONPATH. With `hang_submodule = TRUE` the package itself imports and the hello succeeds, but the
# engine's first call hangs (importing pydpowl._validation).
blocking_pydpowl <- function(hang_submodule = FALSE) {
  dir <- tempfile("blocking-pydpowl-")
  dir.create(file.path(dir, "pydpowl"), recursive = TRUE)
  init <- if (hang_submodule) "__version__ = '0+blocking'" else c("import time", "time.sleep(3600)")
  writeLines(init, file.path(dir, "pydpowl", "__init__.py"))
  writeLines(c("import time", "time.sleep(3600)"), file.path(dir, "pydpowl", "_validation.py"))
  dir
}

# Python processes whose command line mentions `text` (a worker directory), by pid.
processes_mentioning <- function(text) {
  ps <- suppressWarnings(system2("ps", c("-eo", "pid=,args="), stdout = TRUE, stderr = FALSE))
  hits <- ps[grepl(text, ps, fixed = TRUE) & grepl("pydpowl_worker.py", ps, fixed = TRUE)]
  as.integer(sub("^ *([0-9]+) .*", "\\1", hits))
}

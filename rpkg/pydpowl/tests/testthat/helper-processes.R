# Fresh R processes and the worker process, for the tests of starting and stopping Python.

# Rscript in a clean environment: the Python-choosing variables unset, then `env` set.
run_fresh_r <- function(code, env = character()) {
  rscript <- file.path(R.home("bin"), "Rscript")
  libs <- paste0("R_LIBS=", paste(.libPaths(), collapse = .Platform$path.sep))
  args <- c("-u", "RETICULATE_PYTHON", "-u", "PYDPOWL_PYTHON", libs, env, rscript, "-e", shQuote(code))
  out <- suppressWarnings(system2("env", args, stdout = TRUE, stderr = TRUE))
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

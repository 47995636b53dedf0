# Finding the Python that runs the engine.
#
# The interpreter is chosen each time a worker is started (the first call that
# needs the engine; nothing happens at library(pydpowl)), in this order:
#   1. options(pydpowl.python = "/path/to/python");
#   2. the environment variable PYDPOWL_PYTHON;
#   3. the interpreter recorded when the package was installed (inst/python-path,
#      written by the configure script: PYDPOWL_PYTHON at install time, else the
#      project's .venv next to rpkg/);
#   4. python3 on the PATH.
# RETICULATE_PYTHON is not consulted: the package no longer uses reticulate,
# and that variable names the Python of the user's reticulate sessions, which
# need not have pydpowl.

recorded_python <- function() {
  f <- system.file("python-path", package = "pydpowl")
  if (!nzchar(f)) return("")
  p <- readLines(f, n = 1L, warn = FALSE)
  if (length(p) == 0L) "" else trimws(p)
}

python_choice <- function() {
  opt <- getOption("pydpowl.python")
  if (!is.null(opt)) return(list(path = path.expand(as.character(opt)[1L]), source = "options(pydpowl.python)"))
  env <- Sys.getenv("PYDPOWL_PYTHON")
  if (nzchar(env)) return(list(path = path.expand(env), source = "PYDPOWL_PYTHON"))
  rec <- recorded_python()
  if (nzchar(rec)) return(list(path = rec, source = "the path recorded at installation"))
  list(path = unname(Sys.which("python3")), source = "python3 on the PATH")
}

engine_not_found <- function(detail, choice) {
  worker_error(paste0(
    "the Python engine 'pydpowl' is not available: ", detail, ".\n",
    "Python chosen by ", choice$source, if (nzchar(choice$path)) paste0(": ", choice$path) else "", ".\n",
    "Install the project with its set-up (make setup creates .venv and installs this R package), ",
    "or point R at a Python that can 'import pydpowl': options(pydpowl.python = \"/path/to/.venv/bin/python\") ",
    "or Sys.setenv(PYDPOWL_PYTHON = ...); the next call uses it."
  ), "pydpowl_python_missing")
}

# Is the Python engine available? (documented in man/pydpowl_available.Rd)
pydpowl_available <- function() {
  tryCatch({
    worker_get()
    TRUE
  }, error = function(e) FALSE)
}

pydpowl_config <- function() {
  w <- worker_get()
  list(python = w$info$python,
       chosen_by = w$choice$source,
       engine_version = w$info$pydpowl_version,
       package_version = as.character(utils::packageVersion("pydpowl")),
       python_version = w$info$python_version,
       worker_pid = w$info$pid)
}

# Finding the Python engine and calling it.
#
# The Python interpreter is chosen once per R session, the first time the engine
# is needed (nothing happens at library(pydpowl)):
#   1. RETICULATE_PYTHON, when set (reticulate's own rule; never overridden);
#   2. options(pydpowl.python = "/path/to/python");
#   3. the environment variable PYDPOWL_PYTHON;
#   4. the interpreter recorded when the package was installed (inst/python-path,
#      written by the configure script: PYDPOWL_PYTHON at install time, else the
#      project's .venv next to rpkg/);
#   5. reticulate's default discovery.
# If reticulate already runs a Python in this session, that one is used.

.pydpowl <- new.env(parent = emptyenv())

recorded_python <- function() {
  f <- system.file("python-path", package = "pydpowl")
  if (!nzchar(f)) return("")
  p <- readLines(f, n = 1L, warn = FALSE)
  if (length(p) == 0L) "" else trimws(p)
}

python_choice <- function() {
  env_ret <- Sys.getenv("RETICULATE_PYTHON")
  if (nzchar(env_ret)) return(list(path = env_ret, source = "RETICULATE_PYTHON"))
  opt <- getOption("pydpowl.python")
  if (!is.null(opt)) return(list(path = as.character(opt), source = "options(pydpowl.python)"))
  env <- Sys.getenv("PYDPOWL_PYTHON")
  if (nzchar(env)) return(list(path = env, source = "PYDPOWL_PYTHON"))
  rec <- recorded_python()
  if (nzchar(rec)) return(list(path = rec, source = "the path recorded at installation"))
  list(path = NULL, source = "reticulate's default discovery")
}

# Debian's Python, embedded by reticulate in a virtual environment, does not
# recognise the venv's site-packages as a site directory: reticulate adds the path
# but its .pth files (editable installs) are not processed. Process them.
.SITE_FIX <- paste(
  "import importlib.util, os, site, sys",
  "if importlib.util.find_spec('pydpowl') is None:",
  "    for _p in list(sys.path):",
  "        if os.path.basename(_p) == 'site-packages' and _p.startswith(sys.prefix):",
  "            site.addsitedir(_p)",
  sep = "\n"
)

engine_not_found <- function(detail, choice) {
  stop(structure(class = c("pydpowl_python_missing", "error", "condition"), list(
    message = paste0(
      "the Python engine 'pydpowl' is not available: ", detail, ".\n",
      "Python chosen by ", choice$source,
      if (!is.null(choice$path)) paste0(": ", choice$path) else "", ".\n",
      "Install the project with its set-up (make setup creates .venv and installs this R package), ",
      "or point R at a Python that can 'import pydpowl': Sys.setenv(RETICULATE_PYTHON = \"/path/to/.venv/bin/python\") ",
      "or options(pydpowl.python = ...) before the first fit."
    ),
    call = NULL
  )))
}

# The reticulate module object of inst/python/pydpowl_rbridge.py (initialises Python once).
bridge <- function() {
  if (!is.null(.pydpowl$bridge)) return(.pydpowl$bridge)
  choice <- .pydpowl$choice
  if (is.null(choice)) {
    if (reticulate::py_available(initialize = FALSE)) {
      choice <- list(path = reticulate::py_config()$python, source = "the Python reticulate already runs")
    } else {
      # reticulate treats a set-but-empty RETICULATE_PYTHON as set and then ignores use_python()
      if (identical(Sys.getenv("RETICULATE_PYTHON", unset = NA), "")) Sys.unsetenv("RETICULATE_PYTHON")
      choice <- python_choice()
      if (!is.null(choice$path) && choice$source != "RETICULATE_PYTHON") {
        if (!file.exists(choice$path)) engine_not_found("the Python executable does not exist", choice)
        reticulate::use_python(choice$path, required = TRUE)
      }
    }
    .pydpowl$choice <- choice
  }
  ok <- tryCatch(withCallingHandlers(reticulate::py_available(initialize = TRUE), warning = function(w) {
    # reticulate 1.28 takes any pyproject.toml above the working directory (such as
    # the project's own) for a Poetry project and warns, before honouring use_python()
    if (grepl("appears to use Poetry", conditionMessage(w), fixed = TRUE)) invokeRestart("muffleWarning")
  }), error = function(e) {
    engine_not_found(paste("Python could not be started:", conditionMessage(e)), choice)
  })
  if (!isTRUE(ok)) engine_not_found("Python could not be started", choice)
  reticulate::py_run_string(.SITE_FIX, local = TRUE)
  if (!reticulate::py_module_available("pydpowl")) {
    engine_not_found(paste0("'import pydpowl' fails in ", reticulate::py_config()$python), choice)
  }
  mod <- engine_call(reticulate::import_from_path("pydpowl_rbridge",
                                                  path = system.file("python", package = "pydpowl")))
  .pydpowl$bridge <- mod
  mod
}

clean_python_message <- function(msg) {
  msg <- sub("\\s*Run `reticulate::py_last_error\\(\\)` for details\\.?\\s*$", "", msg)
  trimws(msg)
}

# Evaluate a call into Python; Python exceptions become R errors of class
# 'pydpowl_engine_error' whose message is the original "Type: message".
engine_call <- function(expr, call = sys.call(-1L)) {
  tryCatch(expr, error = function(e) {
    if (inherits(e, c("pydpowl_python_missing", "pydpowl_engine_error"))) stop(e)
    stop(structure(class = c("pydpowl_engine_error", "error", "condition"), list(
      message = clean_python_message(conditionMessage(e)), call = call
    )))
  })
}

# Re-emit warnings captured in Python as R warnings.
relay_warnings <- function(texts) {
  for (w in unlist(texts)) warning(w, call. = FALSE)
  invisible(NULL)
}

# Is the Python engine available? (documented in man/pydpowl_available.Rd)
pydpowl_available <- function() {
  ok <- tryCatch({
    bridge()
    TRUE
  }, error = function(e) FALSE)
  ok
}

pydpowl_config <- function() {
  b <- bridge()
  list(python = reticulate::py_config()$python,
       chosen_by = .pydpowl$choice$source,
       engine_version = engine_call(b$engine_version()),
       package_version = as.character(utils::packageVersion("pydpowl")))
}

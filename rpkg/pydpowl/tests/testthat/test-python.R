# Finding the Python engine: recorded at installation, overridable by RETICULATE_PYTHON.

# Rscript in a clean environment: RETICULATE_PYTHON and PYDPOWL_PYTHON unset, then `env` set.
run_fresh_r <- function(code, env = character()) {
  rscript <- file.path(R.home("bin"), "Rscript")
  libs <- paste0("R_LIBS=", paste(.libPaths(), collapse = .Platform$path.sep))
  args <- c("-u", "RETICULATE_PYTHON", "-u", "PYDPOWL_PYTHON", libs, env, rscript, "-e", shQuote(code))
  out <- suppressWarnings(system2("env", args, stdout = TRUE, stderr = TRUE))
  paste(out, collapse = "\n")
}

test_that("an installed package finds the engine with no setting at all", {
  require_backends(dppack = FALSE)
  code <- "library(pydpowl); cfg <- pydpowl_config(); cat('PY=', cfg$python, ' BY=', cfg$chosen_by, sep = '')"
  out <- run_fresh_r(code)
  expect_match(out, "BY=the path recorded at installation", fixed = TRUE)
  expect_match(out, "PY=/")
})

test_that("RETICULATE_PYTHON takes precedence and a wrong Python gives a clear error", {
  skip_if_not(file.exists("/usr/bin/python3"), "needs /usr/bin/python3 without pydpowl")
  skip_if(system2("/usr/bin/python3", c("-c", shQuote("import pydpowl")), stdout = FALSE, stderr = FALSE) == 0,
          "/usr/bin/python3 can import pydpowl")
  out <- run_fresh_r("library(pydpowl); print(pydpowl_available()); pydpowl_config()",
                     "RETICULATE_PYTHON=/usr/bin/python3")
  expect_match(out, "[1] FALSE", fixed = TRUE)  # the second attempt reports the same choice
  expect_match(out, "the Python engine 'pydpowl' is not available: 'import pydpowl' fails in /usr/bin/python3")
  expect_match(out, "Python chosen by RETICULATE_PYTHON", fixed = TRUE)
})

test_that("PYDPOWL_PYTHON overrides the record and a missing interpreter is named", {
  out <- run_fresh_r("library(pydpowl); pydpowl_config()",
                     "PYDPOWL_PYTHON=/nonexistent/python")
  expect_match(out, "the Python executable does not exist.*Python chosen by PYDPOWL_PYTHON: /nonexistent/python")
})

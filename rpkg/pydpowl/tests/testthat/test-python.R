# Finding Python: options(pydpowl.python), PYDPOWL_PYTHON, the path recorded at
# installation, python3 on the PATH; a Python that cannot serve gives a classed
# error naming how it was chosen.

python_without_pydpowl <- function() {
  skip_if_not(file.exists("/usr/bin/python3"), "needs /usr/bin/python3 without pydpowl")
  skip_if(system2("/usr/bin/python3", c("-c", shQuote("import pydpowl")), stdout = FALSE, stderr = FALSE) == 0,
          "/usr/bin/python3 can import pydpowl")
  "/usr/bin/python3"
}

test_that("an installed package finds the engine with no setting at all, and ignores RETICULATE_PYTHON", {
  require_backends(dppack = FALSE)
  code <- "library(pydpowl); cfg <- pydpowl_config(); cat('PY=', cfg$python, ' BY=', cfg$chosen_by, sep = '')"
  out <- run_fresh_r(code, "RETICULATE_PYTHON=/nonexistent/python")
  expect_match(out, "BY=the path recorded at installation", fixed = TRUE)
  expect_match(out, "PY=/")
})

test_that("a Python without pydpowl gives a classed error naming the interpreter and the rule", {
  py <- python_without_pydpowl()
  code <- paste0("library(pydpowl); print(pydpowl_available()); ",
                 "e <- tryCatch(pydpowl_config(), error = identity); print(class(e)); cat(conditionMessage(e))")
  out <- run_fresh_r(code, paste0("PYDPOWL_PYTHON=", py))
  expect_match(out, "[1] FALSE", fixed = TRUE)
  expect_match(out, "\"pydpowl_python_missing\" \"pydpowl_error\"", fixed = TRUE)
  expect_match(out, paste0("the Python engine 'pydpowl' is not available: 'import pydpowl' fails in ", py,
                           " \\(ModuleNotFoundError: No module named 'pydpowl'\\)"))
  expect_match(out, paste0("Python chosen by PYDPOWL_PYTHON: ", py), fixed = TRUE)
})

test_that("options(pydpowl.python) comes first, and a Python that cannot start fails fast", {
  code <- paste0("library(pydpowl); options(pydpowl.python = '/bin/false'); t0 <- Sys.time(); ",
                 "try(pydpowl_config()); cat('SECS=', as.numeric(Sys.time() - t0), sep = '')")
  out <- run_fresh_r(code, "PYDPOWL_PYTHON=/nonexistent/python")
  expect_match(out, "Python could not be started (exit status 1)", fixed = TRUE)
  expect_match(out, "Python chosen by options(pydpowl.python): /bin/false", fixed = TRUE)
  secs <- as.numeric(sub(".*SECS=([0-9.e-]+).*", "\\1", out))
  expect_lt(secs, 10)
})

test_that("PYDPOWL_PYTHON overrides the record and a missing interpreter is named", {
  out <- run_fresh_r("library(pydpowl); pydpowl_config()", "PYDPOWL_PYTHON=/nonexistent/python")
  expect_match(out, "the Python executable does not exist.*Python chosen by PYDPOWL_PYTHON: /nonexistent/python")
})

test_that("after a failure the next call chooses again (the user may fix the setting in between)", {
  require_backends(dppack = FALSE)
  py <- pydpowl_config()$python
  code <- paste0("library(pydpowl); options(pydpowl.python = '/nonexistent/python'); ",
                 "print(pydpowl_available()); options(pydpowl.python = '", py, "'); ",
                 "print(pydpowl_available()); cat('BY=', pydpowl_config()$chosen_by, sep = '')")
  out <- run_fresh_r(code)
  expect_match(out, "[1] FALSE\n[1] TRUE\nBY=options(pydpowl.python)", fixed = TRUE)
})

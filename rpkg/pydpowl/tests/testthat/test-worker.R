# The Python worker: started at the first need, in a private directory, one
# per session; values cross the protocol unchanged; it exits with the session;
# a dead or out-of-step worker is replaced.

test_that("library(pydpowl) starts no Python; the first call does, once per session", {
  require_backends(dppack = FALSE)
  code <- paste0("library(pydpowl); cat('BEFORE=', is.null(pydpowl:::.pydpowl$worker), '\\n', sep = ''); ",
                 "d <- data.frame(a = c(0.1, 0.9, 0.4, 0.7)); m <- svmDP$new('l2', 1, 1); ",
                 "pid <- pydpowl_config()$worker_pid; m$fit(d, c(0, 1, 0, 1), 1, 0); ",
                 "cat('SAME=', identical(pid, pydpowl_config()$worker_pid), '\\n', sep = ''); ",
                 "cat('PID=', pid, '\\n', sep = '')")
  out <- run_fresh_r(code)
  expect_match(out, "BEFORE=TRUE", fixed = TRUE)
  expect_match(out, "SAME=TRUE", fixed = TRUE)
  pid <- sub(".*PID=([0-9]+).*", "\\1", out)
  # the R session has ended: its finalizer closed the FIFOs and the worker exited
  expect_true(wait_until(function() !process_exists(pid)), info = paste("worker", pid, "still running"))
})

test_that("the worker lives in a private directory and reports itself", {
  require_backends(dppack = FALSE)
  w <- pydpowl:::worker_get()
  expect_identical(as.character(file.info(w$dir)$mode), "700")
  expect_identical(as.character(file.info(c(w$req_path, w$resp_path))$mode), c("600", "600"))
  expect_true(startsWith(normalizePath(w$dir), normalizePath(tempdir())))
  cfg <- pydpowl_config()
  expect_named(cfg, c("python", "chosen_by", "engine_version", "package_version", "python_version", "worker_pid"))
  expect_true(process_exists(cfg$worker_pid))
  expect_match(cfg$python_version, "^3\\.[0-9]+\\.[0-9]+$")
})

test_that("values cross the protocol both ways unchanged", {
  require_backends(dppack = FALSE)
  m <- matrix(c(1.5, -2, NA, Inf, -Inf, 1e-300), 2, 3)
  args <- list(null = NULL, dbl = pi, na_dbl = NA_real_, int = 7L, na_int = NA_integer_, lgl = TRUE, na_lgl = NA,
               str = "h\u00e9llo", strs = c("a", NA, ""), vec = c(1, 2, 3), one = array(4), mat = m,
               ints = c(1L, NA, -5L), lgls = c(TRUE, FALSE), empty = numeric(0),
               nested = list(a = 1, b = list("x", 2L)), unnamed = list(1, "two"))
  back <- pydpowl:::engine("echo", args)
  expect_identical(back$null, NULL)
  expect_true("null" %in% names(back))
  expect_identical(back$dbl, pi)
  expect_identical(back$na_dbl, NA_real_)  # doubles cross bit for bit, NA (a NaN with a payload) included
  expect_identical(back$int, 7L)
  expect_null(back$na_int)  # a missing scalar is None in Python
  expect_identical(back$lgl, TRUE)
  expect_null(back$na_lgl)
  expect_identical(back$str, "h\u00e9llo")
  expect_identical(back$strs, c("a", NA, ""))
  expect_identical(back$vec, c(1, 2, 3))
  expect_identical(back$one, 4)
  expect_identical(back$mat, m)
  expect_identical(back$ints, c(1L, NA, -5L))
  expect_identical(back$lgls, c(TRUE, FALSE))
  expect_identical(back$empty, numeric(0))
  expect_identical(back$nested, list(a = 1, b = list("x", 2L)))
  expect_identical(back$unnamed, list(1, "two"))
  big <- runif(1e6)
  expect_identical(pydpowl:::engine("echo", list(x = big))$x, big)
  expect_identical(pydpowl:::engine("echo", list(seed = .Random.seed))$seed, .Random.seed)
})

test_that("an svmDP fit loads numpy and the engine only (no scikit-learn, scipy, pandas, statsmodels, numba)", {
  require_backends(dppack = FALSE)
  code <- paste0("library(pydpowl); set.seed(1); n <- 6000; X <- data.frame(a = runif(n), b = runif(n)); ",
                 "m <- svmDP$new('l2', 1, 1); m$fit(X, rbinom(n, 1, 0.5), c(1, 1), c(0, 0), add.bias = TRUE); ",
                 "mods <- pydpowl:::engine('loaded_modules', list()); ",
                 "heavy <- c('sklearn', 'scipy', 'pandas', 'statsmodels', 'numba'); ",
                 "cat(sprintf('HEAVY=[%s] NUMPY=%s\\n', paste(intersect(heavy, mods), collapse = ','), 'numpy' %in% mods))")
  out <- run_fresh_r(code)
  expect_match(out, "HEAVY=[] NUMPY=TRUE", fixed = TRUE)
})

test_that("a worker found dead is replaced at the next call, with a message", {
  require_backends(dppack = FALSE)
  w <- pydpowl:::worker_get()
  pid <- w$info$pid
  tools::pskill(pid)
  expect_true(wait_until(function() file.exists(w$status)))
  expect_message(cfg <- pydpowl_config(), sprintf("the Python worker \\(pid %d\\) had stopped", pid))
  expect_false(identical(cfg$worker_pid, pid))
  expect_false(dir.exists(w$dir))
  set.seed(1)
  expect_length(svmDP$new("l2", 1, 1)$fit(data.frame(a = c(0.2, 0.8)), c(0, 1), 1, 0)$coeff, 1L)
})

test_that("a worker that dies during a call gives a classed error; the next call starts a new one", {
  require_backends(dppack = FALSE)
  w <- pydpowl:::worker_get()
  pid <- w$info$pid
  tools::pskill(pid)
  expect_true(wait_until(function() file.exists(w$status)))
  unlink(w$status)  # as if it died after the check that precedes each call
  err <- tryCatch(pydpowl:::engine("echo", list(x = runif(1e5))), error = identity)
  expect_s3_class(err, c("pydpowl_worker_died", "pydpowl_error"))
  expect_match(conditionMessage(err), sprintf("the Python worker \\(pid %d\\) stopped during the call", pid))
  expect_match(conditionMessage(err), "The next call starts a new one.", fixed = TRUE)
  expect_false(identical(pydpowl_config()$worker_pid, pid))
})

test_that("an exchange cut short stops the worker, and the next call starts a new one", {
  require_backends(dppack = FALSE)
  pid <- pydpowl_config()$worker_pid
  # the request fails half-written (a function cannot be sent): the worker would be out of step
  expect_error(pydpowl:::engine("echo", list(a = 1, f = function(x) x)), "cannot send an object of class function")
  expect_true(wait_until(function() !process_exists(pid)))
  expect_false(identical(pydpowl_config()$worker_pid, pid))
  expect_identical(pydpowl:::engine("echo", list(a = 1))$a, 1)
})

test_that("a forked R process starts its own worker and leaves its parent's alone", {
  require_backends(dppack = FALSE)
  skip_if_not(.Platform$OS.type == "unix")
  pid <- pydpowl_config()$worker_pid
  job <- parallel::mcparallel(pydpowl_config()$worker_pid)
  child_pid <- parallel::mccollect(job)[[1L]]
  expect_true(is.numeric(child_pid) || is.integer(child_pid))
  expect_false(identical(child_pid, pid))
  expect_identical(pydpowl_config()$worker_pid, pid)
  expect_identical(pydpowl:::engine("echo", list(a = 2))$a, 2)
})

test_that("the worker exits when R closes its request FIFO", {
  require_backends(dppack = FALSE)
  w <- pydpowl:::worker_get()
  pid <- w$info$pid
  pydpowl:::worker_stop()
  expect_true(wait_until(function() !process_exists(pid)))
  expect_true(pydpowl_available())
})

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

# ---- an R session never hangs and never breaks for good (issue 22, item 6) ----------------------------

test_that("Ctrl-C during a long fit comes back within a second, stops the worker, and the next fit is right", {
  require_backends(dppack = FALSE)
  skip_if_not(.Platform$OS.type == "unix")
  code <- c(
    "library(pydpowl)", INTERRUPT_AFTER,
    "small <- data.frame(a = c(0.2, 0.8, 0.3, 0.9, 0.5)); ys <- c(0, 1, 0, 1, 1)",
    "fit_small <- function() svmDP$new('l2', Inf, 1)$fit(small, ys, 1, 0)$coeff  # eps = Inf: the exact minimiser",
    "before <- fit_small()",
    "pid <- pydpowl_config()$worker_pid",
    "set.seed(1); n <- 5e4",
    "X <- data.frame(a = runif(n), b = runif(n), c = runif(n)); y <- rbinom(n, 1, 0.5)",
    # tens of seconds on a shared 2-core machine, several seconds on any machine
    "long <- svmDP$new('l2', eps = 1, gamma = 1, kernel = 'Gaussian', D = 500)",
    "r <- interrupt_after(1, long$fit(X, y, c(1, 1, 1), c(0, 0, 0)))",
    "gone <- gone_within(pid, 1)",
    "after <- fit_small()",
    "echo <- pydpowl:::engine('echo', list(token = 'after the interrupt'))$token",
    "cat(sprintf('OUTCOME=%s LATENCY=%.3f GONE=%s SAME=%s ECHO=%s\\n', r$outcome, r$latency, gone,",
    "            identical(before, after), gsub(' ', '_', echo)))")
  out <- run_fresh_r(code, timeout = 90)
  expect_identical(field(out, "OUTCOME"), "interrupted", info = out)
  expect_lt(as.numeric(field(out, "LATENCY")), 1)
  expect_identical(field(out, "GONE"), "TRUE", info = "the worker still computes the interrupted fit")
  expect_identical(field(out, "SAME"), "TRUE", info = out)  # the next fit is the same as before the interrupt
  expect_identical(field(out, "ECHO"), "after_the_interrupt", info = out)  # no stale reply in the way
})

test_that("a worker left in the middle of an exchange is replaced: no stale answer is read as the next one", {
  require_backends(dppack = FALSE)
  w <- pydpowl:::worker_get()
  pid <- w$info$pid
  # asked, never read: its caller was interrupted, and a second interrupt cut short the clean-up
  pydpowl:::write_request(w$req, "echo", list(token = "stale"))
  w$busy <- TRUE
  Sys.sleep(0.2)  # the stale answer waits in the FIFO
  expect_identical(pydpowl:::engine("echo", list(token = "fresh"))$token, "fresh")
  expect_true(wait_until(function() !process_exists(pid)))
})

test_that("a worker that never says hello (a blocked import) times out, and Ctrl-C ends the wait at once", {
  require_backends(dppack = FALSE)
  skip_if_not(.Platform$OS.type == "unix")
  dir <- blocking_pydpowl()
  on.exit(unlink(dir, recursive = TRUE))
  code <- c(
    "library(pydpowl)", INTERRUPT_AFTER,
    "options(pydpowl.start_timeout = 2)",
    "t0 <- Sys.time(); ok <- pydpowl_available(); secs <- as.numeric(Sys.time() - t0, units = 'secs')",
    "e <- tryCatch(svmDP$new('l2', 1, 1), error = identity)",
    "cat(sprintf('AVAILABLE=%s SECS=%.2f CLASS=%s\\n', ok, secs, class(e)[1L]))",
    "cat('MESSAGE:', conditionMessage(e), '\\n')",
    "Sys.sleep(0.5)",
    "cat(sprintf('LEFT=%d\\n', length(list.files(tempdir(), '^pydpowl-worker-'))))",
    "options(pydpowl.start_timeout = 60)",
    "r <- interrupt_after(1, pydpowl_available())",
    "cat(sprintf('OUTCOME=%s LATENCY=%.3f\\n', r$outcome, r$latency))",
    "Sys.sleep(0.5)",
    "cat(sprintf('LEFT_AFTER_INTERRUPT=%d\\n', length(list.files(tempdir(), '^pydpowl-worker-'))))",
    "cat(sprintf('TEMPDIR=%s\\n', tempdir()))")
  out <- run_fresh_r(code, env = paste0("PYTHONPATH=", dir), timeout = 60)
  expect_identical(field(out, "AVAILABLE"), "FALSE", info = out)
  expect_lt(as.numeric(field(out, "SECS")), 10)
  expect_identical(field(out, "CLASS"), "pydpowl_python_missing")
  expect_match(out, "the Python worker \\(pid [0-9]+\\) did not say hello within 2 s")
  expect_identical(field(out, "LEFT"), "0")
  expect_identical(field(out, "OUTCOME"), "interrupted", info = out)
  expect_lt(as.numeric(field(out, "LATENCY")), 1)
  expect_identical(field(out, "LEFT_AFTER_INTERRUPT"), "0")
  tmp <- field(out, "TEMPDIR")
  expect_false(is.na(tmp))
  expect_length(processes_mentioning(tmp), 0L)  # every worker that hung was stopped
})

test_that("options(pydpowl.call_timeout) bounds the wait for an answer; the worker is stopped", {
  require_backends(dppack = FALSE)
  skip_if_not(.Platform$OS.type == "unix")
  dir <- blocking_pydpowl(hang_submodule = TRUE)
  on.exit(unlink(dir, recursive = TRUE))
  code <- c(
    "library(pydpowl)", INTERRUPT_AFTER,
    "options(pydpowl.call_timeout = 2)",
    "pid <- pydpowl_config()$worker_pid",
    "t0 <- Sys.time(); e <- tryCatch(svmDP$new('l2', 1, 1), error = identity)",
    "secs <- as.numeric(Sys.time() - t0, units = 'secs')",
    "gone <- gone_within(pid, 1)",
    "cat(sprintf('SECS=%.2f CLASS=%s GONE=%s\\n', secs, paste(class(e), collapse = ','), gone))",
    "cat('MESSAGE:', conditionMessage(e), '\\n')")
  out <- run_fresh_r(code, env = paste0("PYTHONPATH=", dir), timeout = 60)
  expect_lt(as.numeric(field(out, "SECS")), 10)
  expect_match(field(out, "CLASS"), "^pydpowl_timeout,pydpowl_error,error,condition$", info = out)
  expect_match(out, "did not answer within 2 s (options(pydpowl.call_timeout))", fixed = TRUE)
  expect_identical(field(out, "GONE"), "TRUE")
})

test_that("a removed tempdir() is created again, with a message, and calls go on", {
  require_backends(dppack = FALSE)
  code <- c(
    "library(pydpowl)",
    "d <- data.frame(a = c(0.2, 0.8, 0.3, 0.9)); y <- c(0, 1, 0, 1)",
    "fit <- function() svmDP$new('l2', Inf, 1)$fit(d, y, 1, 0)$coeff  # eps = Inf: deterministic",
    "first <- fit()",
    "for (i in 1:2) {",
    "  old <- tempdir(); unlink(old, recursive = TRUE)",
    "  again <- withCallingHandlers(fit(), message = function(m) cat('MESSAGE:', conditionMessage(m)))",
    "  cat(sprintf('ROUND%d=%s NEWDIR=%s\\n', i, identical(again, first), dir.exists(tempdir())))",
    "}")
  out <- run_fresh_r(code)
  expect_identical(field(out, "ROUND1"), "TRUE", info = out)
  expect_identical(field(out, "ROUND2"), "TRUE", info = out)
  expect_identical(field(out, "NEWDIR"), "TRUE")
  expect_match(out, "MESSAGE: pydpowl: R's temporary directory .* had been removed")
})

test_that("the worker of a forked process leaves no directory behind once the fork has ended", {
  require_backends(dppack = FALSE)
  skip_if_not(.Platform$OS.type == "unix")
  code <- c(
    "library(pydpowl)",
    "parent <- pydpowl_config()$worker_pid",
    "pids <- unlist(parallel::mclapply(1:6, function(i) pydpowl_config()$worker_pid, mc.cores = 2,",
    "                                  mc.preschedule = FALSE))",
    "deadline <- Sys.time() + 10",
    "count <- function() length(list.files(tempdir(), '^pydpowl-worker-'))",
    "while (count() > 1L && Sys.time() < deadline) Sys.sleep(0.05)",
    "cat(sprintf('WORKERS=%d LEFT=%d ALIVE=%d PARENT_OK=%s\\n', length(unique(pids)), count(),",
    "            sum(vapply(pids, function(p) isTRUE(tools::pskill(p, 0L)), TRUE)),",
    "            identical(pydpowl_config()$worker_pid, parent)))")
  out <- run_fresh_r(code, timeout = 180)
  expect_identical(field(out, "WORKERS"), "6", info = out)
  expect_identical(field(out, "LEFT"), "1", info = out)  # the parent's own
  expect_identical(field(out, "ALIVE"), "0")
  expect_identical(field(out, "PARENT_OK"), "TRUE")
})

test_that("a timeout option that is not a number of seconds is refused, naming it; the worker is kept", {
  require_backends(dppack = FALSE)
  pid <- pydpowl_config()$worker_pid
  old <- options(pydpowl.call_timeout = "soon")
  on.exit(options(old))
  expect_error(pydpowl:::engine("echo", list()), class = "pydpowl_argument_error",
               regexp = "options(pydpowl.call_timeout) must be a number of seconds in (0, Inf] or NULL (no limit), got \"soon\".",
               fixed = TRUE)
  options(pydpowl.call_timeout = -1)
  expect_error(pydpowl:::engine("echo", list()), "got -1.", fixed = TRUE)
  options(old)
  expect_identical(pydpowl_config()$worker_pid, pid)
  pydpowl:::worker_stop()
  old <- options(pydpowl.start_timeout = NA)
  expect_error(pydpowl_config(), "options(pydpowl.start_timeout) must be a number of seconds in (0, Inf] or NULL (the default, 60 s), got NA.",
               fixed = TRUE)
  expect_false(pydpowl_available())
  options(old)
  expect_true(pydpowl_available())
})

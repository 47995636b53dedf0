# DPpack's own help examples, run unchanged once with DPpack and once with pydpowl.
#
# They run unchanged with pydpowl's default, noise from operating-system entropy (the last test). To compare
# numbers with DPpack, pydpowl replays R's stream (options(pydpowl.rng = "R"), the validation opt-in, set around
# the run; the example's code is not changed, and the replay warning is expected and muffled).
#
# The examples are read from the installed DPpack's help (tools::Rd_db, tools::Rd2ex: the code
# example(topic, package = "DPpack") runs) at test time, not copied here. Each runs in a fresh
# environment whose parent holds the exports of one package, which is what replacing `DPpack::` by
# `pydpowl::` (or library(DPpack) by library(pydpowl)) does to the unprefixed names; the code itself
# is not changed. Both runs start from the same set.seed(), so they build the same data.
#
# Asserted after every top-level expression: .Random.seed is identical (every DPpack draw is made,
# in DPpack's order, and the solver-smoothing noise of pydpowl's proven default does not advance R's
# stream). At the end, for every fitted model of the example: the coefficient gap, the share of equal
# predictions and the tuning's choice.
#
# Tolerance on coefficients: pydpowl's release differs from DPpack's by (a) DPpack's optimiser error
# (optim BFGS, reltol 1e-8; nloptr MMA, xtol_rel 1e-4: gaps of about 1e-3 relative, measured in
# docs/dppack_family.md) and (b) the solver-smoothing noise of objective perturbation, of norm
# Gamma(d, rate = kappa eps / (2 r)), r = tol / mu <= n tol / gamma, kappa = sqrt(n tol / 2): mean at most
# d sqrt(8 n tol) / (eps gamma) in DPpack's scaled space, 1.6e-3 for these examples (n <= 400, d <= 3,
# gamma = eps = 1; less for LinearRegressionDP, whose modulus includes Delta). Both stay below 1e-2
# relative to max(1, max|coeff|), the bound used here and in the Python replays.

example_code <- function(topic) {
  db <- tools::Rd_db("DPpack")
  out <- tempfile(fileext = ".R")
  on.exit(unlink(out))
  tools::Rd2ex(db[[paste0(topic, ".Rd")]], out, commentDontrun = TRUE)
  parse(out, keep.source = FALSE)
}

exports_env <- function(pkg) {
  ns <- asNamespace(pkg)
  env <- new.env(parent = globalenv())
  for (name in getNamespaceExports(pkg)) assign(name, get(name, envir = ns), envir = env)
  env
}

# Run the example's expressions one by one; .Random.seed after each one, and the final environment. With
# replay = TRUE, pydpowl replays R's stream (options(pydpowl.rng = "R")); any warning but replay's is an error.
run_example <- function(exprs, pkg, seed, replay = FALSE) {
  env <- new.env(parent = exports_env(pkg))
  old <- options(pydpowl.rng = if (replay) "R")
  on.exit(options(old))
  set.seed(seed)
  seeds <- vector("list", length(exprs))
  withCallingHandlers(
    for (i in seq_along(exprs)) {
      eval(exprs[[i]], envir = env)
      seeds[[i]] <- get(".Random.seed", envir = globalenv())
    },
    warning = function(w) {
      if (replay && inherits(w, "pydpowl_replay_stream")) invokeRestart("muffleWarning")
      stop("the example warned: ", conditionMessage(w), call. = FALSE)
    })
  list(env = env, seeds = seeds)
}

fitted_models <- function(env) {
  names <- ls(env)
  names[vapply(names, function(n) inherits(get(n, envir = env), "R6") && !is.null(get(n, envir = env)$coeff),
               logical(1))]
}

compare_example <- function(topic, seed) {
  exprs <- example_code(topic)
  a <- run_example(exprs, "DPpack", seed)
  b <- run_example(exprs, "pydpowl", seed, replay = TRUE)
  for (i in seq_along(exprs)) {
    expect_identical(b$seeds[[i]], a$seeds[[i]],
                     info = sprintf("%s (seed %d): .Random.seed after expression %d: %s", topic, seed, i,
                                    paste(deparse(exprs[[i]]), collapse = " ")))
  }
  models <- fitted_models(a$env)
  expect_setequal(fitted_models(b$env), models)
  gaps <- numeric(0)
  for (name in models) {
    ca <- as.numeric(get(name, envir = a$env)$coeff)
    cb <- as.numeric(get(name, envir = b$env)$coeff)
    expect_length(cb, length(ca))
    gaps[name] <- max(abs(ca - cb)) / max(1, abs(ca))
    expect_lte(gaps[[name]], 1e-2, label = sprintf("%s (seed %d): coefficient gap of %s", topic,
                                                                      seed, name))
    for (field in c("eps", "gamma", "delta", "perturbation.method", "kernel", "D", "kernel.param", "prefilter",
                    "zeta", "lambda", "c")) {
      expect_identical(get(name, envir = b$env)[[field]], get(name, envir = a$env)[[field]],
                       info = sprintf("%s: field %s of %s", topic, field, name))
    }
  }
  pa <- get("predicted.y", envir = a$env)
  pb <- get("predicted.y", envir = b$env)
  expect_identical(dim(pb), dim(pa))
  classes <- all(pa %in% c(0, 1))
  agreement <- if (classes) mean(pa == pb) else max(abs(pa - pb))
  if (classes) expect_gte(agreement, 0.95) else expect_lte(agreement, 1e-2 * max(1, abs(pa)))
  if (exists("tuned.model", envir = a$env, inherits = FALSE)) {
    expect_identical(get("tuned.model", envir = b$env)$gamma, get("tuned.model", envir = a$env)$gamma,
                     info = sprintf("%s (seed %d): the tuning selects the same model", topic, seed))
  }
  list(topic = topic, seed = seed, gap = max(gaps), agreement = agreement, classes = classes,
       seeds_identical = identical(a$seeds, b$seeds))
}

examples <- c("svmDP", "LogisticRegressionDP", "LinearRegressionDP", "tune_classification_model",
              "tune_linear_regression_model")

for (topic in examples) {
  test_that(sprintf("DPpack's help example of %s, replayed with pydpowl, agrees with DPpack", topic), {
    require_backends()
    for (seed in c(1L, 42L, 2023L)) {
      res <- compare_example(topic, seed)
      if (nzchar(Sys.getenv("PYDPOWL_REPORT_EXAMPLES"))) {
        message(sprintf("[examples] %s seed %d: coefficient gap / max(1, |coeff|) %.2e, %s %.4g, .Random.seed identical %s",
                        topic, seed, res$gap, if (res$classes) "prediction agreement" else "max prediction gap",
                        res$agreement, res$seeds_identical))
      }
    }
  })
}

test_that("the examples are DPpack's: they exist and build their models with the family's classes", {
  require_backends()
  for (topic in examples) {
    code <- paste(deparse(example_code(topic)), collapse = "\n")
    expect_match(code, "\\$new\\(", info = topic)
  }
})

test_that("DPpack's help examples run unchanged with pydpowl's default (secure noise), without a warning", {
  require_backends()
  for (topic in examples) {
    exprs <- example_code(topic)
    a <- run_example(exprs, "DPpack", 1L)
    b <- run_example(exprs, "pydpowl", 1L)  # the default: noise from operating-system entropy, no warning
    models <- fitted_models(a$env)
    expect_setequal(fitted_models(b$env), models)
    for (name in models) {
      mb <- get(name, envir = b$env)
      expect_length(mb$coeff, length(get(name, envir = a$env)$coeff))
      expect_true(all(is.finite(mb$coeff)), info = sprintf("%s: %s", topic, name))
      expect_identical(mb$rng, NULL)  # no replay asked for
    }
    expect_identical(dim(get("predicted.y", envir = b$env)), dim(get("predicted.y", envir = a$env)))
  }
})

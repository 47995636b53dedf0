# Tests of the R front end (rpkg/pydpowl), run by `make test`.
#
#   Rscript scripts/run_r_tests.R            # testthat on the installed package, then R CMD check
#   Rscript scripts/run_r_tests.R --no-check # testthat only
#
# 1. The package's testthat tests run against the INSTALLED package (make setup
#    installs it); an installed copy older than the sources is an error, so a
#    stale install can never pass for the current code.
# 2. R CMD check --no-manual on a tarball built in a temporary directory with
#    its vignette (code, documentation and examples checks, the vignette's code
#    run and its output re-built, and the tests once more through
#    tests/testthat.R). WARNING or ERROR fails; NOTEs are shown.
# Missing backends (the Python engine, DPpack) are errors, not skips
# (PYDPOWL_REQUIRE_R=1). Exit status: 0 when everything passed, 1 otherwise. A failed check's directory
# (its logs) is kept outside R's session directory, under PYDPOWL_CHECK_DIR (default: the temp directory).

args <- commandArgs(trailingOnly = TRUE)
run_check <- !("--no-check" %in% args)

script <- sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))
root <- normalizePath(file.path(dirname(script), ".."))
pkg_dir <- file.path(root, "rpkg", "pydpowl")
Sys.setenv(PYDPOWL_REQUIRE_R = "1")
if (!nzchar(Sys.getenv("PYDPOWL_PYTHON")) && file.exists(file.path(root, ".venv", "bin", "python"))) {
  Sys.setenv(PYDPOWL_PYTHON = file.path(root, ".venv", "bin", "python"))  # for R CMD check's own install
}

die <- function(...) {
  message("[run_r_tests] FAILED: ", ...)
  quit(status = 1L, save = "no")
}
say <- function(...) message("[run_r_tests] ", ...)

# ---- 1. the installed package is current ----------------------------------------
if (!requireNamespace("pydpowl", quietly = TRUE)) {
  die("the R package pydpowl is not installed; run `make setup` (or R CMD INSTALL rpkg/pydpowl).")
}
src_version <- read.dcf(file.path(pkg_dir, "DESCRIPTION"))[1L, "Version"]
if (as.character(utils::packageVersion("pydpowl")) != src_version) {
  die("installed pydpowl ", utils::packageVersion("pydpowl"), " differs from rpkg/pydpowl ", src_version,
       "; run `make setup`.")
}
built <- utils::packageDescription("pydpowl")$Built
built_time <- as.POSIXct(strsplit(built, "; ")[[1L]][3L], tz = "UTC")
sources <- list.files(pkg_dir, recursive = TRUE, full.names = TRUE, all.files = TRUE)
sources <- sources[!grepl("/(tests|\\.git)/|/inst/python-path$|\\.pyc$|/__pycache__/|/src/.*\\.(o|so|dll)$", sources)]
newest <- max(file.mtime(sources))
if (!is.na(built_time) && newest > built_time + 1) {
  changed <- sources[file.mtime(sources) > built_time + 1]
  die("the installed pydpowl (built ", format(built_time, tz = "UTC"), " UTC) is older than its sources (",
       paste(basename(utils::head(changed, 3L)), collapse = ", "), "); run `make setup` ",
       "(or R CMD INSTALL rpkg/pydpowl).")
}

# ---- 2. testthat against the installed package ------------------------------------
say("testthat: ", file.path("rpkg", "pydpowl", "tests", "testthat"), " against the installed package")
t0 <- Sys.time()
res <- tryCatch(
  as.data.frame(testthat::test_dir(file.path(pkg_dir, "tests", "testthat"), package = "pydpowl",
                                   load_package = "installed", reporter = "summary",
                                   stop_on_failure = FALSE, stop_on_warning = FALSE)),
  error = function(e) die("testthat could not run: ", conditionMessage(e))
)
n_fail <- sum(res$failed)
n_err <- sum(res$error)
say(sprintf("testthat: %d tests, %d expectations, %d failed, %d errors, %d skipped, %d warnings (%.1f s)",
            nrow(res), sum(res$nb), n_fail, n_err, sum(res$skipped), sum(res$warning),
            as.numeric(difftime(Sys.time(), t0, units = "secs"))))
if (n_fail > 0L || n_err > 0L) die("testthat reported failures or errors.")

# ---- 3. R CMD check on a built tarball -----------------------------------------------
if (run_check) {
  t0 <- Sys.time()
  # not under tempdir(): R removes its session directory when it quits, also after die(), which took the
  # check's logs (00check.log, 00install.out, the tests' .Rout.fail) with it; removed below only on success
  work <- tempfile("pydpowl-check-", tmpdir = Sys.getenv("PYDPOWL_CHECK_DIR", dirname(tempdir())))
  dir.create(work, recursive = TRUE)
  r_bin <- file.path(R.home("bin"), "R")
  old <- setwd(work)  # R CMD build and check write into the working directory
  build_out <- system2(r_bin, c("CMD", "build", "--no-manual", shQuote(pkg_dir)),
                       stdout = TRUE, stderr = TRUE)
  tarball <- list.files(work, pattern = "^pydpowl_.*\\.tar\\.gz$", full.names = TRUE)
  if (length(tarball) != 1L) {
    setwd(old)
    die("R CMD build did not produce a tarball (kept in ", work, "):\n", paste(build_out, collapse = "\n"))
  }
  check_out <- system2(r_bin, c("CMD", "check", "--no-manual", shQuote(basename(tarball))),
                       stdout = TRUE, stderr = TRUE, env = "_R_CHECK_SYSTEM_CLOCK_=FALSE")
  setwd(old)
  status_line <- grep("^Status:", check_out, value = TRUE)
  problems <- grep("\\.\\.\\. (WARNING|ERROR|NOTE)$", check_out)
  for (i in problems) {
    block_end <- min(c(grep("^\\* ", check_out[-seq_len(i)])[1L] + i - 1L, length(check_out)), na.rm = TRUE)
    message(paste(check_out[i:block_end], collapse = "\n"))
  }
  say(sprintf("R CMD check: %s (%.1f s)", if (length(status_line)) status_line else "no status line",
              as.numeric(difftime(Sys.time(), t0, units = "secs"))))
  # every vignette must have been built into the tarball, its code run and its output re-built (not skipped)
  block_of <- function(step) {  # the lines of one "* checking ..." step
    at <- grep(step, check_out, fixed = TRUE)
    if (length(at) != 1L) return(character())
    starts <- grep("^\\* ", check_out)
    check_out[at:(min(c(starts[starts > at], length(check_out) + 1L)) - 1L)]
  }
  vignettes <- list.files(file.path(pkg_dir, "vignettes"), pattern = "\\.Rmd$")
  ran <- block_of("checking running R code from vignettes")
  vignette_ok <- c(vapply(vignettes, function(v) any(grepl(paste0(v, ".*OK$"), ran, fixed = FALSE)), logical(1)),
                   `re-built` = any(grepl("\\.\\.\\. OK$", block_of("checking re-building of vignette outputs"))))
  say("vignettes: ", paste(sprintf("%s %s", names(vignette_ok), ifelse(vignette_ok, "OK", "NOT RUN")), collapse = "; "))
  if (length(vignettes) == 0L || !all(vignette_ok)) {
    die("R CMD check did not run every vignette and re-build its output (kept in ", work, "):\n",
        paste(grep("vignette", check_out, value = TRUE), collapse = "\n"))
  }
  if (length(status_line) == 0L || grepl("WARNING|ERROR", status_line)) {
    log <- file.path(work, "pydpowl.Rcheck", "00check.log")
    if (file.exists(log)) message(paste(utils::tail(readLines(log), 40L), collapse = "\n"))
    die("R CMD check reported a WARNING or an ERROR (kept in ", work, ").")
  }
  unlink(work, recursive = TRUE)
} else {
  say("R CMD check skipped (--no-check)")
}
say("all R front-end checks passed")

# lintr on the R package rpkg/pydpowl (`make check`); exits 1 when any lint is found.
# The package code and the vignette: rpkg/pydpowl/.lintr, i.e. lintr's default linters with
#   - lines up to 120 characters, as in the Python (pycodestyle's max-line-length in setup.cfg);
#   - object names also in SNAKE_CASE (constants such as .REQUEST_MAGIC), dotted.case and CamelCase
#     (DPpack's argument and class names, kept so that DPpack scripts run unchanged);
#   - no cyclocomp_linter: the front end's argument checks are flat sequences of `if (...) arg_error(...)`,
#     one branch per check, which the complexity count penalises though they nest nothing.
# The tests (tests/testthat): the same linters except
#   - object_usage_linter: testthat's expect_*() and the helper-*.R functions are attached when
#     testthat runs the files, so lintr reports each use as an undefined global;
#   - line_length_linter: expectations match the engine's whole error messages (anchored regexps that
#     one can grep for in the sources); splitting them would hide what is matched.
pkg <- file.path(dirname(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))), "..", "rpkg",
                 "pydpowl")
pkg <- normalizePath(pkg)
lints <- lintr::lint_package(pkg)
test_linters <- lintr::linters_with_defaults(
  object_name_linter = lintr::object_name_linter(c("snake_case", "SNAKE_CASE", "dotted.case", "CamelCase",
                                                   "camelCase", "symbols")),
  cyclocomp_linter = NULL, object_usage_linter = NULL, line_length_linter = NULL
)
test_lints <- lintr::lint_dir(file.path(pkg, "tests", "testthat"), linters = test_linters, parse_settings = FALSE)
all <- c(as.data.frame(lints)$filename, as.data.frame(test_lints)$filename)
if (length(lints)) print(lints)
if (length(test_lints)) print(test_lints)
cat(sprintf("lintr: %d lint(s) in the package and the vignette, %d in the tests\n", length(lints), length(test_lints)))
quit(status = if (length(all)) 1L else 0L)

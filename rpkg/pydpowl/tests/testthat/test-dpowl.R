# dpowl(): the formula and matrix interfaces, treatment codings, S3 methods,
# agreement with svmDP/DPpack, and input errors.

cyp <- function(n = 1459, seed = 5) {
  d <- pydpowl_data("cyp_guides_style", n = n, seed = seed)
  d$arm <- factor(ifelse(d$treatment > 0, "guided", "standard"), levels = c("standard", "guided"))
  d
}

# Replays R's stream (the tests compare fits after the same set.seed); the trial's known probabilities: C = 0;
# the paper's mechanism (output perturbation, OWL weights, h = 0.5): what svmDP does with weights.
fit_formula <- function(d, eps = 1, seed = 10, ...) {
  set.seed(seed)
  with_replay(dpowl(~ age + male + nonwhite + mdd, data = d, treatment = arm, benefit = benefit,
                    propensity = propensity, epsilon = eps, gamma = 75,
                    weights_upper_bound = attr(d, "weights_upper_bound"), bounds = attr(d, "bounds"),
                    weight_sensitivity = 0, mechanism = "output", residual = FALSE, huber_h = 0.5, ...))
}

test_that("dpowl equals svmDP (same seed) and the non-private rule matches DPpack within the bound", {
  require_backends()
  d <- cyp()
  data <- svm_data("cyp_guides_style", 1459, seed = 5)
  fit <- fit_formula(d, eps = 2, seed = 10)
  set.seed(10)
  m <- svmDP$new("l2", 2, 75, perturbation.method = "output")
  with_replay(m$fit(data$X, data$y, data$upper, data$lower, add.bias = TRUE, weights = data$w,
                    weights.upper.bound = data$W))
  expect_equal(unname(coef(fit)), m$coeff, tolerance = 1e-12)
  expect_named(coef(fit), c("(Intercept)", "age", "male", "nonwhite", "mdd"))

  set.seed(1)
  exact <- dpowl(as.matrix(data$X), treatment = data$A, benefit = data$benefit, propensity = data$propensity,
                 epsilon = Inf, gamma = 75, weights_upper_bound = data$W, bounds = list(data$lower, data$upper),
                 weight_sensitivity = 0, mechanism = "output", residual = FALSE, huber_h = 0.5)
  set.seed(1)
  r <- DPpack::svmDP$new("l2", Inf, 75, perturbation.method = "output")
  r$fit(data$X, data$y, data$upper, data$lower, add.bias = TRUE, weights = data$w, weights.upper.bound = data$W)
  ref <- ref_scaled_design(data$X, data$lower, data$upper, TRUE)
  chk <- convexity_check(r$coeff * ref$scale, unname(coef(exact)) * ref$scale, ref$Z, data$A,
                         pmin(data$w, data$W), 75, 0.5)
  expect_within_convexity_bound(chk, "dpowl matrix interface, CYP-style, eps=Inf")
})

test_that("treatment codings (factor, logical, 0/1, -1/1) give the same rule, predicted in the user's coding", {
  require_backends(dppack = FALSE)
  d <- cyp(400, seed = 2)
  base <- fit_formula(d)
  # character labels are coded as factor() sorts them ("control" first), numbers in their order (0 first)
  for (tr in list(d$arm == "guided", as.numeric(d$arm == "guided"), d$treatment, d$treatment + 1,
                  ifelse(d$arm == "guided", "treated", "control"))) {
    d$tr <- tr
    set.seed(10)
    alt <- with_replay(dpowl(~ age + male + nonwhite + mdd, data = d, treatment = tr, benefit = benefit,
                             propensity = propensity, epsilon = 1, gamma = 75, weight_sensitivity = 0,
                             weights_upper_bound = attr(d, "weights_upper_bound"), bounds = attr(d, "bounds"),
                             mechanism = "output", residual = FALSE, huber_h = 0.5))
    expect_identical(coef(alt), coef(base))
    p <- predict(alt, d)
    expect_identical(class(p), class(tr))
  }
  p <- predict(base, d)
  expect_s3_class(p, "factor")
  expect_identical(levels(p), c("standard", "guided"))
  f <- predict(base, d, type = "decision")
  expect_identical(as.character(p), ifelse(f > 0, "guided", "standard"))
  expect_identical(predict(base, d, type = "label"), ifelse(f > 0, 1, -1))
  expect_equal(f, unname(coef(base)[1] + as.matrix(d[, c("age", "male", "nonwhite", "mdd")]) %*% coef(base)[-1])[, 1])
})

test_that("factor predictors become 0/1 dummies with default bounds [0, 1]", {
  require_backends(dppack = FALSE)
  d <- cyp(300, seed = 3)
  d$sex <- factor(ifelse(d$male == 1, "M", "F"))
  b <- attr(d, "bounds")
  set.seed(4)
  with_factor <- with_replay(dpowl(~ age + sex + nonwhite + mdd, data = d, treatment = arm, benefit = benefit,
                                   propensity = propensity, epsilon = 1, gamma = 75, weights_upper_bound = 27.2,
                                   weight_sensitivity = 0,
                                   bounds = list(lower = c(age = 18, nonwhite = 0, mdd = 0),
                                                 upper = c(age = 89, nonwhite = 1, mdd = 1))))
  set.seed(4)
  with_numeric <- with_replay(dpowl(~ age + male + nonwhite + mdd, data = d, treatment = arm, benefit = benefit,
                                    propensity = propensity, epsilon = 1, gamma = 75, weights_upper_bound = 27.2,
                                    bounds = b, weight_sensitivity = 0))
  expect_identical(unname(coef(with_factor)), unname(coef(with_numeric)))
  expect_identical(names(coef(with_factor))[3], "sexM")
  expect_identical(predict(with_factor, d[1:50, ]), predict(with_numeric, d[1:50, ]))
})

test_that("print, summary and coef describe the release", {
  require_backends(dppack = FALSE)
  d <- cyp(300, seed = 3)
  fit <- fit_formula(d, eps = 0.5)
  out <- capture.output(print(fit))
  expect_true(any(grepl("epsilon = 0.5, gamma = 75", out)))
  # the number of rows is private unless declared public (issue 21.1): neither print nor summary states it
  expect_false(any(grepl("n = 300", c(out, capture.output(print(summary(fit)))))))
  s <- summary(fit)
  expect_s3_class(s, "summary.dpowl")
  expect_equal(s$settings[["sensitivity"]], (2 * attr(d, "weights_upper_bound") + 2 * 300 * 1e-10) / 75,
               tolerance = 1e-14)
  expect_equal(s$settings[["expected_noise_norm"]], 5 / (0.5 / s$settings[["sensitivity"]]))
  txt <- capture.output(print(s))
  expect_true(any(grepl("standard -> -1, guided -> \\+1", txt)))
  expect_true(any(grepl("R's stream \\(rng = \"R\": replay of set.seed, NOT private\\)", txt)))
  expect_true(any(grepl("^age ", txt)))
  expect_identical(coef(fit), fit$coefficients)
  expect_null(fit$data)
  expect_false(any(vapply(unclass(fit), function(v) is.numeric(v) && length(v) == nrow(d), logical(1))))
})

test_that("rng = 'system' leaves R's generator alone; rng = 'R' follows set.seed and says so in print", {
  require_backends(dppack = FALSE)
  d <- cyp(200, seed = 6)
  set.seed(8)
  before <- .Random.seed
  a <- fit_formula(d, seed = 8, rng = "system")
  expect_identical(.Random.seed, before)
  expect_identical(a$rng, "system")
  b <- fit_formula(d, seed = 8, rng = "system")
  expect_false(isTRUE(all.equal(coef(a), coef(b))))
  r <- fit_formula(d, seed = 8)
  expect_identical(r$rng, "R")
  expect_identical(coef(fit_formula(d, seed = 8)), coef(r))
  expect_true(any(grepl("NOTE: rng = \"R\".*NOT private", capture.output(print(r)))))
  expect_false(any(grepl("NOTE: rng", capture.output(print(a)))))
})

test_that("a logistic propensity model sets C > 0 and a larger sensitivity", {
  require_backends(dppack = FALSE)
  d <- cyp(300, seed = 9)
  fit <- suppressWarnings(dpowl(~ age + male + nonwhite + mdd, data = d, treatment = arm, benefit = benefit,
                                propensity = propensity_logistic(benefit_bound = log(24 * 365), ridge = 0.1),
                                epsilon = 1, gamma = 75, weights_upper_bound = 40, bounds = attr(d, "bounds")))
  expect_gt(fit$C, 0)
  expect_equal(fit$sensitivity, (fit$C + 2 * 40 + 2 * 300 * 1e-10) / 75, tolerance = 1e-14)
  expect_error(propensity_logistic(benefit_bound = -1),
               regexp = "^benefit_bound must be in \\(0, Inf\\), got benefit_bound = -1\\.$", class = "pydpowl_value_error")
  expect_error(propensity_logistic(benefit_bound = 1, ridge = -0.5), regexp = "^ridge must be in \\[0, Inf\\), got ridge = -0\\.5\\.$")
  expect_error(propensity_logistic(benefit_bound = 1, hessian_lower_bound = 0), regexp = "^hessian_lower_bound must be in \\(0, Inf\\)")
  expect_identical(unclass(propensity_logistic(benefit_bound = 2L, ridge = 0)),
                   list(benefit_bound = 2, logit_bound = 3, ridge = 0, hessian_lower_bound = NULL,
                        hessian_bound_kind = "hessian", assume_hessian_bound = FALSE, fitted_on = "private"))
})

test_that("dpowl input errors name the argument", {
  require_backends(dppack = FALSE)
  d <- cyp(100, seed = 1)
  b <- attr(d, "bounds")
  call_dpowl <- function(..., data = d) {
    args <- list(~ age + male + nonwhite + mdd, data = data, treatment = quote(arm), benefit = quote(benefit),
                 propensity = 2 / 3, epsilon = 1, gamma = 75, weights_upper_bound = 30, bounds = b)
    new <- list(...)
    args[names(new)] <- new
    do.call(dpowl, args)
  }
  expect_error(call_dpowl(epsilon = 0), regexp = "^epsilon must be in \\(0, Inf\\], got epsilon = 0\\.$",
               class = "pydpowl_value_error")
  expect_error(call_dpowl(gamma = -2), regexp = "^gamma must be in \\(0, Inf\\), got gamma = -2\\.$")
  expect_error(call_dpowl(weights_upper_bound = NA), regexp = "^weights_upper_bound must not be NA \\(a missing value\\)",
               class = "pydpowl_argument_error")
  expect_error(call_dpowl(weights_upper_bound = NULL), regexp = "^weights_upper_bound must be a real number, got NULL\\.$",
               class = "pydpowl_type_error")
  expect_error(call_dpowl(weights_upper_bound = "30"),
               regexp = "^weights_upper_bound must be a real number, got character\\.$", class = "pydpowl_type_error")
  expect_error(call_dpowl(huber_h = 0), regexp = "^huber_h must be in \\(0, Inf\\)")
  expect_error(call_dpowl(propensity = 1),
               regexp = "^propensity \\(the probability of treatment \\+1\\) must be in \\(0, 1\\), got propensity = 1\\.$")
  expect_error(call_dpowl(propensity = rep(0.5, 99)),
               regexp = "^propensity must have length 100 \\(one per subject\\), got length 99\\.$")
  expect_error(call_dpowl(propensity = c(0, rep(0.5, 99))),
               regexp = paste0("^propensity must be in \\(0, 1\\] \\(P\\(A_i \\| x_i\\) of the received treatment\\); ",
                               "1 of 100 entries are outside \\(first at position 1\\)\\.$"))
  expect_error(call_dpowl(bounds = list(lower = c(18, 0, 0), upper = c(89, 1, 1))),
               regexp = "bounds\\$lower must have length 4 .*got length 3")
  expect_error(call_dpowl(bounds = list(lower = c(age = 18), upper = c(age = 89))),
               regexp = "bounds\\$lower has no value for feature\\(s\\) 'male', 'nonwhite', 'mdd'")
  expect_error(call_dpowl(bounds = list(lower = c(agee = 18), upper = c(age = 89))),
               regexp = "bounds\\$lower names unknown feature\\(s\\) 'agee'")
  dn <- d
  dn$age[c(2, 9)] <- NA
  expect_error(call_dpowl(data = dn), regexp = "data has missing values \\(NA\\) in 'age' \\(2 row\\(s\\): 2, 9\\)")
  dn <- d
  dn$benefit[3] <- NA
  expect_error(call_dpowl(data = dn),
               regexp = "^benefit must be finite; it has 1 NaN and 0 infinite entries of 100 at position\\(s\\) 3\\.")
  dn$benefit[3] <- -1
  expect_error(call_dpowl(data = dn),
               regexp = paste0("^benefit must be non-negative \\(OWL weights are benefit / propensity\\); 1 of 100 ",
                               "entries are negative \\(first at position 3\\)\\. Give benefit_bounds"))
  dn$benefit[3] <- 1
  dn$age[4] <- 200
  expect_error(call_dpowl(data = dn, bounds = list(lower = c(age = 89, male = 0, nonwhite = 0, mdd = 0),
                                                   upper = c(age = 18, male = 1, nonwhite = 1, mdd = 1))),
               regexp = "^bounds\\$lower must be <= bounds\\$upper for every feature; reversed at position\\(s\\) 1\\.$")
  dn <- d
  dn$arm[5] <- NA
  expect_error(call_dpowl(data = dn), regexp = "treatment has 1 missing value\\(s\\) \\(NA\\) at position\\(s\\) 5")
  dn <- d
  dn$three <- factor(rep(c("a", "b", "c"), length.out = 100))
  expect_error(call_dpowl(data = dn, treatment = quote(three)),
               regexp = paste0("^propensity = 0.666666666666667: one number means balanced randomisation, 1/3 for the ",
                               "3 arms; for unequal allocation give a named vector with one probability per level, ",
                               "summing to 1 \\(names \"a\", \"b\", \"c\"\\), or an n x 3 matrix"),
               class = "pydpowl_value_error")
  dn$three <- factor(rep(c("a", "c"), length.out = 100), levels = c("a", "b", "c"))
  expect_error(call_dpowl(data = dn, treatment = quote(three)),
               regexp = "^treatment has level\\(s\\) \"b\" that no subject received: a rule learns only arms that occur")
  expect_error(call_dpowl(treatment = quote(rep("g", 100))),
               regexp = paste0("^treatment must contain at least two arms \\(a rule chooses between treatments\\); it has ",
                               "one level only, \"g\"\\.$"), class = "pydpowl_argument_error")
  expect_error(call_dpowl(treatment = quote(treatment * Inf)), regexp = "^treatment must be finite \\(arm labels\\)")
  expect_error(call_dpowl(rng = "os"), regexp = "^rng must be \"R\" \\(replay R's stream, not private\\) or \"system\"")
  expect_error(call_dpowl(epsilon = 1, typo = 3), regexp = "unknown argument\\(s\\) 'typo'")
  expect_error(dpowl(benefit ~ age, data = d, treatment = d$arm, benefit = d$benefit, epsilon = 1, gamma = 1,
                     weights_upper_bound = 30, bounds = list(18, 89)), regexp = "formula must be one-sided")
  require_backends(dppack = FALSE)
  m <- dpowl(d[, c("age", "male")], treatment = d$arm, benefit = d$benefit, epsilon = 1, gamma = 50,
             weights_upper_bound = 30, bounds = list(c(18, 0), c(89, 1)))
  expect_named(coef(m), c("(Intercept)", "age", "male"))
  expect_identical(predict(m, d[1:3, c("male", "age")]), predict(m, d[1:3, c("age", "male")]))
  expect_error(predict(m, d[1:3, c("age", "mdd", "male")]), NA)
  expect_error(predict(m, as.matrix(d[1:3, c("mdd", "male", "age")])[, 1:2]), regexp = "newdata lacks the feature\\(s\\) 'age'")
  expect_error(predict(m, unname(as.matrix(d[1:3, c("age", "male", "mdd")]))), regexp = "newdata must give the 2 feature")
  expect_identical(predict(m, unname(as.matrix(d[1:3, c("age", "male")]))), predict(m, d[1:3, ]))
  fit <- call_dpowl()
  expect_error(predict(fit), regexp = "newdata is required")
  expect_error(predict(fit, as.matrix(d[, 1:4])), regexp = "newdata must be a data frame")
})

test_that("a vector of propensities needs weight_sensitivity; a number or a model does not", {
  require_backends(dppack = FALSE)
  d <- cyp(200, seed = 12)
  args <- list(~ age + male + nonwhite + mdd, data = d, treatment = quote(arm), benefit = quote(benefit),
               propensity = quote(propensity), epsilon = 1, gamma = 75, weights_upper_bound = 30,
               bounds = attr(d, "bounds"))
  expect_error(do.call(dpowl, args),
               regexp = "^propensity was given as an array of P\\(A_i \\| x_i\\): state how it was obtained with weight_sensitivity=",
               class = "pydpowl_value_error")
  stated <- do.call(dpowl, c(args, weight_sensitivity = 2.5))
  expect_equal(stated$C, 2.5)
  expect_warning(trivial <- do.call(dpowl, c(args, weight_sensitivity = "trivial")), class = "pydpowl_noise_dominated")
  expect_equal(trivial$C, 200 * 30)
  expect_error(do.call(dpowl, c(args, weight_sensitivity = -1)),
               regexp = "^weight_sensitivity must be in \\[0, Inf\\), got weight_sensitivity = -1\\.$",
               class = "pydpowl_value_error")
  args$propensity <- propensity_logistic(benefit_bound = log(24 * 365), ridge = 0.1)
  expect_error(do.call(dpowl, c(args, weight_sensitivity = 0)),
               regexp = "^weight_sensitivity must be NULL with a LogisticPropensity", class = "pydpowl_value_error")
})

test_that("clip counts are non-private diagnostics: kept labelled, printed only by summary(diagnostics = TRUE)", {
  require_backends(dppack = FALSE)
  d <- cyp(200, seed = 13)
  fit <- withCallingHandlers(
    dpowl(~ age + male + nonwhite + mdd, data = d, treatment = arm, benefit = benefit,
          propensity = propensity_logistic(benefit_bound = 1, ridge = 0.5),
          epsilon = 1, gamma = 75, weights_upper_bound = 40, bounds = attr(d, "bounds")),
    pydpowl_noise_dominated = function(w) invokeRestart("muffleWarning"))  # age in years: C is large
  expect_equal(fit$diagnostics[["clipped_benefits"]], sum(d$benefit > 1))
  expect_gt(fit$diagnostics[["clipped_benefits"]], 0)
  expect_s3_class(fit$diagnostics, "pydpowl_nonprivate")
  expect_output(print(fit$diagnostics), "^NON-PRIVATE diagnostics \\(computed from the private data")
  counts <- sprintf("%d benefit\\(s\\)", sum(d$benefit > 1))
  for (txt in list(capture.output(print(fit)), capture.output(print(summary(fit))))) {
    expect_false(any(grepl(counts, txt)))
    expect_false(any(grepl("clipped", txt, ignore.case = TRUE)))
  }
  shown <- capture.output(print(summary(fit, diagnostics = TRUE)))
  expect_true(any(grepl(counts, shown)))
  expect_true(any(grepl("^NON-PRIVATE diagnostics \\(summary\\(diagnostics = TRUE\\)", shown)))
  expect_error(summary(fit, diagnostics = "yes"), regexp = "diagnostics must be TRUE or FALSE")
})

test_that("an assumed Hessian bound above the ridge is refused unless stated as an assumption", {
  require_backends(dppack = FALSE)
  d <- cyp(200, seed = 14)
  fit <- function(prop) {
    withCallingHandlers(
      dpowl(~ age + male + nonwhite + mdd, data = d, treatment = arm, benefit = benefit, propensity = prop,
            epsilon = 1, gamma = 75, weights_upper_bound = 40, bounds = attr(d, "bounds")),
      pydpowl_noise_dominated = function(w) invokeRestart("muffleWarning"))  # age in years: C is large
  }
  expect_error(fit(propensity_logistic(benefit_bound = 9, ridge = 0.1, hessian_lower_bound = 0.5)),
               regexp = "hessian_lower_bound = 0.5 exceeds ridge = 0.1")
  expect_warning(m <- fit(propensity_logistic(benefit_bound = 9, ridge = 0.1, hessian_lower_bound = 0.5,
                                              assume_hessian_bound = TRUE)),
                 regexp = "conditional on the assumption")
  expect_gt(m$C, 0)
})

test_that("the released coefficients are floating-point safe by default", {
  require_backends(dppack = FALSE)
  d <- cyp(300, seed = 15)
  fit <- fit_formula(d, eps = 1, seed = 4)
  g <- fit$release_grid
  expect_identical(g, 2^round(log2(g)))
  lam <- fit$sensitivity / fit$epsilon
  expect_true(g > lam / 2^11 && g <= lam / 2^10)
  b <- attr(d, "bounds")
  ref <- ref_scaled_design(d[, c("age", "male", "nonwhite", "mdd")], b$lower, b$upper, TRUE)
  scaled <- unname(coef(fit)) * ref$scale  # back to the noise space, where the release lies on the grid
  expect_equal(scaled / g, round(scaled / g), tolerance = 1e-9)
  expect_true(any(grepl("floating-point safe", capture.output(print(summary(fit))))))
  expect_warning(val <- fit_formula(d, eps = 1, seed = 4, reproduce_dppack = TRUE), regexp = "reproduce_dppack = TRUE")
  expect_null(val$release_grid)
  expect_lt(max(abs(unname(coef(val)) * ref$scale - scaled)), g)  # within a grid step (and the tol term's trace)
})

test_that("summary shows each coefficient's noise sd on the features' scale: the formula, and the spread of releases", {
  require_backends(dppack = FALSE)
  d <- cyp(300, seed = 16)
  fit1 <- function() {
    dpowl(~ age + male + nonwhite + mdd, data = d, treatment = arm, benefit = benefit,
          propensity = propensity, epsilon = 2, gamma = 75, weight_sensitivity = 0,
          weights_upper_bound = attr(d, "weights_upper_bound"), bounds = attr(d, "bounds"),
          mechanism = "output", residual = FALSE, huber_h = 0.5)
  }
  fit <- fit1()
  s <- summary(fit)
  b <- attr(d, "bounds")
  k <- 5  # coefficients, intercept included
  scale <- c(1, pmax(abs(b$lower), abs(b$upper)))  # DPpack's column scale: max(|lower|, |upper|), 1 for the bias
  expected <- sqrt(k + 1) * fit$sensitivity / fit$epsilon / (sqrt(k) * scale)
  expect_equal(unname(s$noise_sd), unname(expected), tolerance = 1e-12)
  expect_named(s$noise_sd, names(coef(fit)))
  txt <- capture.output(print(s))
  expect_true(any(grepl("estimate +noise_sd +lower_bound +upper_bound", txt)))
  expect_true(any(grepl("^noise_sd: the standard deviation of the noise added to each coefficient", txt)))
  # releases of the same data differ by the noise alone: their spread is the noise sd. A coordinate of the
  # l2-Laplace noise is heavy-tailed (kurtosis about 6 at d = 5), so the sd of 300 draws has a relative standard
  # error of about sqrt((6 - 1) / (4 * 300)) = 0.065: 0.3 is 4.6 of them (0.15, 2.3 of them, failed about once in
  # ten runs over the 5 columns); a wrong sd by a factor sqrt(2) still fails
  releases <- t(replicate(300, coef(fit1())))
  ratio <- apply(releases, 2, stats::sd) / expected
  expect_true(all(abs(ratio - 1) < 0.3), info = paste(format(ratio, digits = 3), collapse = " "))
})

test_that("a release that Delta makes noise-dominated is flagged at the fit and in print/summary (public quantities)", {
  require_backends(dppack = FALSE)
  d <- cyp(1459, seed = 1)
  b <- attr(d, "bounds")
  fit_on <- function(data, bounds, ...) {
    dpowl(~ age + male + nonwhite + mdd, data = data, treatment = arm, benefit = benefit,
          propensity = propensity_logistic(benefit_bound = log(24 * 365), ridge = 1), epsilon = 5, gamma = 100,
          weights_upper_bound = 40, bounds = bounds, ...)
  }
  # age in years: the propensity model's C is about 2.9e6, the noise's expected norm 3e4 against <= 34 for any
  # minimiser
  w <- expect_warning(raw <- fit_on(d, b), class = "pydpowl_noise_dominated")
  expect_match(conditionMessage(w), "^the release is noise-dominated: its noise has expected norm d Delta/epsilon = ")
  expect_match(conditionMessage(w), "the largest: age in [18, 89]", fixed = TRUE)
  expect_match(conditionMessage(w), "C_B C_x^2 e^M / b_x", fixed = TRUE)
  expect_true(raw$noise$dominated)
  expect_gte(raw$noise$expected_norm, raw$noise$minimiser_norm_bound)
  expect_equal(raw$noise$minimiser_norm_bound, sqrt(2 * 1459 * 40 * 1 / 100))  # l(0) = 1 for huber_h < 1
  expect_equal(raw$noise$expected_norm, 5 * raw$sensitivity / 5)
  expect_true(any(grepl("^NOTE: the release is noise-dominated", capture.output(print(raw)))))
  expect_true(any(grepl("^NOTE: noise-dominated release", capture.output(print(summary(raw))))))
  # age in hundreds of years (bounds too): the same rule's fit, C about 1,600 times smaller, no longer flagged
  d$age <- d$age / 100
  b$lower[["age"]] <- b$lower[["age"]] / 100
  b$upper[["age"]] <- b$upper[["age"]] / 100
  expect_warning(scaled <- fit_on(d, b), NA)
  expect_lt(scaled$C, raw$C / 1000)
  expect_false(scaled$noise$dominated)
  expect_false(any(grepl("noise-dominated", c(capture.output(print(scaled)), capture.output(print(summary(scaled)))))))
  # the flag depends on public quantities only: the same settings on other data give the same verdict
  other <- cyp(1459, seed = 2)
  expect_warning(fit_on(other, attr(other, "bounds")), class = "pydpowl_noise_dominated")
})

test_that("by default dpowl() uses the utility study's mechanism and says so", {
  require_backends(dppack = FALSE)
  d <- cyp(600, seed = 21)
  set.seed(8)
  fit <- dpowl(~ age + male + nonwhite + mdd, data = d, treatment = arm, benefit = benefit, propensity = 2 / 3,
               epsilon = 1, weights_upper_bound = attr(d, "weights_upper_bound"), bounds = attr(d, "bounds"))
  expect_identical(fit$mechanism, "objective")
  expect_true(fit$residual)
  expect_equal(fit$huber_h, 1)
  expect_true(is.finite(fit$gamma) && fit$gamma > 0)  # the public rule's value, as used
  expect_true(is.nan(fit$sensitivity))
  expect_true(any(grepl("weighted objective perturbation with residual weights", capture.output(print(fit)))))
  expect_true(any(grepl("objective perturbation", capture.output(print(summary(fit))))))
  # the rule's noise is calibrated to W_r = W / 16 (residual weights), not to the W given: kept and printed
  W <- attr(d, "weights_upper_bound")
  expect_equal(fit$rule_weights_upper_bound, W / 16)
  expect_output(print(summary(fit)), sprintf("the rule's residual weights are bounded by W_r = W x 0.0625 = %.6g",
                                             W / 16), fixed = TRUE)
  # a logistic propensity model fitted on the same data (C > 0) keeps the paper's output perturbation
  # (age in years makes that model's C, hence the noise, dominate: flagged, as documented in 'Scaling features')
  expect_warning(m <- dpowl(~ age + male + nonwhite + mdd, data = d, treatment = arm, benefit = benefit,
                            propensity = propensity_logistic(benefit_bound = 9, ridge = 1), epsilon = 1, gamma = 75,
                            weights_upper_bound = 40, bounds = attr(d, "bounds")),
                 class = "pydpowl_noise_dominated")
  expect_identical(m$mechanism, "output")
  expect_error(dpowl(~ age + male + nonwhite + mdd, data = d, treatment = arm, benefit = benefit, propensity = 2 / 3,
                     epsilon = 1,
                     weights_upper_bound = 27, bounds = attr(d, "bounds"), mechanism = "laplace"),
               regexp = "mechanism must be one of")
})

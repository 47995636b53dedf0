# R objects turned into what the worker receives (R/coerce.R).

test_that("a fit's features reach the worker as the numbers of as.matrix(), whatever their R form", {
  wire <- pydpowl:::wire_features
  as_matrix <- pydpowl:::as_feature_matrix
  same <- function(X) {
    w <- wire(X)
    M <- as_matrix(X)
    expect_identical(w$values, pydpowl:::wire_matrix(M))
    expect_identical(w$columns, colnames(M))
    expect_true(is.double(w$values))
  }
  set.seed(3)
  same(data.frame(a = runif(7), b = rnorm(7)))                                    # plain numeric columns
  same(data.frame(i = 1:7, l = c(TRUE, FALSE, TRUE, TRUE, FALSE, NA, TRUE), d = runif(7)))  # integer, logical
  same(data.frame(i = 1:7, j = 7:1))                                              # all integer
  same(data.frame(a = c(1, NA, Inf, 4, 5, 6, 7)))                                 # NA and Inf pass (checked in Python)
  same(data.frame(row.names = 1:7))                                               # no columns
  same(matrix(runif(12), 4, dimnames = list(NULL, c("u", "v", "w"))))             # matrices as they are
  same(matrix(1:12, 4))
  same(matrix(c(TRUE, FALSE), 3, 2))
})

test_that("a fit refuses factor and character columns with the message of as_feature_matrix", {
  X <- data.frame(a = runif(4), s = c("f", "m", "f", "m"), g = factor(1:4))
  w <- expect_error(pydpowl:::wire_features(X), class = "pydpowl_argument_error")
  m <- expect_error(pydpowl:::as_feature_matrix(X), class = "pydpowl_argument_error")
  expect_identical(conditionMessage(w), conditionMessage(m))
  expect_match(conditionMessage(w), "column\\(s\\) 's', 'g' are character/factor")
})

test_that("a fit on a data frame with integer and logical columns is the fit on the numeric matrix", {
  set.seed(11)
  X <- data.frame(age = sample(18:80, 300, replace = TRUE), smoker = runif(300) < 0.3)
  y <- as.numeric(X$age / 80 + X$smoker + rnorm(300, sd = 0.3) > 0.9)
  fit <- function(data) {  # the same noise for both (replay of R's stream after the same set.seed)
    set.seed(5)
    m <- LogisticRegressionDP$new("l2", 1, 1)
    with_replay(m$fit(data, y, c(80, 1), c(18, 0), add.bias = TRUE))
    m$coeff
  }
  expect_identical(fit(X), fit(cbind(age = as.numeric(X$age), smoker = as.numeric(X$smoker))))
})

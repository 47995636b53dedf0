# The paper's synthetic design as the authors' R function generate.data(N, p)
# draws it (github.com/sgiddens/DP-OWL, simulation_study.R and
# simulation_study_clean.R), re-implemented for pydpowl's tests. Same calls,
# same order, same floating-point operations:
#   1. features row by row:  X[i, ] <- runif(p)
#   2. treatments:           sample(c(-1, 1), N, replace = TRUE, prob = c(0.5, 0.5))
#   3. benefits row by row:  rnorm(1, mean = mu[i], sd = 0.5), i.e. mu[i] + 0.5 * z
#   4. the per-dataset shift (B + abs(min(B))) + 0.001 when min(B) < 0.
# f(x) = 1 + x1 + x2 - 1.8 x3 - 2.2 x4 and mu = 0.01 + 0.02 x4 + 3 A f(x),
# both evaluated left to right as R does. Returns fx too (the optimal rule is
# its sign). Used by synthetic_generate_data.R and tests/rrandom/test_pipeline_r.py.
generate_owl_data <- function(n, q) {
  X <- matrix(NaN, nrow = n, ncol = q)
  for (i in seq_len(n)) X[i, ] <- runif(q)
  A <- sample(c(-1, 1), size = n, replace = TRUE, prob = c(0.5, 0.5))
  fx <- 1 + X[, 1] + X[, 2] - 1.8 * X[, 3] - 2.2 * X[, 4]
  mu <- 0.01 + 0.02 * X[, 4] + 3 * A * fx
  B <- numeric(n)
  for (i in seq_len(n)) B[i] <- rnorm(1, mean = mu[i], sd = 0.5)
  if (min(B) < 0) B <- B + abs(min(B)) + 0.001
  list(X = X, A = A, B = B, fx = fx)
}

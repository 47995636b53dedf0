# R owl(): the engine's default mechanism (objective perturbation with residual weights per two-arm stage) against
# mechanism = "output" (output perturbation with the classic weights), on DTRlearn2::sim_Kstage data (2 stages,
# 10 clusters, 5 informative and 5 noise features; the optimal regime has value 2).
#
#   Rscript benchmarks/owl_r_mechanism.R [n] [epsilon] [reps] [gamma]      # defaults 2000 1 10 10
#
# Each repetition draws a training set and fits owl() privately with each mechanism and at epsilon = Inf (the
# engine's default, the reference regime), then scores every regime on a test set of 20000 from the same clusters:
# value = mean of sum_k d_k optA_k (the regime applied as used: stage 2's history built from the recommended stage-1
# treatment) and agreement = share of test subjects whose two recommended treatments equal the reference regime's.
suppressPackageStartupMessages({library(pydpowl); library(DTRlearn2)})
args <- as.numeric(commandArgs(TRUE))
n <- if (length(args) >= 1L) args[1L] else 2000
eps <- if (length(args) >= 2L) args[2L] else 1
reps <- if (length(args) >= 3L) args[3L] else 10
gamma <- if (length(args) >= 4L) args[4L] else 10
set.seed(2024)
centroids <- sim_Kstage(100, 10, 5, 5, K = 2)$centroids
named <- function(d) {
  colnames(d$X) <- paste0("x", seq_len(ncol(d$X)))
  d
}
test <- named(sim_Kstage(20000, 10, 5, 5, centroids = centroids, K = 2))
hist2 <- function(X, a1) {
  H <- cbind(X, a1 = a1, X * a1)
  colnames(H) <- c(colnames(X), "a1", paste0(colnames(X), "_a1"))
  H
}
fit <- function(d, epsilon, mechanism) {
  suppressWarnings(pydpowl::owl(H = list(d$X, hist2(d$X, d$A[[1]])), AA = d$A, RR = d$R, n = nrow(d$X), K = 2, pi = 0.5,
                       epsilon = epsilon, gamma = gamma, bounds = list(12, 12),
                       reward_bounds = list(c(0, 1e-9), c(-6, 6)), mechanism = mechanism))
}
apply_regime <- function(f) {
  d1 <- as.numeric(predict(f, H = test$X, K = 1)$treatment[[1]])
  d2 <- as.numeric(predict(f, H = list(test$X, hist2(test$X, d1)), K = 2)$treatment[[2]])
  cbind(d1, d2)
}
value <- function(rec) mean(rec[, 1] * test$optA[[1]] + rec[, 2] * test$optA[[2]])
rows <- NULL
t0 <- Sys.time()
for (r in seq_len(reps)) {
  d <- named(sim_Kstage(n, 10, 5, 5, centroids = centroids, K = 2))
  ref <- apply_regime(fit(d, Inf, "auto"))
  for (m in c("auto", "output")) {
    rec <- apply_regime(fit(d, eps, m))
    rows <- rbind(rows, data.frame(rep = r, mechanism = m, value = value(rec),
                                   agreement = mean(rowSums(rec == ref) == 2), value_nonprivate = value(ref)))
  }
}
cat(sprintf("sim_Kstage, 2 stages, n = %d, epsilon = %g, gamma = %g, %d repetitions (%.0f s); optimal value 2\n", n,
            eps, gamma, reps, as.numeric(difftime(Sys.time(), t0, units = "secs"))))
for (m in c("auto", "output")) {
  s <- rows[rows$mechanism == m, ]
  cat(sprintf("%-7s value mean %.3f (se %.3f) median %.3f; agreement mean %.3f (se %.3f) median %.3f\n", m,
              mean(s$value), sd(s$value) / sqrt(nrow(s)), median(s$value), mean(s$agreement),
              sd(s$agreement) / sqrt(nrow(s)), median(s$agreement)))
}
cat(sprintf("non-private (epsilon = Inf, default mechanism): value mean %.3f\n",
            mean(rows$value_nonprivate[rows$mechanism == "auto"])))

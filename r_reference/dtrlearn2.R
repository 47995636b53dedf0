# DTRlearn2's K-stage outcome weighted learning, called from r_reference/dtrlearn2.py with
# named arguments. The stages' histories, treatments, rewards and propensities come as
# matrices (one column block or column per stage) and are split into DTRlearn2's lists here.

split_stages <- function(M, widths) {
  ends <- cumsum(widths)
  lapply(seq_along(widths), function(k) M[, (ends[k] - widths[k] + 1):ends[k], drop = FALSE])
}

# DTRlearn2::owl(..., loss = "hinge", kernel = "linear", augment = FALSE) with one value of c
# (its cross-validation then only draws the folds). Returns each stage's intercept and
# coefficients, the recommended treatment of every subject at every stage (predict.owl on H),
# the estimated value (valuefun) and the stages DTRlearn2 could fit.
owl_hinge_linear <- function(H, widths, AA, RR, pi, c, res_lasso, m, seed, solver = "ipop") {
  K <- length(widths)
  n <- nrow(H)
  Hs <- split_stages(H, widths)
  AAl <- lapply(seq_len(K), function(k) as.numeric(AA[, k]))
  RRl <- lapply(seq_len(K), function(k) as.numeric(RR[, k]))
  pil <- lapply(seq_len(K), function(k) as.numeric(pi[, k]))
  set.seed(seed)
  fit <- DTRlearn2::owl(H = Hs, AA = AAl, RR = RRl, n = n, K = K, pi = pil, res.lasso = res_lasso,
                        loss = "hinge", kernel = "linear", augment = FALSE, c = c, m = m, solver = solver)
  if (fit$type == "has_error") stop("DTRlearn2::owl could not fit every stage (too few followers).")
  pred <- predict(fit, H = Hs, K = K)
  beta0 <- sapply(seq_len(K), function(k) as.numeric(fit[[k]]$beta0))  # the first K entries are the stages
  beta <- unlist(lapply(seq_len(K), function(k) as.numeric(fit[[k]]$beta)))
  treatment <- sapply(seq_len(K), function(k) as.numeric(pred$treatment[[k]]))
  list(beta0 = beta0, beta = beta, treatment = matrix(treatment, nrow = n), value = as.numeric(fit$valuefun))
}

# DTRlearn2's simulated K-stage SMART (sim_Kstage) with its own centroids.
sim_kstage <- function(n, n_cluster, pinfo, pnoise, K, seed) {
  set.seed(seed)
  d <- DTRlearn2::sim_Kstage(n, n_cluster, pinfo, pnoise, K = K)
  list(X = d$X, A = do.call(cbind, d$A), R = do.call(cbind, d$R), optA = do.call(cbind, d$optA))
}

# The 2-stage ADHD SMART shipped with DTRlearn2 (150 children), as its documentation builds
# the histories: H1 = the four baseline covariates, H2 = H1, a1, H1 * a1, r, o22, r * a1,
# o22 * a1 (unscaled here; the caller scales).
adhd_data <- function() {
  e <- new.env()
  utils::data("adhd", package = "DTRlearn2", envir = e)
  a <- e$adhd
  H1 <- cbind(a$o11, a$o12, a$o13, a$o14)
  H2 <- cbind(H1, a$a1, H1 * a$a1, a$r, a$o22, a$r * a$a1, a$o22 * a$a1)
  list(H1 = H1, H2 = H2, a1 = as.numeric(a$a1), a2 = as.numeric(a$a2), y = as.numeric(a$y))
}

# owl() against DTRlearn2::owl() and against the Python engine called directly (not through the worker).
# The cases and matched settings are validation/multistage.py's: sim_Kstage(n = 600, 10 clusters, pinfo = 5,
# pnoise = 5) with the histories of DTRlearn2's example (standardised), c = 4; the ADHD SMART with its documented
# histories, c = 1; DTRlearn2 with res.lasso = FALSE, loss = "hinge", kernel = "linear", augment = FALSE, one c and
# solver = "ipop"; pydpowl at epsilon = Inf with gamma_k = n_k / (c d_k s_k^2) (n_k: DTRlearn2's followers at stage
# k), features bounded by s_k = 4 max |H_k|, rewards by [min, max + 1], the least-squares residual (res.lasso =
# FALSE) and huber_h = 0.01 for the exact hinge.

require_dtrlearn2 <- function() {
  require_backends(dppack = FALSE)
  if (!requireNamespace("DTRlearn2", quietly = TRUE)) {
    if (identical(Sys.getenv("PYDPOWL_REQUIRE_R"), "1")) {
      stop("needs the R package DTRlearn2; PYDPOWL_REQUIRE_R=1 turns this skip into an error.", call. = FALSE)
    }
    testthat::skip("needs the R package DTRlearn2")
  }
}

owl_sim_case <- function(K, seed, n = 600) {
  set.seed(seed)
  d <- DTRlearn2::sim_Kstage(n, 10, 5, 5, K = K)
  H1 <- scale(d$X)
  H <- c(list(H1), lapply(seq_len(K - 1L), function(k) scale(cbind(H1, d$A[[k]], H1 * d$A[[k]]))))
  list(H = H, AA = d$A, RR = d$R, n = n, K = K, c = 4, seed = seed)
}

owl_adhd_case <- function() {
  e <- new.env()
  utils::data("adhd", package = "DTRlearn2", envir = e)
  a <- e$adhd
  H1 <- scale(cbind(a$o11, a$o12, a$o13, a$o14))
  H2 <- scale(cbind(H1, a$a1, H1 * a$a1, a$r, a$o22, a$r * a$a1, a$o22 * a$a1))
  list(H = list(H1, H2), AA = list(a$a1, a$a2), RR = list(rep(0, 150), a$y), n = 150, K = 2, c = 1, seed = 1)
}

# DTRlearn2's fit (one c: its m folds only draw random numbers; m = 2 is the cheapest) and its recommendations.
dtrlearn2_owl <- function(cs) {
  pi <- rep(list(rep(0.5, cs$n)), cs$K)
  set.seed(cs$seed)
  fit <- DTRlearn2::owl(H = cs$H, AA = cs$AA, RR = cs$RR, n = cs$n, K = cs$K, pi = pi, res.lasso = FALSE,
                        loss = "hinge", kernel = "linear", augment = FALSE, c = cs$c, m = 2, solver = "ipop")
  list(fit = fit, predicted = predict(fit, H = cs$H, K = cs$K))
}

# The matched settings, given each stage's number of subjects n_k that DTRlearn2 fitted it on.
owl_matched <- function(cs, followers) {
  s <- vapply(cs$H, function(h) 4 * max(abs(h)), numeric(1))
  list(gamma = followers / (cs$c * (vapply(cs$H, ncol, 1L) + 1) * s^2), bounds = as.list(s),
       reward_bounds = lapply(cs$RR, function(r) c(min(r), max(r) + 1)))
}

# DTRlearn2 fits stage k on the subjects whose later treatments followed its later rules.
dtrlearn2_followers <- function(cs, predicted) {
  vapply(seq_len(cs$K), function(k) {
    follow <- rep(TRUE, cs$n)
    for (j in seq_len(cs$K)[-seq_len(k)]) follow <- follow & predicted$treatment[[j]][, 1L] == cs$AA[[j]]
    sum(follow)
  }, numeric(1))
}

owl_fit_matched <- function(cs, settings, ...) {
  owl(H = cs$H, AA = cs$AA, RR = cs$RR, n = cs$n, K = cs$K, pi = 0.5, epsilon = Inf, gamma = settings$gamma,
      bounds = settings$bounds, reward_bounds = settings$reward_bounds, res.lasso = FALSE, huber_h = 0.01, ...)
}

# pydpowl.DPMultiStageOWL called directly in one fresh Python process (the interpreter the worker uses), on each
# case's data written as little-endian doubles, with its matched settings: per case, each stage's intercept and
# coefficients.
python_multistage <- function(cases, settings) {
  dir <- tempfile("owl-engine-")
  dir.create(dir)
  on.exit(unlink(dir, recursive = TRUE))
  put <- function(x, name) {
    con <- file(file.path(dir, name), "wb")
    writeBin(as.double(x), con, endian = "little")
    close(con)
  }
  for (i in seq_along(cases)) {
    cs <- cases[[i]]
    st <- settings[[i]]
    for (k in seq_len(cs$K)) {
      put(cs$H[[k]], sprintf("%d-H%d", i, k))
      put(cs$AA[[k]], sprintf("%d-A%d", i, k))
      put(cs$RR[[k]], sprintf("%d-R%d", i, k))
    }
    writeLines(c(paste(cs$n, cs$K), paste(vapply(cs$H, ncol, 1L), collapse = " "),
                 paste(sprintf("%.17g", st$gamma), collapse = " "),
                 paste(sprintf("%.17g", unlist(st$bounds)), collapse = " "),
                 paste(sprintf("%.17g", unlist(st$reward_bounds)), collapse = " ")), file.path(dir, sprintf("%d-settings", i)))
  }
  script <- file.path(dir, "fit.py")
  writeLines(c(
    "import sys, numpy as np",
    "from pydpowl import DPMultiStageOWL",
    "d, cases = sys.argv[1], int(sys.argv[2])",
    "for i in range(1, cases + 1):",
    "    lines = open(f'{d}/{i}-settings').read().split('\\n')",
    "    n, K = map(int, lines[0].split()); p = list(map(int, lines[1].split()))",
    "    gamma, s, rb = (list(map(float, lines[j].split())) for j in (2, 3, 4))",
    "    get = lambda name: np.fromfile(f'{d}/{i}-{name}', dtype='<f8')",
    "    H = [get(f'H{k + 1}').reshape((n, p[k]), order='F') for k in range(K)]",
    "    A = [get(f'A{k + 1}') for k in range(K)]; R = [get(f'R{k + 1}') for k in range(K)]",
    "    m = DPMultiStageOWL(epsilon=np.inf, gamma=gamma, baseline='ols', huber_h=0.01,",
    "                        feature_bounds=[([-s[k]] * p[k], [s[k]] * p[k]) for k in range(K)],",
    "                        reward_bounds=[(rb[2 * k], rb[2 * k + 1]) for k in range(K)])",
    "    m.fit(H, A, R, [0.5] * K)",
    "    for k, st in enumerate(m.stages_):",
    "        np.concatenate([st.rule.intercept, st.rule.coef.ravel()]).astype('<f8').tofile(f'{d}/{i}-out{k + 1}')"
  ), script)
  out <- system2(pydpowl_config()$python, c(script, dir, length(cases)), stdout = TRUE, stderr = TRUE)
  if (!is.null(attr(out, "status"))) stop("the Python engine failed:\n", paste(out, collapse = "\n"))
  read_out <- function(i, k) readBin(file.path(dir, sprintf("%d-out%d", i, k)), "double", n = 1000L, endian = "little")
  lapply(seq_along(cases), function(i) lapply(seq_len(cases[[i]]$K), function(k) read_out(i, k)))
}

# The structure of a value: classes, dims, names and lengths, all the way down (not the numbers).
value_shape <- function(x) {
  if (is.list(x) && !is.data.frame(x)) return(list(class = class(x), names = names(x), items = lapply(x, value_shape)))
  list(class = class(x), dim = dim(x), length = length(x), names = names(x), type = typeof(x))
}

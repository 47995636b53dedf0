# Frozen R values for tests/datasets/test_synthetic_r.py (runs without R).
# For each case: set.seed(seed) with R's default kinds, generate_owl_data(n, p)
# (generate_data.R), then one more runif(1) to pin the stream position.
# Doubles are written exactly with sprintf("%a"); X holds the p features of the row.
# Produced with R 4.2.2 (Debian 12, x86-64). Run from the repository root:
#   Rscript tests/reference/synthetic_generate_data.R
source("tests/reference/generate_data.R")
cases <- list(c(1, 6, 4), c(100, 6, 4), c(-3, 5, 4), c(2147483647, 4, 4), c(42, 3, 10))
rows <- character(0)
for (cs in cases) {
  set.seed(cs[1], kind = "Mersenne-Twister", normal.kind = "Inversion",
           sample.kind = "Rejection")
  d <- generate_owl_data(cs[2], cs[3])
  next_u <- runif(1)
  for (i in seq_len(cs[2])) {
    rows <- c(rows, paste(format(cs[1], scientific = FALSE), cs[2], cs[3], i, d$A[i],
                          sprintf("%a", d$B[i]), paste(sprintf("%a", d$X[i, ]), collapse = " "),
                          sprintf("%a", next_u), sep = ","))
  }
}
writeLines(c("seed,n,p,row,A,B,X,next_runif", rows), "tests/reference/synthetic_generate_data.csv")

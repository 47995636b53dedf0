# A user's R script: read a CSV, fit svmDP once (output perturbation, OWL weights), print it.
# Run as: Rscript fit_svmDP.R PKG CSV W   (PKG = DPpack or pydpowl; the script is otherwise the same)
args <- commandArgs(trailingOnly = TRUE)
svmDP <- getExportedValue(args[1], "svmDP")
d <- read.csv(args[2])
set.seed(1)
m <- svmDP$new("l2", 1, 75, perturbation.method = "output")
m$fit(d[, c("age", "male", "nonwhite", "mdd")], as.numeric(d$treatment == 1),
      upper.bounds = c(89, 1, 1, 1), lower.bounds = c(18, 0, 0, 0), add.bias = TRUE,
      weights = d$benefit / d$propensity, weights.upper.bound = as.numeric(args[3]))
print(m$coeff)

"""A user's script: read a CSV, fit one DPpack-family model with pydpowl once, print it (timed as a whole process).

Run as: python family_pydpowl.py CONFIG CSV   (CONFIG as in bench_family.CONFIGS)
"""
import sys

import pandas as pd

import pydpowl

config, path = sys.argv[1], sys.argv[2]
d = pd.read_csv(path)
X = d[["x1", "x2"]]
b = ([-1, -1], [1, 1])
if config == "svm_objective_linear":
    m = pydpowl.DPSVM(epsilon=1.0, gamma=1.0, feature_bounds=b, fit_intercept=True, random_state=1).fit(X, d["y"])
elif config == "svm_output_linear":
    m = pydpowl.DPSVM(epsilon=1.0, gamma=1.0, perturbation="output", feature_bounds=b, fit_intercept=True,
                      random_state=1).fit(X, d["y"])
elif config == "svm_objective_gaussian":
    m = pydpowl.DPSVM(epsilon=1.0, gamma=1.0, kernel="gaussian", n_components=20, random_state=1).fit(X, d["y"])
elif config == "svm_output_gaussian_weighted":
    m = pydpowl.DPSVM(epsilon=1.0, gamma=1.0, perturbation="output", kernel="gaussian", n_components=20,
                      weights_upper_bound=1.0, random_state=1).fit(X, d["y"], d["w"])
elif config == "logistic_objective":
    m = pydpowl.DPLogisticRegression(epsilon=1.0, gamma=1.0, feature_bounds=b, fit_intercept=True,
                                     random_state=1).fit(X, d["y"])
elif config == "logistic_output":
    m = pydpowl.DPLogisticRegression(epsilon=1.0, gamma=1.0, perturbation="output", feature_bounds=b,
                                     fit_intercept=True, random_state=1).fit(X, d["y"])
elif config in ("linreg_pure", "linreg_approx"):
    m = pydpowl.DPLinearRegression(epsilon=1.0, delta=0.0 if config == "linreg_pure" else 1e-3, gamma=1.0,
                                   feature_bounds=b, target_bounds=(-3, 3), fit_intercept=True,
                                   random_state=1).fit(X, d["t"])
else:
    raise SystemExit(f"unknown config {config!r}")
print(m.dppack_coeff_)

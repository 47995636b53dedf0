"""A Python user's script with DPpack's names: read a CSV, fit one model once with ``pydpowl.interop.dppack``, print it.

The same fits as ``family_dppack.R`` (DPpack's arguments in DPpack's layout; R's stream is not involved, the
noise comes from operating-system entropy), through the functions that mirror DPpack's classes: they import
numpy and the engine only, not scikit-learn (compare ``family_pydpowl.py``, the estimators). Timed as a
whole process.

Run as: python family_functions.py CONFIG CSV   (CONFIG as in bench_family.CONFIGS)
"""
import sys

import pandas as pd

from pydpowl.interop import dppack

config, path = sys.argv[1], sys.argv[2]
d = pd.read_csv(path)
X = d[["x1", "x2"]]
ub, lb = [1, 1], [-1, -1]
if config.startswith("svm"):
    gauss, output = "gaussian" in config, "output" in config
    fit = dppack.svmdp_fit(X, d["y"], ub, lb, not gauss, d["w"] if "weighted" in config else None,
                           1 if "weighted" in config else None, eps=1, gamma=1,
                           perturbation_method="output" if output else "objective",
                           kernel="Gaussian" if gauss else "linear", D=20 if gauss else None)
elif config.startswith("logistic"):
    fit = dppack.logistic_regression_dp_fit(X, d["y"], ub, lb, True, eps=1, gamma=1,
                                            perturbation_method=config.split("_")[1])
elif config in ("linreg_pure", "linreg_approx"):
    fit = dppack.linear_regression_dp_fit(X, d["t"], ub + [3], lb + [-3], True, eps=1,
                                          delta=0 if config == "linreg_pure" else 1e-3, gamma=1)
else:
    raise SystemExit(f"unknown config {config!r}")
print(fit["coeff"])

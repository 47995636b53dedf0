"""A user's script: read a CSV, fit a DP-OWL rule once, print it (timed as a whole process)."""
import inspect
import sys

import pandas as pd

from pydpowl import DPOWL

# The propensities are known (a randomised trial), so C = 0; releases before the privacy review
# (issue 11) had no weight_sensitivity argument and took C = 0 for an array silently.
stated = {"weight_sensitivity": 0.0} if "weight_sensitivity" in inspect.signature(DPOWL).parameters else {}
data = pd.read_csv(sys.argv[1])
model = DPOWL(epsilon=1.0, gamma=75.0, weights_upper_bound=float(sys.argv[2]),
              feature_bounds=([18, 0, 0, 0], [89, 1, 1, 1]), random_state=1, mechanism="output", residual=False,
              huber_h=0.5, **stated)
model.fit(data[["age", "male", "nonwhite", "mdd"]], data["treatment"], data["benefit"],
          propensity=data["propensity"].to_numpy())
print(model.intercept_, model.coef_)

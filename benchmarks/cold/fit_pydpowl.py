"""A user's script: read a CSV, fit a DP-OWL rule once, print it (timed as a whole process)."""
import sys

import pandas as pd

from pydpowl import DPOWL

data = pd.read_csv(sys.argv[1])
model = DPOWL(epsilon=1.0, gamma=75.0, weights_upper_bound=float(sys.argv[2]),
              feature_bounds=([18, 0, 0, 0], [89, 1, 1, 1]), random_state=1)
model.fit(data[["age", "male", "nonwhite", "mdd"]], data["treatment"], data["benefit"],
          propensity=data["propensity"].to_numpy())
print(model.intercept_, model.coef_)

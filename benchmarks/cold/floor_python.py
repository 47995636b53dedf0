"""What the cold Python script costs without pydpowl: the interpreter, pandas reading the CSV and the
estimator base every pydpowl estimator needs (scikit-learn's ``BaseEstimator``). Its wall time is the
floor of ``fit_pydpowl.py``: the rest is pydpowl's own (imports, checks, the fit)."""
import sys

import pandas as pd
import sklearn.base  # noqa: F401

data = pd.read_csv(sys.argv[1])
print(data.shape)

"""What users fit: scikit-learn-style estimators built on :mod:`pydpowl.engine`."""

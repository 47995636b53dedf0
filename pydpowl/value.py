"""The former name of :mod:`pydpowl.evaluation.empirical` (the empirical value, accuracy and concordance of
a rule), kept because earlier versions and docs import from it. New code imports :mod:`pydpowl.evaluation`.
"""

from .evaluation import empirical as _current

__all__ = list(_current.__all__)
globals().update({name: getattr(_current, name) for name in __all__})

"""R reference engines, called through rpy2 (the only package that imports rpy2).

``import r_reference`` never needs R: rpy2 is loaded on first use. Functions
raise :class:`RUnavailableError` naming the set-up command when R, rpy2 or
DPpack is missing, and :class:`RError` carrying R's own message when R fails.

:func:`fit_svmdp` and :func:`fit_weighted_erm_cms` run DPpack's ``svmDP`` and
``WeightedERMDP.CMS`` (many seeds in one R call); see :mod:`r_reference.dppack`.
"""

from ._session import RError, RUnavailableError, r_available
from .dppack import DPpackData, DPpackFits, fit_svmdp, fit_weighted_erm_cms

__all__ = [
    "RError",
    "RUnavailableError",
    "r_available",
    "DPpackData",
    "DPpackFits",
    "fit_svmdp",
    "fit_weighted_erm_cms",
]

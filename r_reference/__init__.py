"""R reference engines, called through rpy2 (the only package that imports rpy2).

``import r_reference`` never needs R: rpy2 is loaded on first use. Functions
raise :class:`RUnavailableError` naming the set-up command when R, rpy2 or
DPpack is missing, and :class:`RError` carrying R's own message when R fails.
"""

from ._session import RError, RUnavailableError, r_available

__all__ = ["RError", "RUnavailableError", "r_available"]

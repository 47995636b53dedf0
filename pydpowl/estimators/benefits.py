"""Benefits for OWL: non-negative by a public shift, never silently.

OWL weights ``w_i = B_i / P(A_i | x_i)`` must be non-negative. Shift benefits
by a *public* lower bound (known before seeing the data) with
:func:`shift_benefits`; values below it are clipped to 0 and counted. The
paper's simulation shift ``B - min(B) + 0.001`` reads the minimum off the private
data; :func:`min_shift_benefits` offers it for reproducing the paper and always
warns that the privacy guarantee is void.
"""

from __future__ import annotations

import numbers
import warnings
from typing import Tuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import check_vector
from ..exceptions import PrivacyLeakWarning

__all__ = ["shift_benefits", "min_shift_benefits"]


def shift_benefits(benefit: ArrayLike, lower_bound: float, upper_bound: float = np.inf
                   ) -> Tuple[NDArray[np.float64], int]:
    """``clip(B, lower_bound, upper_bound) - lower_bound`` and the number of clipped entries.

    Parameters
    ----------
    benefit : array-like of shape (n,)
    lower_bound : float
        Public lower bound of the benefit (chosen without looking at the data).
    upper_bound : float, default=inf
        Optional public upper bound; values above are clipped too.
    """
    B = check_vector("benefit", benefit)
    for name, v in (("lower_bound", lower_bound), ("upper_bound", upper_bound)):
        if isinstance(v, bool) or not isinstance(v, numbers.Real) or np.isnan(v):
            raise ValueError(f"{name} must be a real number, got {name}={v!r}.")
    if not np.isfinite(lower_bound):
        raise ValueError(f"lower_bound must be finite, got lower_bound={lower_bound!r}.")
    if upper_bound <= lower_bound:
        raise ValueError(f"upper_bound must exceed lower_bound={lower_bound!r}, got upper_bound={upper_bound!r}.")
    clipped = np.clip(B, lower_bound, upper_bound)
    return clipped - float(lower_bound), int(np.count_nonzero(clipped != B))


def min_shift_benefits(benefit: ArrayLike, offset: float = 0.001) -> NDArray[np.float64]:
    """The paper's shift ``B + |min B| + offset`` when ``min B < 0`` (else ``B``).

    The minimum is read off the private data, so this always emits
    :class:`PrivacyLeakWarning`: a DP-OWL fit on the result has no guarantee.
    """
    B = check_vector("benefit", benefit)
    warnings.warn(
        "min_shift_benefits reads the minimum benefit off the data: the differential-privacy "
        "guarantee of any release using the shifted benefits is void. Use shift_benefits with a "
        "public lower bound instead.",
        PrivacyLeakWarning, stacklevel=2,
    )
    low = float(B.min())
    return B + (abs(low) + offset) if low < 0 else B.copy()

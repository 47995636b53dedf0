"""DPpack's weighted ERM (``svmDP`` and ``WeightedERMDP.CMS``) called from numpy.

Two entry points, each running MANY fits on the same data in ONE R call (an R
loop over seeds, ``set.seed(seed)`` before each ``fit``):

* :func:`fit_svmdp` - ``svmDP$new("l2", eps, gamma, perturbation.method =
  "output", kernel = "linear", huber.h = h)`` then ``fit(X, y, upper.bounds =,
  lower.bounds =, add.bias =, weights =, weights.upper.bound =)``, the R
  counterpart of :class:`pydpowl.DPOWL` (clip, intercept, scale, weighted Huber
  hinge, output perturbation).
* :func:`fit_weighted_erm_cms` - ``WeightedERMDP.CMS`` with the Huber hinge
  (DPpack's ``generate.loss.huber``) or a weighted logistic loss written here,
  the R counterpart of :class:`pydpowl.DPWeightedERM` (no scaling: rows must
  already have norm <= 1).

Conventions translated at the boundary: labels are {-1, 1} on the Python side;
``svmDP`` receives ``(y + 1) / 2`` in {0, 1} and converts back internally, while
``WeightedERMDP.CMS`` receives {-1, 1} unchanged (its losses are margin losses).
Feature bounds are ``(lower, upper)`` here and are passed to R BY NAME
(DPpack's ``fit`` takes ``upper.bounds`` before ``lower.bounds``). All data are
float64; conversion happens inside rpy2's local converter (see
:mod:`r_reference._session`). The R code is in ``r_reference/dppack.R``
(``svmdp_fits``, ``cms_fits``), called with named arguments.

Everything else (weight clipping at the bound, the noise draws, the
optimiser) is DPpack's own: the adapter does not re-implement it, so DPpack's
errors (bad bound lengths, negative weights, ...) come back as
:class:`~r_reference.RError` with R's message.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence, Tuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._session import call_r_file, require_packages

__all__ = ["DPpackData", "DPpackFits", "fit_svmdp", "fit_weighted_erm_cms", "R_SEED_MAX"]

#: largest seed accepted (R integers are 32-bit)
R_SEED_MAX = 2**31 - 1


@dataclass(frozen=True)
class DPpackData:
    """The data exactly as DPpack's optimiser sees them (from its own preprocessing).

    Attributes
    ----------
    Z : ndarray of shape (n, d)
        Clipped (intercept first when added) and scaled rows.
    y : ndarray of shape (n,)
        Labels in {-1, 1}.
    w : ndarray of shape (n,) or None
        Weights after DPpack's clipping at the bound (None when unweighted).
    """

    Z: NDArray[np.float64]
    y: NDArray[np.float64]
    w: Optional[NDArray[np.float64]]


@dataclass(frozen=True)
class DPpackFits:
    """K fits of one DPpack model on the same data, one row per seed.

    Attributes
    ----------
    coef : ndarray of shape (K, d)
        DPpack's ``coeff`` (original feature space; intercept first when added).
    scaled_coef : ndarray of shape (K, d)
        The same fits in DPpack's scaled space, ``coef * column_scale *
        dimension_scale`` computed in R (within a few ulps of DPpack's internal
        vector; identical to ``coef`` for ``WeightedERMDP.CMS``, which does not scale).
    column_scale : ndarray of shape (d,)
        DPpack's ``scale1`` = max(|lower|, |upper|) per column (1 for the intercept).
    dimension_scale : float
        DPpack's ``scale2`` = sqrt(d) (1 for ``WeightedERMDP.CMS``).
    seeds : ndarray of shape (K,)
        The R seeds, in row order.
    fit_seconds : ndarray of shape (K,)
        Wall time of each ``fit`` call alone, measured inside R with ``Sys.time``.
    data : DPpackData or None
        DPpack's preprocessed data when requested.
    """

    coef: NDArray[np.float64]
    scaled_coef: NDArray[np.float64]
    column_scale: NDArray[np.float64]
    dimension_scale: float
    seeds: NDArray[np.int64]
    fit_seconds: NDArray[np.float64]
    data: Optional[DPpackData] = None


def _f64_matrix(name: str, X: ArrayLike) -> NDArray[np.float64]:
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2 or X.shape[0] < 1 or X.shape[1] < 1:
        raise ValueError(f"{name} must be a non-empty 2-d array, got shape {X.shape}.")
    return np.ascontiguousarray(X)


def _f64_vector(name: str, v: ArrayLike, n: int) -> NDArray[np.float64]:
    v = np.asarray(v, dtype=np.float64).ravel()
    if v.shape[0] != n:
        raise ValueError(f"{name} must have length {n} (one per row of X), got {v.shape[0]}.")
    return v


def _labels(name: str, y: ArrayLike, n: int) -> NDArray[np.float64]:
    y = _f64_vector(name, y, n)
    bad = (y != 1.0) & (y != -1.0)
    if bad.any():
        raise ValueError(f"{name} must be in {{-1, 1}}; {int(bad.sum())} of {n} entries are not.")
    return y


def _seeds(seeds: Sequence[int]) -> NDArray[np.int32]:
    arr = np.asarray(seeds)
    if arr.ndim != 1 or arr.shape[0] < 1 or arr.dtype.kind not in "iu":
        raise ValueError(f"seeds must be a non-empty 1-d sequence of integers, got {arr!r:.60}.")
    if np.any(np.abs(arr.astype(np.int64)) > R_SEED_MAX):
        raise ValueError(f"seeds must lie in [-{R_SEED_MAX}, {R_SEED_MAX}] (R integers).")
    return arr.astype(np.int32)


def _bounds(feature_bounds: Tuple[ArrayLike, ArrayLike], p: int) -> Tuple[np.ndarray, np.ndarray]:
    try:
        lower, upper = feature_bounds
    except (TypeError, ValueError):
        raise ValueError("feature_bounds must be a pair (lower, upper) of arrays.") from None
    # lengths are DPpack's to check: a mismatch comes back as R's own error
    return np.asarray(lower, dtype=np.float64).ravel(), np.asarray(upper, dtype=np.float64).ravel()


def _weights(sample_weight, n):
    return None if sample_weight is None else _f64_vector("sample_weight", sample_weight, n)


def _optional_float(value) -> Optional[float]:
    return None if value is None else float(value)


def _unpack(res, seeds, return_data: bool) -> DPpackFits:
    coef = np.array(res["coef"], dtype=np.float64, copy=True, ndmin=2)
    data = None
    if return_data:
        w = res["w"]
        data = DPpackData(
            Z=np.array(res["Z"], dtype=np.float64, copy=True),
            y=np.array(res["y"], dtype=np.float64, copy=True),
            w=None if w is None or not hasattr(w, "__len__") else np.array(w, dtype=np.float64, copy=True),
        )
    return DPpackFits(
        coef=coef,
        scaled_coef=np.array(res["scaled"], dtype=np.float64, copy=True, ndmin=2),
        column_scale=np.array(res["scale1"], dtype=np.float64, copy=True).ravel(),
        dimension_scale=float(np.asarray(res["scale2"]).ravel()[0]),
        seeds=seeds.astype(np.int64),
        fit_seconds=np.array(res["seconds"], dtype=np.float64, copy=True).ravel(),
        data=data,
    )


def fit_svmdp(
    X: ArrayLike,
    treatment: ArrayLike,
    sample_weight: Optional[ArrayLike] = None,
    *,
    epsilon: float,
    gamma: float,
    weights_upper_bound: Optional[float] = None,
    feature_bounds: Tuple[ArrayLike, ArrayLike],
    huber_h: float = 0.5,
    fit_intercept: bool = True,
    seeds: Sequence[int] = (1,),
    return_data: bool = False,
) -> DPpackFits:
    """Run DPpack's ``svmDP`` (linear kernel, output perturbation) once per seed.

    Parameters
    ----------
    X : array-like of shape (n, p)
        Features in the original space (DPpack clips them to the bounds).
    treatment : array-like of shape (n,)
        Labels in {-1, 1}; passed to DPpack as ``(treatment + 1) / 2``.
    sample_weight : array-like of shape (n,), optional
        Weights, e.g. OWL weights ``B / P(A | x)``; DPpack clips them at
        ``weights_upper_bound`` (as :class:`pydpowl.DPOWL` does). None: unweighted.
    epsilon : float
        Privacy budget; ``inf`` gives DPpack's non-private solution.
    gamma : float
        Regularisation constant (DPpack's convention).
    weights_upper_bound : float, optional
        Public bound W; required by DPpack when weights are given.
    feature_bounds : tuple (lower, upper)
        Public per-feature bounds (passed as ``upper.bounds=``/``lower.bounds=``).
    huber_h : float, default=0.5
        DPpack's ``huber.h``.
    fit_intercept : bool, default=True
        DPpack's ``add.bias`` (intercept column first, bounds [1, 1]).
    seeds : sequence of int, default=(1,)
        One fit per seed, each after ``set.seed(seed)``, all in one R call.
    return_data : bool, default=False
        Also return DPpack's preprocessed data (:class:`DPpackData`).

    Returns
    -------
    DPpackFits

    Raises
    ------
    RUnavailableError
        R, rpy2 or DPpack is missing (the message names ``make setup``).
    RError
        DPpack or R failed; the message is R's.
    """
    require_packages("DPpack")
    X = _f64_matrix("X", X)
    n = X.shape[0]
    y01 = (_labels("treatment", treatment, n) + 1.0) / 2.0
    lower, upper = _bounds(feature_bounds, X.shape[1])
    seeds_arr = _seeds(seeds)
    res = call_r_file(
        "dppack.R", "svmdp_fits", X=X, y=y01, upper=upper, lower=lower, eps=float(epsilon), gamma=float(gamma),
        weights=_weights(sample_weight, n), weights_upper_bound=_optional_float(weights_upper_bound),
        add_bias=bool(fit_intercept), huber_h=float(huber_h), seeds=seeds_arr, return_data=bool(return_data),
    )
    return _unpack(res, seeds_arr, return_data)


def fit_weighted_erm_cms(
    X: ArrayLike,
    y: ArrayLike,
    sample_weight: Optional[ArrayLike] = None,
    *,
    epsilon: float,
    gamma: float,
    weights_upper_bound: Optional[float] = None,
    loss: str = "huber",
    huber_h: float = 0.5,
    feature_bounds: Optional[Tuple[ArrayLike, ArrayLike]] = None,
    add_bias: bool = False,
    seeds: Sequence[int] = (1,),
    return_data: bool = False,
) -> DPpackFits:
    """Run DPpack's ``WeightedERMDP.CMS`` (output perturbation) once per seed.

    The model is ``mapXy.linear`` with the l2 regulariser and either DPpack's
    Huber hinge (``generate.loss.huber(h)`` and its gradient) or the weighted
    logistic loss ``w log(1 + exp(-y x'theta))`` written in R by this adapter
    (DPpack's ``loss.cross.entropy`` takes no weights). Labels stay in {-1, 1}.
    DPpack does not scale the data here: rows should already have l2 norm <= 1,
    as for :class:`pydpowl.DPWeightedERM`.

    Parameters
    ----------
    X : array-like of shape (n, d)
        Rows in the space the model is fitted in.
    y : array-like of shape (n,)
        Labels in {-1, 1}.
    sample_weight : array-like of shape (n,), optional
        Weights (DPpack clips them at ``weights_upper_bound``).
    epsilon, gamma, weights_upper_bound
        As in :func:`fit_svmdp`.
    loss : {"huber", "logistic"}, default="huber"
    huber_h : float, default=0.5
    feature_bounds : tuple (lower, upper), optional
        Clipping bounds passed by name; default ``[-1, 1]`` per column (a no-op
        for rows of norm <= 1).
    add_bias : bool, default=False
        DPpack's ``add.bias`` (an unscaled column of ones; rows may then exceed norm 1).
    seeds, return_data
        As in :func:`fit_svmdp`.

    Returns
    -------
    DPpackFits
        With ``scaled_coef == coef``, ``column_scale`` ones and ``dimension_scale`` 1.
    """
    if loss not in ("huber", "logistic"):
        raise ValueError(f"loss must be one of {{'huber', 'logistic'}}, got loss={loss!r}.")
    require_packages("DPpack")
    X = _f64_matrix("X", X)
    n, p = X.shape
    yy = _labels("y", y, n)
    if feature_bounds is None:
        feature_bounds = (-np.ones(p), np.ones(p))
    lower, upper = _bounds(feature_bounds, p)
    seeds_arr = _seeds(seeds)
    res = call_r_file(
        "dppack.R", "cms_fits", X=X, y=yy, upper=upper, lower=lower, eps=float(epsilon), gamma=float(gamma),
        loss=loss, weights=_weights(sample_weight, n), weights_upper_bound=_optional_float(weights_upper_bound),
        add_bias=bool(add_bias), huber_h=float(huber_h), seeds=seeds_arr, return_data=bool(return_data),
    )
    return _unpack(res, seeds_arr, return_data)

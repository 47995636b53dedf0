"""DTRlearn2's K-stage outcome weighted learning (``owl``), its simulation and its ADHD data, from numpy.

The cross-checks of :class:`pydpowl.DPMultiStageOWL` at ``epsilon = inf``
(``tests/r_reference/test_dtrlearn2.py``, the validation harness) compare its
regime with ``DTRlearn2::owl(H, AA, RR, n, K, pi, res.lasso, loss = "hinge",
kernel = "linear", augment = FALSE, c)``. DTRlearn2 at stage ``k`` solves, on
the subjects who followed its later rules (``n_k`` of them),

    min over (beta0, beta):  (1/2) ||beta||^2 + (c / n_k) sum_i |r_i| / pi_i hinge(A_i sign(r_i) (beta0 + h_i'beta))

(``WeightSVM::wsvm`` with ``cost = c / n_k`` and case weights ``|r_i|/pi_i``;
the intercept is not penalised), with ``r`` the cumulative reward's residual
from a least-squares fit on ``h`` (``res.lasso = FALSE``) or a
cross-validated lasso (``TRUE``), and recommends ``sign(beta0 + h'beta)``.
:func:`matched_gamma` gives pydpowl's ``gamma`` for the same objective.

The R code is in ``r_reference/dtrlearn2.R``; data cross as float64 matrices
(one column per stage; the histories side by side with their widths).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import List, Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._session import as_float_array, call_r_file, require_packages

__all__ = ["DTRlearn2Fit", "fit_dtrlearn2_owl", "sim_kstage", "adhd_data", "matched_gamma"]


@dataclass(frozen=True)
class DTRlearn2Fit:
    """One ``DTRlearn2::owl`` fit.

    Attributes
    ----------
    intercepts : ndarray of shape (K,)
    coefs : list of ndarray
        Stage k's ``beta`` (its history's width).
    treatments : ndarray of shape (n, K)
        DTRlearn2's recommendation for every subject at every stage (``predict(fit, H, K)``), in {-1, 1}.
    value : float
        DTRlearn2's estimated value of its regime (``valuefun``: the normalised IPW estimate).
    """

    intercepts: NDArray[np.float64]
    coefs: List[NDArray[np.float64]]
    treatments: NDArray[np.float64]
    value: float


def _matrix(stages: Sequence[ArrayLike]) -> NDArray[np.float64]:
    return np.ascontiguousarray(np.column_stack([np.asarray(s, dtype=np.float64) for s in stages]))


def fit_dtrlearn2_owl(H: Sequence[ArrayLike], A: Sequence[ArrayLike], R: Sequence[ArrayLike],
                      propensity: Sequence[ArrayLike], *, c: float, res_lasso: bool = False, folds: int = 3,
                      seed: int = 1) -> DTRlearn2Fit:
    """``DTRlearn2::owl`` with the hinge loss, a linear kernel, no augmentation and one value of ``c``.

    Parameters
    ----------
    H : list of K arrays of shape (n, p_k)
        Each stage's history.
    A : list of K arrays in {-1, 1}
    R : list of K arrays
        Rewards per stage (DTRlearn2's ``RR``).
    propensity : list of K arrays
        ``P(A_k | H_k)`` of the received treatments (DTRlearn2's ``pi``).
    c : float
        DTRlearn2's ``c`` (its cost is ``c / n_k``).
    res_lasso : bool, default=False
        DTRlearn2's residual: lasso (True) or least squares (False).
    folds : int, default=3
        DTRlearn2's ``m`` (its cross-validation folds; with one ``c`` they change nothing but the draws).
    seed : int
        ``set.seed`` before the fit (the folds).
    """
    require_packages("DTRlearn2")
    Hs = [np.asarray(h, dtype=np.float64) for h in H]
    widths = np.array([h.shape[1] for h in Hs], dtype=np.float64)
    res = call_r_file("dtrlearn2.R", "owl_hinge_linear", H=_matrix(Hs), widths=widths, AA=_matrix(A), RR=_matrix(R),
                      pi=_matrix(propensity), c=float(c), res_lasso=bool(res_lasso), m=int(folds), seed=int(seed))
    beta = as_float_array(res["beta"]).ravel()
    ends = np.cumsum(widths.astype(int))
    coefs = [beta[e - int(w):e].copy() for e, w in zip(ends, widths)]
    return DTRlearn2Fit(intercepts=as_float_array(res["beta0"]).ravel(), coefs=coefs,
                        treatments=as_float_array(res["treatment"]).reshape(len(Hs[0]), len(Hs)),
                        value=float(as_float_array(res["value"]).ravel()[0]))


def sim_kstage(n: int, n_cluster: int, pinfo: int, pnoise: int, K: int, *, seed: int) -> dict:
    """``DTRlearn2::sim_Kstage(n, n_cluster, pinfo, pnoise, K = K)`` after ``set.seed(seed)``.

    Returns a dict with ``X`` (n, pinfo + pnoise), ``A``, ``R`` and ``optA``, each (n, K).
    """
    require_packages("DTRlearn2")
    res = call_r_file("dtrlearn2.R", "sim_kstage", n=int(n), n_cluster=int(n_cluster), pinfo=int(pinfo),
                      pnoise=int(pnoise), K=int(K), seed=int(seed))
    return {name: as_float_array(res[name]).reshape(int(n), -1) for name in ("X", "A", "R", "optA")}


def adhd_data() -> dict:
    """DTRlearn2's ``adhd`` data with its documented histories: ``H1`` (150, 4), ``H2`` (150, 13), ``a1``,
    ``a2``, ``y`` (unscaled)."""
    require_packages("DTRlearn2")
    res = call_r_file("dtrlearn2.R", "adhd_data")
    return {name: as_float_array(res[name]) for name in ("H1", "H2", "a1", "a2", "y")}


def matched_gamma(c: float, n_k: int, n_columns: int, feature_scale: float) -> float:
    """pydpowl's ``gamma`` for DTRlearn2's stage objective with ``c`` on ``n_k`` followers (``n_columns`` = d,
    intercept included, features scaled by a common bound ``feature_scale``): ``n_k / (c d s^2)``, the
    engine's :func:`pydpowl.estimators.multistage.gamma_for_cost` (derivation there)."""
    from pydpowl.estimators.multistage import gamma_for_cost

    return gamma_for_cost(c, n_k, n_columns, feature_scale)

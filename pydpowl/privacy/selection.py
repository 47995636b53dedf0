"""Private selection: the exponential mechanism, and choosing gamma by the value of the rule.

:func:`exponential_mechanism` is the one implementation in pydpowl (tuning and
the end-to-end analysis use it). :func:`select_gamma_privately` chooses gamma
among K candidates without public data, in the spirit of Chaudhuri, Monteleoni
& Sarwate (2011, Algorithm 3):

1. the selection rows are split into K + 1 equal parts (a data-independent
   permutation; leftover rows are unused);
2. candidate k is fitted on part k by output perturbation with budget
   ``epsilon`` (Algorithm 1);
3. every candidate is scored on the last part, and k is drawn with probability
   proportional to ``exp(epsilon * s_k / (2 Delta_s))``.

Scores
------
``"value"`` (default): the unnormalised inverse-probability-weighted value of
the rule, ``s_k = sum_i w_i 1{f_k(x_i) = A_i}`` with the clipped OWL weights
``w_i = min(B_i / P(A_i | x_i), W)`` in ``[0, W]``. It is the OWL objective's
weighted agreement (the weighted misclassification ``sum_i w_i 1{f_k(x_i) !=
A_i}`` is ``sum_i w_i - s_k``), and ``s_k / m`` is the Horvitz-Thompson value
of rule k when benefits are shifted to be non-negative.

``"accuracy"``: the number of validation subjects whose optimal treatment the
rule recommends. It needs the optimal rule, so it exists for simulated data
only; DPpack's ``tune_classification_model`` scores by unweighted
(mis)classification of the observed label, which for OWL would reward
predicting the treatment each patient happened to receive.

Sensitivity (derived from public bounds)
----------------------------------------
Neighbouring datasets differ in one record (replacement; n public).

* The record is in the scoring part: the candidates are unchanged and each
  ``s_k`` changes by one term ``w_j 1{...}`` in ``[0, W]``, so
  ``|s_k(D) - s_k(D')| <= W``: ``Delta_s = W`` for the value score (1 for
  accuracy). The exponential mechanism is then ``epsilon``-DP.
* The record is in part k: only candidate k changes, and it is an
  ``epsilon``-DP release (this needs the weights of the other records not to
  move, C = 0: known propensities or a propensity model released beforehand);
  the choice is post-processing of it.

Every record is in one part, so the selection is ``epsilon``-DP for the
selection rows (parallel composition over the disjoint parts).
"""

from __future__ import annotations

import math
from typing import Any, Optional, Sequence, Tuple

import numpy as np
from numpy.typing import NDArray

from .._validation import check_positive
from ..engine.losses import HuberHingeLoss, loss_lipschitz
from ..engine.mechanisms import exponential_mechanism, output_mechanism
from ..engine.solver import DEFAULT_TOL, solve_each

__all__ = ["exponential_mechanism", "score_sensitivity", "rule_scores", "select_gamma_privately", "transfer_gamma",
           "SCORES", "TRANSFERS"]

#: scores :func:`select_gamma_privately` knows
SCORES = ("value", "accuracy")
#: ways :func:`transfer_gamma` knows
TRANSFERS = ("bound", "none")


def score_sensitivity(score: str, weights_upper_bound: float) -> float:
    """``Delta_s``: W for the value score, 1 for accuracy (see the module docstring)."""
    if score not in SCORES:
        raise ValueError(f"score must be one of {list(SCORES)}, got score={score!r}.")
    w_max = check_positive("weights_upper_bound", weights_upper_bound)
    return w_max if score == "value" else 1.0


def rule_scores(recommends_plus: NDArray[np.bool_], treatment: NDArray[np.float64], weights: NDArray[np.float64],
                *, score: str = "value", optimal: Optional[NDArray[np.float64]] = None) -> NDArray[np.float64]:
    """Scores of K rules (columns of ``recommends_plus``, shape (m, K)) on m scoring rows.

    ``"value"``: ``sum_i w_i 1{rule_k(x_i) = A_i}``; ``"accuracy"``:
    ``sum_i 1{rule_k(x_i) = optimal_i}``.
    """
    rules = np.asarray(recommends_plus, dtype=bool)
    if score == "value":
        follows = rules == (np.asarray(treatment) > 0)[:, None]
        return np.asarray(weights, dtype=np.float64) @ follows
    if score == "accuracy":
        if optimal is None:
            raise ValueError("score='accuracy' needs the optimal rule (simulated data); use score='value'.")
        return (rules == (np.asarray(optimal) > 0)[:, None]).sum(axis=0).astype(np.float64)
    raise ValueError(f"score must be one of {list(SCORES)}, got score={score!r}.")


def select_gamma_privately(Z: NDArray[np.float64], y: NDArray[np.float64], w: NDArray[np.float64],
                           rows: NDArray[np.int64], gammas: Sequence[float], *, epsilon: float,
                           weights_upper_bound: float, huber_h: float = 0.5, score: str = "value",
                           optimal: Optional[NDArray[np.float64]] = None, rng: Any) -> Tuple[float, int]:
    """Choose gamma privately among candidates fitted on disjoint parts of ``rows``.

    Parameters
    ----------
    Z : ndarray of shape (n, d)
        Scaled design rows (``||z|| <= 1``, intercept column included).
    y : ndarray of shape (n,)
        Received treatments in {-1, 1}.
    w : ndarray of shape (n,)
        OWL weights in ``[0, weights_upper_bound]``, each a function of its own
        record only (C = 0: known or released propensities).
    rows : ndarray of int
        The selection rows, in a data-independent random order.
    gammas : sequence of float
        The K candidates.
    epsilon : float
        Budget of the selection (each candidate fit and the exponential mechanism).
    weights_upper_bound : float
        W (the value score's sensitivity).
    huber_h : float, default=0.5
    score : {"value", "accuracy"}, default="value"
    optimal : ndarray, optional
        The optimal treatments (``score="accuracy"`` only).
    rng : numpy.random.Generator

    Returns
    -------
    gamma : float
        The selected candidate (for a fit on ``n_part`` rows with ``epsilon``).
    n_part : int
        Rows per candidate fit.
    """
    eps = check_positive("epsilon", epsilon)
    sens = score_sensitivity(score, weights_upper_bound)
    grid = [check_positive("gammas", g) for g in gammas]
    K = len(grid)
    rows = np.asarray(rows)
    n_part = rows.size // (K + 1)
    if n_part < 2:
        raise ValueError(f"the selection data ({rows.size} rows) are too small for {K} candidates: each needs a "
                         f"disjoint part of at least 2 rows ({2 * (K + 1)} rows in all); use fewer gammas.")
    parts = rows[: K * n_part].reshape(K, n_part)
    val = rows[K * n_part:]
    loss = HuberHingeLoss(huber_h)
    # each candidate is a DP-OWL release on its own part (C = 0: own records), through the one output release:
    # its checks (noise scale, grid, reach) run before the data are touched
    mechanisms = [output_mechanism(epsilon=eps, gamma=gamma, weights_upper_bound=weights_upper_bound, C=0.0,
                                   lipschitz=loss_lipschitz(loss), n_samples=n_part, tol=DEFAULT_TOL)
                  for gamma in grid]
    theta = solve_each(Z[parts], y[parts], w[parts], gamma=np.asarray(grid), loss=loss, tol=DEFAULT_TOL)
    noisy = np.array([mechanism.release(theta[k], rng=rng)[0] for k, mechanism in enumerate(mechanisms)])
    rules = (Z[val] @ noisy.T) > 0
    scores = rule_scores(rules, y[val], w[val], score=score, optimal=None if optimal is None else optimal[val])
    k = exponential_mechanism(scores, epsilon=eps, sensitivity=sens, rng=rng)
    return float(grid[k]), n_part


def transfer_gamma(gamma: float, *, transfer: str, n_part: int, epsilon_select: float, n_fit: int,
                   epsilon_fit: float) -> float:
    """Carry a gamma selected for ``(n_part, epsilon_select)`` over to the final fit ``(n_fit, epsilon_fit)``.

    ``"bound"`` scales it by ``sqrt((n_fit / n_part) * (epsilon_select / epsilon_fit))``, the scaling of
    the gamma that minimises the utility bound (``gamma* ~ sqrt(n / epsilon)``,
    :mod:`pydpowl.studies.bounds`); ``"none"`` keeps it. Public inputs only.
    """
    if transfer not in TRANSFERS:
        raise ValueError(f"transfer must be one of {list(TRANSFERS)}, got transfer={transfer!r}.")
    if transfer == "none":
        return float(gamma)
    return float(gamma) * math.sqrt((n_fit / n_part) * (epsilon_select / epsilon_fit))

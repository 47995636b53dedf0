"""DP-OWL's defaults (mechanism, residual weights, Huber h, gamma), taken from the utility study.

The study (:mod:`pydpowl.studies.utility`, docs/utility.md) compared the
paper's output perturbation, weighted objective perturbation and both with
residual weights on three designs, n in {500, 1459, 5000, 20000} and epsilon
in {0.25, 0.5, 1, 2, 5}. What it chose, and why:

* **mechanism** ``"objective"`` whenever the weights depend on their own
  record only (C = 0): its noise does not grow with 1/gamma, and it was
  better than output perturbation in every cell; ``"output"`` otherwise (its
  sensitivity carries C) and with ``reproduce_dppack``.
* **residual weights** whenever C = 0 and the benefit's public bounds are
  known, with the residual clipped to 1/16 of the benefit range
  (:data:`~pydpowl.estimators.residual.RESIDUAL_CLIP_SHARE`) and 10 % of the
  budget for the baseline.
* **Huber h = 1** for objective perturbation (:data:`OBJECTIVE_HUBER_H`): the
  curvature bound 1/(2h) sets the ridge floor, and with h = 0.5 the rule's
  regret stopped falling with n on two designs; output perturbation keeps
  the paper's (and DPpack's) h = 0.5.
* **gamma** by :func:`default_gamma`, a function of n, epsilon, d and W only
  (public), fitted to the oracle gammas of the paper's and the CYP-style
  designs and checked on the third (Zhao et al.'s).

The K-arm rule (``d = (K - 1)(p + 1)``) uses the same defaults: on the
three-arm design (``benchmarks/multiarm_objective.py``, docs/utility.md,
"K arms") objective perturbation with residual weights was the best release
or tied with the best in 10 of 12 cells.
"""

from __future__ import annotations

import math
from typing import Any, Dict

from .._validation import check_choice, check_epsilon, check_int, check_positive

__all__ = ["default_gamma", "OUTPUT_GAMMA_FACTOR", "OBJECTIVE_GAMMA_SCALE", "OBJECTIVE_HUBER_H", "OUTPUT_HUBER_H",
           "PAPER_MECHANISM"]

#: output perturbation: gamma = OUTPUT_GAMMA_FACTOR sqrt(n W d / epsilon)
OUTPUT_GAMMA_FACTOR = 0.6
#: objective perturbation: gamma = floor * max(1, d sqrt(OBJECTIVE_GAMMA_SCALE / (n epsilon)))
OBJECTIVE_GAMMA_SCALE = 1000.0
#: Huber h of objective perturbation (the study's choice) and of output perturbation (the paper's, DPpack's)
OBJECTIVE_HUBER_H = 1.0
OUTPUT_HUBER_H = 0.5
#: the smallest gamma the rule returns (objective perturbation's floor vanishes as epsilon grows)
MIN_GAMMA = 1e-6
#: DPOWL's settings of the paper's mechanism (Algorithm 1 with OWL weights; the paper's studies reproduce it)
PAPER_MECHANISM: Dict[str, Any] = {"mechanism": "output", "residual": False}


def default_gamma(*, perturbation: str, n_samples: int, epsilon: float, dim: int, weights_upper_bound: float,
                  huber_h: float) -> float:
    """The public gamma rule of a perturbation: a function of n, epsilon, d and W (and the loss's h) only.

    * ``"output"``: ``0.6 sqrt(n W d / epsilon)`` (the utility bound's ``gamma ~ sqrt(n / epsilon)``
      scaling, :mod:`pydpowl.studies.bounds`, with the noise's ``W d``);
    * ``"objective"``: the ridge floor ``W c / (e^{epsilon/2} - 1)`` (``c = 1/(2h)``)
      times ``max(1, d sqrt(1000 / (n epsilon)))``: more regularisation when
      ``n epsilon`` is small next to the dimension.

    Parameters
    ----------
    perturbation : {"output", "objective"}
    n_samples : int
        Rows of the fit (public).
    epsilon : float
        The rule's own budget (after any baseline share); inf gives the floor 0, so 1 is returned.
    dim : int
        Coefficients d (intercept included).
    weights_upper_bound : float
        W of the weights the rule is fitted with (residual weights: their bound).
    huber_h : float
        The Huber hinge's h.
    """
    check_choice("perturbation", perturbation, ("output", "objective"))
    n = check_int("n_samples", n_samples, minimum=1)
    eps = check_epsilon(epsilon)
    d = check_int("dim", dim, minimum=1)
    W = check_positive("weights_upper_bound", weights_upper_bound)
    h = check_positive("huber_h", huber_h)
    if eps == math.inf:
        return 1.0
    if perturbation == "output":
        return OUTPUT_GAMMA_FACTOR * math.sqrt(n * W * d / eps)
    from ..engine.mechanisms import objective_ridge_floor  # objective perturbation's module, loaded here only

    floor = objective_ridge_floor(epsilon=eps, weights_upper_bound=W, curvature=1.0 / (2.0 * h))
    # (at least MIN_GAMMA: the floor vanishes for huge budgets, and the objective must stay strongly convex)
    return max(MIN_GAMMA, floor * max(1.0, d * math.sqrt(OBJECTIVE_GAMMA_SCALE / (n * eps))))

"""The expected noise of a release, from public quantities only (n, the released dimension, epsilon, gamma, W, h,
Delta): the R front end's noise-dominated warning and its summaries."""

from __future__ import annotations

import math
from typing import Any, Dict

import numpy as np

from ..engine.losses import huber_hinge_value
from ..engine.mechanisms import weighted_objective_split

__all__ = ["owl_noise_scale", "release_noise", "noise_summary", "stage_noise"]


def owl_noise_scale(model: Any, n: int) -> Dict[str, Any]:
    """The noise of a fitted DPOWL's release, from public quantities only (see :func:`release_noise`).

    Objective perturbation: the linear term ``b`` (``||b||`` ~ Gamma(d, rate))
    moves the minimiser by at most ``||b|| / lambda`` (the objective is
    ``lambda``-strongly convex in DPpack's units, lambda its ridge), so the same
    formulas with ``1 / (rate lambda)`` for ``Delta / epsilon`` give upper bounds
    (the data's curvature only shrinks the move), and the minimiser's bound uses
    the ridge ``lambda`` and the rule's W.
    """
    eps = float(model.epsilon)
    if eps == math.inf:
        scale = 0.0
    elif model.mechanism_ == "objective":
        scale, _ = _objective_scale(n=n, epsilon=float(model.epsilon_rule_), gamma=float(model.gamma_),
                                    weights_upper_bound=float(model.rule_weights_upper_bound_),
                                    huber_h=float(model.huber_h_), tol=float(model.tol))
    else:
        scale = float(model.sensitivity_) / float(model.epsilon_rule_)
    return noise_summary(model.scaler_, np.size(model.scaled_coef_), scale=scale,
                         weights_upper_bound=float(model.rule_weights_upper_bound_), ridge=float(model.ridge_),
                         huber_h=float(model.huber_h_), n=n)


def _objective_scale(*, n: int, epsilon: float, gamma: float, weights_upper_bound: float, huber_h: float,
                     tol: float):
    """Objective perturbation's bound on the move of the minimiser per unit of noise scale (``1 / (rate
    lambda)``, see :func:`owl_noise_scale`) and the ridge ``lambda`` of the perturbed objective."""
    _, cal = weighted_objective_split(n=n, epsilon=epsilon, gamma=gamma, weights_upper_bound=weights_upper_bound,
                                      curvature=1.0 / (2.0 * huber_h), lipschitz=1.0, tol=tol)
    return 1.0 / (cal.rate * cal.ridge), cal.ridge


def stage_noise(stage: Any, *, n: int, tol: float) -> Dict[str, Any]:
    """The noise summary of one stage of a :class:`pydpowl.estimators.multistage.DPMultiStageOWL` (its
    ``StageRelease``): :func:`release_noise` for output perturbation, :func:`owl_noise_scale`'s bounds for
    objective perturbation (public quantities only)."""
    rule = stage.rule
    if stage.mechanism != "objective":
        return release_noise(rule.scaler, rule.scaled_coef.size, epsilon=stage.epsilon, sensitivity=stage.sensitivity,
                             weights_upper_bound=stage.weights_upper_bound, gamma=stage.gamma,
                             huber_h=stage.huber_h, n=n)
    scale, ridge = (0.0, stage.gamma) if stage.epsilon == math.inf else _objective_scale(
        n=n, epsilon=stage.epsilon, gamma=stage.gamma, weights_upper_bound=stage.weights_upper_bound,
        huber_h=stage.huber_h, tol=tol)
    return noise_summary(rule.scaler, rule.scaled_coef.size, scale=scale,
                         weights_upper_bound=stage.weights_upper_bound, ridge=ridge, huber_h=stage.huber_h, n=n)


def release_noise(scaler: Any, n_released: int, *, epsilon: float, sensitivity: float, weights_upper_bound: float,
                  gamma: float, huber_h: float, n: int) -> Dict[str, Any]:
    """The noise of one output-perturbation release of ``D = n_released`` coefficients, from public quantities
    only (n, D, epsilon, gamma, W, huber_h, Delta).

    The noise ``b`` has ``||b|| ~ Gamma(D, rate = epsilon/Delta)`` in DPpack's scaled
    space and a uniform direction, so ``E||b|| = D Delta/epsilon`` and each
    coordinate has ``E b_j^2 = E||b||^2 / D = (D + 1) (Delta/epsilon)^2``; mapped
    to the user's scale as the coefficients are (divided by ``sqrt(d)`` and the
    column's ``max(|lower_j|, |upper_j|)``, 1 for the intercept), that is
    ``sd``, one standard deviation per released coefficient (a ``(K - 1) x d``
    matrix for K arms). Any minimiser of ``F(theta) = (1/n) sum w_i l(m_i) +
    gamma/(2n) ||theta||^2`` with ``0 <= w_i <= W`` has ``gamma/(2n) ||theta||^2 <=
    F(0) <= W l(0)``, so ``||theta|| <= sqrt(2 n W l(0)/gamma)`` (for K arms too, in
    Frobenius norm): a release whose expected noise norm reaches that bound is
    noise-dominated whatever the data.
    """
    scale = 0.0 if epsilon == math.inf else sensitivity / epsilon
    return noise_summary(scaler, n_released, scale=scale, weights_upper_bound=weights_upper_bound, ridge=gamma,
                         huber_h=huber_h, n=n)


def noise_summary(scaler: Any, n_released: int, *, scale: float, weights_upper_bound: float, ridge: float,
                  huber_h: float, n: int) -> Dict[str, Any]:
    """The summary of :func:`release_noise` for noise of ``scale`` (``Delta / epsilon``) and the objective's ridge."""
    d = scaler.n_coefficients
    l0 = float(huber_hinge_value(np.zeros(1), huber_h)[0])
    bound = math.sqrt(2.0 * n * weights_upper_bound * l0 / ridge)
    per = np.full(d if n_released == d else (n_released // d, d), math.sqrt(n_released + 1.0) * scale)
    return {"expected_norm": n_released * scale, "minimiser_norm_bound": bound,
            "dominated": n_released * scale >= bound, "sd": scaler.coef_to_original(per)}

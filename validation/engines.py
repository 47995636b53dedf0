"""Run both engines on a case: one non-private fit and K private fits each.

Everything is returned in DPpack's scaled space. The noise of a private fit is
``released - non-private``: for pydpowl from the estimator's private
``keep_nonprivate`` attributes, for DPpack from the difference with its own
``eps = Inf`` fit (DPpack's optimiser is deterministic and draws its noise
after optimising, so every private fit starts from that same minimiser).
pydpowl's K fits are its default, floating-point-safe releases (rounded to a
grid about a thousandth of the noise scale, Delta with the solver-tolerance
term); the bit-for-bit replay (:func:`replay_noise`) uses ``reproduce_dppack``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Optional

import numpy as np

from pydpowl import DPOWL, DPWeightedERM, prepare_owl

from .cases import Case

__all__ = ["EngineRun", "run_pydpowl", "run_dppack", "replay_noise", "r_seeds"]


@dataclass(frozen=True)
class EngineRun:
    """One engine's fits on one case (scaled space).

    Attributes
    ----------
    engine : str
    seeds : ndarray of shape (K,) or None
        R seeds of the private fits (DPpack only).
    nonprivate : ndarray of shape (d,)
    noise : ndarray of shape (K, d)
    seconds : float
        Wall time of the K private fits.
    Z, y, w : ndarray
        The data as this engine's optimiser saw them.
    """

    engine: str
    nonprivate: np.ndarray
    noise: np.ndarray
    seconds: float
    Z: np.ndarray
    y: np.ndarray
    w: np.ndarray
    seeds: Optional[np.ndarray] = None


def r_seeds(seed: int, case_index: int, k: int) -> np.ndarray:
    """K distinct R seeds in [1, 2^31 - 1), derived from the run seed."""
    rng = np.random.default_rng([seed, case_index, 9])
    return rng.choice(2**31 - 2, size=k, replace=False) + 1


def _owl_estimator(case: Case, epsilon: float, random_state, reproduce_dppack: bool = False) -> DPOWL:
    # the cases' propensities are known randomisation probabilities: C = 0, stated
    return DPOWL(epsilon=epsilon, gamma=case.gamma, weights_upper_bound=case.weights_upper_bound,
                 feature_bounds=case.feature_bounds, huber_h=case.huber_h, weight_sensitivity=0.0,
                 mechanism="output", residual=False,  # DPpack's svmDP with weights: the paper's mechanism
                 reproduce_dppack=reproduce_dppack, keep_nonprivate=True, random_state=random_state)


def _werm_estimator(case: Case, epsilon: float, random_state, reproduce_dppack: bool = False) -> DPWeightedERM:
    return DPWeightedERM(epsilon=epsilon, gamma=case.gamma, weights_upper_bound=case.weights_upper_bound,
                         loss=case.loss, huber_h=case.huber_h, reproduce_dppack=reproduce_dppack,
                         keep_nonprivate=True, random_state=random_state)


def run_pydpowl(case: Case, k: int, *, seed: int, case_index: int) -> EngineRun:
    """Non-private fit and ``k`` private fits (numpy Generators seeded from ``seed``)."""
    if case.kind == "owl":
        est = _owl_estimator(case, np.inf, None).fit(case.X, case.y, case.benefit, case.propensity)
        problem = prepare_owl(case.X, case.y, case.benefit, case.propensity,
                              weights_upper_bound=case.weights_upper_bound, feature_bounds=case.feature_bounds,
                              weight_sensitivity=0.0)
        Z, y, w = problem.Z, problem.labels, problem.weights
        nonprivate = est.nonprivate_scaled_coef_
    else:
        est = _werm_estimator(case, np.inf, None).fit(case.X, case.y, case.weights)
        Z, y, w = case.X, case.y, case.weights
        nonprivate = est.nonprivate_coef_
    noise = np.empty((k, case.dim))
    t0 = time.perf_counter()
    for i in range(k):
        rng = np.random.default_rng([seed, case_index, i])
        if case.kind == "owl":
            e = _owl_estimator(case, case.epsilon, rng).fit(case.X, case.y, case.benefit, case.propensity)
            noise[i] = e.scaled_coef_ - e.nonprivate_scaled_coef_
        else:
            e = _werm_estimator(case, case.epsilon, rng).fit(case.X, case.y, case.weights)
            noise[i] = e.coef_ - e.nonprivate_coef_
    return EngineRun("pydpowl", np.asarray(nonprivate, dtype=float), noise, time.perf_counter() - t0,
                     np.asarray(Z), np.asarray(y, dtype=float), np.asarray(w, dtype=float))


def run_dppack(case: Case, k: int, *, seed: int, case_index: int) -> EngineRun:
    """DPpack's ``eps = Inf`` fit and ``k`` private fits, all seeds in one R call."""
    from r_reference import fit_svmdp, fit_weighted_erm_cms

    seeds = r_seeds(seed, case_index, k)
    if case.kind == "owl":
        raw_w = case.raw_owl_weights()  # DPpack clips at W itself

        def fit(eps, s, data=False):
            return fit_svmdp(case.X, case.y, raw_w, epsilon=eps, gamma=case.gamma,
                             weights_upper_bound=case.weights_upper_bound, feature_bounds=case.feature_bounds,
                             huber_h=case.huber_h, fit_intercept=True, seeds=s, return_data=data)
    else:
        def fit(eps, s, data=False):
            return fit_weighted_erm_cms(case.X, case.y, case.weights, epsilon=eps, gamma=case.gamma,
                                        weights_upper_bound=case.weights_upper_bound, loss=case.loss,
                                        huber_h=case.huber_h, seeds=s, return_data=data)

    exact = fit(np.inf, [1], True)
    nonprivate = exact.scaled_coef[0]
    t0 = time.perf_counter()
    private = fit(case.epsilon, seeds)
    seconds = time.perf_counter() - t0
    data = exact.data
    w: Optional[np.ndarray] = data.w
    return EngineRun("DPpack", nonprivate, private.scaled_coef - nonprivate, seconds, data.Z, data.y,
                     w if w is not None else np.ones(data.y.shape[0]), seeds=np.asarray(seeds))


def replay_noise(case: Case, seeds) -> np.ndarray:
    """pydpowl's noise when its generator is ``RRandom(seed)``, R's stream after ``set.seed(seed)``.

    DPpack draws ``rgamma(1, d, rate)`` then ``rnorm(d)`` after optimising; fed the same
    stream, pydpowl must release the same noise, draw for draw. The fits use
    ``reproduce_dppack=True``, the documented validation switch: DPpack's noise rate
    (no solver-tolerance term) and a full-precision release (no rounding).
    """
    import warnings

    from pydpowl import PrivacyLeakWarning, RRandom

    out = np.empty((len(seeds), case.dim))
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="reproduce_dppack=True", category=PrivacyLeakWarning)
        for i, s in enumerate(seeds):
            rng = RRandom(int(s))
            if case.kind == "owl":
                e = _owl_estimator(case, case.epsilon, rng, reproduce_dppack=True).fit(
                    case.X, case.y, case.benefit, case.propensity)
                out[i] = e.scaled_coef_ - e.nonprivate_scaled_coef_
            else:
                e = _werm_estimator(case, case.epsilon, rng, reproduce_dppack=True).fit(case.X, case.y, case.weights)
                out[i] = e.coef_ - e.nonprivate_coef_
    return out

"""Audit of weighted objective perturbation: the exact density of the minimiser and its worst ratio.

The mechanism (:func:`pydpowl.engine.mechanisms.release_weighted_objective`) releases the minimiser of

    G_D(theta) = sum_i w_i l(y_i z_i'theta) + (lambda / 2) ||theta||^2 + b'theta,

``||b||`` ~ Gamma(d, rate), uniform direction. ``theta`` is the minimiser exactly
when ``b = b_D(theta) = -sum_i w_i y_i l'(y_i z_i'theta) z_i - lambda theta``, so the
minimiser has the density (area formula; ``l''`` exists almost everywhere)

    p_D(theta) = nu(b_D(theta)) |det J_D(theta)|,   J_D = lambda I + sum_i w_i l''(m_i) z_i z_i',

with ``log nu(b) = const - rate ||b||``. This module evaluates that density
(:func:`log_density`), the log ratio of two neighbours at any point
(:func:`log_density_ratio`, the optimal statistic of a black-box test), and
searches for the neighbours and the point that make the ratio largest
(:func:`density_search`): the privacy loss the mechanism actually has, to be
compared with its claim. The labels enter only through ``y z`` (``l(y z'theta)``,
gradient ``l'(m) y z``, curvature ``l''(m) (y z)(y z)'``), so the search takes
``y = 1`` and lets ``z`` range over the unit ball.

:func:`sample_minimisers` draws exact minimisers through the engine's solver, so
a test can check the density formula itself against the mechanism (1-D: KS test).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any, Dict, Optional, Sequence, Tuple

import numpy as np
from numpy.typing import NDArray

from pydpowl.engine.losses import HuberHingeLoss, MarginLoss
from pydpowl.engine.mechanisms import loss_curvature, weighted_objective_calibration

__all__ = ["gradient_map", "log_jacobian", "log_density", "log_density_ratio", "DensityPair", "DensitySearchResult",
           "density_search", "sample_minimisers", "cms_ratio_constants"]


def _rows(theta: NDArray[np.float64]) -> NDArray[np.float64]:
    return np.atleast_2d(np.asarray(theta, dtype=np.float64))


def gradient_map(theta: NDArray[np.float64], Z: NDArray[np.float64], y: NDArray[np.float64], w: NDArray[np.float64],
                 *, ridge: float, loss: MarginLoss) -> NDArray[np.float64]:
    """``b_D(theta)`` for each row of ``theta`` (shape (k, d)): the linear term whose minimiser is ``theta``."""
    T = _rows(theta)
    M = (Z @ T.T) * y[:, None]  # margins (n, k)
    coef = w[:, None] * y[:, None] * loss.deriv(M)  # (n, k)
    return -(coef.T @ Z) - ridge * T


def log_jacobian(theta: NDArray[np.float64], Z: NDArray[np.float64], y: NDArray[np.float64],
                 w: NDArray[np.float64], *, ridge: float, loss: MarginLoss) -> NDArray[np.float64]:
    """``log det(lambda I + sum_i w_i l''(m_i) z_i z_i')`` for each row of ``theta``."""
    T = _rows(theta)
    d = T.shape[1]
    M = (Z @ T.T) * y[:, None]
    curv = w[:, None] * loss.deriv2(M)  # (n, k)
    H = np.einsum("nk,ni,nj->kij", curv, Z, Z) + ridge * np.eye(d)[None]
    sign, logdet = np.linalg.slogdet(H)
    if np.any(sign <= 0):
        raise AssertionError("the Hessian of the perturbed objective must be positive definite.")
    return logdet


def log_density(theta, Z, y, w, *, ridge: float, rate: float, loss: MarginLoss) -> NDArray[np.float64]:
    """``log p_D(theta)`` up to the constant of the noise law (the same for every dataset)."""
    b = gradient_map(theta, Z, y, w, ridge=ridge, loss=loss)
    return -rate * np.linalg.norm(b, axis=1) + log_jacobian(theta, Z, y, w, ridge=ridge, loss=loss)


def log_density_ratio(theta, D0: Tuple[NDArray, NDArray, NDArray], D1: Tuple[NDArray, NDArray, NDArray], *,
                      ridge: float, rate: float, loss: MarginLoss) -> NDArray[np.float64]:
    """``log p_D(theta) - log p_D'(theta)`` for each row of ``theta``; ``D0``, ``D1`` are ``(Z, y, w)``."""
    return (log_density(theta, *D0, ridge=ridge, rate=rate, loss=loss)
            - log_density(theta, *D1, ridge=ridge, rate=rate, loss=loss))


def cms_ratio_constants(*, epsilon: float, gamma: float, weights_upper_bound: float, curvature: float
                        ) -> Tuple[float, float]:
    """``(ridge, rate)`` of DPpack's CMS calibration applied with weights (c replaced by W c, the linear
    term's sensitivity 2W): the looser Jacobian bound ``2 log(1 + W c / gamma)``, for comparison."""
    from pydpowl.engine.mechanisms import cms_calibration

    cal = cms_calibration(epsilon=epsilon, gamma=gamma, c=weights_upper_bound * curvature, n=1)
    return gamma + cal.Delta, cal.epsilon_prime / (2.0 * weights_upper_bound)


@dataclass(frozen=True)
class DensityPair:
    """Two neighbouring datasets (record 0 replaced) and the point where their log density ratio is largest."""

    D0: Tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]
    D1: Tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]
    theta: NDArray[np.float64]
    log_ratio: float
    gradient_change: float
    jacobian_log_ratio: float

    def as_dict(self) -> Dict[str, Any]:
        return {"D0": [a.tolist() for a in self.D0], "D1": [a.tolist() for a in self.D1],
                "theta": self.theta.tolist(), "log_ratio": self.log_ratio,
                "gradient_change": self.gradient_change, "jacobian_log_ratio": self.jacobian_log_ratio}


@dataclass
class DensitySearchResult:
    """Worst log density ratio found for one calibration (see :func:`density_search`).

    Attributes
    ----------
    epsilon : float
        The claim.
    ridge, rate : float
        The mechanism's constants.
    worst : DensityPair
        The pair and point of the largest ``log p_D - log p_D'``.
    worst_gradient_ratio : float
        Largest ``||b_D(theta) - b_D'(theta)|| / (2 W L)`` seen (must be <= 1).
    worst_jacobian_ratio : float
        Largest ``(log det J_D - log det J_D') / log(1 + W c / lambda)`` seen (must be <= 1).
    n_evaluations : int
    seconds : float
    """

    epsilon: float
    ridge: float
    rate: float
    worst: DensityPair
    worst_gradient_ratio: float
    worst_jacobian_ratio: float
    n_evaluations: int = 0
    seconds: float = 0.0
    label: str = ""
    notes: Tuple[str, ...] = field(default_factory=tuple)

    @property
    def ratio(self) -> float:
        """Worst log density ratio over the claim (must be <= 1)."""
        return self.worst.log_ratio / self.epsilon


def _unpack(u: NDArray[np.float64], d: int, k: int, W: float, d_theta: Optional[int] = None):
    """Variables -> (base rows, base weights, record in D, record in D', theta); rows in R^d, theta in
    R^d_theta (``d`` unless the rows are expanded, :func:`density_search`'s ``n_arms``)."""
    def ball(v):
        v = v.reshape(-1, d)
        return v / np.maximum(1.0, np.linalg.norm(v, axis=1))[:, None]

    def weight(v):
        return W * np.clip(v, 0.0, 1.0)

    i = 0
    Zb = ball(u[i:i + k * d])
    i += k * d
    wb = weight(u[i:i + k])
    i += k
    z0 = ball(u[i:i + d])[0]
    i += d
    w0 = float(weight(u[i:i + 1])[0])
    i += 1
    z1 = ball(u[i:i + d])[0]
    i += d
    w1 = float(weight(u[i:i + 1])[0])
    i += 1
    theta = u[i:i + (d if d_theta is None else d_theta)]
    return Zb, wb, z0, w0, z1, w1, theta


def density_search(*, dim: int, epsilon: float, gamma: float, weights_upper_bound: float, huber_h: float = 0.5,
                   n_base: int = 3, n_starts: int = 60, maxiter: int = 400, seed: int = 0,
                   constants: Optional[Tuple[float, float]] = None, label: str = "",
                   n_arms: Optional[int] = None) -> DensitySearchResult:
    """Search neighbouring datasets and a point that maximise ``log p_D(theta) - log p_D'(theta)``.

    Datasets have ``n_base`` common records and record 0 replaced; every row
    is in the unit ball, every weight in ``[0, W]``, labels ``+1`` (see the
    module docstring), the loss the Huber hinge. Starts: random, and built so
    that record 0 of D sits in the quadratic zone at theta with weight W while
    its replacement and the common records sit in the flat or linear zones;
    each start is refined by Nelder-Mead then Powell on the box-mapped variables.

    Parameters
    ----------
    dim : int
        Dimension d of theta.
    epsilon, gamma, weights_upper_bound, huber_h : float
        The mechanism's settings (its constants from
        :func:`pydpowl.engine.mechanisms.weighted_objective_calibration`, unless
        ``constants=(ridge, rate)`` is given, e.g. :func:`cms_ratio_constants`).
    n_base, n_starts, maxiter, seed : int
    n_arms : int, optional
        K >= 3: the K-arm problem's records. Each row is ``V_a kron z`` with ``z`` in the unit ball of R^dim
        and ``V_a`` an arm's simplex vertex (:func:`pydpowl.engine.multicategory.expand_rows`), theta is
        ``vec(Theta)`` in R^((K-1) dim); the arms of the common records and of record 0 in D and in D' are
        drawn per start (different arms for record 0 on every other start) and kept while the continuous
        variables are optimised.
    """
    from scipy import optimize

    t0 = time.perf_counter()
    loss = HuberHingeLoss(huber_h)
    c = loss_curvature(loss)
    W = float(weights_upper_bound)
    cal = weighted_objective_calibration(epsilon=epsilon, gamma=gamma, weights_upper_bound=W, curvature=c)
    ridge, rate = (cal.ridge, cal.rate) if constants is None else constants
    jac_bound = math.log1p(W * c / ridge)
    d, k = int(dim), int(n_base)
    ones = np.ones(k + 1)
    state = {"n": 0, "grad": 0.0, "jac": 0.0}
    rng = np.random.default_rng(seed)
    if n_arms is None:
        V, d_theta = None, d
    else:
        from pydpowl.engine.multicategory import simplex_vertices

        V = simplex_vertices(n_arms)
        d_theta = (n_arms - 1) * d
    arms: Dict[str, Any] = {"base": np.zeros(k, dtype=int), "0": 0, "1": 0}  # drawn per start (K arms)

    def expand(Z, a):
        return Z if V is None else (V[a][:, :, None] * Z[:, None, :]).reshape(len(a), -1)  # rows V_a kron z

    def datasets(u):
        Zb, wb, z0, w0, z1, w1, theta = _unpack(u, d, k, W, d_theta)
        D0 = (expand(np.vstack([z0, Zb]), np.r_[arms["0"], arms["base"]]), ones, np.r_[w0, wb])
        D1 = (expand(np.vstack([z1, Zb]), np.r_[arms["1"], arms["base"]]), ones, np.r_[w1, wb])
        return D0, D1, theta

    def measure(u):
        D0, D1, theta = datasets(u)
        b0 = gradient_map(theta, *D0, ridge=ridge, loss=loss)[0]
        b1 = gradient_map(theta, *D1, ridge=ridge, loss=loss)[0]
        j0 = log_jacobian(theta, *D0, ridge=ridge, loss=loss)[0]
        j1 = log_jacobian(theta, *D1, ridge=ridge, loss=loss)[0]
        lr = -rate * (np.linalg.norm(b0) - np.linalg.norm(b1)) + j0 - j1
        state["n"] += 1
        state["grad"] = max(state["grad"], float(np.linalg.norm(b0 - b1)) / (2.0 * W))
        state["jac"] = max(state["jac"], (j0 - j1) / jac_bound)
        return float(lr), D0, D1, theta, float(np.linalg.norm(b0 - b1)), float(j0 - j1)

    def neg(u):
        return -measure(u)[0]

    n_var = k * d + k + 2 * (d + 1) + d_theta
    best: Optional[DensityPair] = None
    for s in range(n_starts):
        if V is not None:
            arms["base"] = rng.integers(0, n_arms, k)
            arms["0"] = int(rng.integers(0, n_arms))
            arms["1"] = int((arms["0"] + rng.integers(1, n_arms)) % n_arms) if s % 2 == 0 else arms["0"]
        u = np.empty(n_var)
        u[:k * d] = rng.uniform(-1, 1, k * d)
        u[k * d:k * d + k] = rng.uniform(0, 1, k)
        rest = rng.uniform(-1, 1, 2 * (d + 1) + d_theta)
        u[k * d + k:] = rest
        if s % 2 == 0:  # structured: record 0 of D in the quadratic zone with weight W, its replacement flat
            direction = rng.normal(size=d)
            direction /= np.linalg.norm(direction)
            t = rng.uniform(0.6, 1.4)  # margin of record 0 of D in [1 - h, 1 + h] for h = 0.5
            i = k * d + k
            u[i:i + d] = direction
            u[i + d] = 1.0
            u[i + d + 1:i + 2 * d + 1] = -direction * rng.uniform(0.0, 1.0)
            u[i + 2 * d + 1] = rng.uniform(0.5, 1.0)
            u[-d_theta:] = (direction if V is None else np.kron(V[arms["0"]], direction)) * t
            u[:k * d] = np.tile(direction, k) * rng.uniform(2.0, 4.0)  # common rows far in the flat zone
        res = optimize.minimize(neg, u, method="Nelder-Mead", options={"maxiter": maxiter, "xatol": 1e-9,
                                                                       "fatol": 1e-12})
        res = optimize.minimize(neg, res.x, method="Powell", options={"maxiter": maxiter, "xtol": 1e-9})
        lr, D0, D1, theta, g, j = measure(res.x)
        if best is None or lr > best.log_ratio:
            best = DensityPair(D0=D0, D1=D1, theta=np.asarray(theta, dtype=np.float64), log_ratio=lr,
                               gradient_change=g, jacobian_log_ratio=j)
    if best is None:  # one pair per start
        raise ValueError(f"n_starts must be >= 1, got n_starts={n_starts!r}.")
    return DensitySearchResult(epsilon=float(epsilon), ridge=ridge, rate=rate, worst=best,
                               worst_gradient_ratio=state["grad"], worst_jacobian_ratio=state["jac"],
                               n_evaluations=int(state["n"]), seconds=time.perf_counter() - t0, label=label)


def sample_minimisers(Z, y, w, *, ridge: float, rate: float, loss: MarginLoss, size: int,
                      rng: np.random.Generator) -> NDArray[np.float64]:
    """Exact minimisers of ``G_D`` for ``size`` draws of ``b`` (the engine's certified solver)."""
    from pydpowl.engine.mechanisms import sample_output_noise
    from pydpowl.engine.solver import solve_weighted_erm

    d = Z.shape[1]
    out = np.empty((size, d))
    for s in range(size):
        b = sample_output_noise(d, rate, rng=rng)
        out[s] = solve_weighted_erm(Z, y, w, gamma=ridge, loss=loss, linear=b, tol=1e-12, objective=False).x
    return out


# ----------------------------------------------------------------------------- the audit configuration


@dataclass(frozen=True)
class ObjectiveAuditConfig:
    """Weighted objective perturbation through a public estimator: the audit's density search and black box.

    ``kind="werm"``: :class:`pydpowl.DPWeightedERM(mechanism="objective")` on
    rows of the unit ball (a record ``(x, w)``, ``x`` in ``[-1, 1]^p`` mapped to
    the ball as in :class:`~validation.audit.configs.AuditConfig`, ``w`` in
    ``[0, W]``). ``kind="owl"``: :class:`pydpowl.DPOWL(mechanism="objective")`
    with an intercept, features in ``[-1, 1]^p``, benefits in ``[0, W / 2]``
    and known propensity 1/2 (so weights in ``[0, W]``). ``kind="multiarm"``:
    the same DPOWL with three arms (-1, 0, 1), benefits in ``[0, W / 3]`` and
    known propensity 1/3: the release is ``vec(Theta)``, ``2 (p + 1)``
    numbers, and the rows the mechanism sees are ``V_a kron z``.

    The verdict has two parts: the density search (:func:`density_search`, the
    worst ``log p_D / p_D'`` over neighbours and points for the estimator's own
    constants, must be <= epsilon) and the black-box test on releases through
    ``fit``, whose statistic is the exact log density ratio at each release
    (the most powerful test for the pair).
    """

    name: str
    title: str
    kind: str
    epsilons: Tuple[float, ...]
    gamma: float
    weights_upper_bound: float
    n: int
    p: int
    huber_h: float = 0.5
    notes: Tuple[str, ...] = field(default_factory=tuple)
    propensity: str = "known"
    compare_dppack: bool = False  # DPpack refuses objective perturbation with weights
    max_releases_per_split: int = 4000
    conditional: bool = False
    sensitivity_applies: bool = False
    maps_releases: bool = True
    delta: float = 0.0

    @property
    def n_arms(self) -> int:
        return 3 if self.kind == "multiarm" else 2

    @property
    def d(self) -> int:
        return self.p if self.kind == "werm" else (self.n_arms - 1) * (self.p + 1)

    # -- data ------------------------------------------------------------------
    def _record(self, x: NDArray[np.float64], v: float) -> Tuple[NDArray[np.float64], float]:
        if self.kind == "werm":
            x = x / max(1.0, float(np.linalg.norm(x)))
        return x, v

    @property
    def _top(self) -> float:
        return self.weights_upper_bound if self.kind == "werm" else self.weights_upper_bound / self.n_arms

    def audit_pair(self, seed: int):
        """Balanced base (pairs of equal records with opposite labels; for three arms triples, one per arm),
        record 0 at a corner with the top weight, its label (arm) changed in D'."""
        from .configs import Dataset

        rng = np.random.default_rng([seed, 5])
        X = rng.uniform(-1, 1, (self.n, self.p))
        v = rng.uniform(0, self._top, self.n)
        y = rng.choice([-1.0, 1.0], self.n)
        group = self.n_arms
        for i in range(1, self.n - group + 1, group):
            X[i + 1:i + group], v[i + 1:i + group] = X[i], v[i]
            y[i:i + group] = (1.0, -1.0) if group == 2 else (-1.0, 0.0, 1.0)
        rows = [self._record(X[i], v[i]) for i in range(self.n)]
        X = np.array([r[0] for r in rows])
        corner = np.where(rng.integers(0, 2, self.p) > 0, 1.0, -1.0)
        x0, v0 = self._record(corner, self._top)
        X[0], v[0], y[0] = x0, v0, 1.0
        D = Dataset(X, y, v)
        return D, D.with_record(0, x0, -1.0, v0)

    # -- pydpowl ---------------------------------------------------------------
    def estimator(self, epsilon: float, random_state: Any = None) -> Any:
        from pydpowl import DPOWL, DPWeightedERM

        if self.kind == "werm":
            return DPWeightedERM(epsilon=epsilon, gamma=self.gamma, weights_upper_bound=self.weights_upper_bound,
                                 huber_h=self.huber_h, mechanism="objective", random_state=random_state)
        return DPOWL(epsilon=epsilon, gamma=self.gamma, weights_upper_bound=self.weights_upper_bound,
                     feature_bounds=(-np.ones(self.p), np.ones(self.p)), huber_h=self.huber_h,
                     mechanism="objective", residual=False, random_state=random_state)  # h as configured

    def fit(self, data, epsilon: float, random_state: Any = None):
        model = self.estimator(epsilon, random_state)
        if self.kind == "werm":
            return model.fit(data.X, data.y, data.v)
        return model.fit(data.X, data.y, data.v, 1.0 / self.n_arms)

    def _released(self, model) -> NDArray[np.float64]:
        return np.ravel(np.asarray(model.coef_ if self.kind == "werm" else model.scaled_coef_, dtype=np.float64))

    def minimiser(self, data) -> Tuple[NDArray[np.float64], float]:
        """The exact minimiser at ridge gamma (``epsilon = inf``) and nan (no output sensitivity)."""
        return self._released(self.fit(data, math.inf)), math.nan

    def releases(self, data, epsilon: float, seeds: Sequence[int]) -> NDArray[np.float64]:
        return np.array([self._released(self.fit(data, epsilon, random_state=int(s))) for s in seeds])

    def scaled_problem(self, data) -> Tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
        """``(Z, y, w)`` the mechanism solves on (the estimator's own preparation)."""
        if self.kind == "werm":
            return data.X, data.y, data.v
        if self.kind == "multiarm":
            from pydpowl import FeatureScaler
            from pydpowl.estimators.multiarm import encode_arms, prepare_arm_problem, resolve_arm_propensity

            classes, codes = encode_arms("treatment", data.y)
            prop = resolve_arm_propensity(1.0 / self.n_arms, classes, codes)
            Z, _ = FeatureScaler.from_bounds((-np.ones(self.p), np.ones(self.p)), self.p, True).transform_checked(
                data.X)
            arm = prepare_arm_problem(Z, codes, len(classes), data.v, prop.probability,
                                      weights_upper_bound=self.weights_upper_bound)
            return arm.rows, arm.labels, arm.weights
        from pydpowl import prepare_owl

        prob = prepare_owl(data.X, data.y, data.v, 0.5, weights_upper_bound=self.weights_upper_bound,
                           feature_bounds=(-np.ones(self.p), np.ones(self.p)), fit_intercept=True)
        return prob.Z, prob.labels, prob.weights

    def constants(self, epsilon: float) -> Tuple[float, float]:
        """``(ridge, rate)`` the estimator uses at ``epsilon`` for the exact minimiser (public constants)."""
        from pydpowl.engine.mechanisms import weighted_objective_split
        from pydpowl.engine.solver import DEFAULT_TOL

        _, cal = weighted_objective_split(n=self.n, epsilon=epsilon, gamma=self.gamma,
                                          weights_upper_bound=self.weights_upper_bound,
                                          curvature=1.0 / (2.0 * self.huber_h), lipschitz=1.0, tol=DEFAULT_TOL)
        return cal.ridge, cal.rate

    def audit_map(self, D, D1, releases: NDArray[np.float64], epsilon: float) -> NDArray[np.float64]:
        """The exact ``log p_D - log p_D'`` at each release (a fixed map chosen before seeing them)."""
        ridge, rate = self.constants(epsilon)
        loss = HuberHingeLoss(self.huber_h)
        R = np.atleast_2d(np.asarray(releases, dtype=np.float64))
        return log_density_ratio(R, self.scaled_problem(D), self.scaled_problem(D1), ridge=ridge, rate=rate,
                                 loss=loss)[:, None]

    def density(self, epsilon: float, *, quick: bool, seed: int) -> DensitySearchResult:
        """The density search with this estimator's constants (the verdict: ratio <= 1)."""
        ridge, rate = self.constants(epsilon)
        multi = self.kind == "multiarm"  # rows V_a kron z, z in R^2, theta = vec(Theta) in R^4
        res = density_search(dim=2 if multi else min(self.d, 2), epsilon=epsilon, gamma=self.gamma,
                             weights_upper_bound=self.weights_upper_bound, huber_h=self.huber_h,
                             n_starts=6 if quick else 40, maxiter=200 if quick else 600, seed=seed,
                             constants=(ridge, rate), label=self.name, n_arms=self.n_arms if multi else None)
        # the estimator spends epsilon_objective on the minimiser (the rest on the solver smoothing)
        return res

    def with_epsilons(self, *epsilons: float) -> "ObjectiveAuditConfig":
        from dataclasses import replace

        return replace(self, epsilons=tuple(float(e) for e in epsilons))


def objective_configs() -> Tuple[ObjectiveAuditConfig, ...]:
    """The weighted objective-perturbation configurations of the full audit."""
    return (
        ObjectiveAuditConfig("werm-objective", "DPWeightedERM(mechanism='objective'), Huber hinge (h=0.5), d=2, "
                             "n=20, gamma=1, W=3 (the ridge is raised to 3/(e^(eps/2) - 1))", "werm", (1.0, 3.0),
                             gamma=1.0, weights_upper_bound=3.0, n=20, p=2),
        ObjectiveAuditConfig("owl-objective", "DPOWL(mechanism='objective', residual=False), intercept, x in "
                             "[-1, 1]^2, B in [0, 1.5], propensity 0.5, W=3, gamma=1, n=20", "owl", (1.0,),
                             gamma=1.0, weights_upper_bound=3.0, n=20, p=2),
        ObjectiveAuditConfig("multiarm-objective", "DPOWL with 3 arms (-1, 0, 1), mechanism='objective', "
                             "residual=False, intercept, x in [-1, 1]^2, B in [0, 1], propensity 1/3, W=3, gamma=1, "
                             "n=21 (vec Theta: 6 numbers)", "multiarm", (1.0,), gamma=1.0, weights_upper_bound=3.0,
                             n=21, p=2),
    )


def quick_objective_configs() -> Tuple[ObjectiveAuditConfig, ...]:
    """The quick run's: the weighted ERM configuration and the three-arm one."""
    return (objective_configs()[0].with_epsilons(1.0), objective_configs()[2])

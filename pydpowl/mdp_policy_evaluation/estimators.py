"""Policy-evaluation estimators: DP-LSW, DP-LSL and their non-private versions.

``DPLSW`` and ``DPLSL`` implement Algorithms 1 and 2 of Balle, Gomrokchi &
Precup, "Differentially Private Policy Evaluation" (ICML 2016): first-visit
Monte Carlo returns, a stable least-squares fit of a linear value function,
and Gaussian output perturbation calibrated with smooth sensitivity.
``LSW`` and ``LSL`` fit the same objectives without noise.
"""

from __future__ import annotations

import warnings
from typing import Any, NamedTuple, Optional, Tuple

import numpy as np
from numpy.typing import NDArray

from .._base import check_is_fitted
from .._validation import check_bool, check_choice, check_epsilon, check_positive, check_probability, resolve_rng
from ..exceptions import PrivacyLeakWarning
from ._base import PolicyEvalDiagnostics, PolicyEvalSummary, _PolicyEvaluatorBase
from .episodes import EpisodeStatistics, check_discount
from .least_squares import check_full_rank, lsl_solution, lsw_solution
from .calibration import (
    analytic_gaussian_scale,
    classical_gaussian_scale,
    gaussian_delta,
    smooth_gaussian_delta,
)
from ..engine.mechanisms.gaussian import gaussian_rounding_delta, release_gaussian
from ..engine.mechanisms.rounding import grid_for_scale
from .smooth_sensitivity import (
    CONSTANTS,
    MATRIX_NORMS,
    c_lambda,
    constant_lambda,
    constant_w,
    global_psi_lambda,
    global_psi_w,
    matrix_norm,
    noise_scale,
    phi_lambda,
    phi_w,
    privacy_constants,
    psi_lambda,
    psi_w,
    regularization_threshold,
)

__all__ = ["DPLSW", "DPLSL", "LSW", "LSL", "default_regularization"]

SENSITIVITIES = ("smooth", "global", "global-classical", "global-analytic")
#: Coefficient and exponent of the default regularisation rule.
DEFAULT_LAMBDA_C, DEFAULT_LAMBDA_P = 0.5, 0.4
_RETURN_TOL = 1e-9


def default_regularization(
    threshold: float, n_episodes: int, *, c: float = DEFAULT_LAMBDA_C, p: float = DEFAULT_LAMBDA_P
) -> float:
    """The reference rule ``lambda = ||Phi||^2 ||rho||_inf + c m^p``.

    Parameters
    ----------
    threshold : float
        ``||Phi||^2 ||rho||_inf`` (public).
    n_episodes : int
        ``m`` (public).
    c, p : float, default=0.5, 0.4
        Coefficient and exponent.
    """
    return float(threshold + c * float(n_episodes) ** p)


class _Calibration(NamedTuple):
    """Noise multiplier, smoothness, certified delta and a warning (or None)."""

    alpha: float
    beta: float
    certified_delta: float
    warning: Optional[str]


class _PrivateMixin:
    """Privacy parameters, public bounds and data-range checks of DPLSW/DPLSL."""

    # Set by the estimators this is mixed into: their constructor parameters and fitted attributes.
    epsilon: Any
    delta: Any
    discount: Any
    reward_bound: Any
    return_bound: Any
    constants: Any
    sensitivity: Any
    matrix_norm: Any
    signed_rewards: Any
    keep_diagnostics: Any
    n_states_: int
    n_features_: int
    n_episodes_: int
    alpha_: float
    beta_: float
    sensitivity_constant_: float
    certified_delta_: float
    privacy_spent_: Tuple[float, float]

    def _check_privacy(self) -> Tuple[float, float]:
        eps = check_epsilon(self.epsilon)
        delta = check_probability("delta", self.delta, low_open=True, high_open=True)
        return eps, delta

    @staticmethod
    def _calibrate(
        eps: float, delta: float, n_features: int, constants: str, sensitivity: str
    ) -> _Calibration:
        """``alpha`` such that ``sigma = alpha * (sensitivity bound)``, and what is proven.

        ``"smooth"`` and ``"global"`` use the lemma's pair (``constants``);
        ``"global-classical"`` and ``"global-analytic"`` the classical and the
        analytic Gaussian multipliers for a global sensitivity (``beta = 0``:
        the scale does not depend on the data).
        """
        if eps == np.inf:
            return _Calibration(
                0.0, np.inf, 0.0,
                "epsilon=inf: no noise is added and coef_ is the non-private estimate.",
            )
        if sensitivity in ("smooth", "global"):
            alpha, beta = privacy_constants(eps, delta, n_features, constants=constants)
            smoothness = beta if sensitivity == "smooth" else 0.0
            certified = smooth_gaussian_delta(eps, alpha, smoothness, n_features)
            warning = None
            if eps > 1 and not certified <= delta:
                warning = (
                    f"epsilon={eps!r} > 1 lies outside the smooth-sensitivity lemma (stated for "
                    f"epsilon in (0, 1]) and the exact certificate only gives delta="
                    f"{certified:.3g} > delta={delta!r}; the (epsilon, delta) guarantee is "
                    "not established."
                )
            return _Calibration(alpha, beta, certified, warning)
        if sensitivity == "global-classical":
            if not eps < 1:
                raise ValueError(
                    "epsilon must be in (0, 1) with sensitivity='global-classical' (the classical "
                    f"Gaussian mechanism is proven only there), got epsilon={eps!r}; use "
                    "sensitivity='global-analytic'."
                )
            alpha = classical_gaussian_scale(1.0, eps, delta)
        else:
            alpha = analytic_gaussian_scale(1.0, eps, delta)
        return _Calibration(alpha, 0.0, gaussian_delta(eps, 1.0 / alpha), None)

    @staticmethod
    def _privacy_spent(eps: float, delta: float, cal: _Calibration) -> Tuple[float, float]:
        """``(epsilon, delta)`` proven for the release: the ``delta`` asked for when the calibration
        establishes it, else the exactly accounted one (``certified_delta_``)."""
        return float(eps), float(delta if cal.warning is None else cal.certified_delta)

    @staticmethod
    def _warn_privacy(message: Optional[str]) -> None:
        """Emit a PrivacyLeakWarning at the line that called ``fit`` (call from ``fit``)."""
        if message is not None:
            warnings.warn(message, PrivacyLeakWarning, stacklevel=3)

    def _resolve_bound(self, discount: float) -> Tuple[float, str]:
        """Return ``(F_max, which)`` with ``which`` in {"reward", "return"}."""
        given = [n for n in ("reward_bound", "return_bound") if getattr(self, n) is not None]
        if len(given) != 1:
            raise ValueError(
                "exactly one of reward_bound (R_max, rewards in [0, R_max]) and "
                "return_bound (F_max, returns in [0, F_max]) must be given; got "
                + ("neither." if not given else "both.")
                + " The bound must be public, never read off the data."
            )
        if given[0] == "reward_bound":
            r_max = check_positive("reward_bound", self.reward_bound)
            return r_max / (1.0 - discount), "reward"
        return check_positive("return_bound", self.return_bound), "return"

    def _check_data_bounds(
        self, stats: EpisodeStatistics, f_max: float, which: str, signed: bool
    ) -> NDArray[np.float64]:
        """Check rewards/returns against the public bound; return clipped ``F_X``."""
        m = stats.n_episodes

        def _fail(bad: NDArray[np.bool_], what: str, interval: str) -> None:
            raise ValueError(
                f"episodes: {what} must lie in {interval}; {int(bad.sum())} of {m} episodes "
                f"do not (first at position {int(np.flatnonzero(bad)[0])}). Public bounds "
                "must hold for every episode"
                + ("" if signed else "; use signed_rewards=True for rewards of both signs")
                + "."
            )

        if which == "reward":
            r_max = float(self.reward_bound)
            lo = -r_max if signed else 0.0
            bad = (stats.reward_min < lo) | (stats.reward_max > r_max)
            if bad.any():
                _fail(bad, "rewards", f"[{lo:g}, reward_bound={r_max:g}]")
        else:
            if not signed:
                bad = stats.reward_min < 0
                if bad.any():
                    _fail(bad, "rewards", "[0, inf) (non-negative)")
            lo = -f_max if signed else 0.0
            tol = _RETURN_TOL * f_max
            bad = (stats.return_min < lo - tol) | (stats.return_max > f_max + tol)
            if bad.any():
                _fail(bad, "first-visit returns", f"[{lo:g}, return_bound={f_max:g}]")
        lo = -f_max if signed else 0.0
        return np.clip(stats.averages, lo, f_max)

    def _common_checks(self) -> dict:
        eps, delta = self._check_privacy()
        discount = check_discount(self.discount)
        f_max, which = self._resolve_bound(discount)
        return dict(
            eps=eps,
            delta=delta,
            discount=discount,
            f_max=f_max,
            which=which,
            constants=check_choice("constants", self.constants, CONSTANTS),
            sensitivity=check_choice("sensitivity", self.sensitivity, SENSITIVITIES),
            norm=check_choice("matrix_norm", self.matrix_norm, MATRIX_NORMS),
            signed=check_bool("signed_rewards", self.signed_rewards),
            keep=check_bool("keep_diagnostics", self.keep_diagnostics),
        )

    def _release(
        self,
        phi: NDArray[np.float64],
        theta: NDArray[np.float64],
        sigma: float,
        scale_range: Tuple[float, float],
        rng: np.random.Generator,
        diagnostics: Optional[PolicyEvalDiagnostics],
    ) -> None:
        """Release ``theta + N(0, sigma^2 I)``, the exact sum rounded to a public grid.

        ``scale_range`` holds public bounds ``[sigma_lo, sigma_hi]`` on the
        (data-dependent) ``sigma``: the grid is ``grid_for_scale(sigma_lo)`` (at
        most ``2^-10 sigma``) and the floating-point ``delta`` is computed with
        ``sigma_hi`` (:func:`pydpowl.engine.mechanisms.gaussian_rounding_delta`).
        """
        lo, hi = scale_range
        if sigma == 0.0:  # epsilon = inf: no noise, nothing to round (not a release)
            self.coef_ = theta.copy()
            self.release_grid_, self.release_delta_ = None, 0.0
        else:
            grid = grid_for_scale(lo)
            self.coef_, _ = release_gaussian(theta, sigma, grid=grid, rng=rng)
            self.release_grid_ = grid
            self.release_delta_ = gaussian_rounding_delta(epsilon=float(self.epsilon), dim=theta.shape[0],
                                                          grid=grid, max_scale=hi,
                                                          scale_ulps=4.0 * (phi.shape[0] + 4))
        eps, delta = self.privacy_spent_
        self.privacy_spent_ = (eps, min(1.0, delta + self.release_delta_))
        self.values_ = phi @ self.coef_
        if diagnostics is not None:
            self.diagnostics_ = diagnostics
        elif hasattr(self, "diagnostics_"):
            del self.diagnostics_

    def summary(self) -> PolicyEvalSummary:
        """Public settings of the fit (nothing data-dependent beyond ``m``)."""
        check_is_fitted(self)
        return PolicyEvalSummary(
            estimator=type(self).__name__,
            private=True,
            epsilon=float(self.epsilon),
            delta=float(self.delta),
            n_states=self.n_states_,
            n_features=self.n_features_,
            n_episodes=self.n_episodes_,
            sensitivity=self.sensitivity,
            constants=self.constants,
            matrix_norm=self.matrix_norm,
            alpha=self.alpha_,
            beta=self.beta_,
            sensitivity_constant=self.sensitivity_constant_,
            regularization=getattr(self, "regularization_", None),
            certified_delta=self.certified_delta_,
        )


_PRIVACY_NOTES = """
    Notes
    -----
    **Guarantee.** For ``epsilon`` in ``(0, 1]`` and ``delta`` in ``(0, 1)`` the
    released ``coef_`` (and ``values_ = features @ coef_``, a function of it) is
    ``(epsilon, delta)``-differentially private with respect to replacing one
    whole episode; the number of episodes ``m`` is public. It assumes that
    ``features``, the weights, ``discount``, the bound and any regularisation
    are public and chosen without looking at the data, and that every reward
    lies in ``[0, reward_bound]`` (or every return in ``[0, return_bound]``).
    Out-of-range data raise an error instead of being clipped.

    For ``epsilon > 1`` the smooth-sensitivity lemma is not stated; the
    guarantee then rests on the exact accounting of
    :func:`~.calibration.smooth_gaussian_delta` (a Gaussian shift of at most
    ``1/alpha`` standard deviations chained with a change of scale of at most
    ``e^{beta/2}``), recorded in ``certified_delta_``. If that ``delta``
    exceeds the one asked for, ``fit`` warns and the guarantee is not
    established. The baselines ``"global-classical"`` (``epsilon < 1`` only)
    and ``"global-analytic"`` are Gaussian mechanisms on the global
    sensitivity and are ``(epsilon, delta)``-DP by construction.

    **Not released.** The noise scale ``sigma_X``, the smooth bound ``psi_X``,
    the visit counts and the non-private solution depend on the data; they are
    kept only with ``keep_diagnostics=True`` (attribute ``diagnostics_``, which
    is private and must not be published).

    **Seeds.** ``random_state`` exists for tests and reproducible simulations;
    a fixed seed makes the noise predictable, so leave it ``None`` for real
    releases. A seed or Generator given here is stored unchanged, so whoever
    holds the estimator (e.g. its pickle) can regenerate the noise.
"""


class DPLSW(_PrivateMixin, _PolicyEvaluatorBase):
    """Differentially private least squares with fixed weights (DP-LSW).

    Fits ``theta^w_X = argmin sum_s w_s (F_{X,s} - phi_s' theta)^2`` to the
    first-visit Monte Carlo averages and releases ``theta^w_X + eta`` with
    ``eta ~ N(0, sigma_X^2 I_d)``, ``sigma_X = C_w sqrt(psi^w_X)``,
    ``C_w = alpha F_max ||(W^{1/2} Phi)^+||`` and
    ``psi^w_X = max_{0<=k<=max_s n_s} exp(-k beta) sum_s w_s / max(n_s - k, 1)^2``.

    Parameters
    ----------
    epsilon : float, default=1.0
        Privacy parameter in ``(0, inf]``. Values above 1 lie outside the
        lemma; they are accepted without warning when the exact accounting of
        :func:`~.calibration.smooth_gaussian_delta` certifies
        ``(epsilon, delta)`` and warn
        (:class:`~pydpowl.exceptions.PrivacyLeakWarning`) otherwise. ``inf``
        adds no noise (validation only) and warns.
    delta : float, default=0.1
        Privacy parameter in ``(0, 1)``.
    features : array-like of shape (n_states, n_features)
        Public feature matrix ``Phi``; row ``s`` holds ``phi_s``. Required.
        ``Phi' W Phi`` must be invertible.
    weights : array-like of shape (n_states,), default=None
        Fixed, public, non-negative weights ``w``; ``None`` means uniform
        ``1/n_states``.
    reward_bound : float, default=None
        ``R_max``: rewards lie in ``[0, R_max]``, so returns lie in
        ``[0, R_max / (1 - discount)]``. Give exactly one of ``reward_bound``
        and ``return_bound``.
    return_bound : float, default=None
        ``F_max``: every first-visit return lies in ``[0, F_max]`` (tighter
        when episodes are short or rewards rare).
    discount : float, default=0.99
        ``gamma`` in ``[0, 1)``.
    constants : {"A", "conservative"}, default="A"
        Which ``(alpha, beta)`` pair of the Gaussian smooth-sensitivity lemma
        to use (see :func:`~.smooth_sensitivity.privacy_constants`).
    sensitivity : {"smooth", "global", "global-classical", "global-analytic"}, default="smooth"
        ``"smooth"`` is the paper's algorithm. The others use the global
        sensitivity ``Delta = (C_w / alpha) sqrt(sum_s w_s)`` (``psi^w``
        replaced by its maximum): ``"global"`` with the lemma's ``alpha``
        (isolates the effect of smoothing), ``"global-classical"`` with the
        classical Gaussian mechanism ``sigma = Delta sqrt(2 ln(1.25/delta)) /
        epsilon`` (only for ``epsilon < 1``), ``"global-analytic"`` with the
        analytic Gaussian mechanism of Balle & Wang (2018), exact for every
        ``epsilon``.
    matrix_norm : {"spectral", "frobenius"}, default="spectral"
        Norm of ``(W^{1/2} Phi)^+`` in ``C_w``; Frobenius reproduces the
        authors' runs and adds more noise.
    signed_rewards : bool, default=False
        Allow rewards in ``[-R_max, R_max]`` (returns in ``[-F_max, F_max]``);
        ``C_w`` then uses ``2 F_max``.
    keep_diagnostics : bool, default=False
        Keep the private by-products in ``diagnostics_``.
    random_state : None, int or numpy.random.Generator, default=None
        Source of the noise, resolved once in ``fit``.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
        The private estimate ``theta_hat``.
    values_ : ndarray of shape (n_states,)
        ``features @ coef_``.
    n_states_, n_features_, n_episodes_ : int
        ``N``, ``d`` and ``m``.
    alpha_, beta_ : float
        Noise multiplier (``sigma = alpha`` times the sensitivity bound) and
        smoothness used (public): the lemma's pair for ``"smooth"`` and
        ``"global"``, the Gaussian multiplier and 0 for the other baselines.
    sensitivity_constant_ : float
        ``C_w`` (public).
    certified_delta_ : float
        A ``delta`` for which the release is ``(epsilon, delta)``-DP by exact
        accounting (public; at most ``delta`` unless a warning was issued).
    privacy_spent_ : (float, float)
        The ``(epsilon, delta)`` the release is proven to satisfy (``delta``,
        or ``certified_delta_`` when a warning said the asked-for ``delta`` is
        not established, plus the rounding's ``release_delta_``); what a
        budget accountant should record.
    release_grid_ : float or None
        The public power-of-two grid ``coef_`` is rounded to (the exact sum
        ``theta + eta``; at most ``2^-10`` times the smallest noise scale the
        public settings allow); None for ``epsilon = inf``.
    release_delta_ : float
        The ``delta`` the rounding adds under numpy's sampler
        (:func:`pydpowl.engine.mechanisms.gaussian_rounding_delta`): the release
        is ``(epsilon, certified_delta_ + release_delta_)``-DP.
    diagnostics_ : PolicyEvalDiagnostics
        Only with ``keep_diagnostics=True``. PRIVATE.
    """

    __doc__ += _PRIVACY_NOTES

    def __init__(
        self,
        *,
        epsilon: float = 1.0,
        delta: float = 0.1,
        features: Any = None,
        weights: Any = None,
        reward_bound: Optional[float] = None,
        return_bound: Optional[float] = None,
        discount: float = 0.99,
        constants: str = "A",
        sensitivity: str = "smooth",
        matrix_norm: str = "spectral",
        signed_rewards: bool = False,
        keep_diagnostics: bool = False,
        random_state: Any = None,
    ) -> None:
        self.epsilon = epsilon
        self.delta = delta
        self.features = features
        self.weights = weights
        self.reward_bound = reward_bound
        self.return_bound = return_bound
        self.discount = discount
        self.constants = constants
        self.sensitivity = sensitivity
        self.matrix_norm = matrix_norm
        self.signed_rewards = signed_rewards
        self.keep_diagnostics = keep_diagnostics
        self.random_state = random_state

    def fit(self, episodes: Any) -> "DPLSW":
        """Fit on episodes and release the perturbed coefficients.

        Parameters
        ----------
        episodes : sequence of Episode or (states, rewards) pairs, or EpisodeStatistics
            The private data ``X`` (``m`` episodes).

        Returns
        -------
        self
        """
        opts = self._common_checks()
        phi = self._check_features(self.features)
        n_states, d = phi.shape
        w = self._check_state_weights("weights", self.weights, n_states, warn_sum=False)
        check_full_rank(phi, w)
        cal = self._calibrate(opts["eps"], opts["delta"], d, opts["constants"], opts["sensitivity"])
        self._warn_privacy(cal.warning)
        alpha, beta = cal.alpha, cal.beta
        scale = 2.0 * opts["f_max"] if opts["signed"] else opts["f_max"]
        c_w = constant_w(alpha, scale, phi, w, matrix_norm=opts["norm"])
        rng = resolve_rng(self.random_state)

        stats = self._statistics(episodes, n_states, opts["discount"])
        averages = self._check_data_bounds(stats, opts["f_max"], opts["which"], opts["signed"])
        theta = lsw_solution(phi, w, averages)
        if opts["sensitivity"] == "smooth":
            psi, k_star = psi_w(stats.counts, w, beta, return_argmax=True)
        else:
            psi, k_star = global_psi_w(w), 0
        sigma = noise_scale(c_w, psi)
        # public bounds on sigma: psi lies between phi(0) >= sum_s w_s / m^2 (n_s <= m) and the global sum_s w_s
        scale_range = (sigma, sigma)
        if opts["sensitivity"] == "smooth":
            scale_range = (noise_scale(c_w, global_psi_w(w) / float(stats.n_episodes) ** 2),
                           noise_scale(c_w, global_psi_w(w)))

        self.n_states_, self.n_features_, self.n_episodes_ = n_states, d, stats.n_episodes
        self.alpha_, self.beta_, self.sensitivity_constant_ = alpha, beta, c_w
        self.certified_delta_ = cal.certified_delta
        self.privacy_spent_ = self._privacy_spent(opts["eps"], opts["delta"], cal)
        diag = None
        if opts["keep"]:
            diag = PolicyEvalDiagnostics(
                sigma=sigma,
                psi=psi,
                psi_argmax=k_star,
                phi0=float(phi_w(stats.counts, w, 0)),
                counts=stats.counts.copy(),
                nonprivate_coef=theta.copy(),
            )
        self._release(phi, theta, sigma, scale_range, rng, diag)
        return self


class DPLSL(_PrivateMixin, _PolicyEvaluatorBase):
    """Differentially private regularised least squares (DP-LSL).

    Fits ``theta^lambda_X = argmin sum_s rho_s (n_s/m) (F_{X,s} - phi_s' theta)^2
    + lambda/(2m) ||theta||^2`` and releases ``theta^lambda_X + eta`` with
    ``eta ~ N(0, sigma_X^2 I_d)``, ``sigma_X = C_lambda sqrt(psi^lambda_X)``,
    ``C_lambda = 2 alpha F_max ||Phi|| / (lambda - ||Phi||^2 ||rho||_inf)`` and
    ``psi^lambda_X = max_{0<=k<=m} exp(-k beta)
    (c_lambda sqrt(sum_s rho_s min(n_s + k, m)) + ||rho||_2)^2``,
    ``c_lambda = ||Phi|| ||rho||_inf / sqrt(2 lambda)``.

    Parameters
    ----------
    epsilon : float, default=1.0
        Privacy parameter in ``(0, inf]``; above 1 as in :class:`DPLSW`
        (certified by exact accounting or a warning); ``inf``: no noise.
    delta : float, default=0.1
        Privacy parameter in ``(0, 1)``.
    features : array-like of shape (n_states, n_features)
        Public feature matrix ``Phi``. Required; may be rank deficient.
    rho : array-like of shape (n_states,), default=None
        Public regression weights, a probability vector (a warning is issued
        if it does not sum to 1); ``None`` means uniform.
    regularization : float, default=None
        ``lambda``; must exceed ``||Phi||^2 ||rho||_inf``. ``None`` uses the
        reference rule ``||Phi||^2 ||rho||_inf + 0.5 m^0.4`` (``m`` is public).
    reward_bound, return_bound : float, default=None
        Exactly one public bound, as in :class:`DPLSW`.
    discount : float, default=0.99
        ``gamma`` in ``[0, 1)``.
    constants : {"A", "conservative"}, default="A"
        Lemma constants.
    sensitivity : {"smooth", "global", "global-classical", "global-analytic"}, default="smooth"
        As in :class:`DPLSW`; the global sensitivity replaces every ``n_s`` by
        ``m``: ``Delta = (C_lambda / alpha) sqrt(phi^lambda(m))``.
    matrix_norm : {"spectral", "frobenius"}, default="spectral"
        Norm of ``Phi`` in ``c_lambda``, ``C_lambda`` and the threshold.
    signed_rewards : bool, default=False
        Allow signed rewards; ``C_lambda`` then uses ``2 F_max``.
    keep_diagnostics : bool, default=False
        Keep the private by-products in ``diagnostics_``.
    random_state : None, int or numpy.random.Generator, default=None
        Source of the noise, resolved once in ``fit``.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
        The private estimate.
    values_ : ndarray of shape (n_states,)
        ``features @ coef_``.
    n_states_, n_features_, n_episodes_ : int
        ``N``, ``d`` and ``m``.
    regularization_ : float
        ``lambda`` used (public: a function of public inputs and ``m``).
    alpha_, beta_ : float
        Noise multiplier and smoothness used, as in :class:`DPLSW`.
    sensitivity_constant_ : float
        ``C_lambda``.
    certified_delta_ : float
        As in :class:`DPLSW`.
    privacy_spent_ : (float, float)
        As in :class:`DPLSW`.
    release_grid_, release_delta_ : float or None, float
        As in :class:`DPLSW` (``sigma`` between ``C_lambda ||rho||_2`` and the
        global bound).
    diagnostics_ : PolicyEvalDiagnostics
        Only with ``keep_diagnostics=True``. PRIVATE.
    """

    __doc__ += _PRIVACY_NOTES

    def __init__(
        self,
        *,
        epsilon: float = 1.0,
        delta: float = 0.1,
        features: Any = None,
        rho: Any = None,
        regularization: Optional[float] = None,
        reward_bound: Optional[float] = None,
        return_bound: Optional[float] = None,
        discount: float = 0.99,
        constants: str = "A",
        sensitivity: str = "smooth",
        matrix_norm: str = "spectral",
        signed_rewards: bool = False,
        keep_diagnostics: bool = False,
        random_state: Any = None,
    ) -> None:
        self.epsilon = epsilon
        self.delta = delta
        self.features = features
        self.rho = rho
        self.regularization = regularization
        self.reward_bound = reward_bound
        self.return_bound = return_bound
        self.discount = discount
        self.constants = constants
        self.sensitivity = sensitivity
        self.matrix_norm = matrix_norm
        self.signed_rewards = signed_rewards
        self.keep_diagnostics = keep_diagnostics
        self.random_state = random_state

    def fit(self, episodes: Any) -> "DPLSL":
        """Fit on episodes and release the perturbed coefficients.

        Parameters
        ----------
        episodes : sequence of Episode or (states, rewards) pairs, or EpisodeStatistics
            The private data ``X`` (``m`` episodes).

        Returns
        -------
        self
        """
        opts = self._common_checks()
        phi = self._check_features(self.features)
        n_states, d = phi.shape
        rho = self._check_state_weights("rho", self.rho, n_states, warn_sum=True)
        phi_norm = matrix_norm(phi, opts["norm"])
        threshold = regularization_threshold(phi_norm, rho)
        if self.regularization is not None:
            lam = check_positive("regularization", self.regularization)
            if not lam > threshold:
                raise ValueError(
                    f"regularization must be in ({threshold!r}, inf), i.e. above "
                    f"||Phi||^2 ||rho||_inf with the {opts['norm']} norm; got "
                    f"regularization={lam!r}."
                )
        cal = self._calibrate(opts["eps"], opts["delta"], d, opts["constants"], opts["sensitivity"])
        self._warn_privacy(cal.warning)
        alpha, beta = cal.alpha, cal.beta
        rng = resolve_rng(self.random_state)

        stats = self._statistics(episodes, n_states, opts["discount"])
        m = stats.n_episodes
        if self.regularization is None:
            lam = default_regularization(threshold, m)
        scale = 2.0 * opts["f_max"] if opts["signed"] else opts["f_max"]
        c_big = constant_lambda(alpha, scale, phi_norm, rho, lam)
        c_small = c_lambda(phi_norm, rho, lam)
        averages = self._check_data_bounds(stats, opts["f_max"], opts["which"], opts["signed"])
        theta = lsl_solution(phi, rho, stats.counts, averages, m, lam)
        if opts["sensitivity"] == "smooth":
            psi, k_star = psi_lambda(stats.counts, rho, m, c_small, beta, return_argmax=True)
        else:
            psi, k_star = global_psi_lambda(rho, m, c_small), m
        sigma = noise_scale(c_big, psi)
        # public bounds on sigma: psi lies between ||rho||^2 (phi at k = 0 with no visits) and the global bound
        scale_range = (sigma, sigma)
        if opts["sensitivity"] == "smooth":
            scale_range = (noise_scale(c_big, float(np.dot(rho, rho))),
                           noise_scale(c_big, global_psi_lambda(rho, m, c_small)))

        self.n_states_, self.n_features_, self.n_episodes_ = n_states, d, m
        self.regularization_ = lam
        self.alpha_, self.beta_, self.sensitivity_constant_ = alpha, beta, c_big
        self.certified_delta_ = cal.certified_delta
        self.privacy_spent_ = self._privacy_spent(opts["eps"], opts["delta"], cal)
        diag = None
        if opts["keep"]:
            diag = PolicyEvalDiagnostics(
                sigma=sigma,
                psi=psi,
                psi_argmax=k_star,
                phi0=float(phi_lambda(stats.counts, rho, m, c_small, 0)),
                counts=stats.counts.copy(),
                nonprivate_coef=theta.copy(),
            )
        self._release(phi, theta, sigma, scale_range, rng, diag)
        return self


class _NonPrivateMixin:
    # Set by the estimators this is mixed into (fitted attributes).
    n_states_: int
    n_features_: int
    n_episodes_: int

    def summary(self) -> PolicyEvalSummary:
        """Settings of the (non-private) fit."""
        check_is_fitted(self)
        return PolicyEvalSummary(
            estimator=type(self).__name__,
            private=False,
            epsilon=float("inf"),
            delta=0.0,
            n_states=self.n_states_,
            n_features=self.n_features_,
            n_episodes=self.n_episodes_,
            sensitivity="none",
            constants="none",
            matrix_norm="none",
            alpha=0.0,
            beta=float("inf"),
            sensitivity_constant=0.0,
            regularization=getattr(self, "regularization_", None),
        )


class LSW(_NonPrivateMixin, _PolicyEvaluatorBase):
    """Non-private least squares with fixed weights (the objective of DP-LSW).

    Parameters
    ----------
    features : array-like of shape (n_states, n_features)
        Feature matrix; ``Phi' W Phi`` must be invertible. Required.
    weights : array-like of shape (n_states,), default=None
        Non-negative weights; ``None`` means uniform.
    discount : float, default=0.99
        ``gamma`` in ``[0, 1)``.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
        ``(Phi'W Phi)^{-1} Phi'W F_X``. NOT private.
    values_ : ndarray of shape (n_states,)
        ``features @ coef_``.
    n_states_, n_features_, n_episodes_ : int
    """

    def __init__(self, *, features: Any = None, weights: Any = None, discount: float = 0.99):
        self.features = features
        self.weights = weights
        self.discount = discount

    def fit(self, episodes: Any) -> "LSW":
        """Fit on episodes (sequence or :class:`EpisodeStatistics`); returns self."""
        discount = check_discount(self.discount)
        phi = self._check_features(self.features)
        n_states, d = phi.shape
        w = self._check_state_weights("weights", self.weights, n_states, warn_sum=False)
        check_full_rank(phi, w)
        stats = self._statistics(episodes, n_states, discount)
        self.coef_ = lsw_solution(phi, w, stats.averages)
        self.values_ = phi @ self.coef_
        self.n_states_, self.n_features_, self.n_episodes_ = n_states, d, stats.n_episodes
        return self


class LSL(_NonPrivateMixin, _PolicyEvaluatorBase):
    """Non-private regularised least squares (the objective of DP-LSL).

    Parameters
    ----------
    features : array-like of shape (n_states, n_features)
        Feature matrix. Required.
    rho : array-like of shape (n_states,), default=None
        Non-negative regression weights; ``None`` means uniform.
    regularization : float, default=None
        ``lambda > 0``; ``None`` uses ``||Phi||^2 ||rho||_inf + 0.5 m^0.4``
        (spectral norm), the same rule as :class:`DPLSL`.
    discount : float, default=0.99
        ``gamma`` in ``[0, 1)``.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
        ``(Phi' D_X Phi + lambda/2 I)^{-1} Phi' D_X F_X``. NOT private.
    values_ : ndarray of shape (n_states,)
    regularization_ : float
    n_states_, n_features_, n_episodes_ : int
    """

    def __init__(
        self,
        *,
        features: Any = None,
        rho: Any = None,
        regularization: Optional[float] = None,
        discount: float = 0.99,
    ):
        self.features = features
        self.rho = rho
        self.regularization = regularization
        self.discount = discount

    def fit(self, episodes: Any) -> "LSL":
        """Fit on episodes (sequence or :class:`EpisodeStatistics`); returns self."""
        discount = check_discount(self.discount)
        phi = self._check_features(self.features)
        n_states, d = phi.shape
        rho = self._check_state_weights("rho", self.rho, n_states, warn_sum=True)
        if self.regularization is not None:
            lam = check_positive("regularization", self.regularization)
        stats = self._statistics(episodes, n_states, discount)
        if self.regularization is None:
            lam = default_regularization(
                regularization_threshold(matrix_norm(phi), rho), stats.n_episodes
            )
        self.coef_ = lsl_solution(phi, rho, stats.counts, stats.averages, stats.n_episodes, lam)
        self.values_ = phi @ self.coef_
        self.regularization_ = lam
        self.n_states_, self.n_features_, self.n_episodes_ = n_states, d, stats.n_episodes
        return self

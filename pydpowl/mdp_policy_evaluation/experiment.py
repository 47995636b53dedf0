"""The reference experiment for DP-LSW and DP-LSL on the lazy chain.

For each batch size ``m`` and repetition, ``m`` fresh episodes are drawn from
:func:`~.mdp.lazy_chain` (with the exact fast sampler
:meth:`~.mdp.LazyChain.sample_statistics`) and, on the same data, the
estimators below are fitted at every ``epsilon`` of the grid:

* ``LSW`` and ``LSL``: the non-private fits (``epsilon = inf`` in the table);
* ``DP-LSW`` and ``DP-LSL``: the paper's algorithms (smooth sensitivity, lemma
  constants);
* ``GS-analytic-LSW`` and ``GS-analytic-LSL``: the same fits with Gaussian
  noise on the *global* sensitivity, calibrated exactly by the analytic
  Gaussian mechanism (Balle & Wang 2018), valid for every ``epsilon``;
* ``GS-classical-LSW`` and ``GS-classical-LSL``: the textbook Gaussian
  mechanism ``sigma = Delta sqrt(2 ln(1.25/delta)) / epsilon``, only at
  ``epsilon < 1`` where it is proven.

``lambda = ||Phi||^2 ||rho||_inf + c m^p``. A second panel fixes ``m`` and
sweeps ``c`` for LSL and DP-LSL at every ``epsilon``. The metric is the
rho-weighted RMSE ``sqrt(sum_s rho_s (V_s - phi_s' theta_hat)^2)`` against
the true value.

The private variants of one algorithm at one ``epsilon`` share one
standard-normal draw per data set (common random numbers), so their
differences reflect only their noise scales.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from .._progress import Progress
from .._validation import check_int, check_positive, check_probability
from .episodes import EpisodeStatistics, check_discount
from .estimators import DPLSL, DPLSW, LSL, LSW, default_regularization
from .features import make_features
from .mdp import lazy_chain
from .smooth_sensitivity import CONSTANTS, matrix_norm, regularization_threshold

__all__ = [
    "DEFAULT_M_VALUES",
    "DEFAULT_EPSILONS",
    "DEFAULT_LAMBDA_GRID",
    "METHODS",
    "NOISE",
    "run_experiment",
    "summarize_experiment",
    "weighted_rmse",
]

DEFAULT_M_VALUES = (10, 30, 100, 300, 1_000, 3_000, 10_000, 30_000, 100_000, 300_000, 1_000_000)
DEFAULT_EPSILONS = (0.1, 0.3, 1.0, 3.0, 10.0)
DEFAULT_LAMBDA_GRID = (0.01, 0.1, 1.0, 10.0, 100.0, 1e3, 1e4)
#: Defaults of the regularisation rule ``lambda = ||Phi||^2 ||rho||_inf + c m^p``.
DEFAULT_LAMBDA_C, DEFAULT_LAMBDA_P = 1.0, 0.5
DEFAULT_LAMBDA_M = 100_000
METHODS = (
    "LSW",
    "DP-LSW",
    "GS-analytic-LSW",
    "GS-classical-LSW",
    "LSL",
    "DP-LSL",
    "GS-analytic-LSL",
    "GS-classical-LSL",
)
#: How each method's noise is calibrated (the ``noise`` column).
NOISE = {
    "LSW": "none",
    "LSL": "none",
    "DP-LSW": "smooth",
    "DP-LSL": "smooth",
    "GS-analytic-LSW": "global-analytic",
    "GS-analytic-LSL": "global-analytic",
    "GS-classical-LSW": "global-classical",
    "GS-classical-LSL": "global-classical",
}
COLUMNS = [
    "panel",
    "method",
    "m",
    "epsilon",
    "rep",
    "lambda_c",
    "lambda_p",
    "regularization",
    "delta",
    "noise",
    "rmse",
    "mse",
    "sigma",
]


def weighted_rmse(
    true_values: NDArray[np.float64], estimate: NDArray[np.float64], rho: NDArray[np.float64]
) -> float:
    """``sqrt(sum_s rho_s (V_s - Vhat_s)^2)``."""
    return float(np.sqrt(np.sum(rho * (true_values - estimate) ** 2)))


def _check_grid(name: str, values: Optional[Sequence[Any]], check) -> List[Any]:
    if values is None or isinstance(values, (str, bytes)) or np.ndim(values) != 1:
        raise TypeError(f"{name} must be a sequence of numbers, got {type(values).__name__}.")
    vals = list(values)
    if not vals:
        raise ValueError(f"{name} must contain at least one value, got none.")
    return sorted({check(f"{name} entry", v) for v in vals})


def _check_finite_epsilon(name: str, value: Any) -> float:
    return check_positive(name, value)  # (0, inf): the non-private fits play epsilon = inf


def _private_fits(
    stats: EpisodeStatistics,
    common: Dict[str, Any],
    eps: float,
    family: str,
    seed: int,
    lam: Optional[float] = None,
    methods: Sequence[str] = (),
) -> Dict[str, Any]:
    """Fit the private variants of one family (``"LSW"`` or ``"LSL"``) at one ``epsilon``."""
    out = {}
    for method in methods:
        noise = NOISE[method]
        if noise == "global-classical" and not eps < 1:
            continue  # the classical constant is proven only for epsilon < 1
        kw = dict(
            epsilon=eps, delta=common["delta"], features=common["features"],
            reward_bound=common["reward_bound"], return_bound=common["return_bound"],
            discount=common["discount"], constants=common["constants"], sensitivity=noise,
            keep_diagnostics=True, random_state=seed,
        )
        if family == "LSW":
            out[method] = DPLSW(weights=common["rho"], **kw).fit(stats)
        else:
            out[method] = DPLSL(rho=common["rho"], regularization=lam, **kw).fit(stats)
    return out


def run_experiment(
    *,
    m_values: Sequence[int] = DEFAULT_M_VALUES,
    epsilons: Sequence[float] = DEFAULT_EPSILONS,
    n_reps: int = 20,
    delta: float = 0.1,
    n_states: int = 40,
    features: str = "tabular",
    discount: float = 0.99,
    reward_bound: Optional[float] = None,
    return_bound: Optional[float] = 1.0,
    lambda_c: float = DEFAULT_LAMBDA_C,
    lambda_p: float = DEFAULT_LAMBDA_P,
    lambda_grid: Optional[Sequence[float]] = DEFAULT_LAMBDA_GRID,
    lambda_m: int = DEFAULT_LAMBDA_M,
    constants: str = "A",
    random_state: Any = None,
    progress: bool = False,
) -> pd.DataFrame:
    """Run the reference experiment and return a tidy table.

    Parameters
    ----------
    m_values : sequence of int, default=(10, 30, 100, ..., 300_000, 1_000_000)
        Batch sizes (half-decades from 10 to 1e6).
    epsilons : sequence of float, default=(0.1, 0.3, 1, 3, 10)
        Privacy parameters, each in ``(0, inf)``; every private method is
        fitted at each. The smoothed algorithms are covered by the lemma for
        ``epsilon <= 1`` and by exact accounting above (see
        :mod:`~.calibration`; ``fit`` warns if that fails).
    n_reps : int, default=20
        Independent repetitions (fresh episodes and fresh noise).
    delta : float, default=0.1
        Privacy parameter in ``(0, 1)``.
    n_states : int, default=40
        Length ``N`` of the lazy chain.
    features : {"tabular", "aggregated"}, default="tabular"
        Identity features, or one feature per pair of adjacent states.
    discount : float, default=0.99
        ``gamma``.
    reward_bound : float or None, default=None
        ``R_max`` (then ``F_max = R_max / (1 - gamma)``); give exactly one of
        the two bounds.
    return_bound : float or None, default=1.0
        ``F_max``. On the chain every episode has at most one reward, 1, so no
        return exceeds 1: this is the tightest valid public bound.
    lambda_c, lambda_p : float, default=1.0, 0.5
        ``lambda = ||Phi||^2 ||rho||_inf + c m^p`` in the grid over ``m``.
    lambda_grid : sequence of float or None, default=(0.01, ..., 1e4)
        Values of ``c`` for the regularisation panel (``None`` skips it).
    lambda_m : int, default=100_000
        Batch size of the regularisation panel. If it is in ``m_values`` the
        data of that batch size are reused (the panels are then correlated).
    constants : {"A", "conservative"}, default="A"
        Lemma constants of the smoothed algorithms.
    random_state : None, int or numpy.random.Generator, default=None
        Seed of the whole experiment (data and noise).
    progress : bool, default=False
        Draw a progress bar on stderr (the CLI turns it on).

    Returns
    -------
    pandas.DataFrame
        One row per (panel, method, m, epsilon, c, repetition) with columns
        ``panel`` ("m": the grid over ``m`` and ``epsilon``; "lambda": the
        sweep over ``c``), ``method``, ``m``, ``epsilon`` (``inf`` for the
        non-private fits), ``rep``, ``lambda_c``, ``lambda_p``,
        ``regularization`` (NaN for the LSW methods), ``delta``, ``noise``
        (calibration: none, smooth, global-analytic, global-classical),
        ``rmse``, ``mse`` and ``sigma`` (the noise scale, a simulation
        diagnostic; NaN for the non-private methods).
    """
    ms = _check_grid("m_values", m_values, lambda n, v: check_int(n, v, minimum=1))
    eps_grid = _check_grid("epsilons", epsilons, _check_finite_epsilon)
    dlt = check_probability("delta", delta, low_open=True, high_open=True)
    if constants not in CONSTANTS:
        raise ValueError(f"constants must be one of {CONSTANTS}, got constants={constants!r}.")
    if (reward_bound is None) == (return_bound is None):
        raise ValueError(
            "exactly one of reward_bound and return_bound must be given, got "
            + ("neither." if reward_bound is None else "both.")
        )
    reps = check_int("n_reps", n_reps, minimum=1)
    n = check_int("n_states", n_states, minimum=2)
    gamma = check_discount(discount)
    c0 = check_positive("lambda_c", lambda_c)
    p0 = check_positive("lambda_p", lambda_p)
    grid = [] if lambda_grid is None else _check_grid("lambda_grid", lambda_grid, check_positive)
    lam_m = check_int("lambda_m", lambda_m, minimum=1)
    phi = make_features(features, n)
    rho = np.full(n, 1.0 / n)
    threshold = regularization_threshold(matrix_norm(phi), rho)
    mrp = lazy_chain(n)
    truth = mrp.value(gamma)
    rng = np.random.default_rng(random_state)
    common = dict(
        features=phi, rho=rho, discount=gamma, delta=dlt, reward_bound=reward_bound,
        return_bound=return_bound, constants=constants,
    )
    lsw_private = [mm for mm in METHODS if mm.endswith("LSW") and mm != "LSW"]
    lsl_private = [mm for mm in METHODS if mm.endswith("LSL") and mm != "LSL"]
    rows: List[Dict[str, Any]] = []

    def record(panel: str, m: int, eps: float, rep: int, c: float, lam: float, fits: Dict[str, Any]) -> None:
        for method, est in fits.items():
            rmse = weighted_rmse(truth, est.values_, rho)
            diag = getattr(est, "diagnostics_", None)
            rows.append(dict(
                panel=panel, method=method, m=m, epsilon=eps if NOISE[method] != "none" else np.inf,
                rep=rep, lambda_c=c, lambda_p=p0,
                regularization=lam if method.endswith("LSL") else np.nan, delta=dlt,
                noise=NOISE[method], rmse=rmse, mse=rmse**2,
                sigma=diag.sigma if diag is not None else np.nan,
            ))

    extra = [] if (not grid or lam_m in ms) else [lam_m]
    with Progress(reps * (len(ms) + len(extra)), "policy-eval", enabled=progress) as bar:
        for rep in range(reps):
            for m in ms + extra:
                stats = mrp.sample_statistics(m, discount=gamma, rng=rng)
                if m in ms:
                    lam = default_regularization(threshold, m, c=c0, p=p0)
                    record("m", m, np.inf, rep, c0, lam, {
                        "LSW": LSW(features=phi, weights=rho, discount=gamma).fit(stats),
                        "LSL": LSL(features=phi, rho=rho, regularization=lam, discount=gamma).fit(stats),
                    })
                    for eps in eps_grid:
                        seed_w, seed_l = (int(x) for x in rng.integers(2**63 - 1, size=2))
                        record("m", m, eps, rep, c0, lam,
                               _private_fits(stats, common, eps, "LSW", seed_w, methods=lsw_private))
                        record("m", m, eps, rep, c0, lam,
                               _private_fits(stats, common, eps, "LSL", seed_l, lam, lsl_private))
                if grid and m == lam_m:
                    for c in grid:
                        lam = default_regularization(threshold, m, c=c, p=p0)
                        record("lambda", m, np.inf, rep, c, lam, {"LSL": LSL(
                            features=phi, rho=rho, regularization=lam, discount=gamma).fit(stats)})
                        for eps in eps_grid:
                            seed = int(rng.integers(2**63 - 1))
                            record("lambda", m, eps, rep, c, lam, _private_fits(
                                stats, common, eps, "LSL", seed, lam, ("DP-LSL",)))
                bar.update()
    return pd.DataFrame(rows, columns=COLUMNS)


def summarize_experiment(table: pd.DataFrame) -> pd.DataFrame:
    """Mean, standard deviation and 10% / 90% quantiles of the RMSE per setting.

    Parameters
    ----------
    table : pandas.DataFrame
        Output of :func:`run_experiment` (or its CSV read back).

    Returns
    -------
    pandas.DataFrame
        Columns ``panel, method, m, epsilon, lambda_c, regularization,
        rmse_mean, rmse_std, rmse_q10, rmse_q90, mse_mean, sigma_mean,
        n_reps``. The quantiles are those of the repetitions (linear
        interpolation), so a band from ``rmse_q10`` to ``rmse_q90`` is
        positive and honest on a log axis.
    """
    need = {"panel", "method", "m", "epsilon", "lambda_c", "rmse", "mse", "sigma"}
    missing = need - set(table.columns)
    if missing:
        raise ValueError(f"table is missing columns {sorted(missing)}; pass run_experiment's output.")
    t = table.copy()
    if "regularization" not in t:
        t["regularization"] = np.nan
    g = t.groupby(["panel", "method", "m", "epsilon", "lambda_c"], sort=True, dropna=False)
    out = g.agg(
        regularization=("regularization", "first"),
        rmse_mean=("rmse", "mean"),
        rmse_std=("rmse", "std"),
        rmse_q10=("rmse", lambda x: float(np.quantile(x, 0.1))),
        rmse_q90=("rmse", lambda x: float(np.quantile(x, 0.9))),
        mse_mean=("mse", "mean"),
        sigma_mean=("sigma", "mean"),
        n_reps=("rmse", "size"),
    )
    return out.reset_index()

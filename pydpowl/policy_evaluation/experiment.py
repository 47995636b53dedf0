"""The reference experiment for DP-LSW and DP-LSL on the lazy chain.

For each batch size ``m`` and repetition, ``m`` fresh episodes are drawn from
:func:`~.mdp.lazy_chain` and six estimators are fitted on the same data:
``LSW``, ``DP-LSW``, ``GS-DP-LSW`` (global sensitivity), ``LSL``, ``DP-LSL``
and ``GS-DP-LSL``, with ``lambda = ||Phi||^2 ||rho||_inf + c m^p``. A second
panel fixes ``m`` and sweeps ``c``. The metric is the rho-weighted RMSE
``sqrt(sum_s rho_s (V_s - phi_s' theta_hat)^2)`` against the true value.

The smoothed and global variants of each algorithm share one standard-normal
draw per data set (common random numbers), so their difference reflects only
the noise scales.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from .._progress import Progress
from .._validation import check_epsilon, check_int, check_positive, check_probability
from .episodes import EpisodeStatistics, check_discount, episode_statistics
from .estimators import DPLSL, DPLSW, LSL, LSW, default_regularization
from .features import make_features
from .mdp import lazy_chain
from .smooth_sensitivity import matrix_norm, regularization_threshold

__all__ = [
    "DEFAULT_M_VALUES",
    "DEFAULT_LAMBDA_GRID",
    "METHODS",
    "run_experiment",
    "summarize_experiment",
    "weighted_rmse",
]

DEFAULT_M_VALUES = (10, 50, 100, 500, 1000, 1500, 2000, 2500, 3000, 4000)
DEFAULT_LAMBDA_GRID = (0.01, 0.1, 1.0, 10.0, 100.0, 1e3, 1e4)
METHODS = ("LSW", "DP-LSW", "GS-DP-LSW", "LSL", "DP-LSL", "GS-DP-LSL")
COLUMNS = [
    "panel",
    "method",
    "m",
    "rep",
    "lambda_c",
    "lambda_p",
    "regularization",
    "epsilon",
    "delta",
    "rmse",
    "mse",
    "sigma",
]


def weighted_rmse(
    true_values: NDArray[np.float64], estimate: NDArray[np.float64], rho: NDArray[np.float64]
) -> float:
    """``sqrt(sum_s rho_s (V_s - Vhat_s)^2)``."""
    return float(np.sqrt(np.sum(rho * (true_values - estimate) ** 2)))


def _check_m_values(m_values: Sequence[int]) -> List[int]:
    vals = list(m_values)
    if not vals:
        raise ValueError("m_values must contain at least one batch size, got none.")
    return [check_int("m_values entry", v, minimum=1) for v in vals]


def _fit_lsl_family(
    stats: EpisodeStatistics,
    common: Dict[str, Any],
    lam: float,
    seed: int,
) -> Dict[str, Any]:
    """LSL, DP-LSL and GS-DP-LSL at one ``lambda`` (the private pair shares ``seed``)."""
    out = {"LSL": LSL(
        features=common["features"], rho=common["rho"], regularization=lam,
        discount=common["discount"],
    ).fit(stats)}
    for name, sens in (("DP-LSL", "smooth"), ("GS-DP-LSL", "global")):
        out[name] = DPLSL(
            epsilon=common["epsilon"], delta=common["delta"], features=common["features"],
            rho=common["rho"], regularization=lam, reward_bound=common["reward_bound"],
            return_bound=common["return_bound"], discount=common["discount"],
            constants=common["constants"], sensitivity=sens, keep_diagnostics=True,
            random_state=seed,
        ).fit(stats)
    return out


def _fit_lsw_family(stats: EpisodeStatistics, common: Dict[str, Any], seed: int) -> Dict[str, Any]:
    out = {"LSW": LSW(
        features=common["features"], weights=common["rho"], discount=common["discount"]
    ).fit(stats)}
    for name, sens in (("DP-LSW", "smooth"), ("GS-DP-LSW", "global")):
        out[name] = DPLSW(
            epsilon=common["epsilon"], delta=common["delta"], features=common["features"],
            weights=common["rho"], reward_bound=common["reward_bound"],
            return_bound=common["return_bound"], discount=common["discount"],
            constants=common["constants"], sensitivity=sens, keep_diagnostics=True,
            random_state=seed,
        ).fit(stats)
    return out


def run_experiment(
    *,
    m_values: Sequence[int] = DEFAULT_M_VALUES,
    n_reps: int = 10,
    epsilon: float = 0.1,
    delta: float = 0.1,
    n_states: int = 40,
    features: str = "tabular",
    discount: float = 0.99,
    reward_bound: Optional[float] = 1.0,
    return_bound: Optional[float] = None,
    lambda_c: float = 0.5,
    lambda_p: float = 0.4,
    lambda_grid: Optional[Sequence[float]] = DEFAULT_LAMBDA_GRID,
    lambda_m: int = 1000,
    constants: str = "A",
    random_state: Any = None,
    progress: bool = False,
) -> pd.DataFrame:
    """Run the reference experiment and return a tidy table.

    Parameters
    ----------
    m_values : sequence of int, default=(10, 50, ..., 4000)
        Batch sizes for the error-vs-``m`` panel.
    n_reps : int, default=10
        Independent repetitions (fresh episodes and fresh noise).
    epsilon, delta : float, default=0.1, 0.1
        Privacy parameters.
    n_states : int, default=40
        Length ``N`` of the lazy chain.
    features : {"tabular", "aggregated"}, default="tabular"
        Identity features, or one feature per pair of adjacent states.
    discount : float, default=0.99
        ``gamma``.
    reward_bound : float or None, default=1.0
        ``R_max`` (then ``F_max = R_max / (1 - gamma)``, 100 by default).
    return_bound : float or None, default=None
        ``F_max`` directly (give ``reward_bound=None``); 1 is legitimate on
        the chain, where each episode has at most one reward of 1.
    lambda_c, lambda_p : float, default=0.5, 0.4
        ``lambda = ||Phi||^2 ||rho||_inf + c m^p`` in the error-vs-``m`` panel.
    lambda_grid : sequence of float or None, default=(0.01, ..., 1e4)
        Values of ``c`` for the error-vs-``lambda`` panel (``None`` skips it).
    lambda_m : int, default=1000
        Batch size of the error-vs-``lambda`` panel.
    constants : {"A", "conservative"}, default="A"
        Lemma constants.
    random_state : None, int or numpy.random.Generator, default=None
        Seed of the whole experiment (data and noise).
    progress : bool, default=False
        Draw a progress bar on stderr (the CLI turns it on).

    Returns
    -------
    pandas.DataFrame
        One row per (panel, method, m, c, repetition) with columns
        ``panel`` ("m" or "lambda"), ``method``, ``m``, ``rep``, ``lambda_c``,
        ``lambda_p``, ``regularization`` (NaN for LSW methods), ``epsilon``,
        ``delta``, ``rmse``, ``mse`` and ``sigma`` (the noise scale, a
        simulation diagnostic; NaN for the non-private methods).
    """
    ms = _check_m_values(m_values)
    check_epsilon(epsilon)
    check_probability("delta", delta, low_open=True, high_open=True)
    if constants not in ("A", "conservative"):
        raise ValueError(f"constants must be one of ('A', 'conservative'), got {constants!r}.")
    if (reward_bound is None) == (return_bound is None):
        raise ValueError("exactly one of reward_bound and return_bound must be given.")
    reps = check_int("n_reps", n_reps, minimum=1)
    n = check_int("n_states", n_states, minimum=2)
    gamma = check_discount(discount)
    c0 = check_positive("lambda_c", lambda_c)
    p0 = check_positive("lambda_p", lambda_p)
    grid = [] if lambda_grid is None else [check_positive("lambda_grid entry", c) for c in lambda_grid]
    lam_m = check_int("lambda_m", lambda_m, minimum=1)
    phi = make_features(features, n)
    rho = np.full(n, 1.0 / n)
    threshold = regularization_threshold(matrix_norm(phi), rho)
    mrp = lazy_chain(n)
    truth = mrp.value(gamma)
    rng = np.random.default_rng(random_state)
    common = dict(
        features=phi, rho=rho, discount=gamma, epsilon=epsilon, delta=delta,
        reward_bound=reward_bound, return_bound=return_bound, constants=constants,
    )
    rows: List[Dict[str, Any]] = []

    def record(panel: str, m: int, rep: int, c: float, lam: float, fits: Dict[str, Any]) -> None:
        for method, est in fits.items():
            rmse = weighted_rmse(truth, est.values_, rho)
            diag = getattr(est, "diagnostics_", None)
            rows.append(dict(
                panel=panel, method=method, m=m, rep=rep, lambda_c=c, lambda_p=p0,
                regularization=lam if "LSL" in method else np.nan,
                epsilon=float(epsilon), delta=float(delta), rmse=rmse, mse=rmse**2,
                sigma=diag.sigma if diag is not None else np.nan,
            ))

    total = reps * (len(ms) + (1 if grid else 0))
    with Progress(total, "policy-eval", enabled=progress) as bar:
        for rep in range(reps):
            for m in ms:
                stats = episode_statistics(mrp.sample(m, rng=rng), n_states=n, discount=gamma)
                lam = default_regularization(threshold, m, c=c0, p=p0)
                fits = _fit_lsw_family(stats, common, int(rng.integers(2**63 - 1)))
                fits.update(_fit_lsl_family(stats, common, lam, int(rng.integers(2**63 - 1))))
                record("m", m, rep, c0, lam, fits)
                bar.update()
            if grid:
                stats = episode_statistics(mrp.sample(lam_m, rng=rng), n_states=n, discount=gamma)
                for c in grid:
                    lam = default_regularization(threshold, lam_m, c=c, p=p0)
                    fits = _fit_lsl_family(stats, common, lam, int(rng.integers(2**63 - 1)))
                    record("lambda", lam_m, rep, c, lam, fits)
                bar.update()
    return pd.DataFrame(rows, columns=COLUMNS)


def summarize_experiment(table: pd.DataFrame) -> pd.DataFrame:
    """Mean and standard deviation of RMSE and MSE, and mean sigma, per setting.

    Parameters
    ----------
    table : pandas.DataFrame
        Output of :func:`run_experiment`.

    Returns
    -------
    pandas.DataFrame
        Columns ``panel, method, m, lambda_c, rmse_mean, rmse_std, mse_mean,
        mse_std, sigma_mean, n_reps``.
    """
    missing = {"panel", "method", "m", "lambda_c", "rmse", "mse", "sigma"} - set(table.columns)
    if missing:
        raise ValueError(f"table is missing columns {sorted(missing)}; pass run_experiment's output.")
    g = table.groupby(["panel", "method", "m", "lambda_c"], sort=True)
    out = g.agg(
        rmse_mean=("rmse", "mean"),
        rmse_std=("rmse", "std"),
        mse_mean=("mse", "mean"),
        mse_std=("mse", "std"),
        sigma_mean=("sigma", "mean"),
        n_reps=("rmse", "size"),
    )
    return out.reset_index()

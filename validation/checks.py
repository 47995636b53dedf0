"""The checks of the harness, as pure functions of arrays (unit-tested on synthetic input).

1. Non-private match, in DPpack's scaled space with ``mu = gamma / n``:
   ``F(theta_py) <= F(theta_R) + 1e-12`` and
   ``||theta_R - theta_py|| <= sqrt(2 (F(theta_R) - F(theta_py)) / mu) + 1e-9``
   (strong convexity: any gap must be explained by DPpack's optimiser stopping early).
2. Noise laws: one-sample KS of the noise norms against Gamma(d, rate) and of
   each direction coordinate ``u_j`` against the exact uniform-direction law
   ``(u_j + 1) / 2 ~ Beta((d-1)/2, (d-1)/2)``; two-sample KS between engines.
   Verdicts use a Bonferroni threshold ``alpha / m`` over all m KS tests of a run.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import List, Optional, Sequence, Tuple

import numpy as np
from scipy import stats

from pydpowl.engine.losses import MarginLoss, get_loss
from pydpowl.engine.solver import objective_gradient, objective_value

__all__ = [
    "CheckRow",
    "KSTest",
    "NonprivateSummary",
    "F_TOL",
    "DIST_TOL",
    "DATA_TOL",
    "objective_gap",
    "nonprivate_checks",
    "data_check",
    "direction_coordinate_law",
    "one_sample_noise_tests",
    "two_sample_noise_tests",
    "bonferroni_rows",
    "replay_check",
    "REPLAY_TOL",
]

#: slack on F(theta_py) <= F(theta_R)
F_TOL = 1e-12
#: slack on the strong-convexity distance bound
DIST_TOL = 1e-9
#: largest difference allowed between the two engines' scaled data and weights
DATA_TOL = 1e-12
#: largest difference, relative to the noise scale, between replayed and DPpack noise
REPLAY_TOL = 1e-9


@dataclass(frozen=True)
class CheckRow:
    """One line of the report: a check with its statistic and verdict."""

    case: str
    check: str
    engine: str
    statistic: float
    p_value: Optional[float]
    threshold: str
    verdict: str
    detail: str = ""


@dataclass(frozen=True)
class KSTest:
    """A KS test awaiting its multiplicity-adjusted verdict."""

    case: str
    check: str
    engine: str
    statistic: float
    p_value: float
    n: int


@dataclass(frozen=True)
class NonprivateSummary:
    """Numbers reported for the non-private match of one case."""

    case: str
    F_py: float
    F_R: float
    gap: float
    distance: float
    bound: float
    max_abs_diff_scaled: float
    max_abs_diff_original: float
    n_treatment_differs: int
    grad_norm_py: float
    grad_norm_R: float


def objective_gap(theta_a, theta_b, Z, y, w, *, gamma: float, loss: MarginLoss) -> float:
    """``F(theta_a) - F(theta_b)`` summed row by row (``math.fsum``) to avoid cancellation."""
    theta_a, theta_b = np.asarray(theta_a, float), np.asarray(theta_b, float)
    n = Z.shape[0]
    ma, mb = y * (Z @ theta_a), y * (Z @ theta_b)
    rows = w * (loss.value(ma) - loss.value(mb))
    reg = 0.5 * gamma * float((theta_a - theta_b) @ (theta_a + theta_b))
    return (math.fsum(rows) + reg) / n


def nonprivate_checks(case: str, Z, y, w, *, gamma: float, loss, theta_py, theta_r,
                      original_scale=None) -> Tuple[List[CheckRow], NonprivateSummary]:
    """Check 1 for one case.

    Parameters
    ----------
    case : str
    Z, y, w : ndarray
        The scaled data, labels in {-1, 1} and weights (pydpowl's).
    gamma : float
    loss : str or MarginLoss
    theta_py, theta_r : ndarray of shape (d,)
        Non-private solutions in the scaled space.
    original_scale : ndarray of shape (d,), optional
        ``column_scale * sqrt(d)``; original coefficients are ``theta / original_scale``.
    """
    loss = get_loss(loss) if isinstance(loss, str) else loss
    Z, y, w = np.asarray(Z, float), np.asarray(y, float), np.asarray(w, float)
    theta_py, theta_r = np.asarray(theta_py, float), np.asarray(theta_r, float)
    n = Z.shape[0]
    mu = gamma / n
    F_py = objective_value(theta_py, Z, y, w, gamma=gamma, loss=loss)
    F_R = objective_value(theta_r, Z, y, w, gamma=gamma, loss=loss)
    gap = objective_gap(theta_r, theta_py, Z, y, w, gamma=gamma, loss=loss)  # F_R - F_py
    dist = float(np.linalg.norm(theta_r - theta_py))
    bound = math.sqrt(2.0 * max(gap, 0.0) / mu) + DIST_TOL
    scale = np.ones_like(theta_py) if original_scale is None else np.asarray(original_scale, float)
    diff_orig = float(np.max(np.abs(theta_r / scale - theta_py / scale)))
    differs = int(np.count_nonzero((Z @ theta_py > 0) != (Z @ theta_r > 0)))
    g_py = float(np.linalg.norm(objective_gradient(theta_py, Z, y, w, gamma=gamma, loss=loss)))
    g_R = float(np.linalg.norm(objective_gradient(theta_r, Z, y, w, gamma=gamma, loss=loss)))
    rows = [
        CheckRow(case, "F(theta_py) <= F(theta_R) + 1e-12", "both", -gap, None, f"F_py - F_R <= {F_TOL:g}",
                 "PASS" if -gap <= F_TOL else "FAIL", f"F_py={F_py:.15g}, F_R={F_R:.15g}"),
        CheckRow(case, "||theta_R - theta_py|| <= sqrt(2 gap / mu) + 1e-9", "both", dist, None,
                 f"<= {bound:.3e}", "PASS" if dist <= bound else "FAIL",
                 f"gap={gap:.3e}, mu={mu:.4g}"),
    ]
    summary = NonprivateSummary(case, F_py, F_R, gap, dist, bound, float(np.max(np.abs(theta_r - theta_py))),
                                diff_orig, differs, g_py, g_R)
    return rows, summary


def data_check(case: str, Z_py, y_py, w_py, Z_r, y_r, w_r) -> CheckRow:
    """Both engines must optimise over the same scaled rows, labels and clipped weights."""
    if np.shape(Z_py) != np.shape(Z_r) or np.shape(y_py) != np.shape(y_r) or np.shape(w_py) != np.shape(w_r):
        return CheckRow(case, "same scaled data, labels, weights", "both", math.inf, None,
                        f"<= {DATA_TOL:g}", "FAIL", "shapes differ")
    diff = max(float(np.max(np.abs(np.asarray(Z_py) - Z_r))), float(np.max(np.abs(np.asarray(y_py) - y_r))),
               float(np.max(np.abs(np.asarray(w_py) - w_r))) / max(1.0, float(np.max(np.abs(w_r)))))
    return CheckRow(case, "same scaled data, labels, weights", "both", diff, None, f"<= {DATA_TOL:g}",
                    "PASS" if diff <= DATA_TOL else "FAIL", "max abs difference (weights relative)")


def direction_coordinate_law(d: int):
    """Law of one coordinate of a uniform direction in R^d: ``(u + 1) / 2 ~ Beta((d-1)/2, (d-1)/2)``."""
    if d < 2:
        raise ValueError(f"d must be >= 2 for a continuous direction coordinate, got d={d}.")
    a = (d - 1) / 2.0
    return stats.beta(a, a, loc=-1.0, scale=2.0)


def _split(noise: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    noise = np.asarray(noise, float)
    norms = np.linalg.norm(noise, axis=1)
    return norms, noise / norms[:, None]


def one_sample_noise_tests(case: str, engine: str, noise, rate: float) -> List[KSTest]:
    """KS of the norms against Gamma(d, rate) and of each direction coordinate against its exact law."""
    noise = np.asarray(noise, float)
    k, d = noise.shape
    norms, u = _split(noise)
    out = []
    res = stats.kstest(norms, stats.gamma(a=d, scale=1.0 / rate).cdf)
    out.append(KSTest(case, f"norm ~ Gamma({d}, rate={rate:.4g})", engine, float(res.statistic),
                      float(res.pvalue), k))
    law = direction_coordinate_law(d)
    for j in range(d):
        res = stats.kstest(u[:, j], law.cdf)
        out.append(KSTest(case, f"direction u{j} ~ 2 Beta({(d - 1) / 2:g},{(d - 1) / 2:g}) - 1", engine,
                          float(res.statistic), float(res.pvalue), k))
    return out


def two_sample_noise_tests(case: str, noise_a, noise_b) -> List[KSTest]:
    """Two-sample KS, pydpowl vs DPpack, on norms and each direction coordinate."""
    na, ua = _split(noise_a)
    nb, ub = _split(noise_b)
    out = []
    res = stats.ks_2samp(na, nb)
    out.append(KSTest(case, "norm: pydpowl vs DPpack", "both", float(res.statistic), float(res.pvalue), len(na)))
    for j in range(ua.shape[1]):
        res = stats.ks_2samp(ua[:, j], ub[:, j])
        out.append(KSTest(case, f"direction u{j}: pydpowl vs DPpack", "both", float(res.statistic),
                          float(res.pvalue), len(na)))
    return out


def bonferroni_rows(tests: Sequence[KSTest], alpha: float) -> Tuple[List[CheckRow], float]:
    """Verdicts with the Bonferroni threshold ``alpha / m`` (m = number of tests); returns rows and it."""
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got alpha={alpha!r}.")
    m = max(len(tests), 1)
    threshold = alpha / m
    rows = [
        CheckRow(t.case, t.check, t.engine, t.statistic, t.p_value, f"p >= {threshold:.2e}",
                 "PASS" if t.p_value >= threshold else "FAIL", f"K={t.n}")
        for t in tests
    ]
    return rows, threshold


def replay_check(case: str, noise_py, noise_r) -> CheckRow:
    """pydpowl fed R's stream (same seeds) must release DPpack's noise, draw for draw."""
    noise_py, noise_r = np.asarray(noise_py, float), np.asarray(noise_r, float)
    if noise_py.shape != noise_r.shape:
        return CheckRow(case, "same R seed, same noise (RRandom replay)", "both", math.inf, None,
                        f"<= {REPLAY_TOL:g}", "FAIL", "shapes differ")
    scale = max(1.0, float(np.max(np.abs(noise_r))))
    diff = float(np.max(np.abs(noise_py - noise_r))) / scale
    return CheckRow(case, "same R seed, same noise (RRandom replay)", "both", diff, None, f"<= {REPLAY_TOL:g}",
                    "PASS" if diff <= REPLAY_TOL else "FAIL",
                    f"{noise_r.shape[0]} seeds; max abs difference relative to max(1, max |noise|)")

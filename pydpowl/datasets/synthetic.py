"""The paper's synthetic design for DP-OWL (Giddens et al., simulation study).

x ~ U[0, 1]^p with p = 4 informative features (plus optional null features),
A = +1 or -1 with probability 1/2 each,
f(x) = 1 + x1 + x2 - 1.8 x3 - 2.2 x4,
B ~ N(0.01 + 0.02 x4 + 3 A f(x), 0.5^2),
and the optimal rule is sign(f(x)). As in the authors' code, B is shifted per
dataset by ``|min B| + 0.001`` when its minimum is negative (``shift="paper"``);
that shift reads the minimum off the data, which is harmless for simulated
data but is not a public bound (see :func:`pydpowl.min_shift_benefits`).
The authors use W = 30 and feature bounds [0, 1].
"""

from __future__ import annotations

from typing import Any, Union

import numpy as np
import pandas as pd

from .._validation import check_int, resolve_rng
from ._container import DesignTruth, OWLData

__all__ = ["make_synthetic_owl", "synthetic_decision", "synthetic_truth", "SYNTHETIC_WEIGHTS_UPPER_BOUND"]

#: the authors' public weight bound for this design
SYNTHETIC_WEIGHTS_UPPER_BOUND = 30.0
#: standard deviation of the benefit around its mean
_NOISE_SD = 0.5


def synthetic_decision(X: np.ndarray) -> np.ndarray:
    """``f(x) = 1 + x1 + x2 - 1.8 x3 - 2.2 x4`` (the optimal rule is its sign)."""
    X = np.asarray(X, dtype=np.float64)
    return 1.0 + X[:, 0] + X[:, 1] - 1.8 * X[:, 2] - 2.2 * X[:, 3]


def make_synthetic_owl(n: int, *, n_noise_features: int = 0, shift: Union[str, float, None] = "paper",
                       random_state: Any = None) -> OWLData:
    """Draw one dataset of the paper's synthetic design.

    Parameters
    ----------
    n : int
        Number of subjects (>= 1).
    n_noise_features : int, default=0
        Extra U[0, 1] features that do not affect B (the tuning data D0 of the
        authors' main study has 6 of them).
    shift : "paper", float or None, default="paper"
        "paper": add ``|min B| + 0.001`` if min B < 0 (the authors' per-dataset
        shift); a float: add that public constant and clip what stays negative
        to 0 (counted in the notes); None: no shift (B may be negative).
    random_state : None, int, numpy Generator or RRandom
        Source of randomness.
    """
    n = check_int("n", n, minimum=1)
    k = check_int("n_noise_features", n_noise_features, minimum=0)
    rng = resolve_rng(random_state)
    p = 4 + k
    X, A, eps = _draw(rng, n, p)
    f = synthetic_decision(X)
    B = _mean_benefit(X, A) + _NOISE_SD * eps
    notes = []
    if shift == "paper":
        low = float(B.min())
        if low < 0:
            B = B + abs(low) + 0.001  # R's order: (B + abs(min(B))) + 0.001
            notes.append("benefits shifted by |min B| + 0.001 (the authors' per-dataset shift)")
    elif shift is not None:
        B = B + float(shift)
        n_neg = int(np.count_nonzero(B < 0))
        B = np.maximum(B, 0.0)
        notes.append(f"benefits shifted by {float(shift):g}; {n_neg} negative values clipped to 0")
    names = [f"x{j + 1}" for j in range(p)]
    return OWLData(
        X=pd.DataFrame(X, columns=names), treatment=A, benefit=B, propensity=np.full(n, 0.5),
        feature_bounds=(np.zeros(p), np.ones(p)), weights_upper_bound=SYNTHETIC_WEIGHTS_UPPER_BOUND,
        optimal=np.where(f > 0, 1.0, -1.0), description=f"paper's synthetic design, n={n}, p={p}",
        notes=tuple(notes), weight_sensitivity=0.0,  # randomised with known probability 1/2
    )


def _mean_benefit(X: np.ndarray, A: np.ndarray) -> np.ndarray:
    """``E[B | x, A] = 0.01 + 0.02 x4 + 3 A f(x)`` (before any shift)."""
    return 0.01 + 0.02 * X[:, 3] + 3.0 * A * synthetic_decision(X)


def _clipped_normal_mean(mean: np.ndarray, sd: float, lower: float, upper: float) -> np.ndarray:
    """``E[clip(Y, lower, upper)]`` for ``Y ~ N(mean, sd^2)``."""
    from scipy import stats

    a, b = (lower - mean) / sd, (upper - mean) / sd
    return (lower * stats.norm.cdf(a) + upper * stats.norm.sf(b)
            + mean * (stats.norm.cdf(b) - stats.norm.cdf(a)) + sd * (stats.norm.pdf(a) - stats.norm.pdf(b)))


def synthetic_truth(*, n_noise_features: int = 0, benefit_bounds: Any = None, n_points: int = 2 ** 18,
                    seed: int = 20240) -> DesignTruth:
    """The design's truth for exact rule values (no shift; optionally clipped to public benefit bounds).

    Parameters
    ----------
    n_noise_features : int, default=0
    benefit_bounds : (float, float), optional
        ``E[clip(B, L, U) | x, a]`` in closed form (B is normal given x and a).
    n_points : int, default=2**18
        Size of the scrambled Sobol sample of ``U[0, 1]^p`` (a power of 2).
    seed : int, default=20240
        Seed of the scrambling (a fixed, public quadrature rule).
    """
    from scipy.stats import qmc

    k = check_int("n_noise_features", n_noise_features, minimum=0)
    m = check_int("n_points", n_points, minimum=2)
    X = qmc.Sobol(d=4 + k, scramble=True, seed=seed).random(m)
    plus, minus = _mean_benefit(X, np.ones(m)), _mean_benefit(X, -np.ones(m))
    text = "paper's synthetic design (no shift)"
    if benefit_bounds is not None:
        lower, upper = (float(v) for v in benefit_bounds)
        plus = _clipped_normal_mean(plus, _NOISE_SD, lower, upper)
        minus = _clipped_normal_mean(minus, _NOISE_SD, lower, upper)
        text += f", benefit clipped to [{lower:g}, {upper:g}]"
    return DesignTruth(X=X, weight=np.full(m, 1.0 / m), mean_plus=plus, mean_minus=minus,
                       description=f"{text}; {m} Sobol points")


def _draw(rng: Any, n: int, p: int):
    """Features, treatments and standard-normal noise, in the authors' order for R streams."""
    if callable(getattr(rng, "runif", None)) and callable(getattr(rng, "sample", None)):
        from .synthetic_r import draw_in_r_order  # R-compatible stream

        return draw_in_r_order(rng, n, p)
    X = rng.uniform(0.0, 1.0, size=(n, p))
    A = np.where(rng.uniform(size=n) < 0.5, 1.0, -1.0)
    eps = rng.standard_normal(n)
    return X, A, eps

"""The linear-boundary design of Zhao, Zeng, Rush & Kosorok (2012), outcome weighted learning's first study.

Zhao et al. (JASA 2012, section 5, scenario 1): covariates ``X ~ U[-1, 1]^p``,
treatment ``A = +1`` or ``-1`` with probability 1/2 each, and

    B = 1 + 2 X1 + X2 + 0.5 X3 + 0.442 (1 - X1 - X2) A + N(0, 1),

so the optimal rule is ``sign(1 - X1 - X2)``, linear. The authors use p = 50;
the default here is p = 10 (a private fit pays for every coefficient; the
extra covariates are pure noise either way). Unlike the paper's DP-OWL design,
the main effect ``1 + 2 X1 + X2 + 0.5 X3`` (standard deviation 1.32) is large
next to the treatment effect (0.57): the design where OWL's weights carry
most noise and a baseline helps most.

Public settings for a private fit (:data:`ZHAO_BENEFIT_BOUNDS`,
:data:`ZHAO_WEIGHTS_UPPER_BOUND`): ``B`` in ``[-7, 9]`` (the mean lies in
``[-2.94, 5.83]``; the noise exceeds 3 SDs with probability 0.27 %), W =
16 / (1/2) = 32; features in ``[-1, 1]``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from .._validation import check_int, resolve_rng
from ._container import DesignTruth, OWLData

__all__ = ["make_zhao_owl", "zhao_truth", "zhao_effect", "ZHAO_BENEFIT_BOUNDS", "ZHAO_WEIGHTS_UPPER_BOUND",
           "ZHAO_FEATURES"]

#: covariates of the default design (Zhao et al. use 50)
ZHAO_FEATURES = 10
#: public benefit bounds of the design
ZHAO_BENEFIT_BOUNDS = (-7.0, 9.0)
#: public bound on (B - L) / P(A | x) = 16 / (1/2)
ZHAO_WEIGHTS_UPPER_BOUND = 32.0


def zhao_effect(X: np.ndarray) -> np.ndarray:
    """``0.442 (1 - x1 - x2)``: half the benefit of +1 over -1 (the optimal rule is its sign)."""
    X = np.asarray(X, dtype=np.float64)
    return 0.442 * (1.0 - X[:, 0] - X[:, 1])


def _main(X: np.ndarray) -> np.ndarray:
    return 1.0 + 2.0 * X[:, 0] + X[:, 1] + 0.5 * X[:, 2]


def make_zhao_owl(n: int, *, n_features: int = ZHAO_FEATURES, random_state: Any = None) -> OWLData:
    """Draw one dataset of the design (benefits as drawn: clip them to the public bounds for a private fit).

    Parameters
    ----------
    n : int
        Number of subjects (>= 1).
    n_features : int, default=10
        p >= 3 (Zhao et al.: 50).
    random_state : None, int or numpy Generator
    """
    n = check_int("n", n, minimum=1)
    p = check_int("n_features", n_features, minimum=3)
    rng = resolve_rng(random_state)
    X = rng.uniform(-1.0, 1.0, size=(n, p))
    A = np.where(rng.uniform(size=n) < 0.5, 1.0, -1.0)
    B = _main(X) + zhao_effect(X) * A + rng.standard_normal(n)
    names = [f"x{j + 1}" for j in range(p)]
    return OWLData(
        X=pd.DataFrame(X, columns=names), treatment=A, benefit=B, propensity=np.full(n, 0.5),
        feature_bounds=(-np.ones(p), np.ones(p)), weights_upper_bound=ZHAO_WEIGHTS_UPPER_BOUND,
        optimal=np.where(zhao_effect(X) > 0, 1.0, -1.0), weight_sensitivity=0.0,
        description=f"Zhao et al. (2012) scenario 1 (linear boundary), n={n}, p={p}",
        notes=(f"benefits as drawn; public bounds {ZHAO_BENEFIT_BOUNDS} (shift by -L for OWL weights)",),
    )


def zhao_truth(*, n_features: int = ZHAO_FEATURES, n_points: int = 2 ** 15, seed: int = 20240) -> DesignTruth:
    """The design's truth (benefits unclipped) on a scrambled Sobol sample of ``U[-1, 1]^p`` (a power of 2)."""
    from scipy.stats import qmc

    p = check_int("n_features", n_features, minimum=3)
    m = check_int("n_points", n_points, minimum=2)
    X = 2.0 * qmc.Sobol(d=p, scramble=True, seed=seed).random(m) - 1.0
    main, effect = _main(X), zhao_effect(X)
    return DesignTruth(X=X, weight=np.full(m, 1.0 / m), mean_plus=main + effect, mean_minus=main - effect,
                       description=f"Zhao et al. (2012) scenario 1, p={p}; {m} Sobol points")

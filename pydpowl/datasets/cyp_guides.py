"""CYP-GUIDES: a synthetic stand-in generator and a loader for the public trial file.

The case study of Giddens et al. uses the CYP-GUIDES trial (n = 1459 genotyped
inpatients with severe depression; 982 CYP2D6-guided (G, coded +1) : 477
standard (S, coded -1), randomised 2:1). Benefit ``B = log(24*365) - log(LOS)``
(LOS in hours), features age [18, 89], male, non-white and a primary major
depressive diagnosis (0/1), propensities 2/3 (G) and 1/3 (S), weight bound
``W = log(24*365) / (1/3)``, gamma = 75.

:func:`make_cyp_guides_style` draws a realistic synthetic cohort (no real data
embedded): feature laws, outcome model and effect presets follow the project's
specification ``cyp_guides_style.md``. :func:`load_cyp_guides` reads a user's
copy of the public clinical dataset and applies the paper's coding.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Union

import numpy as np
import pandas as pd

from .._base import resolve_rng
from .._validation import check_int
from ._container import OWLData

__all__ = [
    "make_cyp_guides_style",
    "load_cyp_guides",
    "CYP_FEATURES",
    "CYP_FEATURE_BOUNDS",
    "CYP_WEIGHTS_UPPER_BOUND",
    "CYP_GAMMA",
    "CYP_PROPENSITY_GUIDED",
]

CYP_FEATURES = ("age", "male", "nonwhite", "mdd")
CYP_FEATURE_BOUNDS = (np.array([18.0, 0.0, 0.0, 0.0]), np.array([89.0, 1.0, 1.0, 1.0]))
LOG_YEAR_HOURS = math.log(24 * 365)
CYP_WEIGHTS_UPPER_BOUND = LOG_YEAR_HOURS / (1.0 / 3.0)
CYP_GAMMA = 75.0
CYP_PROPENSITY_GUIDED = 2.0 / 3.0

# Age bands (inclusive years) and their probabilities in the randomised cohort.
_AGE_BANDS = ((18, 19), (20, 24), (25, 29), (30, 34), (35, 39), (40, 44), (45, 49), (50, 54),
              (55, 59), (60, 64), (65, 69), (70, 74), (75, 79), (80, 89))
_AGE_PROBS = np.array([.0953, .1604, .1083, .0925, .0747, .0809, .1008, .1151, .0740, .0548,
                       .0185, .0137, .0062, .0048])

# Effect of guided therapy on log LOS: tau(x) = c0 + c_age a10 + c_male male + c_nw nonwhite + c_mdd mdd
_EFFECT_PRESETS = {
    "guided": (0.35, -0.08, -0.10, 0.0, -0.45),
    "trial-like": (0.03, 0.01, -0.15, 0.015, 0.07),
}
_LOS_CLIP = (6.0, 4000.0)


def _expit(x):
    return 1.0 / (1.0 + np.exp(-x))


def make_cyp_guides_style(n: int = 1459, *, preset: str = "guided", random_state: Any = None) -> OWLData:
    """Draw a synthetic CYP-GUIDES-style cohort.

    Parameters
    ----------
    n : int, default=1459
        Cohort size; round(n * 982 / 1459) subjects get guided therapy (+1),
        assigned by a random permutation.
    preset : {"guided", "trial-like"}, default="guided"
        Treatment-effect model. "guided" makes guided therapy optimal for about
        two thirds of patients (mostly those with major depression); "trial-like"
        matches the trial's weak point estimates.
    random_state : None, int or numpy Generator

    Returns
    -------
    OWLData
        With ``optimal`` = +1 where guided therapy shortens the expected stay.
        The frame ``X`` has the four features; ``notes`` records how many stays
        were clipped to [6, 4000] hours.
    """
    n = check_int("n", n, minimum=2)
    if preset not in _EFFECT_PRESETS:
        raise ValueError(f"preset must be one of {sorted(_EFFECT_PRESETS)}, got preset={preset!r}.")
    rng = resolve_rng(random_state)
    probs = _AGE_PROBS / _AGE_PROBS.sum()
    band = rng.choice(len(_AGE_BANDS), size=n, p=probs)
    lo = np.array([b[0] for b in _AGE_BANDS])[band]
    hi = np.array([b[1] for b in _AGE_BANDS])[band]
    age = np.floor(lo + rng.uniform(size=n) * (hi - lo + 1)).astype(float)
    a10 = (age - 40.0) / 10.0
    male = (rng.uniform(size=n) < _expit(-0.026 + 0.108 * a10)).astype(float)
    nonwhite = (rng.uniform(size=n) < _expit(-0.237 - 0.138 * a10 - 0.172 * male)).astype(float)
    mdd = (rng.uniform(size=n) < _expit(1.683 + 0.145 * a10 - 0.258 * male - 0.124 * nonwhite)).astype(float)

    n_guided = int(round(n * 982 / 1459))
    A = np.full(n, -1.0)
    A[rng.permutation(n)[:n_guided]] = 1.0

    c0, c_age, c_male, c_nw, c_mdd = _EFFECT_PRESETS[preset]
    tau = c0 + c_age * a10 + c_male * male + c_nw * nonwhite + c_mdd * mdd
    mu = 4.90 + 0.075 * a10 + 0.15 * male - 0.175 * nonwhite + 0.06 * mdd
    noise = 0.65 * math.sqrt(6.0 / 8.0) * rng.standard_t(8, size=n)
    los = np.rint(np.exp(mu + (A > 0) * tau + noise))
    n_clipped = int(np.count_nonzero((los < _LOS_CLIP[0]) | (los > _LOS_CLIP[1])))
    los = np.clip(los, *_LOS_CLIP)
    benefit = LOG_YEAR_HOURS - np.log(los)
    propensity = np.where(A > 0, CYP_PROPENSITY_GUIDED, 1.0 - CYP_PROPENSITY_GUIDED)
    X = pd.DataFrame({"age": age, "male": male, "nonwhite": nonwhite, "mdd": mdd})
    return OWLData(
        X=X, treatment=A, benefit=benefit, propensity=propensity,
        feature_bounds=(CYP_FEATURE_BOUNDS[0].copy(), CYP_FEATURE_BOUNDS[1].copy()),
        weights_upper_bound=CYP_WEIGHTS_UPPER_BOUND, optimal=np.where(tau < 0, 1.0, -1.0),
        weight_sensitivity=0.0,  # randomised 2:1 with known probabilities
        description=f"synthetic CYP-GUIDES-style cohort (preset {preset!r}), n={n}, {n_guided} guided : {n - n_guided} standard",
        notes=(f"{n_clipped} lengths of stay clipped to [6, 4000] hours",
               "benefit = log(24*365) - log(LOS); propensities 2/3 (guided) and 1/3 (standard)"),
    )


def load_cyp_guides(path: Union[str, Path]) -> OWLData:
    """Read the public CYP-GUIDES clinical CSV and apply the paper's coding.

    Coding (stated in the result's ``notes``): randomised patients only
    (``Assignment`` G or S); treatment +1 = G (guided), -1 = S; age in [18, 89];
    male = 1 for GENDER "M"; nonwhite = 1 unless RACE/ETHNICITY is "W";
    mdd = 1 when the diagnosis text mentions MDD or major depression;
    benefit = log(24*365) - log(LOS hours); propensities 2/3 (G) and 1/3 (S);
    W = log(24*365) / (1/3).

    Raises
    ------
    ValueError
        If a needed column is missing, a value cannot be coded, or a stay is
        shorter than 1 hour (the benefit would exceed the public bound).
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"data file not found: {path}")
    raw = pd.read_csv(path, encoding="utf-8-sig")
    needed = ["GENDER", "AGE", "RACE/ETHNICITY", "Diagnosis", "Assignment", "LOS"]
    missing = [c for c in needed if c not in raw.columns]
    if missing:
        raise ValueError(f"{path.name}: missing column(s) {missing}; expected the public CYP-GUIDES clinical file.")
    assignment = raw["Assignment"].astype("string").str.strip()
    keep = assignment.isin(["G", "S"]).fillna(False).to_numpy()
    df = raw.loc[keep]
    n_dropped = int((~keep).sum())
    if df[["GENDER", "AGE", "RACE/ETHNICITY", "Diagnosis", "LOS"]].isna().any().any():
        raise ValueError(f"{path.name}: randomised rows have missing values in the needed columns.")
    los = pd.to_numeric(df["LOS"], errors="raise").to_numpy(dtype=float)
    if (los < 1).any():
        raise ValueError(f"{path.name}: {int((los < 1).sum())} stays are shorter than 1 hour; the benefit bound needs LOS >= 1.")
    gender = df["GENDER"].astype(str).str.strip().str.upper()
    if not gender.isin(["F", "M"]).all():
        raise ValueError(f"{path.name}: GENDER must be F or M.")
    diagnosis = df["Diagnosis"].astype(str).str.lower()
    X = pd.DataFrame({
        "age": pd.to_numeric(df["AGE"], errors="raise").to_numpy(dtype=float),
        "male": (gender == "M").to_numpy(dtype=float),
        "nonwhite": (df["RACE/ETHNICITY"].astype(str).str.strip().str.upper() != "W").to_numpy(dtype=float),
        "mdd": (diagnosis.str.contains("mdd") | diagnosis.str.contains("major depress")).to_numpy(dtype=float),
    })
    A = np.where(assignment[keep].to_numpy() == "G", 1.0, -1.0)
    benefit = LOG_YEAR_HOURS - np.log(los)
    propensity = np.where(A > 0, CYP_PROPENSITY_GUIDED, 1.0 - CYP_PROPENSITY_GUIDED)
    notes = (
        f"randomised patients only: {len(A)} kept ({int((A > 0).sum())} G : {int((A < 0).sum())} S), {n_dropped} not randomised dropped",
        "treatment: +1 = G (CYP2D6-guided), -1 = S (standard)",
        "features: age (bounds [18, 89]); male = 1 for GENDER M; nonwhite = 1 unless RACE/ETHNICITY is W; "
        "mdd = 1 if the diagnosis mentions MDD or major depression",
        "benefit = log(24*365) - log(LOS in hours); propensities 2/3 (G), 1/3 (S); W = log(24*365)/(1/3)",
    )
    return OWLData(
        X=X, treatment=A, benefit=benefit, propensity=propensity,
        feature_bounds=(CYP_FEATURE_BOUNDS[0].copy(), CYP_FEATURE_BOUNDS[1].copy()),
        weights_upper_bound=CYP_WEIGHTS_UPPER_BOUND, optimal=None,
        description=f"CYP-GUIDES clinical data ({path.name}), n={len(A)}", notes=notes,
        weight_sensitivity=0.0,  # randomised 2:1 with known probabilities
    )

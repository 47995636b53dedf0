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

from .._validation import check_int, resolve_rng
from ._container import DesignTruth, OWLData
from ..estimators.propensity_received import arm_propensity

__all__ = [
    "make_cyp_guides_style",
    "cyp_guides_style_truth",
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
# Feature model: logit P(male) = a + b a10; logit P(non-white) = a + b a10 + c male;
# logit P(mdd) = a + b a10 + c male + e non-white (a10 = (age - 40) / 10)
_MALE = (-0.026, 0.108)
_NONWHITE = (-0.237, -0.138, -0.172)
_MDD = (1.683, 0.145, -0.258, -0.124)
# log LOS = mu(x) + 1{guided} tau(x) + _NOISE_SCALE * t_8 (t_8 scaled to unit variance)
_MU = (4.90, 0.075, 0.15, -0.175, 0.06)
_NOISE_SCALE = 0.65 * math.sqrt(6.0 / 8.0)
_NOISE_DF = 8


def _feature_logits(a10, male, nonwhite):
    """Linear predictors of P(male), P(non-white) and P(mdd) given the earlier features."""
    return (_MALE[0] + _MALE[1] * a10,
            _NONWHITE[0] + _NONWHITE[1] * a10 + _NONWHITE[2] * male,
            _MDD[0] + _MDD[1] * a10 + _MDD[2] * male + _MDD[3] * nonwhite)


def _log_los_mean(a10, male, nonwhite, mdd, guided, preset):
    """``mu(x) + 1{guided} tau(x)`` of log LOS."""
    c0, c_age, c_male, c_nw, c_mdd = _EFFECT_PRESETS[preset]
    tau = c0 + c_age * a10 + c_male * male + c_nw * nonwhite + c_mdd * mdd
    mu = _MU[0] + _MU[1] * a10 + _MU[2] * male + _MU[3] * nonwhite + _MU[4] * mdd
    return mu + guided * tau, tau


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
    male = (rng.uniform(size=n) < _expit(_feature_logits(a10, 0.0, 0.0)[0])).astype(float)
    nonwhite = (rng.uniform(size=n) < _expit(_feature_logits(a10, male, 0.0)[1])).astype(float)
    mdd = (rng.uniform(size=n) < _expit(_feature_logits(a10, male, nonwhite)[2])).astype(float)

    n_guided = int(round(n * 982 / 1459))
    A = np.full(n, -1.0)
    A[rng.permutation(n)[:n_guided]] = 1.0

    mean, tau = _log_los_mean(a10, male, nonwhite, mdd, (A > 0).astype(float), preset)
    noise = _NOISE_SCALE * rng.standard_t(_NOISE_DF, size=n)
    los = np.rint(np.exp(mean + noise))
    n_clipped = int(np.count_nonzero((los < _LOS_CLIP[0]) | (los > _LOS_CLIP[1])))
    los = np.clip(los, *_LOS_CLIP)
    benefit = LOG_YEAR_HOURS - np.log(los)
    propensity = arm_propensity(CYP_PROPENSITY_GUIDED, A)
    X = pd.DataFrame({"age": age, "male": male, "nonwhite": nonwhite, "mdd": mdd})
    return OWLData(
        X=X, treatment=A, benefit=benefit, propensity=propensity,
        feature_bounds=(CYP_FEATURE_BOUNDS[0].copy(), CYP_FEATURE_BOUNDS[1].copy()),
        weights_upper_bound=CYP_WEIGHTS_UPPER_BOUND, optimal=np.where(tau < 0, 1.0, -1.0),
        weight_sensitivity=0.0,  # randomised 2:1 with known probabilities
        description=(f"synthetic CYP-GUIDES-style cohort (preset {preset!r}), n={n}, "
                     f"{n_guided} guided : {n - n_guided} standard"),
        notes=(f"{n_clipped} lengths of stay clipped to [6, 4000] hours",
               "benefit = log(24*365) - log(LOS); propensities 2/3 (guided) and 1/3 (standard)"),
    )


def cyp_guides_style_truth(preset: str = "guided", *, benefit_bounds: Any = None,
                           n_quantiles: int = 20000) -> DesignTruth:
    """The exact truth of :func:`make_cyp_guides_style`: every covariate pattern and its mean benefits.

    The features are discrete (integer ages 18-89, three 0/1 features), so the
    covariate law has 576 support points with probabilities from the
    generator's age bands and logistic feature models. The mean benefit of each
    arm at each point integrates the t_8 noise of log LOS (midpoints of
    ``n_quantiles`` equal-probability slices), with the generator's rounding of
    LOS to whole hours and clipping to [6, 4000] hours, and clipping of the
    benefit to ``benefit_bounds`` when given.
    """
    from scipy import stats

    if preset not in _EFFECT_PRESETS:
        raise ValueError(f"preset must be one of {sorted(_EFFECT_PRESETS)}, got preset={preset!r}.")
    J = check_int("n_quantiles", n_quantiles, minimum=10)
    probs = _AGE_PROBS / _AGE_PROBS.sum()
    ages, p_age = [], []
    for (lo, hi), pb in zip(_AGE_BANDS, probs):
        for a in range(lo, hi + 1):
            ages.append(float(a))
            p_age.append(pb / (hi - lo + 1))
    grid = np.array([(a, m, w, d) for a in ages for m in (0.0, 1.0) for w in (0.0, 1.0) for d in (0.0, 1.0)])
    weight_age = np.repeat(np.array(p_age), 8)
    a10 = (grid[:, 0] - 40.0) / 10.0
    male, nonwhite, mdd = grid[:, 1], grid[:, 2], grid[:, 3]
    l_male, l_nw, l_mdd = _feature_logits(a10, male, nonwhite)

    def bern(logit, value):
        q = _expit(logit)
        return np.where(value > 0, q, 1.0 - q)

    weight = weight_age * bern(l_male, male) * bern(l_nw, nonwhite) * bern(l_mdd, mdd)
    noise = _NOISE_SCALE * stats.t.ppf((np.arange(J) + 0.5) / J, _NOISE_DF)

    def mean_benefit(guided: float) -> np.ndarray:
        mean, _ = _log_los_mean(a10, male, nonwhite, mdd, guided, preset)
        los = np.clip(np.rint(np.exp(mean[:, None] + noise[None, :])), *_LOS_CLIP)
        b = LOG_YEAR_HOURS - np.log(los)
        if benefit_bounds is not None:
            b = np.clip(b, float(benefit_bounds[0]), float(benefit_bounds[1]))
        return b.mean(axis=1)

    text = f"CYP-GUIDES-style design (preset {preset!r}): 576 covariate patterns, {J} noise quantiles"
    if benefit_bounds is not None:
        text += f", benefit clipped to [{float(benefit_bounds[0]):g}, {float(benefit_bounds[1]):g}]"
    return DesignTruth(X=grid, weight=weight / weight.sum(), mean_plus=mean_benefit(1.0),
                       mean_minus=mean_benefit(0.0), description=text)


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
        raise ValueError(f"{path.name}: {int((los < 1).sum())} stays are shorter than 1 hour; "
                         "the benefit bound needs LOS >= 1.")
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
    propensity = arm_propensity(CYP_PROPENSITY_GUIDED, A)
    notes = (
        "randomised patients only (Assignment G or S); the others are dropped",
        "treatment: +1 = G (CYP2D6-guided), -1 = S (standard)",
        "features: age (bounds [18, 89]); male = 1 for GENDER M; nonwhite = 1 unless RACE/ETHNICITY is W; "
        "mdd = 1 if the diagnosis mentions MDD or major depression",
        "benefit = log(24*365) - log(LOS in hours); propensities 2/3 (G), 1/3 (S); W = log(24*365)/(1/3)",
    )
    return OWLData(
        X=X, treatment=A, benefit=benefit, propensity=propensity,
        feature_bounds=(CYP_FEATURE_BOUNDS[0].copy(), CYP_FEATURE_BOUNDS[1].copy()),
        weights_upper_bound=CYP_WEIGHTS_UPPER_BOUND, optimal=None,
        description=f"CYP-GUIDES clinical data ({path.name})", notes=notes,
        weight_sensitivity=0.0,  # randomised 2:1 with known probabilities
        diagnostics={"rows read": int(len(raw)), "not randomised (dropped)": n_dropped,
                     "randomised (kept)": int(len(A)), "treatment +1 (G)": int((A > 0).sum()),
                     "treatment -1 (S)": int((A < 0).sum())},
    )

"""Datasets: the paper's synthetic design, CYP-GUIDES (synthetic stand-in and loader) and Zhao et al.'s design."""

from ._container import DesignTruth, OWLData
from .cyp_guides import (
    CYP_FEATURE_BOUNDS,
    CYP_FEATURES,
    CYP_GAMMA,
    CYP_PROPENSITY_GUIDED,
    CYP_WEIGHTS_UPPER_BOUND,
    cyp_guides_style_truth,
    load_cyp_guides,
    make_cyp_guides_style,
)
from .synthetic import SYNTHETIC_WEIGHTS_UPPER_BOUND, make_synthetic_owl, synthetic_decision, synthetic_truth
from .zhao import ZHAO_BENEFIT_BOUNDS, ZHAO_WEIGHTS_UPPER_BOUND, make_zhao_owl, zhao_truth

__all__ = [
    "OWLData",
    "DesignTruth",
    "synthetic_truth",
    "cyp_guides_style_truth",
    "make_synthetic_owl",
    "synthetic_decision",
    "SYNTHETIC_WEIGHTS_UPPER_BOUND",
    "make_cyp_guides_style",
    "load_cyp_guides",
    "CYP_FEATURES",
    "CYP_FEATURE_BOUNDS",
    "CYP_WEIGHTS_UPPER_BOUND",
    "CYP_GAMMA",
    "CYP_PROPENSITY_GUIDED",
    "make_zhao_owl",
    "zhao_truth",
    "ZHAO_BENEFIT_BOUNDS",
    "ZHAO_WEIGHTS_UPPER_BOUND",
]

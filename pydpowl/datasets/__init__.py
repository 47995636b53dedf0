"""Datasets: the paper's synthetic design and CYP-GUIDES (synthetic stand-in and loader)."""

from ._container import OWLData
from .cyp_guides import (
    CYP_FEATURE_BOUNDS,
    CYP_FEATURES,
    CYP_GAMMA,
    CYP_PROPENSITY_GUIDED,
    CYP_WEIGHTS_UPPER_BOUND,
    load_cyp_guides,
    make_cyp_guides_style,
)
from .synthetic import SYNTHETIC_WEIGHTS_UPPER_BOUND, make_synthetic_owl, synthetic_decision

__all__ = [
    "OWLData",
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
]

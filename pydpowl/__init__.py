"""pydpowl: differentially private weighted ERM and outcome weighted learning.

A native Python engine for DP-wERM (output perturbation, Algorithm 1 of
Giddens et al.) and its application to outcome weighted learning (DP-OWL),
agreeing with the R reference implementation DPpack.
"""

__version__ = "0.1.0"

from . import datasets, policy_evaluation, value
from .benefits import min_shift_benefits, shift_benefits
from .exceptions import ConvergenceError, NotFittedError, PrivacyLeakWarning
from .losses import CustomLoss, HuberHingeLoss, LogisticLoss, MarginLoss
from .mechanisms import noise_rate, output_sensitivity, sample_output_noise
from .owl import DPOWL
from .preprocessing import FeatureScaler, bounds_from_data
from .propensity import LogisticPropensity, proposition8_H, trivial_weight_sensitivity
from .rrandom import RRandom
from .solver import SolverResult, solve_weighted_erm
from .value import accuracy, association_test, concordance, empirical_value, ipw_value
from .werm import DPWeightedERM

__all__ = [
    "__version__",
    "DPWeightedERM",
    "DPOWL",
    "LogisticPropensity",
    "RRandom",
    "FeatureScaler",
    "bounds_from_data",
    "shift_benefits",
    "min_shift_benefits",
    "HuberHingeLoss",
    "LogisticLoss",
    "CustomLoss",
    "MarginLoss",
    "solve_weighted_erm",
    "SolverResult",
    "output_sensitivity",
    "noise_rate",
    "sample_output_noise",
    "proposition8_H",
    "trivial_weight_sensitivity",
    "empirical_value",
    "ipw_value",
    "accuracy",
    "concordance",
    "association_test",
    "datasets",
    "policy_evaluation",
    "value",
    "PrivacyLeakWarning",
    "ConvergenceError",
    "NotFittedError",
]

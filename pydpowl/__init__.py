"""pydpowl: differentially private weighted ERM and outcome weighted learning.

A native Python engine for DP-wERM (output perturbation, Algorithm 1 of
Giddens et al.) and its application to outcome weighted learning (DP-OWL),
agreeing with the R reference implementation DPpack.
"""

__version__ = "0.1.0"

from . import bounds, datasets, model_io, policy_evaluation, simulation, tuning, value
from .accountant import BudgetAccountant
from .benefits import min_shift_benefits, shift_benefits
from .casestudy import gamma_sensitivity, run_case_study
from .exceptions import BudgetExceededError, ConvergenceError, NotFittedError, PrivacyLeakWarning
from .gamma_table import GammaTable, authors_gamma_table, pydpowl_gamma_table
from .losses import CustomLoss, HuberHingeLoss, LogisticLoss, MarginLoss
from .model_io import ModelFileError, ReleasedModel, export_model, load_model
from .mechanisms import noise_rate, output_sensitivity, sample_output_noise
from .owl import DPOWL
from .preprocessing import FeatureScaler, bounds_from_data
from .propensity import LogisticPropensity, proposition8_H, trivial_weight_sensitivity
from .rrandom import RRandom
from .simulation import SimulationResult, run_simulation
from .solver import SolverResult, solve_weighted_erm
from .tuning import TuningResult, tune_gamma, tune_gamma_table, tune_split_budget, tune_split_data
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
    "run_case_study",
    "gamma_sensitivity",
    "GammaTable",
    "authors_gamma_table",
    "pydpowl_gamma_table",
    "ModelFileError",
    "ReleasedModel",
    "export_model",
    "load_model",
    "SimulationResult",
    "run_simulation",
    "TuningResult",
    "tune_gamma",
    "tune_gamma_table",
    "tune_split_budget",
    "tune_split_data",
    "bounds",
    "model_io",
    "simulation",
    "tuning",
    "datasets",
    "policy_evaluation",
    "value",
    "PrivacyLeakWarning",
    "BudgetAccountant",
    "BudgetExceededError",
    "ConvergenceError",
    "NotFittedError",
]

"""pydpowl: differentially private weighted ERM and outcome weighted learning.

A native Python engine for DP-wERM (output perturbation, Algorithm 1 of
Giddens et al.) and its application to outcome weighted learning (DP-OWL),
agreeing with the R reference implementation DPpack.

The package is organised by role:

* ``pydpowl.engine``: what a release is made of (losses, the objective, the
  certified solver, noise mechanisms, public-bound preprocessing);
* ``pydpowl.estimators``: what users fit (``DPWeightedERM``, ``DPOWL``,
  propensity models, and DPpack's ERM family: ``DPSVM``,
  ``DPLogisticRegression``, ``DPLinearRegression``);
* ``pydpowl.privacy``: budget accounting, private selection (the exponential
  mechanism; DPpack's ``tune_classification_model`` and
  ``tune_linear_regression_model``);
* ``pydpowl.evaluation``: a rule's value, empirical (``empirical``) and private
  with its interval (``private``);
* ``pydpowl.analysis``: the end-to-end private analysis under one budget;
* ``pydpowl.interop.dppack``: DPpack's classes as functions of plain arrays and R's
  ``.Random.seed`` (the R front end's entry points);
* ``pydpowl.datasets``, ``pydpowl.rrandom``: data and R-compatible streams;
* ``pydpowl.studies``: the paper's studies (simulation, case study, tuning,
  gamma tables, utility bounds, plots);
* ``pydpowl.mdp_policy_evaluation``: DP-LSW and DP-LSL, private least-squares
  evaluation of a policy's value function in a Markov reward process
  (``pydpowl.policy_evaluation``, its former name, still imports).

Every public name below is imported on first use (PEP 562), so ``import
pydpowl`` is cheap and a script pays only for what it uses.
"""

from __future__ import annotations

import importlib
from typing import Any, Dict, List

__version__ = "0.1.0"

#: public name -> module that defines it (relative to this package)
_NAMES: Dict[str, str] = {
    "DPWeightedERM": ".estimators.werm",
    "DPOWL": ".estimators.owl",
    "DPMultiStageOWL": ".estimators.multistage",
    "OWLProblem": ".estimators.inputs",
    "prepare_owl": ".estimators.inputs",
    "DPSVM": ".estimators.svm",
    "DPLogisticRegression": ".estimators.logistic",
    "DPLinearRegression": ".estimators.linear",
    "RandomFourierFeatures": ".engine.preprocessing",
    "exponential_mechanism": ".engine.mechanisms",
    "ModelSelection": ".privacy.tuning",
    "tune_classification_model": ".privacy.tuning",
    "tune_linear_regression_model": ".privacy.tuning",
    "LogisticPropensity": ".estimators.propensity",
    "DPLogisticPropensity": ".estimators.dp_propensity",
    "proposition8_H": ".estimators.propensity",
    "hessian_H": ".estimators.propensity",
    "trivial_weight_sensitivity": ".estimators.propensity",
    "shift_benefits": ".estimators.benefits",
    "min_shift_benefits": ".estimators.benefits",
    "RRandom": ".rrandom",
    "FeatureScaler": ".engine.preprocessing",
    "bounds_from_data": ".engine.preprocessing",
    "HuberHingeLoss": ".engine.losses",
    "LogisticLoss": ".engine.losses",
    "CustomLoss": ".engine.losses",
    "MarginLoss": ".engine.losses",
    "solve_weighted_erm": ".engine.solver",
    "SolverResult": ".engine.solver",
    "output_sensitivity": ".engine.mechanisms",
    "noise_rate": ".engine.mechanisms",
    "sample_output_noise": ".engine.mechanisms",
    "round_release": ".engine.mechanisms",
    "release_grid": ".engine.mechanisms",
    "floating_point_delta": ".engine.mechanisms",
    "empirical_value": ".evaluation.empirical",
    "ipw_value": ".evaluation.empirical",
    "accuracy": ".evaluation.empirical",
    "concordance": ".evaluation.empirical",
    "association_test": ".evaluation.empirical",
    "run_case_study": ".studies.casestudy",
    "gamma_sensitivity": ".studies.casestudy",
    "GammaTable": ".studies.gamma_table",
    "authors_gamma_table": ".studies.gamma_table",
    "pydpowl_gamma_table": ".studies.gamma_table",
    "ModelFileError": ".model_io",
    "ReleasedModel": ".model_io",
    "export_model": ".model_io",
    "load_model": ".model_io",
    "SimulationResult": ".studies.simulation",
    "run_simulation": ".studies.simulation",
    "TuningResult": ".studies.gamma_tuning",
    "tune_gamma": ".studies.gamma_tuning",
    "tune_gamma_table": ".studies.gamma_tuning",
    "tune_split_budget": ".studies.gamma_tuning",
    "tune_split_data": ".studies.gamma_tuning",
    "BudgetAccountant": ".privacy.accountant",
    "run_analysis": ".analysis",
    "analyze_arrays": ".interop.analysis",
    "run_regime_analysis": ".analysis_regime",
    "PrivacyLeakWarning": ".exceptions",
    "BudgetExceededError": ".exceptions",
    "ConvergenceError": ".exceptions",
    "BoundsDiagnosticWarning": ".exceptions",
    "NotFittedError": ".exceptions",
}

#: public submodules -> where they live
_MODULES: Dict[str, str] = {
    "bounds": ".studies.bounds",
    "datasets": ".datasets",
    "model_io": ".model_io",
    "analysis": ".analysis",
    "simulation": ".studies.simulation",
    "tuning": ".studies.gamma_tuning",
    "mdp_policy_evaluation": ".mdp_policy_evaluation",
    "policy_evaluation": ".policy_evaluation",
    "value": ".value",
    "evaluation": ".evaluation",
    "engine": ".engine",
    "estimators": ".estimators",
    "privacy": ".privacy",
    "dppack": ".interop.dppack",
    "interop": ".interop",
    "studies": ".studies",
}

__all__: List[str] = ["__version__", *_NAMES, *_MODULES]


def __getattr__(name: str) -> Any:
    if name in _NAMES:
        value = getattr(importlib.import_module(_NAMES[name], __name__), name)
    elif name in _MODULES:
        value = importlib.import_module(_MODULES[name], __name__)
    else:
        raise AttributeError(f"module 'pydpowl' has no attribute {name!r}")
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> List[str]:
    return sorted(set(globals()) | set(__all__))

"""Differentially private policy evaluation in a Markov reward process: DP-LSW and DP-LSL.

Least-squares estimates of a policy's value function from episodes of an MDP
(first-visit Monte Carlo returns regressed on state features), released with
output perturbation. Not the value of an OWL treatment rule: that is
:mod:`pydpowl.evaluation.empirical` (empirical) and :mod:`pydpowl.evaluation.private`
(private).

Balle, Gomrokchi & Precup, "Differentially Private Policy Evaluation",
ICML 2016. See ``docs/policy_evaluation.md`` for the user guide.
"""

from .episodes import Episode, EpisodeStatistics, episode_statistics, first_visit_returns
from .estimators import DPLSL, DPLSW, LSL, LSW, default_regularization
from .features import aggregated_features, make_features, tabular_features
from .mdp import LazyChain, MarkovRewardProcess, lazy_chain, random_walk
from ._base import PolicyEvalDiagnostics, PolicyEvalSummary

__all__ = [
    "DPLSW",
    "DPLSL",
    "LSW",
    "LSL",
    "Episode",
    "EpisodeStatistics",
    "episode_statistics",
    "first_visit_returns",
    "default_regularization",
    "tabular_features",
    "aggregated_features",
    "make_features",
    "MarkovRewardProcess",
    "LazyChain",
    "lazy_chain",
    "random_walk",
    "PolicyEvalSummary",
    "PolicyEvalDiagnostics",
]

"""The former name of :mod:`pydpowl.mdp_policy_evaluation` (DP-LSW and DP-LSL), kept because the user guide
and earlier versions import from it (``from pydpowl.policy_evaluation import DPLSW``). New code imports
:mod:`pydpowl.mdp_policy_evaluation`.
"""

from .mdp_policy_evaluation import (
    DPLSW, DPLSL, LSW, LSL, Episode, EpisodeStatistics, episode_statistics, first_visit_returns,
    default_regularization, tabular_features, aggregated_features, make_features, MarkovRewardProcess,
    LazyChain, lazy_chain, random_walk, PolicyEvalSummary, PolicyEvalDiagnostics,
)

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

"""The former home of :func:`plot_experiment`, kept because the user guide (docs/policy_evaluation.md) names it;
the figure lives in :mod:`pydpowl.plotting.mdp_policy_evaluation`.
"""

from ..plotting.mdp_policy_evaluation import __all__, highlighted_epsilons, plot_experiment  # noqa: F401

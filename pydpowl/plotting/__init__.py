"""Every figure pydpowl draws (PNG, matplotlib's Agg backend, matplotlib imported on first use).

One module per figure family:

* :mod:`pydpowl.plotting.figure`: the one way to get pyplot on Agg and to save a figure;
* :mod:`pydpowl.plotting.analysis`: a private analysis' value and coefficients (``pydpowl analyze``);
* :mod:`pydpowl.plotting.studies`: the command-line studies (case study, simulation, gamma tuning,
  utility, the multi-arm and multi-stage designs);
* :mod:`pydpowl.plotting.mdp_policy_evaluation`: the DP policy-evaluation reference experiment.

Figures are drawn from released or public values only (or from studies on
simulated data); importing this package does not import matplotlib.
"""

"""How good is a treatment rule: its value, in one home.

* :mod:`pydpowl.evaluation.empirical`: the empirical (non-private) value of a
  rule on data (self-normalised and plain IPW), accuracy, concordance and the
  association tests, for studies and simulations; and the received arm's
  propensity P(A_i | x_i), the one place it is formed from P(A = +1);
* :mod:`pydpowl.evaluation.private`: the differentially private estimate of a
  rule's value and its gain over the single-arm rules, with a confidence
  interval (the value release of ``pydpowl analyze``).

(DP-LSW and DP-LSL, which evaluate a policy's value function in a Markov
reward process, are :mod:`pydpowl.mdp_policy_evaluation`.) The submodules are
imported on use: the empirical one needs only numpy, the private one scipy.
"""

"""pydpowl: differentially private weighted ERM and outcome weighted learning.

A native Python engine for DP-wERM (output perturbation, Algorithm 1 of Giddens
et al.) and its application to outcome weighted learning (DP-OWL), agreeing
with the R reference implementation DPpack.
"""

__version__ = "0.1.0"

__all__ = ["__version__"]

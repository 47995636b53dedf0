"""The former name of :mod:`pydpowl.mdp_policy_evaluation` (DP-LSW and DP-LSL), kept because the user guide
and earlier versions import from it (``from pydpowl.policy_evaluation import DPLSW``). New code imports
:mod:`pydpowl.mdp_policy_evaluation`.
"""

from . import mdp_policy_evaluation as _current

__all__ = list(_current.__all__)
globals().update({name: getattr(_current, name) for name in __all__})

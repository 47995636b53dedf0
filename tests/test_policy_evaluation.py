"""The former module name pydpowl.policy_evaluation still imports the same objects as pydpowl.mdp_policy_evaluation."""

import pydpowl
import pydpowl.mdp_policy_evaluation as current
import pydpowl.policy_evaluation as former


def test_the_former_name_reexports_every_public_name():
    assert former.__all__ == current.__all__
    assert all(getattr(former, name) is getattr(current, name) for name in current.__all__)
    assert pydpowl.policy_evaluation is former and pydpowl.mdp_policy_evaluation is current

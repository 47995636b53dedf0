"""The former module name pydpowl.value still imports the same objects as pydpowl.evaluation.empirical."""

import pydpowl
import pydpowl.evaluation.empirical as current
import pydpowl.value as former


def test_the_former_name_reexports_every_public_name():
    assert former.__all__ == current.__all__
    assert all(getattr(former, name) is getattr(current, name) for name in current.__all__)
    assert pydpowl.value is former and pydpowl.empirical_value is current.empirical_value

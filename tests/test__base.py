import numpy as np
import pytest

from pydpowl._base import resolve_rng


def test_resolve_rng_kinds():
    g = np.random.default_rng(1)
    assert resolve_rng(g) is g
    assert isinstance(resolve_rng(None), np.random.Generator)
    a, b = resolve_rng(5).normal(), resolve_rng(5).normal()
    assert a == b


@pytest.mark.parametrize("bad", [True, "seed", 1.5, np.random.RandomState(0)])
def test_resolve_rng_rejects(bad):
    with pytest.raises(TypeError, match="random_state must be"):
        resolve_rng(bad)

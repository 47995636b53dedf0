"""pydpowl.engine.mechanisms: the package's public names and what its modules share (_common)."""

import numpy as np
import pytest

import pydpowl.engine.mechanisms as mechanisms
from pydpowl.engine.mechanisms import is_r_stream


def test_every_public_name_is_exported_from_the_package():
    for name in mechanisms.__all__:
        assert getattr(mechanisms, name) is not None
    for module in ("output", "objective", "laplace", "gaussian", "exponential", "rounding"):
        sub = getattr(mechanisms, module)
        for name in sub.__all__:
            assert getattr(mechanisms, name) is getattr(sub, name), f"{module}.{name} is not re-exported"


def test_r_streams_are_recognised(fake_r_stream):
    assert is_r_stream(fake_r_stream()) and not is_r_stream(np.random.default_rng(0))


def test_derived_generator_leaves_an_r_stream_where_it_was_and_is_reproducible():
    from pydpowl import RRandom
    from pydpowl.engine.mechanisms import SMOOTHING_DOMAIN, derived_generator, sample_smoothing_noise

    r = RRandom(42)
    r.rnorm(3)
    before = r.get_state().copy()
    a = sample_smoothing_noise(4, epsilon=0.01, error_radius=1e-6, rng=r)
    np.testing.assert_array_equal(r.get_state(), before)  # not advanced
    b = sample_smoothing_noise(4, epsilon=0.01, error_radius=1e-6, rng=RRandom.from_r_state(before))
    np.testing.assert_array_equal(a, b)  # a function of the state: reproducible from set.seed
    r.rnorm(1)
    c = sample_smoothing_noise(4, epsilon=0.01, error_radius=1e-6, rng=r)
    assert not np.array_equal(a, c)  # another state, other draws
    g1 = derived_generator(RRandom.from_r_state(before), domain=SMOOTHING_DOMAIN)
    g2 = derived_generator(RRandom.from_r_state(before), domain="another use")
    assert g1.random() != g2.random()  # the domain tag separates uses of one state
    gen = np.random.default_rng(1)
    assert derived_generator(gen, domain=SMOOTHING_DOMAIN) is gen  # a numpy Generator is used as it is
    with pytest.raises(TypeError, match="numpy Generator or an R-compatible stream"):
        derived_generator(object(), domain=SMOOTHING_DOMAIN)

"""Tests of pydpowl.studies.analysis_designs: public settings consistent with the generators."""

import math

import numpy as np
import pytest

from pydpowl.studies.analysis_designs import DESIGNS, get_design


@pytest.mark.parametrize("name", sorted(DESIGNS))
def test_public_settings_hold_for_the_generated_data(name):
    design = get_design(name)
    d = design.draw(3000, np.random.default_rng(1))
    lo, hi = design.benefit_bounds
    P = design.propensity(3000)
    # weights (B - L) / P(A | x) never exceed W: no clipping by design
    p_recv = np.where(d.treatment > 0, P, 1 - P)
    assert np.max((np.clip(d.benefit, lo, hi) - lo) / p_recv) <= design.weights_upper_bound
    X = d.X.to_numpy()
    assert np.all(X >= design.feature_bounds[0]) and np.all(X <= design.feature_bounds[1])
    assert design.truth.weight.sum() == pytest.approx(1.0)


def test_cyp_propensity_is_the_allocation_share():
    design = get_design("cyp")
    for n in (500, 2000, 10000):
        d = design.draw(n, np.random.default_rng(n))
        assert design.propensity(n) == pytest.approx((d.treatment > 0).mean())
    assert get_design("synthetic").propensity(123) == 0.5
    assert get_design("cyp").benefit_bounds == (0.0, pytest.approx(math.log(8760)))


def test_unknown_design_is_named():
    with pytest.raises(ValueError, match="design must be one of"):
        get_design("magic")

"""pydpowl.estimators._family: what the two classifiers share."""

import numpy as np
import pytest

from pydpowl import DPLogisticRegression, DPSVM
from pydpowl.estimators._family import check_common_settings


def test_common_settings_are_checked_by_name():
    with pytest.raises(TypeError, match="fit_intercept must be True or False"):
        check_common_settings(DPSVM(fit_intercept="yes"))
    with pytest.raises(ValueError, match=r"tol must be in \(0, inf\)"):
        check_common_settings(DPLogisticRegression(tol=0.0))
    assert check_common_settings(DPSVM(epsilon=2, gamma=3)) == (2.0, 3.0, "objective", None)  # None: set from mu


def test_release_attributes_and_private_ones_only_on_request():
    rng = np.random.default_rng(0)
    X, y = rng.uniform(-1, 1, (100, 2)), rng.integers(0, 2, 100)
    kw = dict(feature_bounds=([-1, -1], [1, 1]), fit_intercept=True, random_state=1)
    m = DPSVM(**kw).fit(X, y)
    assert not hasattr(m, "minimiser_") and not hasattr(m, "noise_") and not hasattr(m, "linear_term_")
    k = DPSVM(keep_nonprivate=True, **kw).fit(X, y)
    np.testing.assert_array_equal(k.scaled_coef_, m.scaled_coef_)
    from pydpowl.engine.mechanisms import round_release

    assert m.release_grid_ is not None  # floating-point safe by default (objective perturbation's smoothing noise)
    np.testing.assert_array_equal(k.scaled_coef_, round_release(k.minimiser_, k.noise_, grid=k.release_grid_))
    assert m.noise_scale_ == 1.0 / m.noise_rate_
    np.testing.assert_array_equal(m.dppack_coeff_, np.r_[m.intercept_, m.coef_])

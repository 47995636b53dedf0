"""The audit's multi-arm configuration (validation.audit.multiarm): record space, minimiser, a short search."""

import numpy as np

from validation.audit.multiarm import multiarm_configs
from validation.audit.sensitivity import evaluate_pair, sensitivity_search

CONFIG = multiarm_configs()[0]


def test_datasets_hold_three_arms_and_the_release_has_frobenius_dimension():
    D = CONFIG.random_dataset(np.random.default_rng(0))
    assert set(np.unique(D.y)) == {-1.0, 0.0, 1.0}
    theta, delta = CONFIG.minimiser(D)
    assert theta.shape == (CONFIG.d,) == (6,)
    assert delta == CONFIG.estimator(1.0).fit(D.X, D.y, D.v, 1 / 3).sensitivity_
    w, C = CONFIG.weights(D)
    assert C == 0.0 and np.all(w <= CONFIG.weights_upper_bound)


def test_balanced_triples_and_a_short_search_stay_below_delta():
    D = CONFIG.balanced_dataset(np.random.default_rng(1))
    assert list(D.y[1:4]) == [-1.0, 0.0, 1.0] and np.all(D.X[1] == D.X[3])
    x, v = CONFIG.record(CONFIG.corner(np.random.default_rng(2)))
    ev = evaluate_pair(CONFIG, D, D.with_record(0, x, 0.0, v))
    assert 0 < ev.ratio <= 1.0
    result = sensitivity_search(CONFIG, seed=3, n_random=6, n_starts=1, maxiter=5, n_replaced=1,
                                bases=("balanced",), modes=("replace",))
    assert result.worst.ratio <= 1.0 + 1e-8


def test_released_attributes_are_the_rounded_release():
    D = CONFIG.random_dataset(np.random.default_rng(4))
    rows = CONFIG.released_attributes(D, 1.0, [7, 8])
    assert set(rows) == {"scaled_coef_", "intercept_, coef_", "summary()"}
    grid = CONFIG.fit(D, 1.0, random_state=7).release_grid_
    assert np.all(np.round(rows["scaled_coef_"] / grid) * grid == rows["scaled_coef_"])

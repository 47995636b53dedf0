"""pydpowl.privacy.tuning: DPpack's private model selection."""

import math
import warnings

import numpy as np
import pytest

from pydpowl import DPLinearRegression, DPLogisticRegression, DPSVM, PrivacyLeakWarning, RRandom
from pydpowl.privacy.tuning import split_rows, tune_classification_model, tune_linear_regression_model

FB = ([-1.0, -1.0], [1.0, 1.0])


@pytest.fixture(scope="module")
def clf_data():
    rng = np.random.default_rng(0)
    n = 400
    X = rng.uniform(-1, 1, (n, 2))
    y = (X[:, 0] + 0.3 * X[:, 1] + 0.2 * rng.normal(size=n) > 0).astype(float)
    return X, y


def test_split_rows_is_dppacks_seq():
    parts, val = split_rows(11, 3)  # R: seq(i, 11, 4) for i = 1..3 and seq(4, 11, 4)
    assert [list(p + 1) for p in parts] == [[1, 5, 9], [2, 6, 10], [3, 7, 11]]
    assert list(val + 1) == [4, 8]
    with pytest.raises(ValueError, match="at least 4 rows for 3 candidates"):
        split_rows(3, 3)


def test_each_candidate_fitted_on_its_part_then_one_uniform(clf_data):
    X, y = clf_data
    models = [DPSVM(epsilon=1.0, gamma=g, perturbation="output", feature_bounds=FB) for g in (100.0, 1.0)]
    res = tune_classification_model(models, X, y, random_state=RRandom(4))
    assert all(not hasattr(m, "coef_") for m in models), "candidates must not be modified"
    # replay by hand on one stream: fit 1 on rows 0::3, fit 2 on rows 1::3, then runif(1)
    r = RRandom(4)
    a = DPSVM(epsilon=1.0, gamma=100.0, perturbation="output", feature_bounds=FB, random_state=r).fit(X[0::3], y[0::3])
    b = DPSVM(epsilon=1.0, gamma=1.0, perturbation="output", feature_bounds=FB, random_state=r).fit(X[1::3], y[1::3])
    np.testing.assert_array_equal(res.models[0].coef_, a.coef_)
    np.testing.assert_array_equal(res.models[1].coef_, b.coef_)
    z = np.array([np.sum(m.predict(X[2::3]) != y[2::3]) for m in (a, b)], dtype=float)
    p = np.exp(1.0 * (-z - (-z).max()) / 2.0)
    u = r.runif(1)[0]
    assert res.index == int(np.flatnonzero(u <= np.cumsum(p / p.sum()))[0])
    assert res.model is res.models[res.index] and res.sensitivity == 1.0 and res.n_validation == len(y[2::3])


def test_large_epsilon_selects_the_most_accurate(clf_data):
    X, y = clf_data
    models = [DPLogisticRegression(epsilon=1e4, gamma=g, feature_bounds=FB, perturbation="output")
              for g in (1e4, 1.0)]
    res = tune_classification_model(models, X, y, random_state=0)
    assert res.index == 1 and res.epsilon == 1e4


def test_weights_for_svm_only(clf_data):
    X, y = clf_data
    w = np.full(len(y), 0.5)
    svms = [DPSVM(perturbation="output", feature_bounds=FB, weights_upper_bound=1.0) for _ in range(2)]
    res = tune_classification_model(svms, X, y, sample_weight=w, random_state=0)
    assert res.models[0].n_samples_ == len(range(0, len(y), 3))
    with pytest.raises(ValueError, match="DPSVM candidates only"):
        tune_classification_model([DPLogisticRegression(feature_bounds=FB)], X, y, sample_weight=w, random_state=0)


def test_linear_regression_tuning_clips_scores_unless_reproducing():
    rng = np.random.default_rng(1)
    n = 300
    X = rng.uniform(-1, 1, (n, 1))
    y = -0.3 + 0.5 * X[:, 0] + rng.normal(scale=0.1, size=n)
    y[::7] = 50.0  # far outside the target bounds
    models = [DPLinearRegression(epsilon=1.0, gamma=g, feature_bounds=([-1.0], [1.0]), target_bounds=(-2.0, 2.0),
                                 fit_intercept=True) for g in (100.0, 1.0)]
    res = tune_linear_regression_model(models, X, y, random_state=RRandom(2))
    assert res.sensitivity == 16.0
    with pytest.warns(PrivacyLeakWarning, match="unclipped"):
        tune_linear_regression_model(models, X, y, random_state=RRandom(2), reproduce_dppack=True)
    other = DPLinearRegression(feature_bounds=([-1.0], [1.0]), target_bounds=(-1.0, 2.0))
    with pytest.raises(ValueError, match="same target_bounds"):
        tune_linear_regression_model(models + [other], X, y)
    with pytest.raises(TypeError, match="DPLinearRegression"):
        tune_linear_regression_model([DPSVM()], X, y)


def test_infinite_epsilon_cannot_select(clf_data):
    X, y = clf_data
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ValueError, match=r"epsilon must be in \(0, inf\)"):
            tune_classification_model([DPSVM(epsilon=math.inf, feature_bounds=FB)], X, y, random_state=0)


def test_regression_score_sensitivity_holds_only_with_clipping():
    """DPpack scores raw rows: replacing one validation row moves the SSE by more than (ub - lb)^2 = 1.
    Clipped (pydpowl), the change is at most 1."""
    from pydpowl.privacy.tuning import regression_scores

    rng = np.random.default_rng(3)
    X = rng.uniform(-1, 1, (200, 1))
    y = 0.5 + 0.3 * X[:, 0] + 0.05 * rng.normal(size=200)
    m = DPLinearRegression(epsilon=math.inf, feature_bounds=([-1.0], [1.0]), target_bounds=(0.0, 1.0)).fit(X, y)
    Xv, yv = X[:10].copy(), y[:10].copy()
    Xv1, yv1 = Xv.copy(), yv.copy()
    Xv1[0], yv1[0] = 1.0, 0.0  # a row inside the bounds...
    Xv[0], yv[0] = -5.0, 40.0  # ...replaced by one outside them
    for clip, ok in ((False, False), (True, True)):
        a = regression_scores([m], Xv, yv, (0.0, 1.0), clip=clip)[0]
        b = regression_scores([m], Xv1, yv1, (0.0, 1.0), clip=clip)[0]
        assert (abs(a - b) <= 1.0) == ok, f"clip={clip}: score change {abs(a - b):.3g}"
    # without an intercept a release at the edge of its ball predicts -1 at x = 1 for targets in [0, 1]:
    # one in-bounds row (x = 1, y = 1) then scores (1 - (-1))^2 = 4 > (ub - lb)^2 = 1 unless clipped
    edge = DPLinearRegression(epsilon=math.inf, feature_bounds=([-1.0], [1.0]), target_bounds=(0.0, 1.0)).fit(X, y)
    edge.coef_ = np.array([-1.0])  # |theta_scaled| = 1 = sqrt(p): inside KST's domain
    assert regression_scores([edge], np.array([[1.0]]), np.array([1.0]), (0.0, 1.0), clip=False)[0] == 4.0
    assert regression_scores([edge], np.array([[1.0]]), np.array([1.0]), (0.0, 1.0), clip=True)[0] == 1.0


def _holds_a_stream(obj, seen=None):
    """Paths to a numpy Generator, BitGenerator, RandomState or RRandom anywhere inside ``obj`` (attributes and
    containers, recursively)."""
    from pydpowl.rrandom import RRandom as R

    seen = set() if seen is None else seen
    if id(obj) in seen:
        return []
    seen.add(id(obj))
    if isinstance(obj, (np.random.Generator, np.random.BitGenerator, np.random.RandomState, R)):
        return ["<stream>"]
    children = []
    if isinstance(obj, dict):
        children = list(obj.items())
    elif isinstance(obj, (list, tuple)):
        children = list(enumerate(obj))
    elif hasattr(obj, "__dict__") and not isinstance(obj, type):
        children = list(vars(obj).items())
    return [f"{k}.{p}" for k, v in children for p in _holds_a_stream(v, seen)]


@pytest.mark.parametrize("stream", [lambda: np.random.default_rng(3), lambda: RRandom(3)])
def test_returned_models_hold_no_live_generator(clf_data, stream):
    """Issue 21.6: the candidates kept the stream that drew their noise; rewinding it regenerates the noise, and
    coef - noise is the exact minimiser. The returned selection must hold no generator or R stream state."""
    X, y = clf_data
    models = [DPSVM(epsilon=1.0, gamma=g, perturbation="output", feature_bounds=FB) for g in (1.0, 10.0)]
    res = tune_classification_model(models, X, y, random_state=stream())
    assert _holds_a_stream(res) == [] and all(m.random_state is None for m in res.models)
    lin = [DPLinearRegression(epsilon=1.0, gamma=g, feature_bounds=FB, target_bounds=(-1, 1)) for g in (1.0, 10.0)]
    res = tune_linear_regression_model(lin, X, 2 * y - 1, random_state=stream())
    assert _holds_a_stream(res) == [] and all(m.random_state is None for m in res.models)
    assert _holds_a_stream(DPSVM(random_state=stream())) != []  # the detector sees a stream where there is one


def test_selection_reports_its_epsilon_and_delta(clf_data):
    """Issue 21.5: parallel composition over the disjoint parts: the largest candidate (epsilon, delta), and the
    exponential mechanism's on the validation part."""
    X, y = clf_data
    models = [DPSVM(epsilon=e, perturbation="output", feature_bounds=FB) for e in (1.0, 0.5)]
    res = tune_classification_model(models, X, y, random_state=1)
    assert res.privacy_spent == (1.0, max(m.privacy_spent_[1] for m in res.models)) and res.privacy_spent[1] > 0


def test_selection_states_the_delta_of_its_draw(clf_data):
    """Review 21.3: DPpack's inversion (an R stream) costs a delta, stated; the default exact sampler none."""
    from pydpowl.engine.mechanisms import exponential_mechanism_delta

    X, y = clf_data
    models = [DPSVM(epsilon=1.0, gamma=g, perturbation="output", feature_bounds=FB) for g in (100.0, 1.0)]
    replay = tune_classification_model(models, X, y, random_state=RRandom(4))
    assert replay.selection_delta == exponential_mechanism_delta(epsilon=1.0, n_candidates=2, replay=True) > 0
    assert tune_classification_model(models, X, y, random_state=0).selection_delta == 0.0

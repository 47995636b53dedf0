import math
import pickle
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from pydpowl import DPWeightedERM, LogisticLoss
from pydpowl.exceptions import NotFittedError


@pytest.fixture
def toy():
    rng = np.random.default_rng(0)
    n, d = 200, 4
    Z = rng.uniform(-1, 1, size=(n, d))
    Z /= np.sqrt(d)
    y = np.where(Z @ np.array([1.0, -1.0, 0.5, 0.0]) + 0.1 * rng.normal(size=n) > 0, 1.0, -1.0)
    w = rng.uniform(0.1, 2.0, size=n)
    return Z, y, w


def test_nonprivate_limit_is_the_exact_minimiser(toy):
    Z, y, w = toy
    m = DPWeightedERM(epsilon=math.inf, gamma=2.0, weights_upper_bound=2.0, keep_nonprivate=True).fit(Z, y, w)
    np.testing.assert_array_equal(m.coef_, m.nonprivate_coef_)
    np.testing.assert_array_equal(m.noise_, np.zeros(4))
    assert m.sensitivity_ == pytest.approx(2.0)


def test_release_is_solution_plus_noise_and_private_parts_hidden_by_default(toy):
    Z, y, w = toy
    kept = DPWeightedERM(epsilon=1.0, gamma=2.0, weights_upper_bound=2.0, keep_nonprivate=True, random_state=3).fit(Z, y, w)
    # the release is the exact sum rounded to the grid: within half a step of the float sum
    assert np.max(np.abs(kept.coef_ - (kept.nonprivate_coef_ + kept.noise_))) <= 0.5 * kept.release_grid_
    plain = DPWeightedERM(epsilon=1.0, gamma=2.0, weights_upper_bound=2.0, random_state=3).fit(Z, y, w)
    np.testing.assert_array_equal(plain.coef_, kept.coef_)
    assert not hasattr(plain, "nonprivate_coef_") and not hasattr(plain, "noise_")
    blob = pickle.dumps(plain)
    assert kept.nonprivate_coef_.tobytes() not in blob and kept.noise_.tobytes() not in blob


def test_seeded_runs_reproduce_and_unseeded_differ(toy):
    Z, y, w = toy
    a = DPWeightedERM(epsilon=1.0, gamma=2.0, weights_upper_bound=2.0, random_state=5).fit(Z, y, w).coef_
    b = DPWeightedERM(epsilon=1.0, gamma=2.0, weights_upper_bound=2.0, random_state=5).fit(Z, y, w).coef_
    c = DPWeightedERM(epsilon=1.0, gamma=2.0, weights_upper_bound=2.0).fit(Z, y, w).coef_
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


def test_noise_law_of_the_estimator(toy):
    Z, y, w = toy
    rng = np.random.default_rng(11)
    model = DPWeightedERM(epsilon=0.5, gamma=4.0, weights_upper_bound=2.0, C=1.0, keep_nonprivate=True, random_state=rng)
    noises = np.array([model.fit(Z, y, w).noise_ for _ in range(1500)])
    delta = (1.0 + 2 * 2.0) / 4.0
    ks = stats.kstest(np.linalg.norm(noises, axis=1), stats.gamma(a=4, scale=delta / 0.5).cdf)
    assert ks.pvalue > 1e-3, f"KS of noise norms vs Gamma(4, rate=eps/Delta): D={ks.statistic:.4f} p={ks.pvalue:.2e} <= 1e-3"


def _neighbour_worst_cases(Z, y, w, W, rng, k):
    """Replace record j by a record at the bounds: unit norm, weight W, flipped label."""
    n, d = Z.shape
    for _ in range(k):
        j = rng.integers(n)
        Z2, y2, w2 = Z.copy(), y.copy(), w.copy()
        v = rng.normal(size=d)
        Z2[j] = v / np.linalg.norm(v)
        y2[j] = -y[j]
        w2[j] = W
        w[j] = W  # both datasets give the replaced slot the maximal weight
        yield (Z, y, w.copy()), (Z2, y2, w2)


@pytest.mark.parametrize("loss", ["huber", LogisticLoss()], ids=["huber", "logistic"])
@pytest.mark.parametrize("gamma", [0.5, 5.0])
def test_sensitivity_bound_holds_on_worst_case_neighbours(toy, loss, gamma):
    Z, y, w = toy
    W = 2.0
    rng = np.random.default_rng(1)
    worst = 0.0
    for (Za, ya, wa), (Zb, yb, wb) in _neighbour_worst_cases(Z, y, w.copy(), W, rng, 40):
        fit = lambda Z_, y_, w_: DPWeightedERM(epsilon=math.inf, gamma=gamma, weights_upper_bound=W, loss=loss).fit(Z_, y_, w_).coef_  # noqa: E731
        worst = max(worst, np.linalg.norm(fit(Za, ya, wa) - fit(Zb, yb, wb)))
    delta = 2 * W / gamma
    assert worst <= delta * (1 + 1e-9), f"max ||theta - theta'|| = {worst:.6g} exceeds Delta = {delta:.6g}"
    assert worst > 0.05 * delta  # the search did reach non-trivial neighbours


def test_sensitivity_with_weight_changes_uses_C(toy):
    # every other weight may move by up to C / (n - 1) in total C; the bound (C + 2W)/gamma must hold
    Z, y, w = toy
    W, gamma, C = 2.0, 1.0, 3.0
    rng = np.random.default_rng(4)
    n = len(y)
    worst = 0.0
    for _ in range(30):
        j = rng.integers(n)
        Z2, y2, w2 = Z.copy(), y.copy(), w.copy()
        Z2[j] = -Z[j] / max(np.linalg.norm(Z[j]), 1e-12)
        y2[j] = -y[j]
        w2[j] = W
        shift = rng.uniform(-1, 1, size=n)
        shift[j] = 0
        shift *= C / np.abs(shift).sum()
        w2 = np.clip(w2 + shift, 0, W)
        a = DPWeightedERM(epsilon=math.inf, gamma=gamma, weights_upper_bound=W, C=C).fit(Z, y, w).coef_
        b = DPWeightedERM(epsilon=math.inf, gamma=gamma, weights_upper_bound=W, C=C).fit(Z2, y2, w2).coef_
        worst = max(worst, np.linalg.norm(a - b))
    assert worst <= (C + 2 * W) / gamma, f"{worst} > Delta = {(C + 2 * W) / gamma}"


def test_predict_and_decision_function(toy):
    Z, y, w = toy
    m = DPWeightedERM(epsilon=math.inf, gamma=1.0, weights_upper_bound=2.0).fit(Z, y, w)
    f = m.decision_function(Z)
    np.testing.assert_allclose(f, Z @ m.coef_)
    np.testing.assert_array_equal(m.predict(Z), np.where(f > 0, 1, -1))
    assert (m.predict(Z) == y).mean() > 0.8


def test_dataframe_names_kept_and_summary(toy):
    Z, y, w = toy
    df = pd.DataFrame(Z, columns=["a", "b", "c", "d"])
    m = DPWeightedERM(epsilon=2.0, gamma=1.0, weights_upper_bound=2.0, random_state=0).fit(df, y, w)
    np.testing.assert_array_equal(m.feature_names_in_, ["a", "b", "c", "d"])
    assert m.feature_names_in_.dtype == object
    s = m.summary()
    assert s.coefficient_names == ("a", "b", "c", "d") and s.coefficients == tuple(m.coef_)
    assert "epsilon = 2" in str(s)


def test_not_fitted():
    with pytest.raises(NotFittedError, match="not fitted yet"):
        DPWeightedERM().predict(np.zeros((1, 2)))


def test_get_set_params_round_trip():
    m = DPWeightedERM(epsilon=3.0, gamma=2.0)
    params = m.get_params()
    assert params["epsilon"] == 3.0 and params["gamma"] == 2.0 and params["loss"] == "huber"
    m.set_params(epsilon=0.5)
    assert m.epsilon == 0.5
    with pytest.raises(ValueError, match="Invalid parameter 'eps'"):
        m.set_params(eps=1.0)
    assert "epsilon=0.5" in repr(m)


@pytest.mark.parametrize("params, match", [
    (dict(epsilon=0.0), r"^epsilon must be in \(0, inf\]"),
    (dict(epsilon=-1.0), r"^epsilon must be in \(0, inf\]"),
    (dict(gamma=0.0), r"^gamma must be in \(0, inf\)"),
    (dict(gamma=float("nan")), r"^gamma must be in \(0, inf\)"),
    (dict(weights_upper_bound=0.0), r"^weights_upper_bound must be in \(0, inf\)"),
    (dict(huber_h=0.0), r"^huber_h must be in \(0, inf\)"),
    (dict(C=-0.5), r"^C must be in \[0, inf\)"),
    (dict(loss="squared"), r"^loss must be one of"),
])
def test_bad_parameters_are_named(toy, params, match):
    Z, y, w = toy
    base = dict(epsilon=1.0, gamma=1.0, weights_upper_bound=2.0)
    base.update(params)
    with pytest.raises(ValueError, match=match):
        DPWeightedERM(**base).fit(Z, y, w)


def test_epsilon_string_is_type_error(toy):
    Z, y, w = toy
    with pytest.raises(TypeError, match="epsilon must be a real number, got str"):
        DPWeightedERM(epsilon="1").fit(Z, y, w)


@pytest.mark.parametrize("mutate, exc, match", [
    (lambda Z, y, w: (Z * 3, y, w), ValueError, r"l2 norm <= 1 .*; \d+ of 200 rows exceed"),
    (lambda Z, y, w: (np.where(np.arange(Z.size).reshape(Z.shape) == 5, np.nan, Z), y, w), ValueError, "X must be finite; it has 1 NaN"),
    (lambda Z, y, w: (Z, np.where(y > 0, 1, np.arange(200) % 2 + 2), w), ValueError,
     r"y must take exactly two distinct values \(a binary classifier\), got more than 2"),
    (lambda Z, y, w: (Z, np.ones(200), w), ValueError, r"y must take exactly two distinct values .*got 1 class"),
    (lambda Z, y, w: (Z, y[:-1], w), ValueError, "y must have length 200"),
    (lambda Z, y, w: (Z, y, -w), ValueError, r"sample_weight must lie in \[0, weights_upper_bound=2.0\]; 200 of 200 entries are negative"),
    (lambda Z, y, w: (Z, y, w * 10), ValueError, r"exceed the bound"),
    (lambda Z, y, w: (Z[:, 0], y, w), ValueError, "X must be 2-D"),
    (lambda Z, y, w: (Z.astype(str), y, w), TypeError, "X must hold"),
    (lambda Z, y, w: (Z, y, np.append(w, np.inf)[:-1] * np.where(np.arange(200) == 3, np.inf, 1)), ValueError, "sample_weight must be finite"),
])
def test_bad_data_raises_clear_errors(toy, mutate, exc, match):
    Z, y, w = mutate(*toy)
    with pytest.raises(exc, match=match):
        DPWeightedERM(epsilon=1.0, gamma=1.0, weights_upper_bound=2.0).fit(Z, y, w)


def test_unit_weights_need_bound_at_least_one(toy):
    Z, y, _ = toy
    with pytest.raises(ValueError, match="unit weights"):
        DPWeightedERM(weights_upper_bound=0.5).fit(Z, y)


# ------------------------------------------------------------------ privacy review: tolerance, floating point

def _certified_edge_solver(direction, n, tol, gamma):
    """A solver honouring the contract (||grad F|| <= tol) that answers at the edge of the certified set."""
    from pydpowl.engine.solver import SolverResult, objective_gradient, solve_weighted_erm

    def solve(Z, y, w, *, gamma, loss, tol, backend="auto", objective=True):
        exact = solve_weighted_erm(Z, y, w, gamma=gamma, loss=loss, tol=1e-13)
        x = exact.x + direction * (n * tol / gamma) * (1 - 1e-6)
        g = float(np.linalg.norm(objective_gradient(x, Z, y, w, gamma=gamma, loss=loss)))
        assert g <= tol
        return SolverResult(x=x, success=True, nit=exact.nit, grad_norm=g, objective=exact.objective,
                            backend="numpy")
    return solve


def test_sensitivity_covers_the_solver_tolerance(monkeypatch):
    """Review item 5: a certified answer lies within n tol / gamma of the minimiser, so Delta needs 2 n tol / gamma.

    Linear zone of the Huber hinge (other rows cancel in pairs): before the fix the two
    certified answers were 3 times Delta = 2W / gamma apart here (11 times at n = 1e5, tol = 1e-4).
    """
    import pydpowl.engine.mechanisms.output as release_module

    n, W, gamma, tol = 2000, 1.0, 50.0, 1e-3
    Z = np.zeros((n, 2))
    Z[:, 1] = 0.5
    Z[0] = (1.0, 0.0)
    y = np.r_[1.0, np.tile([1.0, -1.0], n)[: n - 1]]
    w = np.full(n, W)
    w[-1] = 0.0  # n - 1 rows pair up except the last
    y1 = y.copy()
    y1[0] = -1.0
    fits = []
    for labels, sign in ((y, 1.0), (y1, -1.0)):
        monkeypatch.setattr(release_module, "solve_weighted_erm",
                            _certified_edge_solver(np.array([sign, 0.0]), n, tol, gamma))
        fits.append(DPWeightedERM(epsilon=math.inf, gamma=gamma, weights_upper_bound=W, tol=tol).fit(Z, labels, w))
    distance = float(np.linalg.norm(fits[0].coef_ - fits[1].coef_))
    delta = fits[0].sensitivity_
    assert distance <= delta, f"certified answers {distance:.4g} apart, {distance / delta:.2f} times Delta"
    assert delta == pytest.approx((2 * W + 2 * n * tol) / gamma, rel=1e-15)
    assert distance >= 0.999 * delta, "the pair should attain the bound (it is tight)"


def test_released_coefficients_are_floating_point_safe(toy):
    """Review item 7: coef_ is the exact sum rounded to a power-of-two grid below the noise scale."""
    Z, y, w = toy
    m = DPWeightedERM(epsilon=0.5, gamma=2.0, weights_upper_bound=2.0, random_state=1).fit(Z, y, w)
    grid = m.release_grid_
    lam = m.sensitivity_ / 0.5
    assert grid == 2.0 ** math.floor(math.log2(grid)) and lam / 2 ** 12 < grid <= lam / 2 ** 9
    np.testing.assert_array_equal(np.round(m.coef_ / grid) * grid, m.coef_)
    assert m.summary().coefficients == tuple(m.coef_)
    exact = DPWeightedERM(epsilon=math.inf, gamma=2.0, weights_upper_bound=2.0).fit(Z, y, w)
    assert exact.release_grid_ is None  # epsilon = inf is not a release: nothing to round


def test_reproduce_dppack_is_an_explicit_validation_switch(toy):
    """Bit-for-bit DPpack replay needs reproduce_dppack=True: full precision, DPpack's rate, a warning."""
    from pydpowl import PrivacyLeakWarning, RRandom
    from pydpowl.engine.mechanisms import sample_output_noise

    Z, y, w = toy
    kw = dict(epsilon=1.0, gamma=2.0, weights_upper_bound=2.0, keep_nonprivate=True)
    with pytest.warns(PrivacyLeakWarning, match="reproduce_dppack=True") as record:
        val = DPWeightedERM(reproduce_dppack=True, random_state=RRandom(5), **kw).fit(Z, y, w)
    assert record[0].filename == __file__
    expected = sample_output_noise(4, 2.0 * 1.0 / (2 * 2.0), rng=RRandom(5))  # DPpack: gamma*eps/(2*W)
    np.testing.assert_array_equal(val.noise_, expected)
    np.testing.assert_array_equal(val.coef_, val.nonprivate_coef_ + expected)
    assert val.release_grid_ is None and val.sensitivity_ == 2 * 2.0 / 2.0
    assert any("not floating-point safe" in note for note in val.summary().notes)
    safe = DPWeightedERM(random_state=RRandom(5), **kw).fit(Z, y, w)  # the default: safe release
    # rounding (half a grid step) plus the tolerance term in the rate (relative n tol / W = 1e-8 of the radius)
    assert np.max(np.abs(safe.coef_ - val.coef_)) <= 0.5 * safe.release_grid_ + 1e-6
    assert any("floating-point safe" in note for note in safe.summary().notes)
    # issue 21.5: (epsilon, delta) spent; a full-precision release has no proven guarantee (delta = 1)
    from pydpowl.engine.mechanisms import floating_point_delta

    assert val.privacy_spent_ == (1.0, 1.0)
    fp = floating_point_delta(epsilon=1.0, dim=4, grid=safe.release_grid_, noise_scale=safe.sensitivity_,
                              stream="R")  # RRandom's noise: R's samplers' model
    assert safe.privacy_spent_ == (1.0, fp) and "guarantee: (1, " in str(safe.summary())
    assert DPWeightedERM(epsilon=np.inf, weights_upper_bound=2.0).fit(Z, y, w).privacy_spent_ == (np.inf, 0.0)


# ------------------------------------------------------------------ a scikit-learn binary classifier

def test_any_two_labels_code_the_same_release(toy):
    Z, y, w = toy
    kw = dict(epsilon=1.0, gamma=2.0, weights_upper_bound=2.0)
    ref = DPWeightedERM(**kw, random_state=4).fit(Z, y, w)
    np.testing.assert_array_equal(ref.classes_, [-1.0, 1.0])
    for labels in (np.where(y > 0, 1, 0), np.where(y > 0, "yes", "no"), np.where(y > 0, 7.5, -2.0)):
        m = DPWeightedERM(**kw, random_state=4).fit(Z, labels, w)
        np.testing.assert_array_equal(m.coef_, ref.coef_)  # the smaller label is coded -1
        np.testing.assert_array_equal(m.classes_, np.unique(labels))
        pred = m.predict(Z)
        assert pred.dtype == labels.dtype
        np.testing.assert_array_equal(pred, np.where(ref.predict(Z) > 0, m.classes_[1], m.classes_[0]))
    assert ref.predict(Z).dtype == np.float64  # labels -1.0/1.0 come back as given
    assert DPWeightedERM(**kw, random_state=4).fit(Z, y.astype(int), w).predict(Z).dtype.kind == "i"


def test_score_is_weighted_accuracy(toy):
    Z, y, w = toy
    m = DPWeightedERM(epsilon=math.inf, gamma=1.0, weights_upper_bound=2.0).fit(Z, y, w)
    hit = m.predict(Z) == y
    assert m.score(Z, y) == pytest.approx(hit.mean())
    assert m.score(Z, y, sample_weight=w) == pytest.approx(np.sum(w * hit) / np.sum(w))
    assert m.score(Z, y) < 1.0  # the data are noisy: a score of 1 would be suspicious


def test_weights_as_list_and_series_equal_arrays(toy):
    Z, y, w = toy
    kw = dict(epsilon=1.0, gamma=2.0, weights_upper_bound=2.0, random_state=2)
    ref = DPWeightedERM(**kw).fit(Z, y, w).coef_
    np.testing.assert_array_equal(DPWeightedERM(**kw).fit(Z, list(y), list(w)).coef_, ref)
    np.testing.assert_array_equal(DPWeightedERM(**kw).fit(pd.DataFrame(Z), pd.Series(y), pd.Series(w)).coef_, ref)


def test_clip_rows_divides_long_rows_by_their_norm_and_counts_them(toy):
    Z, y, w = toy
    X = Z * np.where(np.arange(len(y)) % 4 == 0, 5.0, 1.0)[:, None]  # a quarter of the rows made long
    X_before = X.copy()
    long = np.linalg.norm(X, axis=1) > 1
    with pytest.raises(ValueError, match=r"l2 norm <= 1 .*clip_rows=True"):
        DPWeightedERM(weights_upper_bound=2.0).fit(X, y, w)
    kw = dict(epsilon=1.0, gamma=2.0, weights_upper_bound=2.0, random_state=9)
    m = DPWeightedERM(clip_rows=True, **kw).fit(X, y, w)
    np.testing.assert_array_equal(X, X_before)  # the caller's array is not changed
    assert m.n_clipped_rows_ == int(long.sum()) > 0
    clipped = X / np.maximum(1.0, np.linalg.norm(X, axis=1))[:, None]
    np.testing.assert_array_equal(DPWeightedERM(**kw).fit(clipped, y, w).coef_, m.coef_)
    assert m.sensitivity_ == DPWeightedERM(**kw).fit(clipped, y, w).sensitivity_  # the same mechanism
    np.testing.assert_allclose(m.decision_function(X), X @ m.coef_)  # new rows are not clipped
    assert DPWeightedERM(clip_rows=True, **kw).fit(Z, y, w).n_clipped_rows_ == 0
    assert DPWeightedERM(**kw).fit(Z, y, w).n_clipped_rows_ == 0
    with pytest.raises(TypeError, match="clip_rows must be True or False"):
        DPWeightedERM(clip_rows="yes").fit(Z, y, w)


def test_feature_names_follow_scikit_learns_rules(toy):
    Z, y, w = toy
    kw = dict(epsilon=math.inf, weights_upper_bound=2.0)
    named = pd.DataFrame(Z, columns=["a", "b", "c", "d"])
    m = DPWeightedERM(**kw).fit(named, y, w)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the same names: no warning
        np.testing.assert_array_equal(m.feature_names_in_, ["a", "b", "c", "d"])
        assert m.predict(named).shape == (len(y),)
    with pytest.warns(UserWarning, match="X does not have valid feature names, but DPWeightedERM was fitted with"):
        m.predict(Z)
    with pytest.raises(ValueError, match="feature names should match.*\\nFeature names unseen at fit time:\\n- e\\n"):
        m.predict(named.rename(columns={"d": "e"}))
    with pytest.raises(ValueError, match="feature names should match.*\\nFeature names must be in the same order"):
        m.predict(named[["b", "a", "c", "d"]])
    m.fit(Z, y, w)  # a refit without names forgets the old ones
    assert not hasattr(m, "feature_names_in_")
    with pytest.warns(UserWarning, match="X has feature names, but DPWeightedERM was fitted without"):
        m.predict(named)
    assert not hasattr(DPWeightedERM(**kw).fit(pd.DataFrame(Z), y, w), "feature_names_in_")  # 0..3: not strings
    with pytest.raises(TypeError, match="column names of types \\['int', 'str'\\]"):
        DPWeightedERM(**kw).fit(pd.DataFrame(Z, columns=["a", 1, "c", 3]), y, w)


def test_column_vector_y_warns_like_scikit_learn(toy):
    from sklearn.exceptions import DataConversionWarning

    Z, y, w = toy
    with pytest.warns(DataConversionWarning, match="A column-vector y was passed when a 1d array was expected"):
        m = DPWeightedERM(epsilon=math.inf, weights_upper_bound=2.0).fit(Z, y[:, None], w)
    np.testing.assert_array_equal(m.coef_, DPWeightedERM(epsilon=math.inf, weights_upper_bound=2.0).fit(Z, y, w).coef_)


def test_not_fitted_error_is_scikit_learns():
    from sklearn.exceptions import NotFittedError as SklearnNotFittedError
    from sklearn.utils.validation import check_is_fitted

    with pytest.raises(SklearnNotFittedError):
        DPWeightedERM().decision_function(np.zeros((1, 2)))
    with pytest.raises(SklearnNotFittedError):
        check_is_fitted(DPWeightedERM())


def test_clip_row_norms_keeps_the_direction_of_huge_rows():
    from pydpowl.estimators.werm import clip_row_norms

    X = np.array([[3e200, -4e200], [0.3, 0.4], [3.0, 4.0], [0.0, 0.0]])
    Y, n = clip_row_norms(X)
    assert n == 2
    np.testing.assert_allclose(Y, [[0.6, -0.8], [0.3, 0.4], [0.6, 0.8], [0.0, 0.0]], rtol=1e-15)
    assert np.all(np.linalg.norm(Y, axis=1) <= 1.0 + 1e-15)


def test_an_r_stream_release_states_the_delta_of_rs_samplers():
    """Review 21.4(b): R's rgamma draws 3.4% of radii at d = 5 from its rejection loop on 32-bit uniforms, outside
    the sampler model; the delta stated for an R stream is recomputed (4e-6 to 8e-6 at eps 1, d = 5), not numpy's 5.5e-9."""
    from pydpowl import RRandom
    from pydpowl.engine.mechanisms import floating_point_delta

    rng = np.random.default_rng(3)
    X = rng.uniform(-0.4, 0.4, size=(200, 5))
    y = np.where(rng.uniform(size=200) < 0.5, -1.0, 1.0)
    w = rng.uniform(0.0, 1.0, size=200)
    fits = {kind: DPWeightedERM(epsilon=1.0, gamma=1.0, weights_upper_bound=1.0, random_state=r).fit(X, y, w)
            for kind, r in (("numpy", np.random.default_rng(1)), ("R", RRandom(1)))}
    for kind, fit in fits.items():
        expected = floating_point_delta(epsilon=1.0, dim=5, grid=fit.release_grid_,
                                        noise_scale=fit.sensitivity_, stream=kind)
        assert fit.release_delta_ == expected and fit.sampler_model_ == kind
        assert f"{expected:.1e})-DP" in " ".join(fit.summary().notes)
    assert 1e-9 < fits["numpy"].release_delta_ < 1e-8 and 2e-6 < fits["R"].release_delta_ < 2e-5
    assert "R's samplers" in " ".join(fits["R"].summary().notes)


def test_predict_proba_of_the_logistic_loss_is_post_processing_of_the_release(toy):
    """Issue 22.5: a logistic DPWeightedERM had no predict_proba."""
    Z, y, w = toy
    m = DPWeightedERM(loss="logistic", epsilon=2.0, weights_upper_bound=2.0, random_state=1).fit(Z, y, w)
    p = m.predict_proba(Z)
    eta = Z @ m.coef_
    np.testing.assert_allclose(p[:, 1], 1.0 / (1.0 + np.exp(-eta)), rtol=1e-12)
    np.testing.assert_allclose(p.sum(axis=1), 1.0)
    np.testing.assert_array_equal(m.classes_[np.argmax(p, axis=1)], m.predict(Z))  # columns in classes_ order
    np.testing.assert_allclose(m.predict_log_proba(Z), np.log(p), rtol=1e-10)
    huber = DPWeightedERM(epsilon=2.0, weights_upper_bound=2.0)
    assert not hasattr(huber, "predict_proba")  # the Huber hinge estimates no probabilities
    with pytest.raises(AttributeError, match="predict_proba is available only with loss='logistic'"):
        huber.predict_proba(Z)


# --------------------------------------------------------------------------- objective perturbation with weights


def test_objective_perturbation_with_weights_is_the_engines_release(toy):
    """Refused before (DPpack's rule); now the proven weighted mechanism, the same release as the engine's."""
    from pydpowl.engine.losses import HuberHingeLoss
    from pydpowl.engine.mechanisms import release_weighted_objective

    Z, y, w = toy
    m = DPWeightedERM(epsilon=1.0, gamma=0.5, weights_upper_bound=2.0, mechanism="objective", keep_nonprivate=True,
                      random_state=7).fit(Z, y, w)
    ref = release_weighted_objective(Z, y.astype(float), w, epsilon=1.0, gamma=0.5, weights_upper_bound=2.0,
                                     loss=HuberHingeLoss(0.5), tol=1e-10, rng=np.random.default_rng(7))
    np.testing.assert_array_equal(m.coef_, ref.coef)
    assert m.ridge_ == ref.calibration.ridge > 0.5 and math.isnan(m.sensitivity_)
    assert m.epsilon_prime_ == ref.calibration.epsilon_linear and m.release_grid_ == ref.grid
    assert "objective perturbation" in str(m.summary())


def test_objective_perturbation_is_refused_where_it_has_no_proof(toy):
    from pydpowl.engine.losses import CustomLoss

    Z, y, w = toy
    with pytest.raises(ValueError, match="C = 0"):
        DPWeightedERM(mechanism="objective", weights_upper_bound=2.0, C=1.0).fit(Z, y, w)
    with pytest.raises(ValueError, match="reproduce_dppack"):
        DPWeightedERM(mechanism="objective", weights_upper_bound=2.0, reproduce_dppack=True).fit(Z, y, w)
    with pytest.raises(ValueError, match="mechanism"):
        DPWeightedERM(mechanism="laplace", weights_upper_bound=2.0).fit(Z, y, w)
    undeclared = CustomLoss(value=lambda m: np.logaddexp(0, -m), deriv=lambda m: -0.5 * (1 - np.tanh(m / 2)),
                            deriv2=lambda m: 0.25 / np.cosh(m / 2) ** 2, lipschitz=1.0)  # no curvature_bound
    with pytest.raises(ValueError, match="curvature"):
        DPWeightedERM(mechanism="objective", weights_upper_bound=2.0, loss=undeclared).fit(Z, y, w)

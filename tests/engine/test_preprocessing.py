
import numpy as np
import pytest

from pydpowl import FeatureScaler, PrivacyLeakWarning, bounds_from_data


@pytest.fixture
def scaler():
    return FeatureScaler.from_bounds(([18.0, 0.0, -2.0], [89.0, 1.0, 3.0]), 3, fit_intercept=True)


def test_scaling_by_hand(scaler):
    X = np.array([[50.0, 1.0, -2.0], [10.0, 0.0, 5.0]])  # second row clipped: age 10 -> 18, 5 -> 3
    Z, n_clipped = scaler.transform(X)
    assert n_clipped == 2
    sqrt_d = 2.0  # d = 4 with the intercept
    expected = np.array([[1.0, 50 / 89, 1.0, -2 / 3], [1.0, 18 / 89, 0.0, 3 / 3]]) / sqrt_d
    np.testing.assert_allclose(Z, expected, rtol=1e-15)
    assert np.all(np.linalg.norm(Z, axis=1) <= 1 + 1e-15)


def test_coefficients_map_back_exactly(scaler):
    rng = np.random.default_rng(0)
    X = np.column_stack([rng.uniform(18, 89, 50), rng.integers(0, 2, 50), rng.uniform(-2, 3, 50)])
    Z, _ = scaler.transform(X)
    theta = rng.normal(size=4)
    orig = scaler.coef_to_original(theta)
    np.testing.assert_allclose(Z @ theta, orig[0] + X @ orig[1:], rtol=1e-12)
    np.testing.assert_allclose(scaler.coef_to_scaled(orig), theta, rtol=1e-15)


def test_without_intercept():
    s = FeatureScaler.from_bounds(([-1.0, -4.0], [1.0, 2.0]), 2, fit_intercept=False)
    Z, _ = s.transform(np.array([[0.5, -4.0]]))
    np.testing.assert_allclose(Z, [[0.5 / np.sqrt(2), -1.0 / np.sqrt(2)]])
    assert s.n_coefficients == 2


@pytest.mark.parametrize("bounds, exc, match", [
    (([0, 0], [1, 1]), ValueError, "lower bounds must have length 3"),
    (([0, 0, 0], [1, 1]), ValueError, "upper bounds must have length 3"),
    (([0, 2, 0], [1, 1, 1]), ValueError, r"lower must be <= upper for every feature; reversed at \[1\]"),
    (([0, 0, 0], [1, 0, 1]), ValueError, r"max\(\|lower\|, \|upper\|\) must be > 0"),
    (([0, np.nan, 0], [1, 1, 1]), ValueError, "must be finite"),
    ("data", TypeError, "must be a pair"),
    (5, TypeError, "must be a pair"),
])
def test_bad_bounds(bounds, exc, match):
    with pytest.raises(exc, match=match):
        FeatureScaler.from_bounds(bounds, 3)


def test_wrong_number_of_columns(scaler):
    with pytest.raises(ValueError, match=r"X must have 3 columns \(one per bound\), got 2"):
        scaler.transform(np.zeros((2, 2)))


def test_bounds_from_data_warns():
    with pytest.warns(PrivacyLeakWarning, match="guarantee of any release that uses them is void"):
        lo, hi = bounds_from_data(np.array([[1.0, 2.0], [3.0, -1.0]]))
    np.testing.assert_array_equal(lo, [1.0, -1.0])
    np.testing.assert_array_equal(hi, [3.0, 2.0])


def test_numpy_backend_gives_the_fused_scaling_bit_for_bit_without_numba(scaler):
    rng = np.random.default_rng(3)
    n = 6000
    X = np.column_stack([rng.uniform(10, 95, n), rng.integers(0, 2, n), rng.uniform(-3, 4, n)])
    Z_kernel, clipped_kernel = scaler.transform_checked(X, backend="numba")
    Z_numpy, clipped_numpy = scaler.transform_checked(X, backend="numpy")
    np.testing.assert_array_equal(Z_numpy, Z_kernel)
    assert clipped_numpy == clipped_kernel > 0
    with pytest.raises(ValueError, match=r"backend must be one of \{'auto', 'numpy', 'numba'\}, got backend='gpu'"):
        scaler.transform_checked(X, backend="gpu")


# ------------------------------------------------------------------ random Fourier features

from pydpowl import RRandom  # noqa: E402
from pydpowl.engine.preprocessing import RandomFourierFeatures  # noqa: E402


def test_random_features_draw_order_on_an_r_stream():
    """DPpack's generate.sampling, D times: rnorm(d, sd = sqrt(2 g)) then runif(1, -pi, pi)."""
    f = RandomFourierFeatures.sample(3, 4, 0.5, rng=RRandom(8))
    r = RRandom(8)
    for j in range(4):
        assert np.array_equal(f.omega[j], r.rnorm(3, 0.0, 1.0))  # sqrt(2 * 0.5) = 1
        assert f.phi[j] == r.runif(1, -np.pi, np.pi)[0]
    assert f.prefilter.shape == (4, 4) and np.array_equal(f.prefilter[:, :3], f.omega)


def test_random_features_are_bounded_and_scale_to_the_unit_ball():
    rng = np.random.default_rng(1)
    f = RandomFourierFeatures.sample(2, 7, 2.0, rng=rng)
    X = rng.normal(scale=100.0, size=(500, 2))  # no clipping needed: cosines are bounded
    V = f.transform(X)
    assert np.all(np.abs(V) <= f.bound) and f.bound == np.sqrt(2 / 7)
    Z, clipped = f.scaler().transform(V)
    assert clipped == 0
    np.testing.assert_allclose(Z, np.cos(X @ f.omega.T + f.phi) / np.sqrt(7), rtol=0, atol=1e-15)
    assert np.all(np.linalg.norm(Z, axis=1) <= 1 + 1e-15)


def test_random_features_approximate_the_gaussian_kernel():
    rng = np.random.default_rng(2)
    f = RandomFourierFeatures.sample(3, 20000, 0.7, rng=rng)
    a, b = np.array([[0.1, 0.5, -0.2]]), np.array([[0.4, -0.1, 0.3]])
    approx = float(f.transform(a) @ f.transform(b).T)
    assert approx == pytest.approx(np.exp(-0.7 * np.sum((a - b) ** 2)), abs=0.03)


def test_random_features_from_prefilter_round_trip_and_checks():
    f = RandomFourierFeatures.sample(2, 3, 1.0, rng=np.random.default_rng(0))
    g = RandomFourierFeatures.from_prefilter(f.prefilter, 1.0)
    assert np.array_equal(g.omega, f.omega) and np.array_equal(g.phi, f.phi)
    with pytest.raises(ValueError, match="X must have 2 columns"):
        f.transform(np.zeros((1, 3)))
    with pytest.raises(ValueError, match=r"n_components must be an integer >= 1"):
        RandomFourierFeatures.sample(2, 0, 1.0, rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match=r"kernel_param must be in \(0, inf\)"):
        RandomFourierFeatures.sample(2, 3, -1.0, rng=np.random.default_rng(0))


@pytest.mark.parametrize("fit_intercept", [True, False])
def test_scaled_data_are_column_major_and_follow_dppack_operations(fit_intercept):
    """Z is written column-major (the solver's layout) and equals (clip(X) / scale) / sqrt(d) bit for bit,
    whether no feature, one feature or every feature has entries out of bounds."""
    rng = np.random.default_rng(3)
    s = FeatureScaler.from_bounds(([-1.0, 0.0, 2.0], [1.0, 5.0, 3.0]), 3, fit_intercept=fit_intercept)
    inside = np.column_stack([rng.uniform(-1, 1, 400), rng.uniform(0, 5, 400), rng.uniform(2, 3, 400)])
    one_out = inside.copy()
    one_out[::7, 1] = 9.0
    all_out = inside * 3.0
    for X in (inside, one_out, all_out):
        Z, n_clipped = s.transform(X)
        clipped = np.clip(X, s.lower, s.upper)
        full = np.column_stack([np.ones(len(X)), clipped]) if fit_intercept else clipped
        assert Z.flags.f_contiguous
        assert np.array_equal(Z, (full / s.column_scale) / s.dimension_scale)
        assert n_clipped == int(np.count_nonzero(clipped != X))


@pytest.mark.parametrize("layout", [np.ascontiguousarray, np.asfortranarray], ids=["C", "F"])
def test_clip_columns_writes_clipped_features_and_counts_the_changes(layout):
    from pydpowl.engine.preprocessing import clip_columns

    X = layout(np.array([[-2.0, 0.5, 3.0], [0.0, -0.5, 1.0], [1.5, 0.25, -4.0], [1.0, -1.0, 2.0]]))
    lower, upper = np.array([-1.0, -1.0, 0.0]), np.array([1.0, 1.0, 2.0])
    out = np.full((3, 4), np.nan)
    count = clip_columns(X, lower, upper, out=out)
    expected = np.array([[-1.0, 0.0, 1.0, 1.0], [0.5, -0.5, 0.25, -1.0], [2.0, 1.0, 0.0, 2.0]])
    assert np.array_equal(out, expected)
    assert count == 4  # -2, 1.5, 3 and -4 were outside; values on a bound are not changes

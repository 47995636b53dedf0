"""The DPpack adapter against DPpack's documented behaviour (needs R and DPpack)."""

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

pytestmark = pytest.mark.r


@pytest.fixture(autouse=True, scope="module")
def _needs_dppack(require_r):
    require_r("DPpack")


from pydpowl import DPOWL, DPWeightedERM, FeatureScaler  # noqa: E402
from pydpowl.engine.losses import HuberHingeLoss, LogisticLoss  # noqa: E402
from pydpowl.engine.solver import objective_value  # noqa: E402
from r_reference import RError, RUnavailableError, fit_svmdp, fit_weighted_erm_cms  # noqa: E402

LOWER, UPPER = np.array([-3.0, 0.0]), np.array([1.0, 2.0])  # asymmetric: swapping them changes the clip


@pytest.fixture(scope="module")
def toy():
    rng = np.random.default_rng(11)
    n = 150
    X = np.column_stack([rng.uniform(-4, 2, n), rng.uniform(-0.5, 2.5, n)])  # some entries outside the bounds
    A = np.where(rng.uniform(size=n) < 0.5, 1.0, -1.0)
    w = rng.uniform(0.0, 3.0, n)  # W = 2 below: DPpack clips a third of them
    return X, A, w


def _svm(toy, eps, seeds=(1,), **kw):
    X, A, w = toy
    return fit_svmdp(X, A, w, epsilon=eps, gamma=2.0, weights_upper_bound=2.0, feature_bounds=(LOWER, UPPER),
                     seeds=seeds, **kw)


def test_scaling_by_hand(toy):
    res = _svm(toy, np.inf, return_data=True)
    # intercept first with scale 1, then max(|l|, |u|) = 3 and 2; dimension scale sqrt(3)
    assert_array_equal(res.column_scale, [1.0, 3.0, 2.0])
    assert res.dimension_scale == pytest.approx(np.sqrt(3.0), rel=1e-15)
    assert_allclose(res.coef, res.scaled_coef / (res.column_scale * res.dimension_scale), rtol=1e-14)


def test_bounds_passed_by_name_and_labels_and_weights(toy):
    X, A, w = toy
    data = _svm(toy, np.inf, return_data=True).data
    # clipped to [LOWER, UPPER] (not to a swapped pair), intercept first, scaled: computed here by hand
    Xc = np.minimum(np.maximum(X, LOWER), UPPER)
    Z = np.column_stack([np.ones(len(A)), Xc[:, 0] / 3.0, Xc[:, 1] / 2.0]) / np.sqrt(3.0)
    assert_allclose(data.Z, Z, rtol=0, atol=1e-15)
    assert_array_equal(data.y, A)  # {-1,1} -> {0,1} for svmDP -> {-1,1} inside DPpack
    assert_array_equal(data.w, np.minimum(w, 2.0))  # DPpack clips weights at the bound


def test_nonprivate_matches_pydpowl_within_dppack_precision(toy):
    X, A, w = toy
    res = _svm(toy, np.inf, return_data=True)
    est = DPOWL(epsilon=np.inf, gamma=2.0, weights_upper_bound=2.0, feature_bounds=(LOWER, UPPER),
                mechanism="output", residual=False, huber_h=0.5,  # svmDP's mechanism and loss
                keep_nonprivate=True).fit(X, A, benefit=w * 0.5, propensity=0.5)
    d = res.data
    loss = HuberHingeLoss(0.5)
    F_r = objective_value(res.scaled_coef[0], d.Z, d.y, d.w, gamma=2.0, loss=loss)
    F_py = objective_value(est.nonprivate_scaled_coef_, d.Z, d.y, d.w, gamma=2.0, loss=loss)
    mu = 2.0 / len(A)
    gap = F_r - F_py
    assert gap >= -1e-12, f"pydpowl's F exceeds DPpack's by {-gap:.2e}"
    dist = np.linalg.norm(res.scaled_coef[0] - est.nonprivate_scaled_coef_)
    assert dist <= np.sqrt(2 * max(gap, 0) / mu) + 1e-9, f"distance {dist:.2e} not explained by gap {gap:.2e}"
    assert_allclose(res.coef[0], est.dppack_coeff_, rtol=0, atol=1e-3)  # DPpack's BFGS stops near 1e-5


def test_same_seed_same_coefficients_and_noise_is_dppacks_gamma_draw(toy):
    from pydpowl import RRandom  # R-compatible stream: DPpack draws rgamma(1, d, rate) after set.seed

    exact = _svm(toy, np.inf).scaled_coef[0]
    res = _svm(toy, 1.5, seeds=[7, 7, 8])
    assert_array_equal(res.coef[0], res.coef[1])
    assert not np.allclose(res.coef[0], res.coef[2])
    rate = 2.0 * 1.5 / (2 * 2.0)  # gamma eps / (2W)
    for row, seed in ((0, 7), (2, 8)):
        norm = np.linalg.norm(res.scaled_coef[row] - exact)
        expected = RRandom(seed).rgamma(1, 3, rate=rate)[0]
        assert norm == pytest.approx(expected, rel=1e-9)


def test_cms_logistic_nonprivate_matches_pydpowl():
    rng = np.random.default_rng(5)
    n = 200
    Z = rng.normal(size=(n, 3))
    Z /= np.maximum(1.0, np.linalg.norm(Z, axis=1))[:, None]
    y = np.where(Z @ [1.0, -2.0, 0.5] + 0.5 * rng.normal(size=n) > 0, 1.0, -1.0)
    w = rng.uniform(0, 2, n)
    res = fit_weighted_erm_cms(Z, y, w, epsilon=np.inf, gamma=1.0, weights_upper_bound=2.0, loss="logistic")
    assert res.dimension_scale == 1.0 and np.all(res.column_scale == 1.0)
    assert_array_equal(res.coef, res.scaled_coef)
    est = DPWeightedERM(epsilon=np.inf, gamma=1.0, weights_upper_bound=2.0, loss="logistic",
                        keep_nonprivate=True).fit(Z, y, w)
    loss = LogisticLoss()
    gap = objective_value(res.coef[0], Z, y, w, gamma=1.0, loss=loss) - objective_value(
        est.nonprivate_coef_, Z, y, w, gamma=1.0, loss=loss)
    assert gap >= -1e-12
    dist = np.linalg.norm(res.coef[0] - est.nonprivate_coef_)
    assert dist <= np.sqrt(2 * max(gap, 0) / (1.0 / n)) + 1e-9


def test_cms_huber_equals_svmdp_on_the_same_scaled_data(toy):
    svm = _svm(toy, np.inf, return_data=True)
    d = svm.data
    cms = fit_weighted_erm_cms(d.Z, d.y, d.w, epsilon=np.inf, gamma=2.0, weights_upper_bound=2.0, loss="huber")
    assert_allclose(cms.coef[0], svm.scaled_coef[0], rtol=1e-12, atol=1e-14)


def test_label_and_argument_errors_are_python_side(toy):
    X, A, w = toy
    n_bad = int(np.sum(A > 0))  # (A + 1) / 2 + 1 maps +1 to 2 (invalid) and -1 to 1 (valid)
    with pytest.raises(ValueError, match=rf"treatment must be in \{{-1, 1\}}; {n_bad} of 150"):
        fit_svmdp(X, (A + 1) / 2 + 1, w, epsilon=1.0, gamma=1.0, weights_upper_bound=2.0,
                  feature_bounds=(LOWER, UPPER))
    with pytest.raises(ValueError, match="loss must be one of"):
        fit_weighted_erm_cms(X, A, w, epsilon=1.0, gamma=1.0, weights_upper_bound=2.0, loss="hinge")
    with pytest.raises(ValueError, match="seeds must lie in"):
        _svm(toy, 1.0, seeds=[2**31])


def test_r_errors_carry_rs_message(toy):
    X, A, w = toy
    with pytest.raises(RError, match="Length of upper.bounds must be equal to the number of columns of X"):
        fit_svmdp(X, A, w, epsilon=1.0, gamma=1.0, weights_upper_bound=2.0,
                  feature_bounds=(np.zeros(3), np.ones(3)))
    with pytest.raises(RError, match="Upper bound on weights must be given"):
        fit_svmdp(X, A, w, epsilon=1.0, gamma=1.0, feature_bounds=(LOWER, UPPER))
    with pytest.raises(RError, match="Weights must be nonnegative"):
        fit_svmdp(X, A, -w, epsilon=1.0, gamma=1.0, weights_upper_bound=2.0, feature_bounds=(LOWER, UPPER))


def test_missing_r_package_names_make_setup():
    from r_reference._session import require_packages

    with pytest.raises(RUnavailableError, match="make setup"):
        require_packages("noSuchPackageXyz")


def test_no_console_echo_of_r_errors(toy, capfd):
    X, A, w = toy
    with pytest.raises(RError):
        fit_svmdp(X, A, w, epsilon=1.0, gamma=1.0, feature_bounds=(LOWER, UPPER))
    captured = capfd.readouterr()
    assert "R[write to console]" not in captured.err + captured.out


def test_scaler_agrees_with_dppack_scaling(toy):
    res = _svm(toy, np.inf)
    scaler = FeatureScaler.from_bounds((LOWER, UPPER), 2, fit_intercept=True)
    assert_array_equal(res.column_scale, scaler.column_scale)
    assert res.dimension_scale == scaler.dimension_scale

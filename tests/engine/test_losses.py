import numpy as np
import pytest

from pydpowl import CustomLoss, HuberHingeLoss, LogisticLoss
from pydpowl.engine.losses import check_loss, get_loss, sigmoid


def huber_by_hand(m, h):
    if m > 1 + h:
        return 0.0
    if abs(1 - m) <= h:
        return (1 + h - m) ** 2 / (4 * h)
    return 1 - m


@pytest.mark.parametrize("h", [0.1, 0.5, 2.0])
def test_huber_matches_definition(h):
    m = np.linspace(-3, 4, 701)
    expected = np.array([huber_by_hand(v, h) for v in m])
    np.testing.assert_allclose(HuberHingeLoss(h).value(m), expected, rtol=0, atol=1e-15)


@pytest.mark.parametrize("loss", [HuberHingeLoss(0.5), HuberHingeLoss(0.05), LogisticLoss()])
def test_derivatives_match_finite_differences(loss):
    m = np.linspace(-6, 6, 1201) + 1e-4  # avoid the Huber kinks exactly
    step = 1e-6
    fd1 = (loss.value(m + step) - loss.value(m - step)) / (2 * step)
    np.testing.assert_allclose(loss.deriv(m), fd1, atol=1e-6)
    fd2 = (loss.deriv(m + step) - loss.deriv(m - step)) / (2 * step)
    smooth = np.abs(np.abs(1 - m) - getattr(loss, "h", -10)) > 1e-3  # away from Huber zone edges
    np.testing.assert_allclose(loss.deriv2(m)[smooth], fd2[smooth], atol=1e-5)


@pytest.mark.parametrize("loss", [HuberHingeLoss(0.5), LogisticLoss()])
def test_builtin_losses_pass_the_privacy_check(loss):
    assert check_loss(loss) is loss
    m = np.linspace(-1e3, 1e3, 10001)
    assert np.max(np.abs(loss.deriv(m))) <= 1.0


def test_logistic_is_stable_for_extreme_margins():
    loss = LogisticLoss()
    m = np.array([-800.0, -40.0, 0.0, 40.0, 800.0])
    v = loss.value(m)
    assert np.all(np.isfinite(v))
    assert v[0] == pytest.approx(800.0) and v[-1] == pytest.approx(0.0, abs=1e-300)
    assert loss.value(np.array([0.0]))[0] == pytest.approx(np.log(2.0))


def test_custom_loss_steeper_than_declared_is_refused():
    steep = CustomLoss(lambda m: 2 * np.maximum(0, 1 - m), lambda m: np.where(m < 1, -2.0, 0.0),
                       lambda m: np.zeros_like(m), name="double hinge", lipschitz=1.0)
    with pytest.raises(ValueError, match=r"\|l'\(m\)\| .* exceeds the declared lipschitz=1"):
        get_loss(steep)


def test_custom_loss_nonconvex_is_refused():
    bad = CustomLoss(lambda m: np.sin(m) * 0.5, lambda m: np.cos(m) * 0.5, lambda m: -np.sin(m) * 0.5, lipschitz=1.0)
    with pytest.raises(ValueError, match="convexity"):
        get_loss(bad)


def test_custom_loss_accepted_and_usable():
    from scipy.special import expit

    soft = CustomLoss(lambda m: np.logaddexp(0, -m), lambda m: -expit(-m),
                      lambda m: expit(m) * expit(-m), name="softplus", lipschitz=1.0, curvature_bound=0.25)
    assert get_loss(soft) is soft


@pytest.mark.parametrize("bad, err", [("hinge", ValueError), (3, TypeError)])
def test_unknown_loss(bad, err):
    with pytest.raises(err, match="loss"):
        get_loss(bad)


@pytest.mark.parametrize("h", [0.0, -1.0, float("nan"), float("inf")])
def test_huber_h_must_be_positive(h):
    with pytest.raises(ValueError, match=r"huber_h must be in \(0, inf\)"):
        HuberHingeLoss(h)


# ---- one definition, two paths -----------------------------------------------------------
GRID = np.concatenate([np.linspace(-40, 40, 4001), [-1e6, -1.5, -0.5, 0.0, 0.5, 1.0, 1.5, 2.0, 1e6]])


@pytest.mark.parametrize("loss", [HuberHingeLoss(0.5), HuberHingeLoss(0.05), LogisticLoss(),
                                  HuberHingeLoss(0.5).quadratic_surrogate()], ids=repr)
def test_compiled_loss_terms_equal_the_numpy_definition(loss):
    from pydpowl.engine.kernels import numba_available

    if not numba_available():
        pytest.skip("numba not installed")
    from pydpowl.engine.kernels.margin_losses import loss_terms

    kind, param = loss.kernel_spec()
    compiled = np.array([loss_terms(kind, param, float(m)) for m in GRID])
    for col, method in enumerate((loss.value, loss.deriv, loss.deriv2)):
        # equal up to the last bit of exp/log (numpy's vectorised versions and the C library's may differ by an ulp)
        np.testing.assert_allclose(compiled[:, col], method(GRID), rtol=1e-15, atol=3e-16,
                                   err_msg=f"{loss!r} {method.__name__}")


@pytest.mark.parametrize("loss", [HuberHingeLoss(0.5), HuberHingeLoss(0.05), LogisticLoss()], ids=repr)
def test_declared_constants_hold(loss):
    assert np.max(np.abs(loss.deriv(GRID))) <= loss.lipschitz == 1.0
    assert np.max(loss.deriv2(GRID)) <= loss.curvature_bound
    assert np.max(loss.deriv2(np.linspace(-1, 3, 10001))) == pytest.approx(loss.curvature_bound, rel=1e-6)


def test_huber_surrogate_is_the_quadratic_piece():
    h = 0.3
    loss, sur = HuberHingeLoss(h), HuberHingeLoss(h).quadratic_surrogate()
    quad = np.linspace(1 - h, 1 + h, 101)
    np.testing.assert_allclose(sur.value(quad), loss.value(quad), rtol=1e-13, atol=1e-15)
    m = np.array([-5.0, 0.0, 3.0])
    np.testing.assert_allclose(sur.value(m), (1 + h - m) ** 2 / (4 * h), rtol=1e-15)
    np.testing.assert_allclose(sur.deriv(m), -(1 + h - m) / (2 * h), rtol=1e-15)
    np.testing.assert_array_equal(sur.deriv2(m), np.full(3, 1 / (2 * h)))


def test_huber_surrogate_is_refused_as_a_private_loss():
    with pytest.raises(ValueError, match=r"lipschitz must be in \(0, inf\), got lipschitz=inf"):
        get_loss(HuberHingeLoss(0.5).quadratic_surrogate())


# ------------------------------------------------------------------ privacy review: declared constants

def _spiky():
    """Logistic loss plus a bump of slope about 5 between two grid points of the check (0.0025..0.0026)."""
    from scipy.special import expit

    c, s = 0.00255, 2e-5  # centre and width of the bump, far from every grid point
    bump = lambda m: 2e-4 * np.exp(-0.5 * ((m - c) / s) ** 2)  # noqa: E731
    dbump = lambda m: -bump(m) * (m - c) / s ** 2  # noqa: E731
    return (lambda m: np.logaddexp(0, -m) + bump(m), lambda m: -expit(-m) + dbump(m),
            lambda m: expit(m) * expit(-m))


def test_a_derivative_spike_between_grid_points_is_invisible_to_the_grid():
    """Review item 8: the grid check cannot prove |l'| <= L; the guarantee rests on the declaration."""
    value, deriv, deriv2 = _spiky()
    fine = np.linspace(0.0024, 0.0027, 30001)
    assert np.max(np.abs(deriv(fine))) > 4.0  # the real Lipschitz constant is about 5
    with pytest.raises(TypeError, match="lipschitz"):
        CustomLoss(value, deriv, deriv2, name="spiky")  # no declaration, no guarantee
    declared = CustomLoss(value, deriv, deriv2, name="spiky", lipschitz=5.0)
    assert get_loss(declared) is declared and declared.lipschitz == 5.0


def test_sensitivity_scales_with_the_declared_lipschitz_constant():
    """Delta = (L (C + 2W) + 2 n tol) / gamma, attained in the linear zone by a convex loss of slope 2.

    Before the fix such a loss was refused (the grid check demanded |l'| <= 1)."""
    import math

    from pydpowl import DPWeightedERM

    huber = HuberHingeLoss(0.5)
    double = CustomLoss(lambda m: 2 * huber.value(m), lambda m: 2 * huber.deriv(m), lambda m: 2 * huber.deriv2(m),
                        name="2 x Huber hinge", lipschitz=2.0, curvature_bound=2.0)
    rng = np.random.default_rng(4)
    X = rng.normal(size=(20, 3))
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1))[:, None]
    X[0] = np.array([1.0, 2.0, -2.0]) / 3.0
    w = np.full(20, 0.3)
    w[0] = 1.0
    y = np.tile([1.0, -1.0], 10)
    y1 = y.copy()
    y1[0] = -1.0
    gamma, W = 40.0, 1.0  # every margin below 1 - h: l' = -2 for every row
    fit = lambda labels: DPWeightedERM(epsilon=math.inf, gamma=gamma, weights_upper_bound=W,  # noqa: E731
                                       loss=double).fit(X, labels, w)
    a, b = fit(y), fit(y1)
    assert a.sensitivity_ == pytest.approx((2.0 * 2 * W + 2 * 20 * 1e-10) / gamma, rel=1e-15)
    ratio = np.linalg.norm(a.coef_ - b.coef_) / a.sensitivity_
    assert 1 - 1e-8 <= ratio <= 1.0, f"||theta - theta'|| / Delta = {ratio:.10f}"


@pytest.mark.parametrize("kwargs, match", [
    (dict(lipschitz=0.5), r"\|l'\(m\)\| .* exceeds the declared lipschitz=0\.5"),
    (dict(lipschitz=1.0, curvature_bound=0.1), r"l''\(m\) .* exceeds the declared curvature_bound=0\.1"),
    (dict(lipschitz=-1.0), r"lipschitz must be in \(0, inf\)"),
    (dict(lipschitz=1.0, curvature_bound=0.0), r"curvature_bound must be in \(0, inf\)"),
])
def test_the_grid_refuses_contradictions_with_the_declaration(kwargs, match):
    from scipy.special import expit

    def make():
        return CustomLoss(lambda m: np.logaddexp(0, -m), lambda m: -expit(-m), lambda m: expit(m) * expit(-m),
                          name="softplus", **kwargs)
    with pytest.raises(ValueError, match=match):
        get_loss(make())


def test_squared_error_loss_by_hand():
    from pydpowl.engine.losses import SquaredErrorLoss

    loss = SquaredErrorLoss()
    eta, y = np.array([0.0, 1.5, -2.0]), np.array([1.0, 1.0, 1.0])
    np.testing.assert_array_equal(loss.value(eta, y), [0.5, 0.125, 4.5])
    np.testing.assert_array_equal(loss.deriv(eta, y), [-1.0, 0.5, -3.0])
    np.testing.assert_array_equal(loss.deriv2(eta, y), [1.0, 1.0, 1.0])
    assert loss.constant_curvature and loss.curvature_bound == 1.0


def test_sigmoid_is_the_logistic_function_without_overflow():
    x = np.array([-3.0, -0.5, 0.0, 0.25, 4.0])
    assert np.allclose(sigmoid(x), 1.0 / (1.0 + np.exp(-x)), rtol=1e-15, atol=0)
    with np.errstate(over="raise"):
        tails = sigmoid(np.array([-800.0, 800.0]))
    assert tails[0] == 0.0 and tails[1] == 1.0
    # the two arms' probabilities add to one
    assert np.allclose(sigmoid(x) + sigmoid(-x), 1.0, rtol=0, atol=1e-15)


def test_logistic_value_and_slopes_are_the_terms_apart():
    # the solver's trial points use the slopes alone and the value only where needed: the same numbers
    from pydpowl.engine.losses import logistic_slopes, logistic_terms, logistic_value

    m = np.concatenate([GRID, [-800.0, -40.0, -1e-300, 0.0, 1e-300, 40.0, 800.0]])
    value, d1, d2 = logistic_terms(m)
    s1, s2 = logistic_slopes(m)
    assert np.array_equal(logistic_value(m), value) and np.array_equal(s1, d1) and np.array_equal(s2, d2)
    loss = LogisticLoss()
    assert all(np.array_equal(a, b) for a, b in zip(loss.slopes(m), (d1, d2)))
    assert np.array_equal(loss.value(m), value)
    # against the definitions written out (log1p(e^-m), -1/(1+e^m), e^m/(1+e^m)^2) where they do not overflow
    mid = m[np.abs(m) < 30]
    np.testing.assert_allclose(s1[np.abs(m) < 30], -1.0 / (1.0 + np.exp(mid)), rtol=1e-14)
    np.testing.assert_allclose(s2[np.abs(m) < 30], np.exp(mid) / (1.0 + np.exp(mid)) ** 2, rtol=1e-13)
    np.testing.assert_allclose(value[np.abs(m) < 30], np.log1p(np.exp(-mid)), rtol=1e-14)


def test_slopes_of_a_loss_without_its_own_are_its_terms_without_the_value():
    loss = HuberHingeLoss(0.3)
    d1, d2 = loss.slopes(GRID)
    assert np.array_equal(d1, loss.deriv(GRID)) and np.array_equal(d2, loss.deriv2(GRID))

import numpy as np
import pytest

from pydpowl import CustomLoss, HuberHingeLoss, LogisticLoss
from pydpowl.engine.losses import check_loss, get_loss


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


def test_custom_loss_with_steep_derivative_is_refused():
    steep = CustomLoss(lambda m: 2 * np.maximum(0, 1 - m), lambda m: np.where(m < 1, -2.0, 0.0),
                       lambda m: np.zeros_like(m), name="double hinge")
    with pytest.raises(ValueError, match=r"\|l'\(m\)\| must be <= 1"):
        get_loss(steep)


def test_custom_loss_nonconvex_is_refused():
    bad = CustomLoss(lambda m: np.sin(m) * 0.5, lambda m: np.cos(m) * 0.5, lambda m: -np.sin(m) * 0.5)
    with pytest.raises(ValueError, match="convexity"):
        get_loss(bad)


def test_custom_loss_accepted_and_usable():
    from scipy.special import expit

    soft = CustomLoss(lambda m: np.logaddexp(0, -m), lambda m: -expit(-m),
                      lambda m: expit(m) * expit(-m), name="softplus")
    assert get_loss(soft) is soft


@pytest.mark.parametrize("bad, err", [("hinge", ValueError), (3, TypeError)])
def test_unknown_loss(bad, err):
    with pytest.raises(err, match="loss"):
        get_loss(bad)


@pytest.mark.parametrize("h", [0.0, -1.0, float("nan"), float("inf")])
def test_huber_h_must_be_positive(h):
    with pytest.raises(ValueError, match=r"huber_h must be in \(0, inf\)"):
        HuberHingeLoss(h)

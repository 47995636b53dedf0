"""Tests of pydpowl.mdp_policy_evaluation.calibration (exact Gaussian accounting).

The closed forms are checked against direct numerical integration of the
hockey-stick divergence ``int (p - e^eps q)_+``, which uses none of them.
"""

import math

import numpy as np
import pytest
from scipy import integrate, stats

from pydpowl.mdp_policy_evaluation import calibration as cal
from pydpowl.mdp_policy_evaluation.smooth_sensitivity import privacy_constants


def _hockey_stick(p_pdf, q_pdf, eps, lo, hi, points=()):
    value, _ = integrate.quad(lambda x: max(p_pdf(x) - math.exp(eps) * q_pdf(x), 0.0), lo, hi,
                              points=list(points) or None, limit=400, epsabs=1e-13, epsrel=1e-10)
    return value


def _normal_pdf(x, mean=0.0, scale=1.0):
    z = (x - mean) / scale
    return math.exp(-0.5 * z * z) / (scale * math.sqrt(2 * math.pi))


def _chi2_pdf(t, d):
    if t <= 0:
        return 0.0
    return math.exp((d / 2 - 1) * math.log(t) - t / 2 - (d / 2) * math.log(2) - math.lgamma(d / 2))


def _gaussian_pair_numeric(eps, shift, scale=1.0):
    """H_{e^eps}(N(0, 1) || N(shift, scale^2)) by quadrature."""
    return _hockey_stick(_normal_pdf, lambda x: _normal_pdf(x, shift, scale), eps,
                         -40 - 40 * scale, 40 + 40 * scale + shift, points=(0.0, shift))


# ----------------------------------------------------------------- Gaussian profile
@pytest.mark.parametrize("eps, mu", [(0.1, 0.35), (0.5, 1.0), (1.0, 0.2), (3.0, 2.5), (10.0, 4.0), (0.0, 0.7)])
def test_gaussian_delta_is_the_hockey_stick_divergence(eps, mu):
    assert cal.gaussian_delta(eps, mu) == pytest.approx(_gaussian_pair_numeric(eps, mu), rel=1e-7, abs=1e-12)


def test_gaussian_delta_grows_with_mu_and_vanishes_at_zero():
    mus = np.linspace(0.0, 6.0, 61)
    vals = [cal.gaussian_delta(1.0, m) for m in mus]
    assert vals[0] == 0.0 and all(a <= b for a, b in zip(vals, vals[1:]))
    # huge epsilon does not overflow
    assert 0.0 <= cal.gaussian_delta(800.0, 30.0) <= 1.0


# ----------------------------------------------------------------- classical and analytic mechanisms
@pytest.mark.parametrize("delta", [1e-6, 1e-3, 0.05, 0.1])
def test_classical_scale_is_the_textbook_formula_and_is_private(delta):
    for eps in (0.01, 0.1, 0.3, 0.6, 0.99):
        sigma = cal.classical_gaussian_scale(2.0, eps, delta)
        assert sigma == pytest.approx(2.0 * math.sqrt(2 * math.log(1.25 / delta)) / eps, rel=1e-14)
        assert _gaussian_pair_numeric(eps, 2.0 / sigma) <= delta


@pytest.mark.parametrize("eps", [1.0, 3.0, np.inf])
def test_classical_scale_refuses_epsilon_at_least_one(eps):
    with pytest.raises(ValueError, match=r"epsilon must be in \(0, 1\) for the classical Gaussian"):
        cal.classical_gaussian_scale(1.0, eps, 0.1)


@pytest.mark.parametrize("eps, delta", [(0.1, 0.1), (0.5, 1e-5), (1.0, 0.1), (3.0, 0.1), (10.0, 1e-6)])
def test_analytic_scale_is_exactly_calibrated(eps, delta):
    sigma = cal.analytic_gaussian_scale(3.0, eps, delta)
    achieved = _gaussian_pair_numeric(eps, 3.0 / sigma)
    assert achieved <= delta * (1 + 1e-7)
    assert achieved == pytest.approx(delta, rel=1e-6), "the smallest valid sigma attains delta"
    assert cal.gaussian_delta(eps, 3.0 / (sigma * (1 - 1e-6))) > delta, "a smaller sigma fails"
    if eps < 1:
        assert sigma < cal.classical_gaussian_scale(3.0, eps, delta)
    assert cal.analytic_gaussian_scale(0.0, eps, delta) == 0.0


# ----------------------------------------------------------------- change of scale (dilation)
def _dilation_numeric(eps, r, d):
    """H_{e^eps}(N(0, I_d) || N(0, r^2 I_d)) integrated over the density of ||z||^2."""
    p = lambda t: _chi2_pdf(t, d)  # noqa: E731
    q = lambda t: _chi2_pdf(t / r**2, d) / r**2  # noqa: E731
    hi = stats.chi2(d).isf(1e-16) * max(1.0, r) ** 2
    return _hockey_stick(p, q, eps, 0.0, hi, points=(d, d * r**2))


@pytest.mark.parametrize("d", [1, 3, 40])
@pytest.mark.parametrize("eps, b", [(0.05, 0.02), (0.3, 0.1), (1.0, 0.4), (0.0, 0.05)])
def test_dilation_delta_matches_quadrature_and_sits_at_an_end(d, eps, b):
    ends = max(_dilation_numeric(eps, math.exp(b), d), _dilation_numeric(eps, math.exp(-b), d))
    assert cal.dilation_delta(eps, b, d) == pytest.approx(ends, rel=1e-6, abs=1e-12)
    inner = [_dilation_numeric(eps, math.exp(x), d) for x in np.linspace(-b, b, 7)[1:-1]]
    assert max(inner) <= ends + 1e-12, "the supremum over the scale range is at one of its ends"


def test_dilation_delta_handles_extreme_ratios():
    assert cal.dilation_delta(1.0, 0.0, 5) == 0.0
    assert 0.9 < cal.dilation_delta(1.0, 500.0, 5) <= 1.0
    assert cal.dilation_delta(5.0, 0.01, 40) < 1e-20


# ----------------------------------------------------------------- smooth-sensitivity certificate
@pytest.mark.parametrize("eps, alpha, beta", [(1.0, 2.0, 0.4), (0.5, 4.0, 0.2), (3.0, 0.8, 1.0)])
def test_certificate_bounds_every_admissible_pair_in_one_dimension(eps, alpha, beta):
    """Exact divergences of N(0,1) vs N(t, r^2) with |t| <= min(1, r)/alpha, |log r| <= beta/2."""
    cert = cal.smooth_gaussian_delta(eps, alpha, beta, 1)
    assert 1e-4 < cert < 1, "pick constants where the certificate is informative"
    b = beta / 2
    worst = 0.0
    for log_r in np.linspace(-b, b, 5):
        r = math.exp(log_r)
        for frac in (0.0, 0.5, 1.0):
            t = frac * min(1.0, r) / alpha
            forward = _gaussian_pair_numeric(eps, t, r)
            # the other direction, rescaled so that the first Gaussian is standard
            backward = _gaussian_pair_numeric(eps, -t / r, 1 / r)
            worst = max(worst, forward, backward)
    assert worst <= cert, f"true delta {worst:.4g} above the certificate {cert:.4g}"
    assert worst >= 0.2 * cert, f"certificate {cert:.4g} far above the worst pair {worst:.4g}"


@pytest.mark.parametrize("d", [1, 5, 40, 200])
@pytest.mark.parametrize("delta", [1e-5, 0.01, 0.1])
def test_lemma_constants_are_certified_for_epsilon_up_to_one(d, delta):
    for eps in (0.01, 0.1, 0.5, 1.0):
        alpha, beta = privacy_constants(eps, delta, d)
        assert cal.smooth_gaussian_delta(eps, alpha, beta, d) <= delta


def test_lemma_constants_beyond_one_are_certified_on_the_experiment_grid_only():
    for eps in (3.0, 10.0):  # the reference experiment: d = 40 (tabular, N = 40), delta = 0.1
        alpha, beta = privacy_constants(eps, 0.1, 40)
        assert cal.smooth_gaussian_delta(eps, alpha, beta, 40) <= 0.1
    alpha, beta = privacy_constants(30.0, 0.1, 1)  # but not for every epsilon and d
    assert cal.smooth_gaussian_delta(30.0, alpha, beta, 1) > 0.1


def test_certificate_without_smoothing_is_the_gaussian_profile():
    assert cal.smooth_gaussian_delta(0.7, 3.0, 0.0, 10) == pytest.approx(cal.gaussian_delta(0.7, 1 / 3.0), rel=1e-12)


@pytest.mark.parametrize(
    "call, exc, pattern",
    [
        (lambda: cal.gaussian_delta(-1.0, 1.0), ValueError, r"epsilon must be in \[0, inf\), got epsilon=-1.0"),
        (lambda: cal.gaussian_delta(1.0, np.nan), ValueError, r"mu must be in \[0, inf\)"),
        (lambda: cal.analytic_gaussian_scale(1.0, 0.0, 0.1), ValueError, r"epsilon must be in \(0, inf\)"),
        (lambda: cal.analytic_gaussian_scale(-1.0, 1.0, 0.1), ValueError, r"sensitivity must be in \[0, inf\)"),
        (lambda: cal.analytic_gaussian_scale(1.0, 1.0, 1.0), ValueError, r"delta must be in \(0, 1\)"),
        (lambda: cal.smooth_gaussian_delta(1.0, 0.0, 0.1, 3), ValueError, r"alpha must be in \(0, inf\)"),
        (lambda: cal.smooth_gaussian_delta(1.0, 1.0, 0.1, 0), ValueError, r"n_features must be an integer >= 1"),
        (lambda: cal.dilation_delta(1.0, "x", 3), TypeError, r"log_ratio must be a real number"),
    ],
)
def test_bad_arguments_are_named(call, exc, pattern):
    with pytest.raises(exc, match=pattern):
        call()

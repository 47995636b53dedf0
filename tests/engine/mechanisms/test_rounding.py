"""pydpowl.engine.mechanisms.rounding: the release grid, the exact-sum rounding and its delta."""

import math

import numpy as np
import pytest


def _exact_rounded_sum(theta, noise, grid):
    from fractions import Fraction

    out = []
    for t, b in zip(theta, noise):
        q = (Fraction(t) + Fraction(b)) / Fraction(grid)
        lo = q.numerator // q.denominator
        frac = q - lo
        up = 1 if frac > Fraction(1, 2) else 0 if frac < Fraction(1, 2) else lo % 2
        out.append(float((lo + up) * Fraction(grid)))
    return np.array(out)


def test_release_is_the_exact_sum_rounded_to_the_grid():
    """Item 7: round(theta + b) of the real sum, computed without the float sum's rounding."""
    from pydpowl.engine.mechanisms import round_release

    rng = np.random.default_rng(0)
    grid = 2.0 ** -12
    theta = np.r_[rng.normal(size=400) * 10 ** rng.uniform(-6, 3, 400), 0.0, 1.0, -3.5]
    noise = np.r_[rng.normal(size=400) * 10 ** rng.uniform(-8, 2, 400), 0.0, 2.0 ** -13, -2.0 ** -13]
    # adversarial: sums one ulp around half-way points, and a tiny noise below the sum's ulp
    mid = (np.arange(40) + 0.5) * grid
    theta = np.r_[theta, mid, mid, 1e3 + 0.5 * grid, 0.3]
    noise = np.r_[noise, np.full(40, 1e-30), np.full(40, -1e-30), 1e-20, 2.0 ** -60]
    got = round_release(theta, noise, grid=grid)
    np.testing.assert_array_equal(got, _exact_rounded_sum(theta, noise, grid))
    assert np.all(np.round(got / grid) * grid == got)


def test_release_grid_is_a_power_of_two_tied_to_the_noise_scale():
    from pydpowl.engine.mechanisms import RELEASE_GRID_BITS, release_grid

    for lam in (1e-3, 0.3, 1.0, 2.0, 7.5, 1e4):
        g = release_grid(sensitivity=lam, epsilon=1.0)
        assert g == 2.0 ** round(math.log2(g))
        assert lam * 2.0 ** -(RELEASE_GRID_BITS + 1) < g <= lam * 2.0 ** -RELEASE_GRID_BITS
    assert release_grid(sensitivity=1.0, epsilon=math.inf) is None


def test_finite_release_grid_is_release_grid_and_refuses_an_infinite_epsilon():
    from pydpowl.engine.mechanisms import finite_release_grid, release_grid

    for lam, eps in ((1e-3, 0.5), (2.0, 1.0), (7.5, 3.0)):
        assert finite_release_grid(sensitivity=lam, epsilon=eps) == release_grid(sensitivity=lam, epsilon=eps)
    with pytest.raises(ValueError, match="finite epsilon, got epsilon=inf"):
        finite_release_grid(sensitivity=1.0, epsilon=math.inf)


def test_floating_point_delta_is_small_and_grows_with_the_grid_resolution():
    from pydpowl.engine.mechanisms import floating_point_delta

    d5 = floating_point_delta(epsilon=1.0, dim=5, grid=2.0 ** -11, noise_scale=1.0)
    assert 0 < d5 < 1e-7
    finer = floating_point_delta(epsilon=1.0, dim=5, grid=2.0 ** -21, noise_scale=1.0)
    assert finer > 100 * d5
    assert floating_point_delta(epsilon=1.0, dim=20, grid=2.0 ** -11, noise_scale=1.0) > d5


def _size_biased_marginal(x, d):
    """psi(x) = int ||(x, y)|| f(x, y) dy for the noise density f = exp(-||b||) / (S_{d-1} Gamma(d)) (lambda = 1)."""
    from scipy import integrate

    def sphere(k):
        return 2 * math.pi ** (k / 2) / math.gamma(k / 2)

    norm = sphere(d) * math.gamma(d)
    if d == 2:
        return 2 * integrate.quad(lambda y: math.hypot(x, y) * math.exp(-math.hypot(x, y)), 0, np.inf)[0] / norm
    return integrate.quad(lambda r: sphere(d - 1) * r ** (d - 2) * math.hypot(x, r) * math.exp(-math.hypot(x, r)),
                          0, np.inf)[0] / norm


@pytest.mark.parametrize("d", [2, 3, 5])
def test_constants_of_the_floating_point_bound(d):
    """docs/privacy_audit.md: integral of psi is E||b|| = d lambda; for d >= 3 psi decreases from psi(0) = c_d;
    for d = 2 it rises a little then falls (unimodal) and stays below the bound 1 used there."""
    xs = np.linspace(0.0, 12.0, 121)
    psi = np.array([_size_biased_marginal(x, d) for x in xs])
    assert 2 * np.trapz(psi, xs) == pytest.approx(d, rel=5e-3)
    c_d = math.gamma(d / 2) / (math.sqrt(math.pi) * math.gamma((d - 1) / 2))
    assert psi[0] == pytest.approx(c_d, rel=1e-9)
    if d >= 3:
        assert np.all(np.diff(psi) <= 1e-12)
    else:
        top = int(np.argmax(psi))
        assert np.all(np.diff(psi[: top + 1]) >= 0) and np.all(np.diff(psi[top:]) <= 0) and psi.max() < 1.0


def test_numpy_gamma_is_marsaglia_tsang_on_its_normals_and_53_bit_uniforms():
    """The sampler model's premise for the default stream: numpy's Generator.gamma(d >= 2) is r = b (1 + cX)^3
    from one standard_normal X and one random() U per try (so a normal's error moves r as the model bounds)."""
    for d in (2, 5, 20):
        a, m = np.random.default_rng(d), np.random.default_rng(d)
        b = d - 1.0 / 3.0
        c = 1.0 / math.sqrt(9.0 * b)
        for _ in range(2000):
            while True:
                X = m.standard_normal()
                V = 1.0 + c * X
                if V <= 0.0:
                    continue
                V = V * V * V
                U = m.random()
                if U < 1.0 - 0.0331 * (X * X) * (X * X) or math.log(U) < 0.5 * X * X + b * (1.0 - V + math.log(V)):
                    break
            assert a.gamma(d) == b * V


def test_r_gamma_model_matches_the_replica_and_raises_the_r_streams_delta():
    """Review 21.4(b): R's GD takes p_late of its draws from the step-8 loop (32-bit uniforms); the quadrature's
    p_late agrees with R's algorithm (the replica, bitwise R's) and the R stream's delta is far above numpy's."""
    from pydpowl import RRandom
    from pydpowl.engine.mechanisms.rounding import floating_point_delta, r_gamma_radius_model
    from pydpowl.rrandom._gamma import _gd_unscaled

    p_late, relative, flips = r_gamma_radius_model(5)
    stream = RRandom(11)._stream
    n = 40000
    late = sum(_gd_unscaled(stream, 5.0)[1] for _ in range(n))
    assert abs(late / n - p_late) < 4 * math.sqrt(p_late * (1 - p_late) / n)
    assert 0.03 < p_late < 0.037 and relative > 1000 * 2.0 ** -53 and flips < 1e-8
    numpy_delta = floating_point_delta(epsilon=1.0, dim=5, grid=2.0 ** -11, noise_scale=1.0)
    r_delta = floating_point_delta(epsilon=1.0, dim=5, grid=2.0 ** -11, noise_scale=1.0, stream="R")
    assert 3e-9 < numpy_delta < 1e-8 and 1e-6 < r_delta < 2e-5
    with pytest.raises(ValueError, match="stream must be one of"):
        floating_point_delta(epsilon=1.0, dim=5, grid=2.0 ** -11, noise_scale=1.0, stream="mt")

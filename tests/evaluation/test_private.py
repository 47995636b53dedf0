"""Tests of pydpowl.evaluation.private: the private value of a rule and its intervals."""

import math

import numpy as np
import pytest
from scipy import stats

from pydpowl.evaluation.private import CELLS, cell_sums, noise_quantile, private_value, release_grid


def _normal_laplace_cdf_reference(x, s, b):
    # closed form of P(N(0, s^2) + Laplace(b) <= x), written out here independently of the module
    return (stats.norm.cdf(x / s) - 0.5 * np.exp(s * s / (2 * b * b) - x / b) * stats.norm.cdf(x / s - s / b)
            + 0.5 * np.exp(s * s / (2 * b * b) + x / b) * stats.norm.cdf(-x / s - s / b))


@pytest.mark.parametrize("s, b", [(1.0, 1.0), (0.2, 3.0), (3.0, 0.2)])
@pytest.mark.parametrize("p", [0.9, 0.975, 0.995])
def test_quantile_of_normal_plus_laplace_solves_the_closed_form(s, b, p):
    q = noise_quantile(p, sd=s, laplace_scales=[b])
    assert _normal_laplace_cdf_reference(q, s, b) == pytest.approx(p, abs=1e-10)


def test_quantile_limits_normal_and_laplace():
    assert noise_quantile(0.975, sd=2.0) == pytest.approx(2.0 * 1.959963985, rel=1e-8)
    assert noise_quantile(0.99, laplace_scales=[3.0]) == pytest.approx(-3.0 * math.log(0.02), rel=1e-12)
    # two equal Laplace(b): P(X > x) = exp(-x/b) (1 + x/(2b)) / 2
    q = noise_quantile(0.99, laplace_scales=[1.5, 1.5])
    assert 0.5 * math.exp(-q / 1.5) * (1 + q / 3.0) == pytest.approx(0.01, rel=1e-8)
    # two different Laplace: P(X > x) = (b1^2 e^{-x/b1} - b2^2 e^{-x/b2}) / (2 (b1^2 - b2^2))
    q = noise_quantile(0.995, laplace_scales=[1.0, 3.0])
    assert (9 * math.exp(-q / 3) - math.exp(-q)) / 16 == pytest.approx(0.005, rel=1e-8)


@pytest.mark.parametrize("sd, scales", [(0.5, [1.0, 1.0]), (0.3, [1.0, 2.0]), (2.0, [0.1, 0.05])])
def test_quantile_of_normal_plus_two_laplace_matches_monte_carlo(sd, scales):
    rng = np.random.default_rng(7)
    N = 2_000_000
    x = sd * rng.standard_normal(N) + rng.laplace(0, scales[0], N) + rng.laplace(0, scales[1], N)
    for p in (0.975, 0.99):
        assert noise_quantile(p, sd=sd, laplace_scales=scales) == pytest.approx(np.quantile(x, p), rel=5e-3)


@pytest.mark.parametrize("kwargs, match", [
    (dict(prob=0.4), "prob must be in"), (dict(prob=1.0), "prob must be in"),
    (dict(prob=0.9, sd=-1.0), "sd must be in"), (dict(prob=0.9), "needs sd > 0"),
    (dict(prob=0.9, laplace_scales=[1, 1, 0.0]), "laplace_scales"),
    (dict(prob=0.9, laplace_scales=[0.0]), "laplace_scales"),
])
def test_quantile_refuses_bad_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        noise_quantile(**kwargs)


def _trial(rng, n, p_plus=2 / 3):
    x = rng.uniform(-1, 1, n)
    A = np.where(rng.random(n) < p_plus, 1.0, -1.0)
    B = 4 + 0.5 * A * x + 0.7 * rng.standard_normal(n)  # V(+1) = V(-1) = 4; sign(x) has value 4.25
    return x, A, B, np.where(A > 0, p_plus, 1 - p_plus)


def test_estimates_are_the_centred_horvitz_thompson_sums_when_the_noise_vanishes():
    rng = np.random.default_rng(1)
    x, A, B, p = _trial(rng, 500)
    d = np.where(x > 0, 1.0, -1.0)
    res = private_value(d, A, B, p, benefit_bounds=(0, 9), propensity_floor=(2 / 3, 1 / 3), epsilon_mean=1e9,
                        epsilon_variance=1e9, rng=rng)
    c = 4.5
    s = (np.clip(B, 0, 9) - c) / p
    assert res.value.estimate == pytest.approx(c + np.mean((A == d) * s), abs=1e-6)
    assert res.versus_plus.estimate == pytest.approx(np.mean((d < 0) * np.where(A < 0, s, -s)), abs=1e-6)
    assert res.versus_minus.estimate == pytest.approx(np.mean((d > 0) * np.where(A > 0, s, -s)), abs=1e-6)
    assert res.difference.estimate == min(res.versus_plus.estimate, res.versus_minus.estimate)
    assert res.epsilon == 2e9


def test_cell_releases_have_the_claimed_sensitivity():
    # replacing one record changes sum_k |S_k - S'_k| / b_k by at most epsilon_mean (and the same for Q)
    rng = np.random.default_rng(2)
    lo, hi, floors = 0.0, 9.0, (2 / 3, 1 / 3)
    x, A, B, p = _trial(rng, 40)
    d = np.where(x > 0, 1.0, -1.0)
    S, Q, h = cell_sums(d, A, B, p, benefit_bounds=(lo, hi), propensity_floor=floors)
    worst_s = worst_q = 0.0
    for j in range(400):
        d2, A2, B2, p2 = d.copy(), A.copy(), B.copy(), p.copy()
        k = j % 40
        A2[k] = rng.choice([-1.0, 1.0])
        d2[k] = rng.choice([-1.0, 1.0])
        B2[k] = rng.choice([lo - 5, lo, hi, hi + 5, rng.uniform(lo, hi)])
        p2[k] = floors[0] if A2[k] > 0 else floors[1]
        S2, Q2, _ = cell_sums(d2, A2, B2, p2, benefit_bounds=(lo, hi), propensity_floor=floors)
        worst_s = max(worst_s, np.sum(np.abs(S - S2) / (2 * h)))   # b_k = 2 h_k / eps
        worst_q = max(worst_q, np.sum(np.abs(Q - Q2) / (2 * h ** 2)))  # b_k = 2 h_k^2 / eps
    assert worst_s <= 1 + 1e-12 and worst_q <= 1 + 1e-12
    # the bound is attained: s = +h_+ in cell (+1, +1) replaced by s = -h_- in cell (-1, +1)
    A[0], d[0], B[0], p[0] = 1.0, 1.0, hi, floors[0]
    S, _, _ = cell_sums(d, A, B, p, benefit_bounds=(lo, hi), propensity_floor=floors)
    A[0], B[0], p[0] = -1.0, lo, floors[1]
    S2, _, _ = cell_sums(d, A, B, p, benefit_bounds=(lo, hi), propensity_floor=floors)
    assert np.sum(np.abs(S - S2) / (2 * h)) == pytest.approx(1.0)


def test_released_numbers_lie_on_their_grid():
    rng = np.random.default_rng(3)
    x, A, B, p = _trial(rng, 300)
    res = private_value(np.where(x > 0, 1, -1), A, B, p, benefit_bounds=(0, 9), propensity_floor=(2 / 3, 1 / 3),
                        epsilon_mean=0.7, epsilon_variance=0.3, rng=rng)
    for values, scales in ((res.first_moments, res.first_scales), (res.second_moments, res.second_scales)):
        for v, b in zip(values, scales):
            g = release_grid(b)
            assert v / g == np.round(v / g) and b * 2 ** -11 < g <= b * 2 ** -10


@pytest.mark.parametrize("n, eps", [(400, 1.0), (3000, 0.5)])
def test_intervals_cover_the_truth(n, eps):
    rng = np.random.default_rng(int(n * eps))
    hits_v = hits_d = 0
    reps = 300
    for _ in range(reps):
        x, A, B, p = _trial(rng, n)
        res = private_value(np.where(x > 0, 1, -1), A, B, p, benefit_bounds=(0, 9), propensity_floor=(2 / 3, 1 / 3),
                            epsilon_mean=0.7 * eps, epsilon_variance=0.3 * eps, rng=rng)
        hits_v += res.value.ci_low <= 4.25 <= res.value.ci_high
        hits_d += res.difference.ci_low <= 0.25 <= res.difference.ci_high
    # nominal 0.95; with 300 replications a coverage of 0.95 falls below 0.92 with probability < 0.01
    assert hits_v / reps >= 0.92 and hits_d / reps >= 0.92, (hits_v, hits_d)


def test_interval_is_not_vacuous_with_a_large_sample_and_budget():
    rng = np.random.default_rng(4)
    x, A, B, p = _trial(rng, 20000)
    res = private_value(np.where(x > 0, 1, -1), A, B, p, benefit_bounds=(0, 9), propensity_floor=(2 / 3, 1 / 3),
                        epsilon_mean=3.5, epsilon_variance=1.5, rng=rng)
    assert res.value.width < 0.1 and res.value.ci_low <= 4.25 <= res.value.ci_high


def test_propensity_below_its_public_floor_is_refused():
    rng = np.random.default_rng(5)
    x, A, B, p = _trial(rng, 50)
    p[A > 0] = 0.5  # below the claimed floor 2/3 of arm +1
    with pytest.raises(ValueError, match=r"propensity_received must lie in \[floor .*2/3|0\.666667 for \+1"):
        private_value(np.where(x > 0, 1, -1), A, B, p, benefit_bounds=(0, 9), propensity_floor=(2 / 3, 1 / 3),
                      epsilon_mean=1, epsilon_variance=1, rng=rng)


@pytest.mark.parametrize("kwargs, match", [
    (dict(benefit_bounds=(9, 0)), "lower < upper"), (dict(benefit_bounds=(0, np.inf)), r"benefit_bounds\[1\]"),
    (dict(propensity_floor=(0.0, 0.5)), r"propensity_floor\[0\]"), (dict(epsilon_mean=0.0), "epsilon_mean"),
    (dict(level=1.0), "level"), (dict(epsilon_variance=np.inf), "epsilon_variance"),
])
def test_bad_settings_are_named(kwargs, match):
    rng = np.random.default_rng(6)
    x, A, B, p = _trial(rng, 50)
    settings = dict(benefit_bounds=(0, 9), propensity_floor=(1 / 3, 1 / 3), epsilon_mean=1.0, epsilon_variance=1.0)
    settings.update(kwargs)
    with pytest.raises(ValueError, match=match):
        private_value(np.where(x > 0, 1, -1), A, B, p, rng=rng, **settings)


def test_cells_are_in_the_documented_order():
    assert CELLS == ((1, 1), (1, -1), (-1, 1), (-1, -1))


@pytest.mark.parametrize("sd, scales", [(0.0415, (9.7e-11, 1.9e-10)), (50.0, (1e-3,)), (1e-6, (3.0,))])
def test_noise_quantile_holds_when_one_part_dwarfs_the_other(sd, scales):
    """A Laplace scale many orders below the normal part (a large value budget) made the closed-form
    cdf overflow (exp(r^2/2) with r = sd/b ~ 4e8) and the quantile search fail; the quantile must tend
    to the dominant part's."""
    from scipy import stats

    q = noise_quantile(0.98, sd=sd, laplace_scales=scales)
    if sd > 1e3 * sum(scales):
        assert q == pytest.approx(sd * stats.norm.ppf(0.98) + sum(scales) * 5, abs=sum(scales) * 5)
    else:
        assert q == pytest.approx(stats.laplace.ppf(0.98, scale=scales[0]), rel=1e-5)


def test_release_rounds_the_exact_sum_not_the_floating_point_sum():
    """Review 21.4(a): fl(S + L) rounded to the grid is not the exact sum rounded. Here S + L lies just above a
    midpoint of the grid, but fl(S + L) falls on the midpoint itself (the float's spacing is g / 8) and rounds
    half to even, one grid step below the exact rounding."""
    from fractions import Fraction

    from pydpowl.evaluation import private as value_estimate

    b = 3.0
    g = release_grid(b)
    S = np.array([2.0 ** 49 * g])
    L = 0.5 * g + 2.0 ** -10 * g

    class FixedLaplace:
        def laplace(self, loc, scale):
            return np.full(np.shape(scale), L)

    got = value_estimate._release(S, np.array([b]), FixedLaplace())
    exact = (Fraction(float(S[0])) + Fraction(L)) / Fraction(g)
    nearest = round(exact)  # Fraction rounds half to even, and exact is not a midpoint
    assert float(exact - int(exact)) > 0.5 and got[0] == float(nearest * Fraction(g))

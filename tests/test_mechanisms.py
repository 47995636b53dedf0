import math

import numpy as np
import pytest
from scipy import stats

from pydpowl.engine.mechanisms import (
    is_r_stream,
    noise_rate,
    output_sensitivity,
    sample_output_noise,
    sample_output_noise_batch,
)

ALPHA = 1e-3  # KS tests with fixed seeds: fail if p < 0.001


EXACT = dict(n_samples=10, tol=0.0)  # an exact minimiser: no tolerance term


def test_sensitivity_formula():
    assert output_sensitivity(gamma=4.0, weights_upper_bound=3.0, C=2.0, **EXACT) == pytest.approx((2.0 + 6.0) / 4.0)
    assert output_sensitivity(gamma=75.0, weights_upper_bound=1.0, **EXACT) == pytest.approx(2.0 / 75.0)


def test_rate_without_tolerance_term_uses_dppack_operation_order():
    # DPpack: beta <- gamma*eps/(2*weights.upper.bound); L = 1, C = 0 and tol = 0 add exact operations only
    gamma, eps, w = 75.0, 0.3, np.log(24 * 365) / (1 / 3)
    assert noise_rate(epsilon=eps, gamma=gamma, weights_upper_bound=w, **EXACT) == gamma * eps / (2 * w)
    assert noise_rate(epsilon=np.inf, gamma=gamma, weights_upper_bound=w, **EXACT) == np.inf


@pytest.mark.parametrize("kwargs, match", [
    (dict(gamma=0.0, weights_upper_bound=1.0), r"gamma must be in \(0, inf\)"),
    (dict(gamma=1.0, weights_upper_bound=-2.0), r"weights_upper_bound must be in \(0, inf\)"),
    (dict(gamma=1.0, weights_upper_bound=1.0, C=-1.0), r"C must be in \[0, inf\)"),
    (dict(gamma=1.0, weights_upper_bound=1.0, C=float("nan")), r"C must be in \[0, inf\)"),
    (dict(gamma=1.0, weights_upper_bound=1.0, lipschitz=0.0), r"lipschitz must be in \(0, inf\)"),
    (dict(gamma=1.0, weights_upper_bound=1.0, tol=-1e-3), r"tol must be in \[0, inf\)"),
    (dict(gamma=1.0, weights_upper_bound=1.0, n_samples=-1), r"n_samples must be an integer >= 0"),
])
def test_bad_sensitivity_inputs(kwargs, match):
    with pytest.raises(ValueError, match=match):
        output_sensitivity(**{**EXACT, **kwargs})


@pytest.mark.parametrize("eps", [0.0, -1.0, float("nan")])
def test_bad_epsilon(eps):
    with pytest.raises(ValueError, match=r"epsilon must be in \(0, inf\]"):
        noise_rate(epsilon=eps, gamma=1.0, weights_upper_bound=1.0, **EXACT)


def test_epsilon_as_string_is_type_error():
    with pytest.raises(TypeError, match="epsilon must be a real number"):
        noise_rate(epsilon="1", gamma=1.0, weights_upper_bound=1.0, **EXACT)


@pytest.mark.parametrize("d, rate", [(1, 2.0), (5, 0.7), (12, 30.0)])
def test_norm_is_gamma_and_direction_uniform(d, rate):
    rng = np.random.default_rng(20240 + d)
    draws = np.array([sample_output_noise(d, rate, rng=rng) for _ in range(4000)])
    norms = np.linalg.norm(draws, axis=1)
    ks = stats.kstest(norms, stats.gamma(a=d, scale=1.0 / rate).cdf)
    assert ks.pvalue > ALPHA, f"KS of noise norms vs Gamma({d}, rate={rate}): D={ks.statistic:.4f}, p={ks.pvalue:.2e} <= {ALPHA}"
    if d >= 2:
        u = draws[:, 0] / norms
        law = stats.beta((d - 1) / 2, (d - 1) / 2)
        ks = stats.kstest((u + 1) / 2, law.cdf)
        assert ks.pvalue > ALPHA, f"KS of (u1+1)/2 vs Beta({(d-1)/2}, {(d-1)/2}): D={ks.statistic:.4f}, p={ks.pvalue:.2e} <= {ALPHA}"
    else:
        signs = np.sign(draws[:, 0])
        binom = stats.binomtest(int((signs > 0).sum()), len(signs))
        assert binom.pvalue > ALPHA, f"sign test of 1-d direction: p={binom.pvalue:.2e} <= {ALPHA}"


def test_batch_has_the_same_law():
    rng = np.random.default_rng(7)
    batch = sample_output_noise_batch(5, 1.3, 5000, rng=rng)
    ks = stats.kstest(np.linalg.norm(batch, axis=1), stats.gamma(a=5, scale=1 / 1.3).cdf)
    assert ks.pvalue > ALPHA, f"KS of batch norms: D={ks.statistic:.4f}, p={ks.pvalue:.2e} <= {ALPHA}"
    u = batch[:, 2] / np.linalg.norm(batch, axis=1)
    ks = stats.kstest((u + 1) / 2, stats.beta(2, 2).cdf)
    assert ks.pvalue > ALPHA, f"KS of batch direction coordinate vs Beta(2,2): p={ks.pvalue:.2e} <= {ALPHA}"


def test_infinite_rate_gives_no_noise():
    rng = np.random.default_rng(0)
    assert np.array_equal(sample_output_noise(4, np.inf, rng=rng), np.zeros(4))
    assert np.array_equal(sample_output_noise_batch(4, np.inf, 3, rng=rng), np.zeros((3, 4)))


def test_numpy_draw_order_is_norm_then_direction():
    seed = 99
    noise = sample_output_noise(3, 2.0, rng=np.random.default_rng(seed))
    rng = np.random.default_rng(seed)
    radius = rng.gamma(shape=3, scale=0.5)
    z = rng.standard_normal(3)
    np.testing.assert_allclose(noise, radius * z / np.linalg.norm(z), rtol=1e-15)


class FakeRStream:
    """Records the order of calls, like R's stream would consume them."""

    def __init__(self):
        self.calls = []

    def rgamma(self, n, shape, rate=1.0):
        self.calls.append(("rgamma", n, shape, rate))
        return np.array([2.0])

    def rnorm(self, n):
        self.calls.append(("rnorm", n))
        return np.array([3.0, 4.0])


def test_r_stream_draws_rgamma_then_rnorm_like_dppack():
    fake = FakeRStream()
    assert is_r_stream(fake) and not is_r_stream(np.random.default_rng(0))
    noise = sample_output_noise(2, 0.5, rng=fake)
    assert fake.calls == [("rgamma", 1, 2, 0.5), ("rnorm", 2)]
    np.testing.assert_allclose(noise, [2.0 * 3 / 5, 2.0 * 4 / 5])


# ------------------------------------------------------------------ privacy review: Delta terms, safe releases

def test_sensitivity_with_lipschitz_constant_and_solver_tolerance():
    """Delta = (L (C + 2W) + 2 n tol) / gamma (items 5 and 8)."""
    got = output_sensitivity(gamma=4.0, weights_upper_bound=3.0, C=2.0, lipschitz=1.5, n_samples=1000, tol=1e-4)
    assert got == pytest.approx((1.5 * (2.0 + 6.0) + 2 * 1000 * 1e-4) / 4.0, rel=1e-15)
    assert noise_rate(epsilon=0.5, gamma=4.0, weights_upper_bound=3.0, C=2.0, lipschitz=1.5, n_samples=1000,
                      tol=1e-4) == pytest.approx(0.5 / got, rel=1e-15)
    with pytest.raises(TypeError):
        output_sensitivity(gamma=4.0, weights_upper_bound=3.0)  # n and tol must be stated


def _exact_rounded_sum(theta, noise, grid):
    from fractions import Fraction

    out = []
    for t, b in zip(theta, noise):
        q = (Fraction(t) + Fraction(b)) / Fraction(grid)
        lo = q.numerator // q.denominator
        frac = q - lo
        out.append(float((lo + (1 if frac > Fraction(1, 2) else 0 if frac < Fraction(1, 2) else lo % 2)) * Fraction(grid)))
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


# ------------------------------------------------------------------ objective perturbation, KST, smoothing, EM


from pydpowl import RRandom  # noqa: E402
from pydpowl.engine.mechanisms import (  # noqa: E402
    cms_calibration,
    exponential_mechanism,
    kst_calibration,
    sample_isotropic_gaussian,
    sample_kst_noise,
    smoothing_rate,
    smoothing_share,
)


def test_cms_calibration_without_extra_curvature():
    # c = 1 (h = 0.5), gamma = 2: eps' = eps - log(1 + 1 + 1/4) = eps - log(2.25)
    cal = cms_calibration(epsilon=2.0, gamma=2.0, c=1.0, n=100)
    assert cal.epsilon_prime == pytest.approx(2.0 - math.log(2.25), rel=1e-15)
    assert cal.Delta == 0.0 and cal.rate == cal.epsilon_prime / 2


def test_cms_calibration_with_extra_curvature():
    # eps = 0.5, c = 1, gamma = 1: eps - log(4) < 0, so Delta = c/(n(e^{eps/4} - 1)) - gamma/n and eps' = eps/2
    n = 50
    cal = cms_calibration(epsilon=0.5, gamma=1.0, c=1.0, n=n)
    assert cal.epsilon_prime == 0.25 and cal.rate == 0.125
    assert cal.Delta == pytest.approx(1.0 / (n * (math.exp(0.125) - 1.0)) - 1.0 / n, rel=1e-15)
    # then (gamma/n + Delta) n = c / (e^{eps/4} - 1): log(1 + c / (n (Lambda + Delta)))^2 = eps/2 exactly
    lam = 1.0 / n + cal.Delta
    assert 2 * math.log(1 + 1.0 / (n * lam)) == pytest.approx(0.25, rel=1e-12)


def test_cms_calibration_infinite_epsilon():
    cal = cms_calibration(epsilon=math.inf, gamma=1.0, c=0.25, n=10)
    assert cal.Delta == 0.0 and cal.rate == math.inf


@pytest.mark.parametrize("p", [1, 2, 5])
def test_kst_constants(p):
    cal = kst_calibration(epsilon=2.0, delta=0.0, p=p)
    assert cal.zeta == pytest.approx(2 * p ** 1.5, rel=1e-15) and cal.lam == p
    assert cal.Delta == pytest.approx(p, rel=1e-15) and cal.rate == pytest.approx(2.0 / (2 * cal.zeta), rel=1e-15)
    g = kst_calibration(epsilon=2.0, delta=1e-3, p=p)
    assert g.variance == pytest.approx(cal.zeta ** 2 * (8 * math.log(2e3) + 8.0) / 4.0, rel=1e-14)


def test_kst_refuses_infinite_epsilon_with_delta_and_bad_delta():
    with pytest.raises(ValueError, match="epsilon=inf with delta > 0"):
        kst_calibration(epsilon=math.inf, delta=0.1, p=2)
    for bad in (-0.1, 1.0, float("nan"), "0"):
        with pytest.raises(ValueError, match=r"delta must be in \[0, 1\)"):
            kst_calibration(epsilon=1.0, delta=bad, p=2)


def test_kst_noise_for_infinite_epsilon_draws_like_dppack_and_is_zero():
    fake = FakeRStream()
    cal = kst_calibration(epsilon=math.inf, delta=0.0, p=2)
    assert np.array_equal(sample_kst_noise(cal, rng=fake), np.zeros(2))
    assert fake.calls == [("rgamma", 1, 2, math.inf), ("rnorm", 2)]


def test_isotropic_gaussian_law():
    rng = np.random.default_rng(3)
    draws = np.array([sample_isotropic_gaussian(3, 4.0, rng=rng) for _ in range(4000)])
    for j in range(3):
        assert stats.kstest(draws[:, j], stats.norm(scale=2.0).cdf).pvalue > ALPHA


def test_isotropic_gaussian_from_r_stream_is_a_signed_permutation_of_rnorm():
    """MASS::mvrnorm rotates rnorm(p) by eigen(Sigma)$vectors: for Sigma = s I a signed permutation."""
    for p in (1, 2, 3, 6):
        b = sample_isotropic_gaussian(p, 2.25, rng=RRandom(4))
        z = RRandom(4).rnorm(p)
        assert np.allclose(np.sort(np.abs(b)), np.sort(np.abs(1.5 * z)), rtol=0, atol=0)


def test_smoothing_share_and_rate():
    # kappa = sqrt(r n mu / s); with r = tol / mu that is sqrt(n tol / s)
    assert smoothing_share(n=20000, tol=1e-10, error_radius=1e-10 / 1e-4, strong_convexity=1e-4,
                           gradient_sensitivity=2.0) == pytest.approx(math.sqrt(20000 * 1e-10 / 2), rel=1e-12)
    assert smoothing_share(n=10 ** 12, tol=1.0, error_radius=1.0, strong_convexity=1.0, gradient_sensitivity=2.0) == 0.5
    assert smoothing_rate(epsilon=0.5, error_radius=0.25) == 1.0
    with pytest.raises(ValueError, match="error_radius"):
        smoothing_rate(epsilon=1.0, error_radius=0.0)


def test_exponential_mechanism_frequencies():
    rng = np.random.default_rng(0)
    scores = np.array([0.0, -1.0, -3.0, -3.0])
    draws = np.bincount([exponential_mechanism(scores, epsilon=1.0, sensitivity=0.5, rng=rng)
                         for _ in range(20000)], minlength=4)
    p = np.exp(scores) / np.exp(scores).sum()  # exp(eps s / (2 sens)) = exp(s)
    assert stats.chisquare(draws, 20000 * p).pvalue > ALPHA


def test_exponential_mechanism_inverts_one_uniform():
    class OneUniform:
        def __init__(self, u):
            self.u = u

        def uniform(self):
            return self.u
    # probabilities 1/2, 1/4, 1/4 -> cumulative 0.5, 0.75, 1
    scores = [2 * math.log(2.0), 0.0, 0.0]  # eps = 1, sens = 1: exp(s/2) = 2, 1, 1
    picks = [exponential_mechanism(scores, epsilon=1.0, sensitivity=1.0, rng=OneUniform(u))
             for u in (0.1, 0.5, 0.50001, 0.75, 0.9)]
    assert picks == [0, 0, 1, 1, 2]


def test_exponential_mechanism_refuses_infinite_epsilon_and_bad_scores():
    with pytest.raises(ValueError, match=r"epsilon must be in \(0, inf\)"):
        exponential_mechanism([0.0, 1.0], epsilon=math.inf, sensitivity=1.0, rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match="scores must be"):
        exponential_mechanism([0.0, np.nan], epsilon=1.0, sensitivity=1.0, rng=np.random.default_rng(0))


# ---- the derived generator of the solver-smoothing noise (decision: .Random.seed ends where DPpack's does) ----

def test_derived_generator_leaves_an_r_stream_where_it_was_and_is_reproducible():
    from pydpowl import RRandom
    from pydpowl.engine.mechanisms import SMOOTHING_DOMAIN, derived_generator, sample_smoothing_noise

    r = RRandom(42)
    r.rnorm(3)
    before = r.get_state().copy()
    a = sample_smoothing_noise(4, epsilon=0.01, error_radius=1e-6, rng=r)
    np.testing.assert_array_equal(r.get_state(), before)  # not advanced
    b = sample_smoothing_noise(4, epsilon=0.01, error_radius=1e-6, rng=RRandom.from_r_state(before))
    np.testing.assert_array_equal(a, b)  # a function of the state: reproducible from set.seed
    r.rnorm(1)
    c = sample_smoothing_noise(4, epsilon=0.01, error_radius=1e-6, rng=r)
    assert not np.array_equal(a, c)  # another state, other draws
    g1 = derived_generator(RRandom.from_r_state(before), domain=SMOOTHING_DOMAIN)
    g2 = derived_generator(RRandom.from_r_state(before), domain="another use")
    assert g1.random() != g2.random()  # the domain tag separates uses of one state
    gen = np.random.default_rng(1)
    assert derived_generator(gen, domain=SMOOTHING_DOMAIN) is gen  # a numpy Generator is used as it is
    with pytest.raises(TypeError, match="numpy Generator or an R-compatible stream"):
        derived_generator(object(), domain=SMOOTHING_DOMAIN)


def test_smoothing_noise_has_the_l2_laplace_law():
    from pydpowl.engine.mechanisms import sample_smoothing_noise

    rng = np.random.default_rng(5)
    norms = np.array([np.linalg.norm(sample_smoothing_noise(3, epsilon=2.0, error_radius=0.5, rng=rng))
                      for _ in range(4000)])
    # ||b|| ~ Gamma(3, rate = epsilon / (2 r) = 2): mean 1.5, variance 0.75
    assert abs(norms.mean() - 1.5) < 4 * math.sqrt(0.75 / 4000)


def test_isotropic_gaussian_rotation_is_lapacks_without_scipy():
    """MASS::mvrnorm rotates by R's eigen(c I) vectors (dsyevr): the closed form equals scipy's evr driver."""
    from scipy.linalg import eigh

    from pydpowl.engine.mechanisms import _r_identity_rotation

    z_all = np.random.default_rng(0).normal(size=80)
    for c in (1e-6, 3.7, 8.1e5):
        for d in range(1, 80):
            values, vectors = eigh(c * np.eye(d), lower=True, driver="evr")
            V = vectors[:, ::-1]
            z = z_all[:d]
            np.testing.assert_array_equal(_r_identity_rotation(z), V @ z)

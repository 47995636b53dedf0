"""Tests of pydpowl.policy_evaluation.estimators (DPLSW, DPLSL, LSW, LSL)."""

import math
import pickle
import struct
import sys
import warnings

import numpy as np
import pytest
from numpy.testing import assert_allclose
from scipy import stats

from pydpowl.exceptions import NotFittedError, PrivacyLeakWarning
from pydpowl.policy_evaluation import (
    DPLSL,
    DPLSW,
    LSL,
    LSW,
    Episode,
    episode_statistics,
    lazy_chain,
    random_walk,
)
from pydpowl.policy_evaluation.smooth_sensitivity import matrix_norm

N = 6
GAMMA = 0.9


@pytest.fixture(scope="module")
def chain_episodes():
    return lazy_chain(N).sample(60, rng=np.random.default_rng(0))


def _dp(cls, **kw):
    base = dict(epsilon=0.5, delta=0.1, features=np.eye(N), reward_bound=1.0, discount=GAMMA)
    base.update(kw)
    return cls(**base)


# ----------------------------------------------------------------- P1 / epsilon limits
@pytest.mark.parametrize("cls, ref_cls", [(DPLSW, LSW), (DPLSL, LSL)])
def test_p1_huge_epsilon_returns_the_nonprivate_estimate(cls, ref_cls, chain_episodes):
    kw = {} if cls is DPLSW else {"regularization": 2.0}
    with pytest.warns(PrivacyLeakWarning, match="outside the smooth-sensitivity lemma"):
        est = _dp(cls, epsilon=1e12, random_state=1, **kw).fit(chain_episodes)
    ref = ref_cls(features=np.eye(N), discount=GAMMA, **kw).fit(chain_episodes).coef_
    rel = np.linalg.norm(est.coef_ - ref) / np.linalg.norm(ref)
    assert rel < 1e-6, f"epsilon=1e12: relative distance to non-private theta {rel:.2e} >= 1e-6"


@pytest.mark.parametrize("cls, ref_cls", [(DPLSW, LSW), (DPLSL, LSL)])
def test_infinite_epsilon_is_exactly_nonprivate_and_warns(cls, ref_cls, chain_episodes):
    kw = {} if cls is DPLSW else {"regularization": 2.0}
    with pytest.warns(PrivacyLeakWarning, match="no noise is added"):
        est = _dp(cls, epsilon=np.inf, random_state=1, **kw).fit(chain_episodes)
    ref = ref_cls(features=np.eye(N), discount=GAMMA, **kw).fit(chain_episodes)
    assert np.array_equal(est.coef_, ref.coef_)
    assert np.array_equal(est.values_, ref.values_)


def test_epsilon_at_most_one_does_not_warn(chain_episodes):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _dp(DPLSW, epsilon=1.0, random_state=0).fit(chain_episodes)
        _dp(DPLSL, epsilon=0.3, random_state=0).fit(chain_episodes)


# ----------------------------------------------------------------- P2 signature only
@pytest.mark.parametrize("cls", [DPLSW, DPLSL])
def test_p2_sigma_depends_only_on_the_signature(cls, chain_episodes):
    base = _dp(cls, keep_diagnostics=True, random_state=0).fit(chain_episodes).diagnostics_
    perm = [chain_episodes[i] for i in np.random.default_rng(1).permutation(len(chain_episodes))]
    halved = [Episode(states=e.states, rewards=0.5 * e.rewards) for e in chain_episodes]
    for data, what in ((perm, "permuted"), (halved, "rewards halved")):
        diag = _dp(cls, keep_diagnostics=True, random_state=0).fit(data).diagnostics_
        assert diag.sigma == base.sigma, f"{cls.__name__} {what}: sigma {diag.sigma} != {base.sigma}"
    theta_half = _dp(cls, keep_diagnostics=True).fit(halved).diagnostics_.nonprivate_coef
    assert not np.allclose(theta_half, base.nonprivate_coef), "halving rewards must move theta"


# ----------------------------------------------------------------- P4 sensitivity
def _bound(cls, episodes, **kw):
    est = cls(epsilon=0.5, delta=0.1, keep_diagnostics=True, random_state=0, **kw).fit(episodes)
    d = est.diagnostics_
    local = est.sensitivity_constant_ / est.alpha_ * np.sqrt(d.phi0)
    return d.nonprivate_coef, local, d.sigma / est.alpha_


def _worst_ratio(cls, pairs, **kw):
    worst = 0.0
    for x, x_prime in pairs:
        theta, local, smooth = _bound(cls, x, **kw)
        theta_p = _bound(cls, x_prime, **kw)[0]
        gap = np.linalg.norm(theta - theta_p)
        assert local <= smooth * (1 + 1e-12), "phi(0) bound must not exceed sigma/alpha"
        worst = max(worst, gap / local)
    return worst


def _random_pairs(mrp, n_pairs, m_range, rng):
    pairs = []
    for _ in range(n_pairs):
        m = int(rng.integers(*m_range))
        x = mrp.sample(m, rng=rng)
        x_prime = list(x)
        x_prime[int(rng.integers(m))] = mrp.sample(1, rng=rng)[0]
        pairs.append((x, x_prime))
    return pairs


def _lam(feats, extra=1.0):
    """A regularisation safely above ||Phi||^2 ||rho||_inf (uniform rho)."""
    return matrix_norm(feats["features"]) ** 2 / N + extra


def _feature_settings(rng):
    phi_rand = rng.normal(size=(N, 3))
    return [
        dict(features=np.eye(N)),
        dict(features=np.kron(np.eye(N // 2), np.ones((2, 1)))),
        dict(features=phi_rand),
    ]


@pytest.mark.parametrize("cls", [DPLSW, DPLSL])
def test_p4_random_neighbours_stay_below_the_calibration_bound(cls):
    rng = np.random.default_rng(42)
    worst = 0.0
    for feats in _feature_settings(rng):
        for mrp in (lazy_chain(N), random_walk(N)):
            extra = dict(weights=rng.random(N) + 0.1) if cls is DPLSW else dict(regularization=_lam(feats))
            pairs = _random_pairs(mrp, 15, (2, 30), rng)
            worst = max(worst, _worst_ratio(cls, pairs, reward_bound=1.0, discount=GAMMA, **feats, **extra))
    assert worst <= 1.0, f"{cls.__name__} random neighbours: max |dtheta| / bound = {worst:.3f} > 1"
    assert worst > 1e-3, "the check should see non-trivial gaps"


def _max_return_episode(states, f_max, gamma):
    """An episode whose first-visit return is exactly f_max at every visited state."""
    rewards = np.full(len(states), f_max * (1 - gamma))
    rewards[-1] = f_max
    return Episode(states=np.asarray(states), rewards=rewards)


@pytest.mark.parametrize("cls", [DPLSW, DPLSL])
def test_p4_adversarial_neighbours_stay_below_the_calibration_bound(cls):
    rng = np.random.default_rng(7)
    f_max = 1.0
    absorbing_only = Episode(states=np.array([N - 1]), rewards=np.array([0.0]))
    pairs = []
    mrp = lazy_chain(N)
    for m in (1, 2, 3, 5, 10, 25):
        x = mrp.sample(m, rng=rng)
        # replace the longest trajectory with one that starts in the absorbing state
        longest = int(np.argmax([len(e) for e in x]))
        pairs.append((x, x[:longest] + [absorbing_only] + x[longest + 1:]))
        # replace the only visitor of state 0 (if any) by a max-return sweep, or add one
        visitors = [i for i, e in enumerate(x) if 0 in e.states]
        sweep = _max_return_episode(np.arange(N), f_max, GAMMA)
        i = visitors[0] if len(visitors) == 1 else int(rng.integers(m))
        pairs.append((x, x[:i] + [sweep] + x[i + 1:]))
        pairs.append((x[:i] + [sweep] + x[i + 1:], x))
    for m in (1, 2, 4, 8, 16):
        # all episodes are max-return sweeps; the neighbour has one zero-return episode
        sweeps = [_max_return_episode(np.arange(N), f_max, GAMMA) for _ in range(m)]
        pairs.append((sweeps, sweeps[1:] + [absorbing_only]))
        pairs.append((sweeps[1:] + [absorbing_only], sweeps))
        # rarely visited states: one visitor per state, swapped for a zero-return one
        singles = [_max_return_episode([s], f_max, GAMMA) for s in range(min(m, N))]
        pairs.append((singles, singles[:-1] + [Episode(states=singles[-1].states, rewards=np.zeros(1))]))
    worst = 0.0
    for feats in _feature_settings(rng):
        for lam_extra in (0.05, 1.0, 30.0):
            extra = dict(weights=rng.random(N) + 0.1) if cls is DPLSW else dict(regularization=_lam(feats, lam_extra))
            worst = max(worst, _worst_ratio(cls, pairs, return_bound=f_max, discount=GAMMA, **feats, **extra))
    assert worst <= 1.0, f"{cls.__name__} adversarial neighbours: max |dtheta| / bound = {worst:.3f} > 1"
    assert worst > 0.05, f"adversarial pairs should come close to the bound, got {worst:.3f}"


# ----------------------------------------------------------------- smoothing vs global
@pytest.mark.parametrize("cls", [DPLSW, DPLSL])
def test_smoothed_sigma_never_exceeds_global_sigma(cls):
    rng = np.random.default_rng(3)
    mrp = lazy_chain(N)
    for _ in range(25):
        st = episode_statistics(mrp.sample(int(rng.integers(1, 400)), rng=rng), n_states=N, discount=GAMMA)
        s = _dp(cls, keep_diagnostics=True).fit(st).diagnostics_.sigma
        g = _dp(cls, keep_diagnostics=True, sensitivity="global").fit(st).diagnostics_.sigma
        assert s <= g * (1 + 1e-12), f"{cls.__name__}, m={st.n_episodes}: smooth sigma {s} > global {g}"


def test_global_sigma_formulas(chain_episodes):
    w = np.linspace(0.05, 0.3, N)
    est = _dp(DPLSW, weights=w, sensitivity="global", keep_diagnostics=True).fit(chain_episodes)
    assert est.diagnostics_.sigma == pytest.approx(est.sensitivity_constant_ * np.sqrt(w.sum()), rel=1e-14)
    rho = np.full(N, 1 / N)
    est = _dp(DPLSL, regularization=4.0, sensitivity="global", keep_diagnostics=True).fit(chain_episodes)
    m = len(chain_episodes)
    c = 1.0 * rho.max() / np.sqrt(8.0)
    expected = est.sensitivity_constant_ * (c * np.sqrt(m) + np.linalg.norm(rho))
    assert est.diagnostics_.sigma == pytest.approx(expected, rel=1e-13)


# ----------------------------------------------------------------- Gaussian baselines on the global sensitivity
def _global_sensitivity(cls, f_max, m, lam=None):
    """Hand-derived global l2 sensitivities for tabular features and uniform weights (spec §6, §7.2)."""
    rho = np.full(N, 1 / N)
    if cls is DPLSW:  # ||(W^1/2 Phi)^+|| = sqrt(N); each average moves by F_max: F_max sqrt(N) sqrt(sum w)
        return f_max * np.sqrt(N)
    c = rho.max() / np.sqrt(2 * lam)  # ||Phi|| = 1
    return 2 * f_max / (lam - rho.max()) * (c * np.sqrt(m) + np.linalg.norm(rho))


@pytest.mark.parametrize("cls", [DPLSW, DPLSL])
def test_classical_gaussian_baseline(cls, chain_episodes):
    kw = {} if cls is DPLSW else {"regularization": 4.0}
    eps, delta = 0.4, 0.05
    est = _dp(cls, epsilon=eps, delta=delta, sensitivity="global-classical", keep_diagnostics=True,
              **kw).fit(chain_episodes)
    gs = _global_sensitivity(cls, 1 / (1 - GAMMA), len(chain_episodes), kw.get("regularization"))
    assert est.diagnostics_.sigma == pytest.approx(gs * np.sqrt(2 * np.log(1.25 / delta)) / eps, rel=1e-12)
    assert est.alpha_ == pytest.approx(np.sqrt(2 * np.log(1.25 / delta)) / eps, rel=1e-14)
    assert est.beta_ == 0.0 and est.certified_delta_ <= delta
    with pytest.raises(ValueError, match=r"epsilon must be in \(0, 1\) with sensitivity='global-classical'"
                                         r".*got epsilon=1.0"):
        _dp(cls, epsilon=1.0, sensitivity="global-classical", **kw).fit(chain_episodes)


@pytest.mark.parametrize("cls", [DPLSW, DPLSL])
@pytest.mark.parametrize("eps", [0.3, 1.0, 10.0])
def test_analytic_gaussian_baseline(cls, eps, chain_episodes):
    from scipy.stats import norm

    kw = {} if cls is DPLSW else {"regularization": 4.0}
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # exact for every epsilon: no warning
        est = _dp(cls, epsilon=eps, delta=0.1, sensitivity="global-analytic", keep_diagnostics=True,
                  **kw).fit(chain_episodes)
    gs = _global_sensitivity(cls, 1 / (1 - GAMMA), len(chain_episodes), kw.get("regularization"))
    mu = gs / est.diagnostics_.sigma
    exact = norm.cdf(mu / 2 - eps / mu) - np.exp(eps) * norm.cdf(-mu / 2 - eps / mu)  # Balle & Wang, Thm 8
    assert exact == pytest.approx(0.1, rel=1e-6) and exact <= 0.1 * (1 + 1e-9)
    if eps < 1:
        classical = _dp(cls, epsilon=eps, delta=0.1, sensitivity="global-classical", keep_diagnostics=True,
                        **kw).fit(chain_episodes)
        assert est.diagnostics_.sigma < classical.diagnostics_.sigma


@pytest.mark.parametrize("cls", [DPLSW, DPLSL])
def test_epsilon_above_one_is_certified_when_the_exact_accounting_allows(cls, chain_episodes):
    kw = {} if cls is DPLSW else {"regularization": 2.0}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        est = _dp(cls, epsilon=10.0, delta=0.1, **kw).fit(chain_episodes)
    assert 0 < est.certified_delta_ <= 0.1
    assert est.summary().certified_delta == est.certified_delta_
    # issue 21.5: the delta asked for, established, plus the rounding's (review 21.4)
    assert est.privacy_spent_ == (10.0, 0.1 + est.release_delta_) and 0 < est.release_delta_ < 1e-3  # (1 + e^10) times the sampler's
    # d = 1 and epsilon = 40: the lemma's constants are no longer certified, so it warns
    with pytest.warns(PrivacyLeakWarning, match=r"exact certificate only gives delta=.* > delta=0.1"):
        weak = _dp(cls, epsilon=40.0, delta=0.1, features=np.ones((N, 1)), **kw).fit(chain_episodes)
    assert weak.privacy_spent_ == (40.0, min(1.0, weak.certified_delta_ + weak.release_delta_))
    assert weak.certified_delta_ > 0.1


# ----------------------------------------------------------------- noise law and scale
def test_noise_variance_falls_as_m_grows():
    mrp = lazy_chain(N)
    rng = np.random.default_rng(11)
    sig_w, sig_l = [], []
    for m in (50, 500, 5000):
        st = episode_statistics(mrp.sample(m, rng=rng), n_states=N, discount=GAMMA)
        sig_w.append(_dp(DPLSW, keep_diagnostics=True).fit(st).diagnostics_.sigma)
        lam = 1.0 / N + m**0.6  # p = 0.6 > 1/3
        sig_l.append(_dp(DPLSL, regularization=lam, keep_diagnostics=True).fit(st).diagnostics_.sigma)
    assert sig_w[0] > sig_w[1] > sig_w[2], f"DP-LSW sigma vs m=(50, 500, 5000): {sig_w}"
    assert sig_l[0] > sig_l[1] > sig_l[2], f"DP-LSL sigma vs m=(50, 500, 5000): {sig_l}"


@pytest.mark.parametrize("cls", [DPLSW, DPLSL])
def test_p8_standardised_noise_is_standard_normal(cls):
    phi = np.random.default_rng(0).normal(size=(N, 3))
    st = episode_statistics(lazy_chain(N).sample(80, rng=np.random.default_rng(1)), n_states=N, discount=GAMMA)
    z = []
    for seed in range(400):
        est = _dp(cls, features=phi, keep_diagnostics=True, random_state=seed).fit(st)
        z.append((est.coef_ - est.diagnostics_.nonprivate_coef) / est.diagnostics_.sigma)
    z = np.array(z)
    p = stats.kstest(z.ravel(), "norm").pvalue
    assert p > 1e-3, f"{cls.__name__}: KS of 1200 standardised noise values vs N(0,1): p={p:.2e}"
    off = np.max(np.abs(np.corrcoef(z.T) - np.eye(3)))
    assert off < 4 / np.sqrt(400), f"{cls.__name__}: max |corr| between coordinates {off:.3f}"


def test_utility_identity_holds_in_expectation():
    # E ||V - Phi theta_hat||_rho^2 = ||V - Phi theta||_rho^2 + sigma^2 tr(Phi' R Phi)
    mrp = lazy_chain(N)
    v = mrp.value(GAMMA)
    rho = np.full(N, 1 / N)
    phi = np.random.default_rng(2).normal(size=(N, 3))
    st = episode_statistics(mrp.sample(200, rng=np.random.default_rng(3)), n_states=N, discount=GAMMA)
    errs = []
    for seed in range(3000):
        est = _dp(DPLSL, features=phi, rho=rho, keep_diagnostics=True, random_state=seed).fit(st)
        errs.append(np.sum(rho * (v - est.values_) ** 2))
    d = est.diagnostics_
    expected = np.sum(rho * (v - phi @ d.nonprivate_coef) ** 2) + d.sigma**2 * np.trace(phi.T @ np.diag(rho) @ phi)
    rel = abs(np.mean(errs) - expected) / expected
    assert rel < 0.08, f"mean squared error {np.mean(errs):.4g} vs identity {expected:.4g} (rel {rel:.3f})"


# ----------------------------------------------------------------- options
def test_signed_rewards_double_the_constant_and_accept_negative_rewards():
    eps = [([0, 1], [-0.5, 1.0]), ([2], [-1.0])]
    a = _dp(DPLSW, signed_rewards=True).fit(eps)
    b = _dp(DPLSW).fit([([0, 1], [0.5, 1.0])])
    assert a.sensitivity_constant_ == pytest.approx(2 * b.sensitivity_constant_, rel=1e-14)
    c = _dp(DPLSL, regularization=2.0, signed_rewards=True).fit(eps)
    d = _dp(DPLSL, regularization=2.0).fit([([0], [1.0])])
    assert c.sensitivity_constant_ == pytest.approx(2 * d.sensitivity_constant_, rel=1e-14)


@pytest.mark.parametrize("cls", [DPLSW, DPLSL])
def test_return_bound_variant_scales_the_constant(cls, chain_episodes):
    kw = {} if cls is DPLSW else {"regularization": 2.0}
    a = _dp(cls, discount=0.99, **kw).fit(lazy_chain(N).sample(5, rng=np.random.default_rng(0)))
    b = _dp(cls, discount=0.99, reward_bound=None, return_bound=1.0, **kw).fit(
        lazy_chain(N).sample(5, rng=np.random.default_rng(0))
    )
    assert b.sensitivity_constant_ == pytest.approx(a.sensitivity_constant_ / 100, rel=1e-12)


@pytest.mark.parametrize("cls", [DPLSW, DPLSL])
def test_frobenius_and_conservative_add_noise(cls, chain_episodes):
    phi = np.random.default_rng(4).normal(size=(N, 3))
    kw = {} if cls is DPLSW else {"regularization": 40.0}

    def sigma(**extra):
        return _dp(cls, features=phi, keep_diagnostics=True, **kw, **extra).fit(chain_episodes).diagnostics_.sigma

    base = sigma()
    assert sigma(matrix_norm="frobenius") > base
    assert sigma(constants="conservative") > base


def test_dplsl_accepts_rank_deficient_features(chain_episodes):
    phi = np.ones((N, 2))
    est = _dp(DPLSL, features=phi, regularization=20.0, random_state=0).fit(chain_episodes)
    assert est.coef_.shape == (2,)


def test_default_regularization_rule(chain_episodes):
    est = _dp(DPLSL, random_state=0).fit(chain_episodes)
    assert est.regularization_ == pytest.approx(1.0 / N + 0.5 * len(chain_episodes) ** 0.4)
    lsl = LSL(features=np.eye(N), discount=GAMMA).fit(chain_episodes)
    assert lsl.regularization_ == pytest.approx(est.regularization_)


def test_nonprivate_estimators_match_closed_forms(chain_episodes):
    st = episode_statistics(chain_episodes, n_states=N, discount=GAMMA)
    assert_allclose(LSW(features=np.eye(N), discount=GAMMA).fit(chain_episodes).coef_, st.averages, atol=1e-14)
    rho = np.full(N, 1 / N)
    lam = 3.0
    expected = rho * st.counts * st.averages / (rho * st.counts + lam / 2)
    got = LSL(features=np.eye(N), regularization=lam, discount=GAMMA).fit(st).coef_
    assert_allclose(got, expected, rtol=1e-12)


def test_values_predict_and_summary(chain_episodes):
    phi = np.kron(np.eye(N // 2), np.ones((2, 1)))
    est = _dp(DPLSW, features=phi, random_state=0).fit(chain_episodes)
    assert_allclose(est.values_, phi @ est.coef_)
    assert_allclose(est.predict(np.array([0, 5])), est.values_[[0, 5]])
    with pytest.raises(ValueError, match=r"states must be in \[0, 6\)"):
        est.predict(np.array([6]))
    with pytest.raises(TypeError, match="states must be integers"):
        est.predict(np.array([0.5]))
    summ = est.summary()
    assert summ.private and summ.n_episodes == len(chain_episodes) and summ.n_features == 3
    assert "private fit" in str(summ) and "epsilon, delta" in str(summ)
    lsw = LSW(features=phi, discount=GAMMA).fit(chain_episodes)
    assert not lsw.summary().private and "NOT private" in str(lsw.summary())


# ----------------------------------------------------------------- release hygiene
@pytest.mark.parametrize("cls", [DPLSW, DPLSL])
def test_private_quantities_are_not_kept_by_default(cls, chain_episodes):
    twin = _dp(cls, keep_diagnostics=True, random_state=5).fit(chain_episodes)
    est = _dp(cls, random_state=5).fit(chain_episodes)
    assert np.array_equal(est.coef_, twin.coef_)
    assert not hasattr(est, "diagnostics_")
    blob = pickle.dumps(est)
    theta = twin.diagnostics_.nonprivate_coef
    assert theta.tobytes() not in blob, "pickle must not hold the non-private theta"
    for x in (twin.diagnostics_.sigma, twin.diagnostics_.psi):
        assert struct.pack("<d", x) not in blob, "pickle must not hold sigma or psi"
    assert twin.diagnostics_.counts.tobytes() not in blob
    text = repr(est)
    assert repr(twin.diagnostics_.sigma) not in text and "diagnostics" not in text
    public = {"coef_", "values_", "n_states_", "n_features_", "n_episodes_", "alpha_", "beta_",
              "sensitivity_constant_", "regularization_", "certified_delta_", "release_grid_", "release_delta_",
              "privacy_spent_"}
    fitted = {k for k in vars(est) if k.endswith("_")}
    assert fitted <= public, f"unexpected fitted attributes {fitted - public}"
    assert "private" in repr(twin.diagnostics_) and "nan" not in repr(twin.diagnostics_)


def test_refit_without_diagnostics_drops_them(chain_episodes):
    est = _dp(DPLSW, keep_diagnostics=True, random_state=0).fit(chain_episodes)
    assert hasattr(est, "diagnostics_")
    est.set_params(keep_diagnostics=False).fit(chain_episodes)
    assert not hasattr(est, "diagnostics_")


# ----------------------------------------------------------------- estimator contract
def test_init_stores_parameters_unchanged_and_validates_nothing():
    phi = np.eye(3)
    est = DPLSW(epsilon=-1, delta=5, features=phi, weights="x", random_state="bad")
    assert est.features is phi and est.epsilon == -1 and est.weights == "x"
    params = est.get_params()
    assert set(params) == {"epsilon", "delta", "features", "weights", "reward_bound", "return_bound",
                           "discount", "constants", "sensitivity", "matrix_norm", "signed_rewards",
                           "keep_diagnostics", "random_state"}
    assert "rho" in DPLSL().get_params() and "regularization" in DPLSL().get_params()


def test_set_params_and_repr():
    est = DPLSL()
    assert est.set_params(epsilon=0.2, rho=None) is est and est.epsilon == 0.2
    with pytest.raises(ValueError, match=r"Invalid parameter 'weights' for estimator DPLSL"):
        est.set_params(weights=np.ones(3))
    text = repr(DPLSL(epsilon=0.2, features=np.eye(4)))
    assert text.startswith("DPLSL(epsilon=0.2,") and "features=array([[1., 0., 0., 0.]," in text


def test_fit_returns_self_and_unfitted_use_raises(chain_episodes):
    est = _dp(DPLSW)
    with pytest.raises(NotFittedError, match="not fitted yet"):
        est.predict([0])
    with pytest.raises(NotFittedError):
        est.summary()
    assert est.fit(chain_episodes) is est


def test_random_state_handling(chain_episodes):
    a = _dp(DPLSW, random_state=3).fit(chain_episodes).coef_
    b = _dp(DPLSW, random_state=3).fit(chain_episodes).coef_
    assert np.array_equal(a, b)
    gen = np.random.default_rng(3)
    est = _dp(DPLSW, random_state=gen)
    c1 = est.fit(chain_episodes).coef_.copy()
    c2 = est.fit(chain_episodes).coef_.copy()
    assert np.array_equal(c1, a) and not np.array_equal(c1, c2), "a Generator must be used, not copied"
    before = np.random.get_state()[1].copy()
    _dp(DPLSL, random_state=None).fit(chain_episodes)
    assert np.array_equal(before, np.random.get_state()[1]), "global numpy RNG must not be touched"


@pytest.mark.parametrize("bad, exc", [("seed", TypeError), (1.5, TypeError), (True, TypeError), (-1, ValueError)])
def test_bad_random_state(bad, exc, chain_episodes):
    with pytest.raises(exc, match="random_state must be"):
        _dp(DPLSW, random_state=bad).fit(chain_episodes)


@pytest.mark.parametrize("cls", [DPLSL, LSL])
def test_rho_not_summing_to_one_warns(cls, chain_episodes):
    kw = dict(features=np.eye(N), discount=GAMMA, rho=np.full(N, 0.5), regularization=10.0)
    if cls is DPLSL:
        kw.update(epsilon=0.5, reward_bound=1.0)
    with pytest.warns(UserWarning, match=r"rho sums to 3, not 1"):
        cls(**kw).fit(chain_episodes)


def test_weights_need_not_sum_to_one(chain_episodes):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _dp(DPLSW, weights=np.full(N, 2.0)).fit(chain_episodes)


def test_statistics_are_accepted_and_checked(chain_episodes):
    st = episode_statistics(chain_episodes, n_states=N, discount=GAMMA)
    a = _dp(DPLSW, random_state=1).fit(st).coef_
    b = _dp(DPLSW, random_state=1).fit(chain_episodes).coef_
    assert np.array_equal(a, b)
    with pytest.raises(ValueError, match=r"computed with discount=0.9, but this estimator has discount=0.5"):
        _dp(DPLSW, discount=0.5).fit(st)
    with pytest.raises(ValueError, match=r"n_states=6, but features has 7 rows"):
        _dp(DPLSW, features=np.eye(7)).fit(st)


# ----------------------------------------------------------------- bad inputs
GOOD = [([0, 1, 5], [0.0, 1.0, 0.0]), ([3, 4, 5], [0.0, 1.0, 0.0])]

BAD_PARAMS = [
    (dict(epsilon=0.0), ValueError, r"^epsilon must be in \(0, inf\], got epsilon=0.0"),
    (dict(epsilon=-1.0), ValueError, r"^epsilon must be in \(0, inf\]"),
    (dict(epsilon="0.1"), TypeError, r"^epsilon must be a real number"),
    (dict(delta=0.0), ValueError, r"^delta must be in \(0, 1\), got delta=0.0"),
    (dict(delta=1.0), ValueError, r"^delta must be in \(0, 1\)"),
    (dict(discount=1.0), ValueError, r"^discount must be in \[0, 1\), got discount=1.0"),
    (dict(discount=-0.1), ValueError, r"^discount must be in \[0, 1\)"),
    (dict(reward_bound=None), ValueError, r"^exactly one of reward_bound .* got neither"),
    (dict(return_bound=5.0), ValueError, r"^exactly one of reward_bound .* got both"),
    (dict(reward_bound=0.0), ValueError, r"^reward_bound must be in \(0, inf\)"),
    (dict(reward_bound=None, return_bound=-2.0), ValueError, r"^return_bound must be in \(0, inf\)"),
    (dict(features=None), TypeError, r"^features must be a 2-D array"),
    (dict(features=np.ones(N)), ValueError, r"^features must be 2-D"),
    (dict(constants="B"), ValueError, r"^constants must be one of \['A', 'conservative'\]"),
    (dict(sensitivity="local"), ValueError,
     r"^sensitivity must be one of \['smooth', 'global', 'global-classical', 'global-analytic'\]"),
    (dict(matrix_norm="nuclear"), ValueError, r"^matrix_norm must be one of"),
    (dict(signed_rewards="yes"), TypeError, r"^signed_rewards must be True or False"),
    (dict(keep_diagnostics=1), TypeError, r"^keep_diagnostics must be True or False"),
]


@pytest.mark.parametrize("cls", [DPLSW, DPLSL])
@pytest.mark.parametrize("params, exc, pattern", BAD_PARAMS)
def test_bad_parameters_are_named(cls, params, exc, pattern):
    with pytest.raises(exc, match=pattern):
        _dp(cls, **params).fit(GOOD)


BAD_DATA = [
    ([([0, 6], [0.0, 0.0])], {}, r"states must be in \[0, 6\) \(the rows of features\)"),
    ([([0], [1.0]), ([1, 5], [-0.5, 0.0])], {},
     r"rewards must lie in \[0, reward_bound=1\]; 1 of 2 episodes do not \(first at position 1\)"),
    ([([0], [1.5])], {}, r"rewards must lie in \[0, reward_bound=1\]"),
    ([([0], [1.5])], dict(signed_rewards=True), r"rewards must lie in \[-1, reward_bound=1\]"),
    ([([0, 1], [0.0, -0.1])], dict(reward_bound=None, return_bound=1.0), r"rewards must lie in \[0, inf\)"),
    ([([0, 1], [0.6, 0.6])], dict(reward_bound=None, return_bound=1.0),
     r"first-visit returns must lie in \[0, return_bound=1\]; 1 of 1"),
    ([], {}, r"at least 1 episode"),
]


@pytest.mark.parametrize("cls", [DPLSW, DPLSL])
@pytest.mark.parametrize("episodes, params, pattern", BAD_DATA)
def test_bad_episodes_raise(cls, episodes, params, pattern):
    with pytest.raises(ValueError, match=pattern):
        _dp(cls, **params).fit(episodes)


def test_bad_data_messages_do_not_leak_values():
    with pytest.raises(ValueError) as info:
        _dp(DPLSW).fit([([0], [0.123456789])] * 2 + [([1], [7.654321])])
    assert "7.654321" not in str(info.value) and "1 of 3 episodes" in str(info.value)


@pytest.mark.parametrize("cls", [DPLSW, LSW])
def test_rank_deficient_weighted_features_raise(cls):
    kw = dict(features=np.ones((N, 2)), discount=GAMMA)
    if cls is DPLSW:
        kw.update(epsilon=0.5, reward_bound=1.0)
    with pytest.raises(ValueError, match=r"full column rank d=2"):
        cls(**kw).fit(GOOD)
    phi = np.kron(np.eye(N // 2), np.ones((2, 1)))
    w = np.array([1, 1, 0, 0, 1, 1.0])  # feature 1 has zero weight on its support
    kw.update(features=phi, weights=w)
    with pytest.raises(ValueError, match=r"full column rank d=3 .*numerical rank is 2"):
        cls(**kw).fit(GOOD)


@pytest.mark.parametrize("name", ["weights", "rho"])
def test_negative_or_misshaped_state_weights_raise(name):
    cls = DPLSW if name == "weights" else DPLSL
    bad = np.full(N, 1 / N)
    bad[2] = -0.1
    with pytest.raises(ValueError, match=rf"^{name} must be non-negative .*1 of 6 entries are negative"):
        _dp(cls, **{name: bad}).fit(GOOD)
    with pytest.raises(ValueError, match=rf"^{name} must have length 6, got length 5"):
        _dp(cls, **{name: np.full(5, 0.2)}).fit(GOOD)
    with pytest.raises(ValueError, match=rf"^{name} must have a positive entry"):
        _dp(cls, **{name: np.zeros(N)}).fit(GOOD)


def test_lambda_at_or_below_threshold_raises():
    thr = 1.0 / N  # ||I||^2 ||rho||_inf
    with pytest.raises(ValueError, match=r"^regularization must be in \(0.1666.*, inf\), i.e. above"):
        _dp(DPLSL, regularization=thr).fit(GOOD)
    with pytest.raises(ValueError, match=r"^regularization must be in \(0, inf\)"):
        _dp(DPLSL, regularization=-1.0).fit(GOOD)
    # with the Frobenius norm the threshold is ||I||_F^2 / N = 1: lambda = 0.5 passes only spectral
    _dp(DPLSL, regularization=0.5).fit(GOOD)
    with pytest.raises(ValueError, match=r"above \|\|Phi\|\|\^2 \|\|rho\|\|_inf with the frobenius norm"):
        _dp(DPLSL, regularization=0.5, matrix_norm="frobenius").fit(GOOD)
    assert matrix_norm(np.eye(N), "frobenius") ** 2 / N == pytest.approx(1.0)


@pytest.mark.slow
@pytest.mark.parametrize("cls", [DPLSW, DPLSL])
def test_p4_many_random_neighbours_on_larger_chains(cls):
    """Slow version of the P4 check: N=12, more pairs, larger m."""
    rng = np.random.default_rng(2016)
    n = 12
    worst = 0.0
    for mrp in (lazy_chain(n), random_walk(n)):
        for feats in (np.eye(n), rng.normal(size=(n, 4))):
            extra = (dict(weights=rng.random(n) + 0.05) if cls is DPLSW
                     else dict(regularization=matrix_norm(feats) ** 2 / n + 0.5))
            pairs = []
            for _ in range(150):
                m = int(rng.integers(1, 200))
                x = mrp.sample(m, rng=rng)
                x_prime = list(x)
                x_prime[int(rng.integers(m))] = mrp.sample(1, rng=rng)[0]
                pairs.append((x, x_prime))
            worst = max(worst, _worst_ratio(cls, pairs, features=feats, reward_bound=1.0,
                                            discount=GAMMA, **extra))
    assert worst <= 1.0, f"{cls.__name__} N=12: max |dtheta| / bound = {worst:.3f} > 1"


# ----------------------------------------------------------------- warnings point at the caller
def _warnings_of(call, category):
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        call()
    return [r for r in rec if issubclass(r.category, category)]


@pytest.mark.parametrize("cls", [DPLSW, DPLSL])
@pytest.mark.parametrize("eps, message",
                         [(np.inf, "no noise is added"), (1e12, "outside the smooth-sensitivity lemma")])
def test_privacy_warning_points_at_the_line_that_calls_fit(cls, eps, message, chain_episodes):
    kw = {} if cls is DPLSW else {"regularization": 2.0}
    est = _dp(cls, epsilon=eps, random_state=0, **kw)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        est.fit(chain_episodes); line = sys._getframe().f_lineno  # noqa: E702
    found = [r for r in rec if issubclass(r.category, PrivacyLeakWarning)]
    assert len(found) == 1 and message in str(found[0].message)
    assert (found[0].filename, found[0].lineno) == (__file__, line), (found[0].filename, found[0].lineno)


@pytest.mark.parametrize("cls", [DPLSL, LSL])
def test_rho_warning_points_at_the_line_that_calls_fit(cls, chain_episodes):
    kw = dict(features=np.eye(N), discount=GAMMA, rho=np.full(N, 0.5), regularization=10.0)
    if cls is DPLSL:
        kw.update(epsilon=0.5, reward_bound=1.0)
    est = cls(**kw)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        est.fit(chain_episodes); line = sys._getframe().f_lineno  # noqa: E702
    found = [r for r in rec if "rho sums to" in str(r.message)]
    assert len(found) == 1
    assert (found[0].filename, found[0].lineno) == (__file__, line), (found[0].filename, found[0].lineno)


def _grid_case():
    from pydpowl.policy_evaluation import DPLSL, DPLSW

    rng = np.random.default_rng(0)
    phi = rng.uniform(0, 1, size=(5, 2))
    episodes = [(rng.integers(0, 5, size=6), rng.uniform(0, 1, size=6)) for _ in range(40)]
    fewer = episodes[:-1] + [(np.array([0]), np.array([0.0]))]  # a neighbour: one episode replaced
    return DPLSW, DPLSL, phi, episodes, fewer


@pytest.mark.parametrize("which", ["lsw", "lsl"])
def test_release_is_on_a_public_grid(which):
    """Review 21.4(c): DP-LSW/DP-LSL released full-precision sums. The release is now the exact sum rounded to a
    power-of-two grid that depends on public settings only (the same for a neighbouring dataset, although
    sigma differs), with the delta the rounding adds stated."""
    DPLSW, DPLSL, phi, episodes, fewer = _grid_case()
    make = (lambda: DPLSW(epsilon=0.8, delta=0.1, features=phi, reward_bound=1.0, discount=0.9, random_state=1)) \
        if which == "lsw" else \
        (lambda: DPLSL(epsilon=0.8, delta=0.1, features=phi, reward_bound=1.0, discount=0.9, random_state=1))
    a, b = make().fit(episodes), make().fit(fewer)
    assert a.release_grid_ == b.release_grid_ and a.release_grid_ == 2.0 ** round(math.log2(a.release_grid_))
    assert np.all(np.round(a.coef_ / a.release_grid_) * a.release_grid_ == a.coef_)
    assert 0 < a.release_delta_ < 1e-6

"""Tests of pydpowl.mdp_policy_evaluation.smooth_sensitivity (constants and smooth bounds).

Reference numbers come from the implementation spec (§3.3 test values and the
P10 worked example), which were computed by hand there.
"""

import itertools
import math
import tracemalloc

import numpy as np
import pytest
from numpy.testing import assert_allclose

from pydpowl.mdp_policy_evaluation import smooth_sensitivity as ss


# ----------------------------------------------------------------- §3.3 alpha / beta
@pytest.mark.parametrize(
    "eps, delta, d, alpha, beta",
    [
        (0.1, 0.1, 40, 122.38734153404083, 5.814530577346886e-4),
        (0.1, 0.1, 20, 122.38734153404083, 1.0871582475653972e-3),
        (1.0, 0.05, 3, 13.581015157406195, 0.03737546800103263),
    ],
)
def test_pair_a_matches_spec_values(eps, delta, d, alpha, beta):
    a, b = ss.privacy_constants(eps, delta, d)
    assert a == pytest.approx(alpha, rel=1e-13) and b == pytest.approx(beta, rel=1e-13)


def test_conservative_takes_larger_alpha_and_smaller_beta():
    a_a, b_a = ss.privacy_constants(0.1, 0.1, 40, constants="A")
    a_c, b_c = ss.privacy_constants(0.1, 0.1, 40, constants="conservative")
    # spec §3.3: pair B at (0.1, 0.1, 40) is alpha = 407.4304547221858, beta = 5.19795873367292e-4
    assert a_c == pytest.approx(407.4304547221858, rel=1e-13)
    assert b_c == pytest.approx(5.19795873367292e-4, rel=1e-13)
    assert a_c >= a_a and b_c <= b_a


def test_conservative_beta_is_pair_a_when_a_is_smaller():
    # for small d pair A has the smaller beta: conservative must keep it
    _, b_a = ss.privacy_constants(0.5, 0.05, 1)
    _, b_c = ss.privacy_constants(0.5, 0.05, 1, constants="conservative")
    beta_b = 2 * 0.5 / (5 * (1 + np.sqrt(2 * np.log(2 / 0.05))) ** 2)
    assert b_c == pytest.approx(min(b_a, beta_b), rel=1e-13)


def test_infinite_epsilon_gives_no_noise_constants():
    assert ss.privacy_constants(np.inf, 0.1, 3) == (0.0, np.inf)


@pytest.mark.parametrize(
    "kwargs, exc, pattern",
    [
        (dict(epsilon=0.0, delta=0.1, n_features=2), ValueError, r"epsilon must be in \(0, inf\]"),
        (dict(epsilon=-1, delta=0.1, n_features=2), ValueError, r"epsilon must be in"),
        (dict(epsilon=0.1, delta=0.0, n_features=2), ValueError, r"delta must be in \(0, 1\)"),
        (dict(epsilon=0.1, delta=1.0, n_features=2), ValueError, r"delta must be in \(0, 1\)"),
        (dict(epsilon=0.1, delta=0.1, n_features=0), ValueError, r"n_features must be an integer >= 1"),
        (dict(epsilon=0.1, delta=0.1, n_features=2, constants="B"), ValueError, r"constants must be one of"),
        (dict(epsilon="1", delta=0.1, n_features=2), TypeError, r"epsilon must be a real number"),
    ],
)
def test_privacy_constants_validate(kwargs, exc, pattern):
    with pytest.raises(exc, match=pattern):
        ss.privacy_constants(**kwargs)


# ----------------------------------------------------------------- P10 worked example
N10 = np.array([4, 1, 0])
W10 = np.array([0.5, 0.3, 0.2])


def test_p10_phi_w_profile():
    assert_allclose(ss.phi_w(N10, W10, np.arange(5)), [0.53125, 5 / 9, 0.625, 1.0, 1.0], rtol=1e-14)


def test_p10_psi_w_and_argmax():
    psi, k = ss.psi_w(N10, W10, 0.1, return_argmax=True)
    assert psi == pytest.approx(0.7408182206817179, rel=1e-14) and k == 3


def test_p10_dp_lsl_quantities():
    norm = ss.matrix_norm(np.eye(3))
    c = ss.c_lambda(norm, W10, 2.0)
    assert c == pytest.approx(0.25, rel=1e-14)
    assert ss.phi_lambda(N10, W10, 4, c, 0) == pytest.approx(0.9911898357008095, rel=1e-14)
    psi, k = ss.psi_lambda(N10, W10, 4, c, 0.1, return_argmax=True)
    assert psi == pytest.approx(0.9911898357008095, rel=1e-14) and k == 0


def test_p10_noise_scales():
    alpha = 13.581015157406195  # pair A at epsilon=1, delta=0.05, d=3
    c_lam = ss.constant_lambda(alpha, 10.0, 1.0, W10, 2.0)
    assert c_lam == pytest.approx(181.0802020987493, rel=1e-13)
    psi_l = ss.psi_lambda(N10, W10, 4, ss.c_lambda(1.0, W10, 2.0), 0.1)
    assert ss.noise_scale(c_lam, psi_l) == pytest.approx(180.28076424272314, rel=1e-13)
    c_w = ss.constant_w(alpha, 10.0, np.eye(3), W10)
    assert c_w == pytest.approx(303.6807309541527, rel=1e-13)
    assert ss.noise_scale(c_w, ss.psi_w(N10, W10, 0.1)) == pytest.approx(261.3804274188312, rel=1e-13)


# ----------------------------------------------------------------- P3 beta-smoothness
def _grid_log_psi(fn, n_states, m):
    grid = list(itertools.product(range(m + 1), repeat=n_states))
    return {v: np.log(fn(np.array(v))) for v in grid}


def _max_neighbour_gap(logs, n_states, m):
    worst = 0.0
    for v, lv in logs.items():
        for off in itertools.product((-1, 0, 1), repeat=n_states):
            u = tuple(int(x) for x in np.clip(np.add(v, off), 0, m))
            worst = max(worst, abs(lv - logs[u]))
    return worst


@pytest.mark.parametrize("n_states", [1, 2, 3])
@pytest.mark.parametrize("beta", [0.1, 0.6])
def test_p3_psi_w_is_beta_smooth_exhaustively(n_states, beta):
    w = np.array([0.5, 0.3, 0.2])[:n_states]
    for m in range(1, 7):
        logs = _grid_log_psi(lambda v: ss.psi_w(v, w, beta), n_states, m)
        gap = _max_neighbour_gap(logs, n_states, m)
        assert gap <= beta + 1e-12, f"N={n_states}, m={m}: max |ln psi^w gap| {gap} > beta {beta}"


@pytest.mark.parametrize("n_states", [1, 2, 3])
@pytest.mark.parametrize("beta, c", [(0.1, 0.25), (0.6, 3.0)])
def test_p3_psi_lambda_is_beta_smooth_exhaustively(n_states, beta, c):
    rho = np.array([0.5, 0.3, 0.2])[:n_states]
    for m in range(1, 7):
        logs = _grid_log_psi(lambda v: ss.psi_lambda(v, rho, m, c, beta), n_states, m)
        gap = _max_neighbour_gap(logs, n_states, m)
        assert gap <= beta + 1e-12, f"N={n_states}, m={m}: max |ln psi^lambda gap| {gap} > beta {beta}"


def test_p3_bound_is_attained_on_the_exhaustive_grid():
    # the smoothness bound is tight (spec §6.3): the test above is not vacuous
    w = np.array([0.5, 0.3, 0.2])
    logs = _grid_log_psi(lambda v: ss.psi_w(v, w, 0.1), 3, 6)
    ratio = _max_neighbour_gap(logs, 3, 6) / 0.1
    assert ratio > 0.999, f"max |ln psi gap| / beta = {ratio:.4f}, expected ~1"


def test_p3_random_large_signatures_are_beta_smooth():
    rng = np.random.default_rng(2024)
    n, m, beta = 12, 400, 0.003
    w = rng.random(n)
    rho = rng.dirichlet(np.ones(n))
    c = 0.05
    worst_w = worst_l = 0.0
    for _ in range(300):
        v = rng.integers(0, m + 1, size=n)
        if rng.random() < 0.3:  # many small counts, where psi^w moves most
            v = rng.integers(0, 4, size=n)
        u = np.clip(v + rng.integers(-1, 2, size=n), 0, m)
        worst_w = max(worst_w, abs(np.log(ss.psi_w(v, w, beta)) - np.log(ss.psi_w(u, w, beta))))
        worst_l = max(
            worst_l,
            abs(np.log(ss.psi_lambda(v, rho, m, c, beta)) - np.log(ss.psi_lambda(u, rho, m, c, beta))),
        )
    assert worst_w <= beta + 1e-12, f"random pairs: psi^w gap {worst_w} > beta {beta}"
    assert worst_l <= beta + 1e-12, f"random pairs: psi^lambda gap {worst_l} > beta {beta}"


def test_sigma_is_beta_over_two_smooth():
    rng = np.random.default_rng(5)
    w, beta, c_w = np.array([0.2, 0.3, 0.5]), 0.05, 17.0
    for _ in range(200):
        v = rng.integers(0, 8, size=3)
        u = np.clip(v + rng.integers(-1, 2, size=3), 0, 7)
        gap = abs(np.log(ss.noise_scale(c_w, ss.psi_w(v, w, beta)))
                  - np.log(ss.noise_scale(c_w, ss.psi_w(u, w, beta))))
        assert gap <= beta / 2 + 1e-12, f"v={v}, u={u}: |ln sigma gap| {gap} > beta/2"


# ----------------------------------------------------------------- P5 ranges
def test_p5_psi_between_local_and_global_and_range_extension_is_inert():
    rng = np.random.default_rng(9)
    n, m, beta, c = 6, 30, 0.02, 0.4
    w = rng.random(n)
    rho = rng.dirichlet(np.ones(n))
    for _ in range(100):
        v = rng.integers(0, m + 1, size=n)
        pw = ss.psi_w(v, w, beta)
        assert ss.phi_w(v, w, 0) <= pw * (1 + 1e-14) and pw <= ss.global_psi_w(w) * (1 + 1e-14)
        longer_w = np.max(np.exp(-beta * np.arange(3 * m)) * ss.phi_w(v, w, np.arange(3 * m)))
        assert longer_w == pytest.approx(pw, rel=1e-13)
        pl = ss.psi_lambda(v, rho, m, c, beta)
        glob = ss.global_psi_lambda(rho, m, c)
        assert ss.phi_lambda(v, rho, m, c, 0) <= pl * (1 + 1e-14) and pl <= glob * (1 + 1e-14)
        assert glob == pytest.approx(ss.phi_lambda(v, rho, m, c, m), rel=1e-14)
        longer_l = np.max(np.exp(-beta * np.arange(3 * m)) * ss.phi_lambda(v, rho, m, c, np.arange(3 * m)))
        assert longer_l == pytest.approx(pl, rel=1e-13)


def test_global_psi_w_is_phi_w_at_counts_at_most_one():
    w = np.array([0.1, 0.4, 0.5])
    assert ss.global_psi_w(w) == pytest.approx(ss.phi_w([1, 0, 1], w, 0))


# ----------------------------------------------------------------- P6 monotonicity
def test_p6_phi_non_decreasing_in_k():
    rng = np.random.default_rng(1)
    for _ in range(50):
        v = rng.integers(0, 40, size=5)
        w = rng.random(5)
        assert np.all(np.diff(ss.phi_w(v, w, np.arange(45))) >= -1e-15)
        assert np.all(np.diff(ss.phi_lambda(v, w, 40, 0.3, np.arange(45))) >= -1e-15)


def test_p6_psi_monotone_in_each_count():
    rng = np.random.default_rng(4)
    w = rng.random(4)
    for _ in range(100):
        v = rng.integers(0, 20, size=4)
        s = int(rng.integers(4))
        up = v.copy()
        up[s] += 1
        assert ss.psi_w(up, w, 0.05) <= ss.psi_w(v, w, 0.05) + 1e-15
        assert ss.psi_lambda(up, w, 21, 0.2, 0.05) >= ss.psi_lambda(v, w, 21, 0.2, 0.05) - 1e-15


def test_p6_sigma_non_increasing_in_epsilon_and_delta():
    counts, w, d = np.array([30, 5, 2, 0]), np.full(4, 0.25), 4
    phi = np.eye(4)

    def sigma(eps, delta):
        alpha, beta = ss.privacy_constants(eps, delta, d)
        return ss.noise_scale(ss.constant_w(alpha, 1.0, phi, w), ss.psi_w(counts, w, beta))

    eps_grid = [0.05, 0.1, 0.3, 0.7, 1.0]
    s_eps = [sigma(e, 0.1) for e in eps_grid]
    assert all(a >= b for a, b in zip(s_eps, s_eps[1:])), f"sigma vs epsilon {s_eps}"
    s_del = [sigma(0.5, dl) for dl in [0.001, 0.01, 0.1, 0.5]]
    assert all(a >= b for a, b in zip(s_del, s_del[1:])), f"sigma vs delta {s_del}"


def test_p6_lsw_sigma_non_increasing_for_scaled_counts():
    q = np.array([1.0, 0.6, 0.3, 0.05, 0.01])
    w = np.full(5, 0.2)
    _, beta = ss.privacy_constants(0.5, 0.1, 5)
    psis = [ss.psi_w(np.round(q * m).astype(int), w, beta) for m in [10, 100, 1000, 10_000, 100_000]]
    assert all(a >= b for a, b in zip(psis, psis[1:])), f"psi^w vs m {psis}"
    assert psis[-1] < 0.05 * psis[0], f"psi^w should fall a lot by m=1e5: {psis}"


def test_p6_lsl_sigma_decreases_for_large_m_when_p_above_one_third():
    q = np.array([1.0, 0.6, 0.3, 0.05, 0.01])
    rho = np.full(5, 0.2)
    phi_norm = 1.0
    alpha, beta = ss.privacy_constants(0.5, 0.1, 5)
    sig = []
    for m in [1_000, 10_000, 100_000]:
        lam = 1.0 * m**0.6
        c = ss.c_lambda(phi_norm, rho, lam)
        big_c = ss.constant_lambda(alpha, 1.0, phi_norm, rho, lam)
        sig.append(ss.noise_scale(big_c, ss.psi_lambda(np.round(q * m).astype(int), rho, m, c, beta)))
    assert sig[0] > sig[1] > sig[2], f"DP-LSL sigma with lambda = m^0.6 should fall: {sig}"


# ----------------------------------------------------------------- numerics and norms
def test_log_space_handles_huge_k_beta_without_warnings():
    with np.errstate(all="raise"):
        psi, k = ss.psi_w([200_000, 3], [0.5, 0.5], 50.0, return_argmax=True)
    assert k == 0 and psi == pytest.approx(0.5 / 200_000**2 + 0.5 / 9, rel=1e-13)
    with np.errstate(all="raise"):
        pl = ss.psi_lambda([5000, 0], [0.5, 0.5], 5000, 0.1, 40.0)
    assert pl == pytest.approx(ss.phi_lambda([5000, 0], [0.5, 0.5], 5000, 0.1, 0), rel=1e-13)


def test_infinite_beta_gives_phi_zero_and_zero_beta_gives_global():
    v, w = np.array([5, 2, 0]), np.array([0.2, 0.3, 0.5])
    assert ss.psi_w(v, w, np.inf) == pytest.approx(ss.phi_w(v, w, 0))
    assert ss.psi_w(v, w, 0.0) == pytest.approx(ss.global_psi_w(w))
    assert ss.psi_lambda(v, w, 5, 0.3, 0.0) == pytest.approx(ss.global_psi_lambda(w, 5, 0.3))


@pytest.mark.parametrize("beta", [-0.1, float("nan")])
def test_negative_or_nan_beta_raises(beta):
    with pytest.raises(ValueError, match=r"beta must be in \[0, inf\]"):
        ss.psi_w([1], [1.0], beta)


def test_matrix_norms_and_weighted_pinv_norm():
    phi = np.array([[3.0, 0.0], [0.0, 4.0], [0.0, 0.0]])
    assert ss.matrix_norm(phi) == pytest.approx(4.0)
    assert ss.matrix_norm(phi, "frobenius") == pytest.approx(5.0)
    w = np.array([1.0, 0.25, 1.0])  # W^{1/2} Phi = diag(3, 2) padded: lambda_min(Phi'W Phi) = 4
    assert ss.weighted_pinv_norm(phi, w) == pytest.approx(0.5)
    assert ss.weighted_pinv_norm(phi, w, "frobenius") == pytest.approx(np.sqrt(1 / 9 + 1 / 4))
    assert ss.weighted_pinv_norm(phi, np.array([1.0, 0.0, 1.0])) == np.inf
    with pytest.raises(ValueError, match="matrix_norm must be one of"):
        ss.matrix_norm(phi, "nuclear")


def test_constant_lambda_refuses_lambda_at_or_below_threshold():
    rho = np.array([0.5, 0.5])
    thr = ss.regularization_threshold(2.0, rho)
    assert thr == pytest.approx(2.0)
    with pytest.raises(ValueError, match=r"regularization must be in \(2.0, inf\)"):
        ss.constant_lambda(1.0, 1.0, 2.0, rho, 2.0)


def test_smoothed_scale_never_exceeds_global_scale():
    rng = np.random.default_rng(77)
    for _ in range(300):
        n = int(rng.integers(1, 8))
        m = int(rng.integers(1, 60))
        v = rng.integers(0, m + 1, size=n)
        w = rng.random(n)
        beta = float(rng.choice([1e-4, 1e-2, 0.3]))
        assert ss.psi_w(v, w, beta) <= ss.global_psi_w(w) * (1 + 1e-14)
        assert ss.psi_lambda(v, w, m, 0.3, beta) <= ss.global_psi_lambda(w, m, 0.3) * (1 + 1e-14)


def test_noise_scale_zero_constant():
    assert ss.noise_scale(0.0, 5.0) == 0.0
    assert ss.noise_scale(2.0, 9.0) == pytest.approx(6.0)


# ----------------------------------------------------------------- psi: blockwise search vs dense
def _reference_psi(profile_at, k_max, beta):
    """Independent brute force: every k in 0..k_max, plain Python floats."""
    best, best_k, best_val = -math.inf, 0, 0.0
    for k in range(k_max + 1):
        phi = profile_at(k)
        score = math.log(phi) - k * beta
        if score > best:
            best, best_k, best_val = score, k, phi * math.exp(-k * beta)
    return best_val, best_k


def _ref_phi_w(counts, w, k):
    return sum(ws / max(int(n) - k, 1) ** 2 for n, ws in zip(counts, w))


def _ref_phi_lambda(counts, rho, m, c, k):
    mass = sum(r * min(int(n) + k, m) for n, r in zip(counts, rho))
    return (c * math.sqrt(mass) + math.sqrt(sum(r * r for r in rho))) ** 2


@pytest.mark.parametrize("block", [5, 64, None])
@pytest.mark.parametrize("seed", range(4))
def test_psi_equals_the_dense_brute_force(seed, block, monkeypatch):
    if block is not None:  # small blocks: many blocks skipped or cut short by the search
        monkeypatch.setattr(ss, "_BLOCK_ELEMENTS", block)
    rng = np.random.default_rng(seed)
    for _ in range(12):
        n = int(rng.integers(1, 7))
        m = int(rng.integers(1, 400))
        counts = rng.integers(0, m + 1, size=n)
        if rng.random() < 0.3:
            counts[: max(1, n // 2)] = rng.integers(0, 3)  # rarely visited states
        w = rng.random(n) + 0.01
        beta = float(rng.choice([0.0, 1e-4, 3e-3, 0.05, 0.7]))
        c = float(rng.choice([0.01, 0.3, 4.0]))
        psi, k = ss.psi_w(counts, w, beta, return_argmax=True)
        ref, ref_k = _reference_psi(lambda kk: _ref_phi_w(counts, w, kk), int(counts.max()), beta)
        assert psi == pytest.approx(ref, rel=1e-12) and k == ref_k, (counts, beta)
        psi, k = ss.psi_lambda(counts, w, m, c, beta, return_argmax=True)
        ref, ref_k = _reference_psi(lambda kk: _ref_phi_lambda(counts, w, m, c, kk), m, beta)
        assert psi == pytest.approx(ref, rel=1e-12) and k == ref_k, (counts, m, beta, c)


def _chain_like_counts(m, n):
    # the lazy chain's signature: state s is visited by about m (s + 1) / n episodes
    return np.minimum(np.round(m * (np.arange(n) + 1) / n), m).astype(np.int64)


@pytest.mark.parametrize("m", [100_000, 1_000_000])
def test_psi_memory_stays_small_for_large_m(m):
    n = 200
    counts = _chain_like_counts(m, n)
    counts[:3] = (0, 1, 7)  # a few rarely visited states: the search must run far in k
    w = np.full(n, 1.0 / n)
    _, beta = ss.privacy_constants(0.1, 0.1, n)
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        ss.psi_w(counts, w, beta)
        ss.psi_lambda(counts, w, m, 0.05, beta)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # a dense (m + 1) x N float64 profile alone would take 8 (m + 1) N bytes (160 MB at m = 1e5)
    assert peak < 16 * 2**20, f"psi at m={m}, N={n} peaked at {peak / 2**20:.1f} MiB"

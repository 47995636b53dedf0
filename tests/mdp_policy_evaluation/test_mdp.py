"""Tests of pydpowl.mdp_policy_evaluation.mdp (lazy chain, random walk, sampler)."""

import numpy as np
import pytest
from numpy.testing import assert_allclose
from scipy import stats

from pydpowl.mdp_policy_evaluation.episodes import episode_statistics
from pydpowl.mdp_policy_evaluation.mdp import MarkovRewardProcess, lazy_chain, random_walk


def test_lazy_chain_structure():
    mrp = lazy_chain(5)
    p = mrp.transition
    assert_allclose(p.sum(axis=1), 1.0)
    assert p[2, 2] == 0.5 and p[2, 3] == 0.5 and p[4, 4] == 1.0
    assert mrp.reward[3, 4] == 1.0 and mrp.reward.sum() == 1.0
    assert mrp.absorbing.tolist() == [False] * 4 + [True]
    assert_allclose(mrp.start, 0.2)
    assert mrp.max_steps == 200


def test_lazy_chain_value_matches_recursion():
    # V(N-1) = 0; V(N-2) = (1/2) / (1 - gamma/2); V(s) = (gamma/2)/(1 - gamma/2) V(s+1)
    g, n = 0.99, 8
    v = lazy_chain(n).value(g)
    ref = np.zeros(n)
    ref[n - 2] = 0.5 / (1 - 0.5 * g)
    for s in range(n - 3, -1, -1):
        ref[s] = 0.5 * g / (1 - 0.5 * g) * ref[s + 1]
    assert_allclose(v, ref, rtol=1e-12, atol=1e-15)


def test_random_walk_value_tends_to_hitting_probability():
    v = random_walk(7).value(1 - 1e-10)
    assert_allclose(v, np.arange(7) / 6 * np.r_[0, np.ones(5), 0], atol=1e-7)


def test_value_with_zero_discount_is_expected_reward():
    mrp = lazy_chain(4)
    assert_allclose(mrp.value(0.0), [0, 0, 0.5, 0])


def test_sampled_episodes_are_well_formed():
    mrp = lazy_chain(6)
    eps = mrp.sample(500, rng=np.random.default_rng(1))
    assert len(eps) == 500
    for i, ep in enumerate(eps):
        s, r = ep.states, ep.rewards
        assert s[-1] == 5 and r[-1] == 0.0, f"episode {i} does not end in the absorbing state"
        assert np.all(np.diff(s) >= 0) and np.all(np.diff(s) <= 1), f"episode {i} jumps: {s}"
        assert r.sum() == (1.0 if len(s) > 1 else 0.0), f"episode {i} rewards {r}"
        if len(s) > 1:
            assert r[-2] == 1.0


def test_start_state_is_uniform():
    eps = lazy_chain(6).sample(6000, rng=np.random.default_rng(2))
    freq = np.bincount([ep.states[0] for ep in eps], minlength=6)
    p = stats.chisquare(freq).pvalue
    assert p > 1e-3, f"chi-square of start states vs uniform: p = {p:.2e}, counts {freq}"


def test_monte_carlo_averages_approach_true_values():
    mrp, g = lazy_chain(6), 0.9
    st = episode_statistics(mrp.sample(20_000, rng=np.random.default_rng(3)), n_states=6, discount=g)
    err = np.max(np.abs(st.averages - mrp.value(g)))
    assert err < 0.02, f"N=6, m=20000: max |F_X - V| = {err:.4f} >= 0.02"


def test_random_walk_monte_carlo_is_consistent():
    mrp, g = random_walk(5), 0.95
    st = episode_statistics(mrp.sample(20_000, rng=np.random.default_rng(4)), n_states=5, discount=g)
    err = np.max(np.abs(st.averages - mrp.value(g)))
    assert err < 0.02, f"random walk N=5: max |F_X - V| = {err:.4f} >= 0.02"
    assert st.counts[0] > 0 and st.counts[4] > 0


def test_episode_cap_truncates_without_recording_unobserved_state():
    mrp = lazy_chain(5, stay_probability=0.9, max_steps=10)
    eps = mrp.sample(400, rng=np.random.default_rng(5))
    truncated = [ep for ep in eps if ep.states[-1] != 4]
    assert truncated, "with stay probability 0.9 some episodes must hit the cap"
    assert all(len(ep) == 10 for ep in truncated)
    assert max(len(ep) for ep in eps) <= 11


def test_sampling_is_reproducible_and_leaves_global_state_alone():
    before = np.random.get_state()[1].copy()
    a = lazy_chain(7).sample(50, rng=np.random.default_rng(9))
    b = lazy_chain(7).sample(50, rng=np.random.default_rng(9))
    assert all(np.array_equal(x.states, y.states) and np.array_equal(x.rewards, y.rewards) for x, y in zip(a, b))
    assert np.array_equal(before, np.random.get_state()[1])


def test_sampling_in_several_chunks(monkeypatch):
    import pydpowl.mdp_policy_evaluation.mdp as mdp_mod

    monkeypatch.setattr(mdp_mod, "_CHUNK", 7)
    eps = lazy_chain(4).sample(20, rng=np.random.default_rng(0))
    assert len(eps) == 20 and all(ep.states[-1] == 3 for ep in eps)


@pytest.mark.parametrize(
    "kwargs, exc, pattern",
    [
        (dict(transition=np.ones((2, 3)) / 3), ValueError, r"transition must be square"),
        (dict(transition=np.array([[0.5, 0.4], [0, 1.0]])), ValueError, r"rows summing to 1"),
        (dict(reward=np.zeros((3, 3))), ValueError, r"reward must have shape \(2, 2\)"),
        (dict(start=[0.7, 0.7]), ValueError, r"start must be a probability vector"),
        (dict(absorbing=[0, 1]), ValueError, r"absorbing must be a boolean array"),
        (dict(max_steps=0), ValueError, r"max_steps must be an integer >= 1"),
    ],
)
def test_bad_process_definitions(kwargs, exc, pattern):
    args = dict(transition=np.array([[0.5, 0.5], [0.0, 1.0]]), reward=np.zeros((2, 2)),
                start=[1.0, 0.0], absorbing=np.array([False, True]))
    args.update(kwargs)
    max_steps = args.pop("max_steps", 200)
    with pytest.raises(exc, match=pattern):
        MarkovRewardProcess(**args, max_steps=max_steps)


@pytest.mark.parametrize(
    "call, exc, pattern",
    [
        (lambda: lazy_chain(1), ValueError, r"n_states must be an integer >= 2"),
        (lambda: lazy_chain(4, stay_probability=1.0), ValueError, r"stay_probability must be in \[0, 1\)"),
        (lambda: random_walk(2), ValueError, r"n_states must be an integer >= 3"),
        (lambda: lazy_chain(4).sample(0, rng=np.random.default_rng(0)), ValueError, r"n_episodes must be"),
        (lambda: lazy_chain(4).sample(3, rng=0), TypeError, r"rng must be a numpy.random.Generator"),
        (lambda: lazy_chain(4).value(1.0), ValueError, r"discount must be in \[0, 1\)"),
    ],
)
def test_bad_arguments(call, exc, pattern):
    with pytest.raises(exc, match=pattern):
        call()


# ----------------------------------------------------------------- exact fast sampler of the chain
def _episodes_from_durations(s0, durations, n, cap, reward):
    """Spell out lazy-chain episodes: D_j transitions in state j (D_j - 1 stays, one move)."""
    out, pos = [], 0
    for start in s0:
        states = []
        for j in range(start, n - 1):
            states += [j] * int(durations[pos])
            pos += 1
        states.append(n - 1)  # recorded with reward 0 if reached
        rewards = [0.0] * len(states)
        if len(states) > 1:
            rewards[-2] = reward  # the move into N-1
        n_trans = len(states) - 1
        if n_trans > cap:  # cut after cap transitions: states[0..cap-1] observed, no reward
            states, rewards = states[:cap], [0.0] * cap
        out.append((np.array(states), np.array(rewards)))
    assert pos == len(durations)
    return out


@pytest.mark.parametrize("n, q, cap, gamma, reward", [(6, 0.5, 200, 0.9, 1.0), (5, 0.8, 9, 0.95, 2.5),
                                                      (3, 0.0, 1, 0.0, 1.0), (7, 0.6, 12, 1 - 1e-9, 0.3)])
def test_chain_statistics_match_the_spelled_out_episodes(n, q, cap, gamma, reward):
    from pydpowl.mdp_policy_evaluation.mdp import _chain_block_statistics

    rng = np.random.default_rng(11)
    s0 = rng.integers(0, n, size=300)
    durations = rng.geometric(1 - q, size=int(np.sum(n - 1 - s0)))
    counts, sums, ranges = _chain_block_statistics(s0, durations, n, cap, gamma, reward)
    ref = episode_statistics(_episodes_from_durations(s0, durations, n, cap, reward),
                             n_states=n, discount=gamma)
    assert np.array_equal(counts, ref.counts)
    seen = ref.counts > 0
    assert_allclose(sums[seen] / counts[seen], ref.averages[seen], rtol=1e-12, atol=1e-15)
    for row, name in enumerate(("reward_min", "reward_max", "return_min", "return_max")):
        assert_allclose(ranges[row], getattr(ref, name), rtol=1e-12, atol=1e-15, err_msg=name)
    if cap < 20:
        assert (ranges[3] == 0).any() and (ranges[3] > 0).any(), "both cut and absorbed episodes"


@pytest.mark.parametrize("n, q, cap, gamma", [(6, 0.5, 200, 0.9), (5, 0.8, 10, 0.95)])
def test_fast_chain_sampler_has_the_law_of_the_step_by_step_sampler(n, q, cap, gamma):
    mrp, m = lazy_chain(n, stay_probability=q, max_steps=cap), 20_000
    fast = mrp.sample_statistics(m, discount=gamma, rng=np.random.default_rng(1))
    slow = episode_statistics(mrp.sample(m, rng=np.random.default_rng(2)), n_states=n, discount=gamma)
    # visit frequencies: two binomial proportions per state
    p_f, p_s = fast.counts / m, slow.counts / m
    se = np.sqrt((p_f * (1 - p_f) + p_s * (1 - p_s)) / m) + 1e-12
    assert np.all(np.abs(p_f - p_s) <= 5 * se), f"visit frequencies {p_f} vs {p_s}"
    # first-visit averages: returns lie in [0, 1], so their sd is at most 1/2
    se = 0.5 * np.sqrt(1 / np.maximum(fast.counts, 1) + 1 / np.maximum(slow.counts, 1))
    assert np.all(np.abs(fast.averages - slow.averages) <= 5 * se), (fast.averages, slow.averages)
    for name in ("reward_max", "return_max"):
        # rounded: gamma^k by power and by recursion differ in the last bits
        a, b = np.round(getattr(fast, name), 9), np.round(getattr(slow, name), 9)
        assert stats.ks_2samp(a, b).pvalue > 1e-3, name
    assert fast.n_episodes == m and fast.discount == gamma and fast.return_min.max() == 0.0


def test_fast_chain_sampler_is_consistent_and_reproducible(monkeypatch):
    import pydpowl.mdp_policy_evaluation.mdp as mdp_mod

    mrp, g = lazy_chain(8), 0.9
    st = mrp.sample_statistics(40_000, discount=g, rng=np.random.default_rng(3))
    err = np.max(np.abs(st.averages - mrp.value(g)))
    assert err < 0.01, f"N=8, m=40000: max |F_X - V| = {err:.4f}"
    assert_allclose(st.counts / 40_000, (np.arange(8) + 1) / 8, atol=0.01)  # s visited from s0 <= s
    monkeypatch.setattr(mdp_mod, "_STATS_BLOCK", 40)  # 5 episodes per block
    a = mrp.sample_statistics(23, discount=g, rng=np.random.default_rng(4))
    b = mrp.sample_statistics(23, discount=g, rng=np.random.default_rng(4))
    assert np.array_equal(a.counts, b.counts) and np.array_equal(a.averages, b.averages)
    assert a.reward_max.shape == (23,) and a.counts[-1] == 23


def test_generic_sample_statistics_is_episode_statistics_of_sample():
    mrp = random_walk(5)
    a = mrp.sample_statistics(50, discount=0.9, rng=np.random.default_rng(6))
    b = episode_statistics(mrp.sample(50, rng=np.random.default_rng(6)), n_states=5, discount=0.9)
    assert np.array_equal(a.counts, b.counts) and np.array_equal(a.averages, b.averages)
    with pytest.raises(TypeError, match="rng must be a numpy.random.Generator"):
        lazy_chain(4).sample_statistics(3, discount=0.9, rng=1)
    with pytest.raises(ValueError, match=r"discount must be in \[0, 1\)"):
        lazy_chain(4).sample_statistics(3, discount=1.0, rng=np.random.default_rng(0))

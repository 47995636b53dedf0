"""Tests of pydpowl.mdp_policy_evaluation.episodes (first-visit returns, counts, checks)."""

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from pydpowl.mdp_policy_evaluation.episodes import (
    Episode,
    EpisodeStatistics,
    check_discount,
    check_episodes,
    episode_statistics,
    first_visit_returns,
)


def _brute_force_returns(states, rewards, gamma):
    """F_{x,s} straight from the definition: sum_{t >= t_s} gamma^(t - t_s) r_t."""
    out = {}
    for t_s, s in enumerate(states):
        if s in out:
            continue
        out[s] = sum(gamma ** (t - t_s) * rewards[t] for t in range(t_s, len(states)))
    return out


def test_first_visit_returns_hand_example():
    # states 0,1,0,2 with rewards 1,0,2,3 and gamma=1/2:
    # G_3 = 3, G_2 = 2 + 1.5 = 3.5, G_1 = 0 + 1.75 = 1.75, G_0 = 1 + 0.875 = 1.875
    visited, ret = first_visit_returns(([0, 1, 0, 2], [1.0, 0.0, 2.0, 3.0]), 0.5)
    assert_array_equal(visited, [0, 1, 2])
    assert_allclose(ret, [1.875, 1.75, 3.0], rtol=0, atol=1e-15)


def test_first_visit_returns_discount_zero_is_first_reward():
    visited, ret = first_visit_returns(([2, 2, 1], [5.0, 7.0, 1.0]), 0.0)
    assert_array_equal(visited, [1, 2])
    assert_allclose(ret, [1.0, 5.0])


def test_first_visit_returns_match_definition_on_random_episodes():
    rng = np.random.default_rng(11)
    worst = 0.0
    for _ in range(200):
        T = int(rng.integers(1, 30))
        s = rng.integers(0, 6, size=T)
        r = rng.random(T)
        gamma = float(rng.random() * 0.999)
        visited, ret = first_visit_returns((s, r), gamma)
        ref = _brute_force_returns(list(s), list(r), gamma)
        assert sorted(ref) == list(visited)
        worst = max(worst, max(abs(ref[v] - f) for v, f in zip(visited, ret)))
    assert worst < 1e-12, f"random episodes: max |F - definition| = {worst:.2e} >= 1e-12"


def test_long_episode_is_stable():
    # 5000 rewards of 1 with gamma=0.5: every return is 2 - 2^-(T-t) (no overflow)
    visited, ret = first_visit_returns((np.zeros(5000, dtype=int), np.ones(5000)), 0.5)
    assert_allclose(ret, [2.0], rtol=1e-12)


def test_episode_statistics_counts_and_averages():
    eps = [
        ([0, 1, 0], [1.0, 0.0, 2.0]),
        Episode(states=np.array([1, 2]), rewards=np.array([4.0, 0.0])),
        [[2], [6.0]],
    ]
    st = episode_statistics(eps, n_states=4, discount=0.5)
    # gamma=1/2: ep0 F_0 = 1 + 0 + 0.5 = 1.5, F_1 = 0 + 1 = 1; ep1 F_1 = 4, F_2 = 0; ep2 F_2 = 6
    assert st.n_episodes == 3 and st.n_states == 4 and st.discount == 0.5
    assert_array_equal(st.counts, [1, 2, 2, 0])
    assert_allclose(st.averages, [1.5, 2.5, 3.0, 0.0])
    assert_allclose(st.reward_min, [0.0, 0.0, 6.0])
    assert_allclose(st.reward_max, [2.0, 4.0, 6.0])
    assert_allclose(st.return_max, [1.5, 4.0, 6.0])


def test_counts_move_by_at_most_one_under_replacement():
    rng = np.random.default_rng(3)
    eps = []
    for _ in range(20):
        T = int(rng.integers(1, 8))
        eps.append((rng.integers(0, 5, size=T), rng.random(T)))
    base = episode_statistics(eps, n_states=5, discount=0.9).counts
    for i in range(20):
        T = int(rng.integers(1, 8))
        other = list(eps)
        other[i] = (rng.integers(0, 5, size=T), rng.random(T))
        diff = np.abs(episode_statistics(other, n_states=5, discount=0.9).counts - base)
        assert diff.max() <= 1, f"replacing episode {i}: max count change {diff.max()} > 1"


def test_statistics_repr_hides_private_fields():
    st = episode_statistics([([0, 1], [0.25, 0.75])], n_states=2, discount=0.9)
    text = repr(st)
    assert "0.25" not in text and "0.75" not in text and "counts" not in text
    assert "n_episodes=1" in text


def test_float_states_with_integer_values_are_accepted():
    out = check_episodes([(np.array([0.0, 2.0]), [1, 1])], 3)
    assert out[0].states.dtype == np.int64
    assert_array_equal(out[0].states, [0, 2])


@pytest.mark.parametrize(
    "episodes, exc, pattern",
    [
        ([([0, 3], [1.0, 1.0])], ValueError, r"states must be in \[0, 3\) \(the rows of features\); 1 of 2"),
        ([([-1], [1.0])], ValueError, r"states must be in \[0, 3\)"),
        ([([0.5], [1.0])], TypeError, r"states must be integers"),
        ([([True], [1.0])], TypeError, r"states must be integers"),
        ([([0, 1], [1.0])], ValueError, r"same length, got 2 states and 1 rewards"),
        ([([], [])], ValueError, r"episodes\[0\] is empty"),
        ([], ValueError, r"at least 1 episode"),
        ([([0], [np.nan])], ValueError, r"rewards must be finite; 1 of 1"),
        ([([0], ["a"])], TypeError, r"rewards must be real numbers"),
        ([np.array([[0, 1.0], [1, 0.0]])], TypeError, r"Arrays of shape \(T, 2\) are refused"),
        ([([0], [1.0], [2])], TypeError, r"pair \(states, rewards\)"),
        ([([[0, 1]], [[1.0, 1.0]])], ValueError, r"must be 1-D"),
        (np.zeros((2, 2)), TypeError, r"got an ndarray"),
        (5, TypeError, r"sequence of Episode"),
    ],
)
def test_bad_episodes_raise_clear_errors(episodes, exc, pattern):
    with pytest.raises(exc, match=pattern):
        check_episodes(episodes, 3)


def test_error_messages_do_not_quote_private_values():
    with pytest.raises(ValueError) as info:
        check_episodes([([0], [1.0]), ([0, 17], [0.123456, 0.654321])], 3)
    msg = str(info.value)
    assert "episodes[1]" in msg and "17" not in msg and "0.123456" not in msg


def test_generators_of_episodes_are_accepted():
    st = episode_statistics((([0], [1.0]) for _ in range(3)), n_states=1, discount=0.0)
    assert st.n_episodes == 3 and st.counts[0] == 3


@pytest.mark.parametrize("bad", [1.0, -0.1, 1.5, float("nan")])
def test_discount_outside_unit_interval_raises(bad):
    with pytest.raises(ValueError, match=r"discount must be in \[0, 1\)"):
        check_discount(bad)


def test_discount_of_wrong_type_raises():
    with pytest.raises(TypeError, match="discount must be a real number"):
        check_discount("0.9")


def test_episode_statistics_rejects_bad_discount():
    with pytest.raises(ValueError, match=r"discount must be in \[0, 1\), got discount=1.0"):
        episode_statistics([([0], [1.0])], n_states=1, discount=1.0)


def test_episode_len_and_statistics_type():
    ep = Episode(states=np.array([0, 1, 1]), rewards=np.zeros(3))
    assert len(ep) == 3
    assert isinstance(episode_statistics([ep], n_states=2, discount=0.5), EpisodeStatistics)

"""Episodes, first-visit Monte Carlo returns and per-state summaries.

An episode is the record ``(s_0, r_0, s_1, r_1, ..., s_T, r_T)`` of one run of
the evaluated policy, where ``r_t`` is the reward received after leaving
``s_t``. It is stored as two equal-length arrays, ``states`` (integers in
``[0, n_states)``, the rows of the feature matrix) and ``rewards``.

Everything computed here is a function of the private data. The objects are
for the analyst's own use and are never part of a release.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, List, Sequence, Tuple, Union

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.signal import lfilter

from .._validation import check_int, check_probability

__all__ = [
    "Episode",
    "EpisodeStatistics",
    "check_discount",
    "check_episodes",
    "first_visit_returns",
    "episode_statistics",
]


@dataclass(frozen=True, eq=False)
class Episode:
    """One trajectory of the evaluated policy.

    Parameters
    ----------
    states : ndarray of shape (T,), dtype int64
        Visited states ``s_0, ..., s_{T-1}``, as row indices of the features.
    rewards : ndarray of shape (T,), dtype float64
        ``rewards[t]`` is the reward received after leaving ``states[t]``.
        An absorbing terminal state is recorded with reward 0.
    """

    states: NDArray[np.int64]
    rewards: NDArray[np.float64]

    def __len__(self) -> int:
        return int(self.states.shape[0])


@dataclass(frozen=True, eq=False)
class EpisodeStatistics:
    """First-visit Monte Carlo summaries of a set of episodes (private).

    Every field except ``n_states`` and ``discount`` is a function of the
    private episodes. The estimators accept this object in place of the
    episodes (to share the work between several fits) and never store it.

    Attributes
    ----------
    n_episodes : int
        ``m``, the number of episodes (public).
    n_states : int
        ``N``, the number of states (public).
    discount : float
        ``gamma`` used for the returns (public).
    counts : ndarray of shape (N,), dtype int64
        ``n_s``: number of episodes that visit state ``s`` (the signature).
    averages : ndarray of shape (N,)
        ``F_{X,s}``: mean first-visit return of the ``n_s`` visitors, 0 when
        ``n_s = 0``.
    reward_min, reward_max : ndarray of shape (m,)
        Smallest and largest reward of each episode (used only to check the
        public bounds, reporting counts and positions; never released).
    return_min, return_max : ndarray of shape (m,)
        Smallest and largest first-visit return of each episode (same use).
    """

    n_episodes: int
    n_states: int
    discount: float
    counts: NDArray[np.int64]
    averages: NDArray[np.float64]
    reward_min: NDArray[np.float64]
    reward_max: NDArray[np.float64]
    return_min: NDArray[np.float64]
    return_max: NDArray[np.float64]

    @classmethod
    def from_sums(cls, counts: NDArray[np.int64], sums: NDArray[np.float64], ranges: NDArray[np.float64], *,
                  discount: float) -> "EpisodeStatistics":
        """Summaries from the visit counts, the sums of first-visit returns and the per-episode ranges.

        ``ranges`` has shape ``(4, m)``: rows reward min, reward max, return min,
        return max of each episode. The average of an unvisited state is 0.
        """
        averages = np.zeros(counts.shape[0], dtype=np.float64)
        seen = counts > 0
        averages[seen] = sums[seen] / counts[seen]
        return cls(
            n_episodes=int(ranges.shape[1]),
            n_states=int(counts.shape[0]),
            discount=discount,
            counts=counts,
            averages=averages,
            reward_min=ranges[0],
            reward_max=ranges[1],
            return_min=ranges[2],
            return_max=ranges[3],
        )

    def __repr__(self) -> str:  # never print private values by accident
        return (
            f"EpisodeStatistics(n_episodes={self.n_episodes}, n_states={self.n_states}, "
            f"discount={self.discount!r}, <private fields hidden>)"
        )


def check_discount(value: Any, name: str = "discount") -> float:
    """Return the discount factor as a float in ``[0, 1)``."""
    return check_probability(name, value, low_open=False, high_open=True)


def _check_one_episode(
    index: int, episode: Any, n_states: int
) -> Tuple[NDArray[np.int64], NDArray[np.float64]]:
    where = f"episodes[{index}]"
    if isinstance(episode, Episode):
        states, rewards = episode.states, episode.rewards
    elif isinstance(episode, (tuple, list)) and len(episode) == 2:
        states, rewards = episode
    else:
        raise TypeError(
            f"{where} must be an Episode or a pair (states, rewards) of 1-D "
            f"array-likes, got {type(episode).__name__}"
            + (f" of length {len(episode)}" if isinstance(episode, (tuple, list)) else "")
            + ". Arrays of shape (T, 2) are refused because (2, 2) would be ambiguous."
        )
    s = np.asarray(states)
    r = np.asarray(rewards)
    if s.ndim != 1 or r.ndim != 1:
        raise ValueError(
            f"{where}: states and rewards must be 1-D, got shapes {s.shape} and {r.shape}."
        )
    if s.shape[0] != r.shape[0]:
        raise ValueError(
            f"{where}: states and rewards must have the same length, got "
            f"{s.shape[0]} states and {r.shape[0]} rewards."
        )
    if s.shape[0] == 0:
        raise ValueError(f"{where} is empty; every episode must visit at least one state.")
    if s.dtype.kind == "b" or s.dtype.kind not in "iuf":
        raise TypeError(f"{where}: states must be integers, got dtype {s.dtype}.")
    if s.dtype.kind == "f":
        if not np.all(np.isfinite(s)) or np.any(s != np.round(s)):
            raise TypeError(
                f"{where}: states must be integers; {int(np.sum(~np.isfinite(s) | (s != np.round(s))))}"
                f" of {s.size} entries are not whole numbers."
            )
    s = s.astype(np.int64)
    bad = (s < 0) | (s >= n_states)
    if bad.any():
        raise ValueError(
            f"{where}: states must be in [0, {n_states}) (the rows of features); "
            f"{int(bad.sum())} of {s.size} entries are not (first at position "
            f"{int(np.flatnonzero(bad)[0])})."
        )
    if r.dtype.kind == "b" or r.dtype.kind not in "iuf":
        raise TypeError(f"{where}: rewards must be real numbers, got dtype {r.dtype}.")
    r = r.astype(np.float64)
    if not np.all(np.isfinite(r)):
        raise ValueError(
            f"{where}: rewards must be finite; {int(np.sum(~np.isfinite(r)))} of {r.size} are not."
        )
    return s, r


def check_episodes(episodes: Any, n_states: int) -> List[Episode]:
    """Validate a sequence of episodes against ``n_states`` feature rows.

    Parameters
    ----------
    episodes : sequence of Episode or of (states, rewards) pairs
        The private data ``X``; at least one episode.
    n_states : int
        Number of rows of the feature matrix; states must lie in
        ``[0, n_states)``.

    Returns
    -------
    list of Episode
        Validated copies (int64 states, float64 rewards).

    Raises
    ------
    TypeError
        If ``episodes`` is not a sequence, or an episode has the wrong type.
    ValueError
        If an episode is empty, has mismatched lengths, non-finite rewards or
        states outside ``[0, n_states)``. Messages give counts and positions,
        never values.
    """
    n_states = check_int("n_states", n_states, minimum=1)
    if isinstance(episodes, (str, bytes, np.ndarray)) or not isinstance(episodes, Sequence):
        if isinstance(episodes, np.ndarray):
            raise TypeError(
                "episodes must be a list of Episode objects or (states, rewards) pairs, "
                "got an ndarray."
            )
        try:
            episodes = list(episodes)
        except TypeError:
            raise TypeError(
                "episodes must be a sequence of Episode objects or (states, rewards) "
                f"pairs, got {type(episodes).__name__}."
            ) from None
    if len(episodes) == 0:
        raise ValueError("episodes must contain at least 1 episode, got 0.")
    out = []
    for i, ep in enumerate(episodes):
        s, r = _check_one_episode(i, ep, n_states)
        out.append(Episode(states=s, rewards=r))
    return out


def _discounted_suffix_sums(rewards: NDArray[np.float64], discount: float) -> NDArray[np.float64]:
    """``G_t = sum_{u >= t} discount**(u - t) * rewards[u]`` for every ``t``."""
    return lfilter([1.0], [1.0, -discount], rewards[::-1])[::-1]


def first_visit_returns(
    episode: Union[Episode, Tuple[ArrayLike, ArrayLike]], discount: float
) -> Tuple[NDArray[np.int64], NDArray[np.float64]]:
    """First-visit discounted returns ``F_{x,s}`` of one episode.

    Parameters
    ----------
    episode : Episode or (states, rewards)
        One trajectory (not validated here beyond array conversion).
    discount : float
        ``gamma`` in ``[0, 1)``.

    Returns
    -------
    states : ndarray of int64
        The distinct states visited, in increasing order.
    returns : ndarray of float64
        ``F_{x,s} = sum_{t >= t_s} gamma**(t - t_s) r_t`` where ``t_s`` is the
        first visit of ``s``.
    """
    if isinstance(episode, Episode):
        s, r = episode.states, episode.rewards
    else:
        s = np.asarray(episode[0], dtype=np.int64)
        r = np.asarray(episode[1], dtype=np.float64)
    returns = _discounted_suffix_sums(r, float(discount))
    visited, first = np.unique(s, return_index=True)
    return visited, returns[first]


def episode_statistics(
    episodes: Any, *, n_states: int, discount: float
) -> EpisodeStatistics:
    """Counts ``n_s`` and first-visit averages ``F_{X,s}`` of a set of episodes.

    Parameters
    ----------
    episodes : sequence of Episode or of (states, rewards) pairs
        The private data ``X`` (validated with :func:`check_episodes`).
    n_states : int
        ``N``, the number of rows of the feature matrix.
    discount : float
        ``gamma`` in ``[0, 1)``.

    Returns
    -------
    EpisodeStatistics
        The signature ``(n_1, ..., n_N)``, the averages ``F_X`` (0 for
        unvisited states) and the data ranges used to check public bounds.
    """
    gamma = check_discount(discount)
    eps = check_episodes(episodes, n_states)
    m = len(eps)
    counts = np.zeros(n_states, dtype=np.int64)
    sums = np.zeros(n_states, dtype=np.float64)
    ranges = np.empty((4, m), dtype=np.float64)
    for i, ep in enumerate(eps):
        visited, ret = first_visit_returns(ep, gamma)
        counts[visited] += 1
        sums[visited] += ret
        ranges[:, i] = (ep.rewards.min(), ep.rewards.max(), ret.min(), ret.max())
    return EpisodeStatistics.from_sums(counts, sums, ranges, discount=gamma)

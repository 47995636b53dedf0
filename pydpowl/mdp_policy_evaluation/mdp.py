"""Small Markov reward processes for simulations: a lazy chain and a random walk.

A fixed policy in a finite MDP induces a Markov reward process: a transition
matrix ``P``, a reward ``R[s, s']`` for each transition, a start distribution
and a set of absorbing states where episodes end. :class:`MarkovRewardProcess`
samples episodes with an explicit generator and gives the true value function
``V = (I - gamma P)^{-1} rbar`` (ground truth for experiments only).
"""

from __future__ import annotations

from typing import Any, List, Tuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import check_array, check_int, check_positive, check_probability, check_vector
from .episodes import Episode, EpisodeStatistics, check_discount, episode_statistics

__all__ = ["MarkovRewardProcess", "LazyChain", "lazy_chain", "random_walk"]

_CHUNK = 4096
#: Visits (episode, state) handled at once by :meth:`LazyChain.sample_statistics`.
_STATS_BLOCK = 1 << 20


class MarkovRewardProcess:
    """A finite Markov reward process with absorbing states and an episode cap.

    Parameters
    ----------
    transition : array-like of shape (N, N)
        Row-stochastic transition matrix ``P``.
    reward : array-like of shape (N, N)
        ``reward[s, s']`` is received on the transition ``s -> s'``.
    start : array-like of shape (N,)
        Start-state distribution.
    absorbing : array-like of bool, shape (N,)
        Episodes end on reaching these states; their value is 0.
    max_steps : int, default=200
        At most this many transitions per episode.

    Notes
    -----
    An episode is recorded as ``states[t], rewards[t]`` where ``rewards[t]`` is
    the reward of the transition out of ``states[t]``. If it ends in an
    absorbing state, that state is recorded last with reward 0 (its return is
    exactly 0). If it is cut at ``max_steps`` transitions, the state reached
    last is not recorded, since no reward from it was observed.
    """

    def __init__(
        self,
        transition: ArrayLike,
        reward: ArrayLike,
        start: ArrayLike,
        absorbing: ArrayLike,
        *,
        max_steps: int = 200,
    ) -> None:
        p = check_array("transition", transition)
        n = p.shape[0]
        if p.shape != (n, n):
            raise ValueError(f"transition must be square (N, N), got shape {p.shape}.")
        if np.any(p < 0) or not np.allclose(p.sum(axis=1), 1.0, atol=1e-10):
            raise ValueError("transition must have non-negative rows summing to 1.")
        r = check_array("reward", reward)
        if r.shape != (n, n):
            raise ValueError(f"reward must have shape ({n}, {n}), got {r.shape}.")
        mu = check_vector("start", start, length=n)
        if np.any(mu < 0) or not np.isclose(mu.sum(), 1.0, atol=1e-10):
            raise ValueError("start must be a probability vector (non-negative, summing to 1).")
        ab = np.asarray(absorbing)
        if ab.dtype != bool or ab.shape != (n,):
            raise ValueError(f"absorbing must be a boolean array of shape ({n},).")
        self.transition = p
        self.reward = r
        self.start = mu
        self.absorbing = ab.copy()
        self.max_steps = check_int("max_steps", max_steps, minimum=1)

    @property
    def n_states(self) -> int:
        """Number of states ``N``."""
        return int(self.transition.shape[0])

    def expected_reward(self) -> NDArray[np.float64]:
        """``rbar[s] = sum_s' P[s, s'] R[s, s']``, and 0 at absorbing states."""
        rbar = np.sum(self.transition * self.reward, axis=1)
        rbar[self.absorbing] = 0.0
        return rbar

    def value(self, discount: float) -> NDArray[np.float64]:
        """True value ``V = (I - gamma P)^{-1} rbar`` (absorbing states end the episode).

        The episode cap is ignored; it matters only if ``max_steps`` is reached
        with non-negligible probability.
        """
        gamma = check_discount(discount)
        p = self.transition.copy()
        p[self.absorbing] = 0.0
        return np.linalg.solve(np.eye(self.n_states) - gamma * p, self.expected_reward())

    def sample(self, n_episodes: int, *, rng: np.random.Generator) -> List[Episode]:
        """Draw ``n_episodes`` independent episodes.

        Parameters
        ----------
        n_episodes : int
            Number of episodes, at least 1.
        rng : numpy.random.Generator
            Source of randomness.

        Returns
        -------
        list of Episode
        """
        m = check_int("n_episodes", n_episodes, minimum=1)
        if not isinstance(rng, np.random.Generator):
            raise TypeError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}.")
        out: List[Episode] = []
        for lo in range(0, m, _CHUNK):
            out.extend(self._sample_chunk(min(_CHUNK, m - lo), rng))
        return out

    def sample_statistics(
        self, n_episodes: int, *, discount: float, rng: np.random.Generator
    ) -> EpisodeStatistics:
        """Draw ``n_episodes`` episodes and return only their first-visit summaries.

        Same law as ``episode_statistics(self.sample(n_episodes, rng=rng), ...)``,
        which is what this generic version does; :class:`LazyChain` overrides it
        with an exact sampler that never builds the episodes.

        Parameters
        ----------
        n_episodes : int
            Number of episodes, at least 1.
        discount : float
            ``gamma`` in ``[0, 1)``.
        rng : numpy.random.Generator
            Source of randomness.

        Returns
        -------
        EpisodeStatistics
        """
        gamma = check_discount(discount)
        episodes = self.sample(n_episodes, rng=rng)
        return episode_statistics(episodes, n_states=self.n_states, discount=gamma)

    def _sample_chunk(self, m: int, rng: np.random.Generator) -> List[Episode]:
        n, cap = self.n_states, self.max_steps
        cum_start = np.cumsum(self.start)
        cum_p = np.cumsum(self.transition, axis=1)
        s = np.minimum(np.searchsorted(cum_start, rng.random(m), side="right"), n - 1)
        hist_s = np.zeros((cap + 1, m), dtype=np.int64)
        hist_r = np.zeros((cap + 1, m), dtype=np.float64)
        hist_s[0] = s
        n_trans = np.zeros(m, dtype=np.int64)
        alive = ~self.absorbing[s]
        for t in range(cap):
            idx = np.flatnonzero(alive)
            if idx.size == 0:
                break
            cur = s[idx]
            u = rng.random(idx.size)
            nxt = np.minimum((u[:, None] >= cum_p[cur]).sum(axis=1), n - 1)
            hist_r[t, idx] = self.reward[cur, nxt]
            s[idx] = nxt
            hist_s[t + 1, idx] = nxt
            n_trans[idx] += 1
            alive[idx] = ~self.absorbing[nxt]
        absorbed = self.absorbing[s]
        episodes = []
        for i in range(m):
            length = n_trans[i] + 1 if absorbed[i] else n_trans[i]
            episodes.append(
                Episode(states=hist_s[:length, i].copy(), rewards=hist_r[:length, i].copy())
            )
        return episodes


class LazyChain(MarkovRewardProcess):
    """The lazy chain as a :class:`MarkovRewardProcess`, with a fast exact sampler.

    Built by :func:`lazy_chain`. From ``s < N-1`` the walk stays with
    probability ``q`` and moves to ``s+1`` otherwise; the move into the
    absorbing state ``N-1`` pays ``goal_reward``. An episode that starts in
    ``s0`` therefore spends ``D_j ~ Geometric(1 - q)`` transitions (on
    ``{1, 2, ...}``) in each state ``j = s0, ..., N-2``, independently; the
    first visit to ``s`` happens after ``t_s = sum_{s0 <= j < s} D_j``
    transitions, and absorption after ``T = t_{N-1}``. If ``T <= max_steps``
    every state ``s0..N-1`` is visited, with first-visit return
    ``goal_reward * gamma^(T - 1 - t_s)`` for ``s < N-1`` and 0 in ``N-1``;
    otherwise the episode is cut after ``max_steps`` transitions, visits the
    states with ``t_s < max_steps`` and every return is 0.
    :meth:`sample_statistics` draws the ``D_j`` and evaluates these formulas,
    so it has exactly the law of :meth:`sample` followed by
    :func:`~.episodes.episode_statistics`, in ``O(m N)`` vectorised time and
    with memory independent of ``m`` beyond the per-episode ranges.

    Parameters
    ----------
    n_states : int
        ``N``, at least 2.
    stay_probability : float
        ``q`` in ``[0, 1)``.
    reward : float
        Reward on entering ``N-1``, positive (kept as ``goal_reward``; the
        attribute ``reward`` is the ``(N, N)`` reward matrix).
    max_steps : int
        Episode cap (transitions).
    """

    def __init__(
        self, n_states: int, stay_probability: float, reward: float, max_steps: int
    ) -> None:
        n = check_int("n_states", n_states, minimum=2)
        q = check_probability("stay_probability", stay_probability, low_open=False, high_open=True)
        rew = check_positive("reward", reward)
        p = np.zeros((n, n))
        idx = np.arange(n - 1)
        p[idx, idx] = q
        p[idx, idx + 1] = 1.0 - q
        p[n - 1, n - 1] = 1.0
        r = np.zeros((n, n))
        r[n - 2, n - 1] = rew
        absorbing = np.zeros(n, dtype=bool)
        absorbing[n - 1] = True
        super().__init__(p, r, np.full(n, 1.0 / n), absorbing, max_steps=max_steps)
        self.stay_probability = q
        self.goal_reward = rew

    def sample_statistics(
        self, n_episodes: int, *, discount: float, rng: np.random.Generator
    ) -> EpisodeStatistics:
        """Exact fast sampler of the first-visit summaries of ``n_episodes`` episodes.

        Parameters
        ----------
        n_episodes : int
            Number of episodes, at least 1.
        discount : float
            ``gamma`` in ``[0, 1)``.
        rng : numpy.random.Generator
            Source of randomness.

        Returns
        -------
        EpisodeStatistics
            Same law as ``episode_statistics(self.sample(n_episodes, rng=rng), ...)``
            (the random numbers are used differently, so a seed gives other draws).
        """
        m = check_int("n_episodes", n_episodes, minimum=1)
        gamma = check_discount(discount)
        if not isinstance(rng, np.random.Generator):
            raise TypeError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}.")
        n = self.n_states
        counts = np.zeros(n, dtype=np.int64)
        sums = np.zeros(n, dtype=np.float64)
        ranges = np.empty((4, m), dtype=np.float64)
        cum_start = np.cumsum(self.start)
        block = max(1, _STATS_BLOCK // n)
        for lo in range(0, m, block):
            b = min(block, m - lo)
            s0 = np.minimum(np.searchsorted(cum_start, rng.random(b), side="right"), n - 1)
            durations = rng.geometric(1.0 - self.stay_probability, size=int(np.sum(n - 1 - s0)))
            c, t, rg = _chain_block_statistics(
                s0, durations, n, self.max_steps, gamma, self.goal_reward
            )
            counts += c
            sums += t
            ranges[:, lo : lo + b] = rg
        return EpisodeStatistics.from_sums(counts, sums, ranges, discount=gamma)


def _chain_block_statistics(
    s0: NDArray[np.int64],
    durations: NDArray[np.int64],
    n_states: int,
    max_steps: int,
    discount: float,
    goal_reward: float,
) -> Tuple[NDArray[np.int64], NDArray[np.float64], NDArray[np.float64]]:
    """Counts, sums of first-visit returns and per-episode ranges of lazy-chain episodes.

    Parameters
    ----------
    s0 : ndarray of int, shape (b,)
        Start states.
    durations : ndarray of int
        For each episode in turn, the transitions ``D_j >= 1`` spent in states
        ``j = s0, ..., N-2`` (``N-1-s0`` entries per episode), concatenated.
    n_states, max_steps, discount, goal_reward
        As in :class:`LazyChain`.

    Returns
    -------
    counts : ndarray of int64, shape (N,)
    sums : ndarray of float64, shape (N,)
        Sum of the first-visit returns of the visitors of each state.
    ranges : ndarray of float64, shape (4, b)
        Per episode: smallest and largest reward, smallest and largest return.
    """
    n, cap, b = n_states, max_steps, s0.shape[0]
    length = (n - 1) - s0  # states s0..N-2, each left after D_j transitions
    ends = np.cumsum(length)
    starts = ends - length
    csum = np.cumsum(durations)
    before = np.zeros(b, dtype=np.int64)  # transitions before the episode's first entry
    has_prev = starts > 0
    before[has_prev] = csum[starts[has_prev] - 1]
    total = np.zeros(b, dtype=np.int64)  # T: transitions until absorption
    moving = length > 0
    total[moving] = csum[ends[moving] - 1] - before[moving]
    absorbed = total <= cap
    episode = np.repeat(np.arange(b), length)
    state = s0[episode] + (np.arange(durations.shape[0]) - starts[episode])
    first_visit = csum - durations - before[episode]  # t_s
    visited = first_visit < cap
    powers = goal_reward * discount ** np.arange(cap, dtype=np.float64)
    exponent = np.minimum(total[episode] - 1 - first_visit, cap - 1)  # in 0..cap-1 when absorbed
    returns = np.where(absorbed[episode], powers[np.maximum(exponent, 0)], 0.0)
    counts = np.bincount(state[visited], minlength=n).astype(np.int64)
    counts[n - 1] += int(np.sum(absorbed))
    sums = np.bincount(state, weights=returns, minlength=n).astype(np.float64, copy=False)  # float64 already
    ranges = np.zeros((4, b), dtype=np.float64)  # rewards and returns are all >= 0, some = 0
    paid = absorbed & moving
    ranges[1, paid] = goal_reward
    ranges[3, paid] = returns[ends[paid] - 1]  # state N-2 has the largest return
    return counts, sums, ranges


def lazy_chain(
    n_states: int = 40,
    *,
    stay_probability: float = 0.5,
    reward: float = 1.0,
    max_steps: int = 200,
) -> MarkovRewardProcess:
    """The lazy chain of the reference experiment.

    States ``0, ..., N-1``. From ``s < N-1`` the walk stays with probability
    ``stay_probability`` and moves to ``s+1`` otherwise; ``N-1`` is absorbing.
    The transition into ``N-1`` pays ``reward``; every other transition pays
    0, so every return lies in ``[0, reward]``. Start: uniform over all states.

    Parameters
    ----------
    n_states : int, default=40
        ``N``, at least 2.
    stay_probability : float, default=0.5
        In ``[0, 1)``.
    reward : float, default=1.0
        Reward on entering the last state, positive.
    max_steps : int, default=200
        Episode cap (transitions).

    Returns
    -------
    LazyChain
        A :class:`MarkovRewardProcess` with an exact fast
        :meth:`~LazyChain.sample_statistics`.
    """
    return LazyChain(n_states, stay_probability, reward, max_steps)


def random_walk(
    n_states: int = 7, *, reward: float = 1.0, max_steps: int = 200, start: Any = None
) -> MarkovRewardProcess:
    """A symmetric random walk with absorbing ends (Sutton's random walk).

    States ``0, ..., N-1``; ``0`` and ``N-1`` are absorbing. From an interior
    state the walk moves left or right with probability 1/2. Entering ``N-1``
    pays ``reward``; everything else pays 0. Start: uniform over the interior
    states unless ``start`` gives a distribution.

    Parameters
    ----------
    n_states : int, default=7
        ``N``, at least 3.
    reward : float, default=1.0
        Reward on entering the right end, positive.
    max_steps : int, default=200
        Episode cap (transitions).
    start : array-like of shape (N,), default=None
        Start distribution.
    """
    n = check_int("n_states", n_states, minimum=3)
    rew = check_positive("reward", reward)
    p = np.zeros((n, n))
    idx = np.arange(1, n - 1)
    p[idx, idx - 1] = 0.5
    p[idx, idx + 1] = 0.5
    p[0, 0] = p[n - 1, n - 1] = 1.0
    r = np.zeros((n, n))
    r[n - 2, n - 1] = rew
    absorbing = np.zeros(n, dtype=bool)
    absorbing[[0, n - 1]] = True
    if start is None:
        start = np.zeros(n)
        start[1 : n - 1] = 1.0 / (n - 2)
    return MarkovRewardProcess(p, r, start, absorbing, max_steps=max_steps)

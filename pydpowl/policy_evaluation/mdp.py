"""Small Markov reward processes for simulations: a lazy chain and a random walk.

A fixed policy in a finite MDP induces a Markov reward process: a transition
matrix ``P``, a reward ``R[s, s']`` for each transition, a start distribution
and a set of absorbing states where episodes end. :class:`MarkovRewardProcess`
samples episodes with an explicit generator and gives the true value function
``V = (I - gamma P)^{-1} rbar`` (ground truth for experiments only).
"""

from __future__ import annotations

from typing import Any, List

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import check_array, check_int, check_positive, check_probability, check_vector
from .episodes import Episode, check_discount

__all__ = ["MarkovRewardProcess", "lazy_chain", "random_walk"]

_CHUNK = 4096


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
    """
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
    return MarkovRewardProcess(p, r, np.full(n, 1.0 / n), absorbing, max_steps=max_steps)


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

"""pydpowl.engine.mechanisms.exponential: the exponential mechanism."""

import math

import numpy as np
import pytest
from scipy import stats

from pydpowl.engine.mechanisms.exponential import exponential_mechanism

ALPHA = 1e-3


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

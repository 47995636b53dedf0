"""pydpowl.engine.mechanisms.exponential: the exact exponential mechanism and DPpack's inversion (replay)."""

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from pydpowl import RRandom
from pydpowl.engine.mechanisms.exponential import (
    FairBits,
    bernoulli_exp_minus,
    exponential_mechanism,
    exponential_mechanism_delta,
)

from validation.audit.exact import enumerated_law, inversion_law, sampler_law_bounds

ALPHA = 1e-3


def test_default_sampler_frequencies():
    rng = np.random.default_rng(0)
    scores = np.array([0.0, -1.0, -3.0, -3.0])
    draws = np.bincount([exponential_mechanism(scores, epsilon=1.0, sensitivity=0.5, rng=rng)
                         for _ in range(20000)], minlength=4)
    p = np.exp(scores) / np.exp(scores).sum()  # exp(eps s / (2 sens)) = exp(s)
    assert stats.chisquare(draws, 20000 * p).pvalue > ALPHA


@pytest.mark.parametrize("x", [Fraction(0), Fraction(1, 3), Fraction(1), Fraction(7, 4)])
def test_bernoulli_exp_minus_is_exact(x):
    """Every path of the sampler enumerated: P(True) is bracketed by [found, found + unfinished] around exp(-x)."""
    (no, yes), left = enumerated_law(lambda bits: bernoulli_exp_minus(x, bits), 2, depth=20)
    assert yes + no + left == 1
    assert float(yes) <= math.exp(-float(x)) <= float(yes + left)
    assert left < 2e-3


def test_exact_sampler_law_on_adversarial_neighbours_is_within_e_epsilon():
    """Review 21.3. Scores of D and D' move by the sensitivity in opposite directions (the worst case): the
    sampler's law, bounded from the enumerated laws of its steps, brackets the exponential mechanism's and no
    probability ratio exceeds e^eps beyond the enumeration's slack."""
    eps, sens = 1.0, 1.0
    # candidate 0 loses sens while the others gain it: loss eps/2 in the numerator and nearly eps/2 in the
    # normaliser (every score moved by at most sens)
    s0, s1 = [0.0, 1.0, 1.0], [-1.0, 2.0, 2.0]
    bounds = []
    for s in (s0, s1):
        x = [Fraction(eps) / (2 * Fraction(sens)) * (Fraction(max(s)) - Fraction(v)) for v in s]
        proposal, left, lo, hi = sampler_law_bounds(x)
        assert left < 1e-3 and all(abs(float(p) - (1 - float(left)) / 3) < 1e-3 for p in proposal)
        exact = np.exp(np.array([-float(v) for v in x]))
        exact /= exact.sum()
        assert np.all(lo <= exact) and np.all(exact <= hi) and np.all(hi - lo < 1e-3)
        bounds.append((lo, hi))
    (lo0, hi0), (lo1, hi1) = bounds
    ratio = max(np.max(lo0 / hi1), np.max(lo1 / hi0))
    assert ratio <= math.exp(eps)
    assert ratio > math.exp(0.8 * eps)  # the pair is adversarial: the bound is nearly attained


def test_default_path_is_the_exact_sampler_on_exact_rational_exponents(monkeypatch):
    """Review 21.3: the default (a numpy Generator) no longer inverts one double uniform, whose 2^-53 grid gives a
    candidate of probability below 2^-54 none at all on D and 2^-53 on a neighbour."""
    import pydpowl.engine.mechanisms.exponential as em

    seen = []

    def spy(exponents, bits):
        seen.append(list(exponents))
        return 1

    monkeypatch.setattr(em, "sample_exact_index", spy)
    assert exponential_mechanism([0.1, -36.8], epsilon=0.7, sensitivity=0.3, rng=np.random.default_rng(0)) == 1
    scale = Fraction(0.7) / (2 * Fraction(0.3))
    assert seen == [[Fraction(0), scale * (Fraction(0.1) - Fraction(-36.8))]]


def test_fair_bits_and_uniform_index():
    bits = FairBits(np.random.default_rng(3))
    ones = sum(bits.bit() for _ in range(20000))
    assert stats.binomtest(ones, 20000).pvalue > ALPHA
    counts = np.bincount([bits.below(3) for _ in range(9000)], minlength=3)
    assert stats.chisquare(counts).pvalue > ALPHA


def test_replay_inversion_has_unbounded_loss_but_stays_within_its_accounted_delta():
    """DPpack's inversion: a candidate of probability ~1e-10 gets 0 on D and 2^-32 on D' (ratio infinite), and the
    hockey-stick divergence max_S q(S|D') - e^eps q(S|D) stays below exponential_mechanism_delta(replay=True)."""
    eps, sens = 1.0, 1.0
    s0 = [0.0, -45.0]          # p_1 = exp(-22.5) ~ 1.7e-10 (rounds to 0 words)
    s1 = [-1.0, -44.0]         # p_1 = exp(-21.5) ~ 4.6e-10 (2 words)
    q0, q1 = inversion_law(s0, eps, sens), inversion_law(s1, eps, sens)
    assert q0[1] == 0 and q1[1] > 0
    delta = exponential_mechanism_delta(epsilon=eps, n_candidates=2, replay=True)
    for a, b in ((q0, q1), (q1, q0)):
        assert np.sum(np.maximum(a - math.exp(eps) * b, 0.0)) <= delta
    assert 1e-9 < delta < 1e-8


def test_r_stream_replays_dppacks_inversion_and_its_delta_is_accounted():
    scores = [2 * math.log(2.0), 0.0, 0.0]  # eps = 1, sens = 1: probabilities 1/2, 1/4, 1/4
    k = exponential_mechanism(scores, epsilon=1.0, sensitivity=1.0, rng=RRandom(5))
    u = RRandom(5).runif(1)[0]
    assert k == int(np.flatnonzero(u <= np.cumsum([0.5, 0.25, 0.25]))[0])
    assert exponential_mechanism_delta(epsilon=1.0, n_candidates=3) == 0.0
    assert 1e-9 < exponential_mechanism_delta(epsilon=1.0, n_candidates=3, replay=True) < 5e-9


def test_refusals():
    with pytest.raises(ValueError, match=r"epsilon must be in \(0, inf\)"):
        exponential_mechanism([0.0, 1.0], epsilon=math.inf, sensitivity=1.0, rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match="scores must be"):
        exponential_mechanism([0.0, np.nan], epsilon=1.0, sensitivity=1.0, rng=np.random.default_rng(0))
    with pytest.raises(TypeError, match="numpy Generator or an R-compatible stream"):
        exponential_mechanism([0.0, 1.0], epsilon=1.0, sensitivity=1.0, rng=object())
    with pytest.raises(ValueError, match="x must be >= 0"):
        bernoulli_exp_minus(Fraction(-1), FairBits(np.random.default_rng(0)))

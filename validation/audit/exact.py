"""Exact-law audit of discrete samplers: the exponential mechanism's probabilities on adversarial neighbours.

A black-box test cannot see probabilities of order 2^-32, so these checks compute
the law of the implemented samplers exactly:

* the exact sampler (a numpy Generator): every path of its two steps (the
  uniform proposal, ``Bernoulli(exp(-x))``) is enumerated on a bit source up to
  a depth, which brackets each step's probability by
  ``[found, found + unfinished]``; rejection sampling then bounds the law of the
  selected index. On neighbours whose scores move by the sensitivity in
  opposite directions, no probability ratio may exceed ``e^epsilon``;
* DPpack's inversion (an R stream, replay): its law over R's 2^32 equally likely
  uniforms is found by bisection on the word; a candidate can have probability
  0 on D and ``k 2^-32`` on D' (ratio infinite), and the hockey-stick divergence
  ``max_S q(S|D) - e^epsilon q(S|D')`` must stay below the delta the package
  accounts (:func:`pydpowl.engine.mechanisms.exponential_mechanism_delta`);
* the value release's rounding on sums within a hair of a rounding midpoint
  (it must be the exact sum's), and the share of R's ``rgamma`` draws that come
  from 32-bit uniforms against the model behind the R stream's ``delta``;
  DP-LSW's releases on neighbours: one public grid, no bit-level signal; KST's
  certified answers within the radius their smoothing noise covers.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any, Callable, List, Sequence, Tuple

import numpy as np

from pydpowl.engine.mechanisms.exponential import (
    R_UNIFORM_VALUES,
    FairBits,
    _dppack_inversion,
    bernoulli_exp_minus,
    exponential_mechanism_delta,
)

__all__ = ["enumerated_law", "sampler_law_bounds", "inversion_law", "exponential_checks", "exact_law_checks",
           "value_rounding_check", "r_stream_radius_check", "policy_evaluation_grid_check", "kst_certificate_check",
           "EXPONENTIAL_PAIRS"]

#: adversarial neighbours (epsilon, sensitivity, scores on D, scores on D'): candidate 0 loses the sensitivity
#: while the others gain it (the numerator and the normaliser both move against it)
EXPONENTIAL_PAIRS = (
    (1.0, 1.0, (0.0, 1.0, 1.0), (-1.0, 2.0, 2.0)),
    (0.5, 2.0, (0.0, 2.0), (-2.0, 4.0)),
)
#: the inversion's adversarial pair: p_1 ~ 1.7e-10 (no word) on D, ~ 4.6e-10 (two words) on D'
INVERSION_PAIR = (1.0, 1.0, (0.0, -45.0), (-1.0, -44.0))


class _Exhausted(Exception):
    pass


class _PrefixBits:
    """Bits from a fixed prefix; asking for more raises (to enumerate every path of a sampler)."""

    def __init__(self, prefix: Tuple[int, ...]) -> None:
        self.prefix, self.used = prefix, 0

    def bit(self) -> int:
        if self.used == len(self.prefix):
            raise _Exhausted
        self.used += 1
        return self.prefix[self.used - 1]

    def below(self, k: int) -> int:
        return FairBits.below(self, k)  # type: ignore[arg-type]


def enumerated_law(sample: Callable[[Any], int], n_outcomes: int, depth: int) -> Tuple[List[Fraction], Fraction]:
    """Probability of each outcome over every bit string of length <= ``depth``, and the mass left unfinished.

    ``sample(bits)`` runs the sampler on a bit source; each terminating path of length L has probability 2^-L.
    """
    found = [Fraction(0)] * n_outcomes
    unfinished = Fraction(0)
    stack: List[Tuple[int, ...]] = [()]
    while stack:
        prefix = stack.pop()
        bits = _PrefixBits(prefix)
        try:
            k = sample(bits)
        except _Exhausted:
            if len(prefix) == depth:
                unfinished += Fraction(1, 2 ** depth)
            else:
                stack += [prefix + (0,), prefix + (1,)]
            continue
        if bits.used != len(prefix):
            raise AssertionError("a path must consume its whole prefix")
        found[int(k)] += Fraction(1, 2 ** len(prefix))
    return found, unfinished


def sampler_law_bounds(x: Sequence[Fraction], depth: int = 18):
    """Bounds on the law of :func:`~pydpowl.engine.mechanisms.exponential.sample_exact_index`.

    A round proposes k with the enumerated law of ``FairBits.below`` and accepts
    with ``a_k``, enumerated to ``[lo_k, hi_k]``; rejection sampling returns k with
    probability ``a_k / sum_j a_j``. Returns ``(proposal, unfinished, lower, upper)``.
    """
    K = len(x)
    proposal, left = enumerated_law(lambda bits: bits.below(K), K, depth=2 * K + 4)

    def acceptance_law(v: Any) -> Any:  # the law of one acceptance bit for the value v
        return enumerated_law(lambda bits: bernoulli_exp_minus(v, bits), 2, depth=depth)

    accept = [acceptance_law(v) for v in x]
    lo = np.array([float(a[0][1]) for a in accept])
    hi = np.array([float(a[0][1] + a[1]) for a in accept])
    return proposal, left, lo / (lo + hi.sum() - hi), hi / (hi + lo.sum() - lo)


def inversion_law(scores: Sequence[float], epsilon: float, sensitivity: float) -> np.ndarray:
    """Exact law of DPpack's inversion over R's 2^32 uniforms ``u = fixup(y 2^-32)``, by bisection on the word y."""

    class Word:
        def __init__(self, y: int) -> None:
            self.y = y

        def uniform(self) -> float:
            return 0.5 * 2.328306437080797e-10 if self.y == 0 else self.y * 2.0 ** -32

    s = np.asarray(scores, dtype=float)

    def pick(y: int) -> int:
        return _dppack_inversion(s, epsilon, sensitivity, Word(y))

    counts = np.zeros(len(s))
    first = 0
    while first < R_UNIFORM_VALUES:  # the pick is non-decreasing in u except the all-FALSE tail (index 0)
        k = pick(first)
        lo, hi = first, R_UNIFORM_VALUES - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if pick(mid) == k:
                lo = mid
            else:
                hi = mid - 1
        counts[k] += lo - first + 1
        first = lo + 1
    return counts / R_UNIFORM_VALUES


def _exponents(scores: Sequence[float], epsilon: float, sensitivity: float) -> List[Fraction]:
    scale = Fraction(epsilon) / (2 * Fraction(sensitivity))
    top = Fraction(max(scores))
    return [scale * (top - Fraction(v)) for v in scores]


def exponential_checks(*, depth: int = 18) -> list:
    """The exact-law checks of the exponential mechanism (a list of :class:`~validation.audit.run.CheckResult`)."""
    from .run import CheckResult

    out = []
    for eps, sens, s0, s1 in EXPONENTIAL_PAIRS:
        (_, _, lo0, hi0), (_, _, lo1, hi1) = (sampler_law_bounds(_exponents(s, eps, sens), depth) for s in (s0, s1))
        worst = float(max(np.max(lo0 / hi1), np.max(lo1 / hi0)))  # a lower bound on the true worst ratio
        slack = float(max(np.max(hi0 - lo0), np.max(hi1 - lo1)))
        upper = float(max(np.max(hi0 / lo1), np.max(hi1 / lo0)))  # an upper bound on it
        passed = math.log(worst) <= eps
        out.append(CheckResult(
            f"exponential-exact K={len(s0)}", f"max log P(k|D)/P(k|D') <= eps = {eps:g} (exact sampler)", passed,
            f"log ratio in [{math.log(worst):.4f}, {math.log(upper):.4f}] (enumerated law, slack {slack:.1e}); "
            f"scores {list(s0)} vs {list(s1)}, sensitivity {sens:g}"))
    eps, sens, s0, s1 = INVERSION_PAIR
    q0, q1 = inversion_law(s0, eps, sens), inversion_law(s1, eps, sens)
    delta = exponential_mechanism_delta(epsilon=eps, n_candidates=len(s0), replay=True)
    divergence = float(max(np.sum(np.maximum(a - math.exp(eps) * b, 0.0)) for a, b in ((q0, q1), (q1, q0))))
    ratio = math.inf if (q0 == 0).any() and (q1[q0 == 0] > 0).any() else float(np.max(q1 / q0))
    out.append(CheckResult(
        "exponential-replay (R stream)", f"max_S q(S|D) - e^eps q(S|D') <= accounted delta = {delta:.2e}",
        divergence <= delta,
        f"DPpack's inversion of one 32-bit uniform: P(1|D) = {q0[1]:.3g}, P(1|D') = {q1[1]:.3g} (ratio {ratio:g}: "
        f"not eps-DP); divergence {divergence:.2e}"))
    return out


def _adversarial_sums(n: int, seed: int) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Cell sums S, Laplace draws L and scales b whose exact sum lies within a hair of a rounding midpoint."""
    from pydpowl.evaluation.private import release_grid

    rng = np.random.default_rng(seed)
    b = 10.0 ** rng.uniform(-2, 2, n)
    g = np.array([release_grid(v) for v in b])
    m = np.floor(2.0 ** rng.uniform(10, 49, n))
    S = m * g
    hair = g * 2.0 ** -rng.integers(4, 40, n)
    L = np.where(rng.random(n) < 0.5, 0.5 * g + hair, -0.5 * g - hair) * rng.choice([1.0, -1.0], n)
    return S, L, b


def value_rounding_check(n: int = 4000, seed: int = 7) -> Any:
    """The value release rounds the exact sum S + L, on sums within a hair of a midpoint (review 21.4(a))."""
    from pydpowl.evaluation.private import _release, release_grid

    from .run import CheckResult

    S, L, b = _adversarial_sums(n, seed)

    class Fixed:
        def __init__(self, value: float) -> None:
            self.value = value

        def laplace(self, loc: float, scale: Any) -> np.ndarray:
            return np.full(np.shape(scale), self.value)

    wrong = float_wrong = 0
    for s, l, v in zip(S, L, b):
        g = release_grid(v)
        exact = float(round((Fraction(float(s)) + Fraction(float(l))) / Fraction(g)) * Fraction(g))
        wrong += _release(np.array([s]), np.array([v]), Fixed(l))[0] != exact
        float_wrong += float(np.round((s + l) / g) * g) != exact  # the former rounding of fl(S + L), for contrast
    return CheckResult("value release", "released = exact S + L rounded to the grid", wrong == 0,
                       f"{wrong} of {n} adversarial sums (within 2^-4..2^-40 grid steps of a midpoint) differ from "
                       f"the exact rounding; rounding fl(S + L) would differ in {float_wrong}")


def r_stream_radius_check(dim: int = 5, n: int = 20000, seed: int = 3) -> Any:
    """The R stream's radius model: the share of rgamma draws from its 32-bit rejection loop (review 21.4(b))."""
    from pydpowl import RRandom
    from pydpowl.engine.mechanisms.rounding import floating_point_delta, r_gamma_radius_model
    from pydpowl.rrandom._gamma import _gd_unscaled

    from .run import CheckResult

    p_late, _, _ = r_gamma_radius_model(dim)
    stream = RRandom(seed)._stream
    late = sum(_gd_unscaled(stream, float(dim))[1] for _ in range(n)) / n
    z = abs(late - p_late) / math.sqrt(p_late * (1 - p_late) / n)
    numpy_delta = floating_point_delta(epsilon=1.0, dim=dim, grid=2.0 ** -11, noise_scale=1.0)
    r_delta = floating_point_delta(epsilon=1.0, dim=dim, grid=2.0 ** -11, noise_scale=1.0, stream="R")
    return CheckResult(f"R-stream radius d={dim}", "share of rgamma draws outside the model = the delta's p_late",
                       z < 4.0 and r_delta > numpy_delta,
                       f"measured {late:.4f} of {n} draws, model {p_late:.4f} (z = {z:.1f}); stated delta at eps 1, "
                       f"grid lambda/2048: R stream {r_delta:.1e}, numpy {numpy_delta:.1e}")


def policy_evaluation_grid_check(n_releases: int = 1500, seed: int = 5) -> Any:
    """DP-LSW releases on neighbouring datasets: on one public grid, and no bit-level signal (review 21.4(c))."""
    from pydpowl.mdp_policy_evaluation import DPLSW

    from .floating import lsb_lower_bound
    from .run import CheckResult

    rng = np.random.default_rng(seed)
    phi = rng.uniform(0, 1, size=(5, 2))
    D = [(rng.integers(0, 5, size=6), rng.uniform(0, 1, size=6)) for _ in range(40)]
    D1 = D[:-1] + [(np.array([4, 4, 4]), np.array([1.0, 1.0, 1.0]))]
    eps = 0.8
    releases, grids = [], set()
    for data, first in ((D, 0), (D1, n_releases)):
        fits = [DPLSW(epsilon=eps, delta=0.1, features=phi, reward_bound=1.0, discount=0.9,
                      random_state=first + i).fit(data) for i in range(n_releases)]
        releases.append(np.array([f.coef_ for f in fits]))
        grids |= {f.release_grid_ for f in fits}
    (grid,) = grids if len(grids) == 1 else (None,)
    on_grid = grid is not None and all(np.all(np.round(r / grid) * grid == r) for r in releases)
    bound = lsb_lower_bound(releases[0], releases[1])
    return CheckResult("DP-LSW release", f"on one public grid; bit-level eps lower bound <= eps = {eps:g}",
                       on_grid and bound.epsilon_lb <= eps,
                       f"grids on D and D': {sorted(grids, key=lambda g: -math.inf if g is None else g)}; "
                       f"bit-level lower bound {bound.epsilon_lb:.3f} "
                       f"({n_releases} releases per dataset)")


def kst_certificate_check(n_releases: int = 12, seed: int = 2) -> Any:
    """KST's certified answers on the ball are within the radius the smoothing noise covers (review 21.4(d)).

    From each answer (exact ``||theta||^2``): the smaller of ``e <= res / (mu + nu/2) + sqrt(nu (R^2 -
    ||theta||^2) / (2 mu + nu))`` and ``e <= res / (mu + nu) + (L/mu)((R^2 - ||theta||^2)/R + res / (mu + nu))``
    (``L = p + mu``; docs/dppack_family.md) must not exceed the release's ``error_radius``.
    """
    from pydpowl.engine.mechanisms import release_kst

    from .run import CheckResult

    rng = np.random.default_rng(seed)
    n, p = 300, 2
    Z = rng.uniform(-1, 1, (n, p))
    t = np.clip(Z @ np.array([1.5, -1.0]) * 2, -p, p)
    R = math.sqrt(p)
    worst, active = 0.0, 0
    for k in range(n_releases):
        for tol in (1e-13, None):
            rel = release_kst(Z, t, gamma=1.0, epsilon=0.3, delta=0.0, tol=tol, reproduce_dppack=False,
                              rng=np.random.default_rng([seed, k]))
            theta, mu = rel.minimiser, (1.0 + rel.Delta) / n
            grad = (Z.T @ (Z @ theta - t) + (1.0 + rel.Delta) * theta + rel.linear_term) / n
            nu = max(0.0, -float(theta @ grad) / float(theta @ theta))
            res = float(np.linalg.norm(grad + nu * theta))
            gap = Fraction(R) ** 2 - sum((Fraction(float(v)) ** 2 for v in theta), Fraction(0))
            strong = res / (mu + nu / 2) + (math.sqrt(nu * float(gap) / (2 * mu + nu)) if nu > 0 else 0.0)
            path = res / (mu + nu) + ((p + mu) / mu) * (float(gap) / R + res / (mu + nu)) if nu > 0 else math.inf
            free = float(np.linalg.norm(grad))
            bound = min(strong, path, free / mu if free <= (tol or 0.0) or nu == 0 else math.inf)
            active += nu > 0 and free > (tol or 0.0)
            worst = max(worst, bound / rel.error_radius if gap >= 0 else math.inf)
    return CheckResult("KST certificate", "proven distance to the minimiser <= the smoothing's radius",
                       worst <= 1.0, f"worst proven / calibrated {worst:.3f} over {2 * n_releases} releases "
                       f"({active} with the ball active)")


def exact_law_checks() -> list:
    """Every check of this module, in the audit's order."""
    return exponential_checks() + [value_rounding_check(), r_stream_radius_check(), policy_evaluation_grid_check(),
                                   kst_certificate_check()]

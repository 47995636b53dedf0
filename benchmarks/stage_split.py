"""Does a non-equal split of the regime's budget across stages help? (DTRlearn2's sim_Kstage-like design)

On the two-stage design of ``pydpowl simulate --design kstage`` (:class:`pydpowl.studies.multi_designs.
KStageDesign`: DTRlearn2's ``sim_Kstage``, rewards at the last stage), each run draws n subjects, fits the
non-private regime (epsilon = inf) and, on the same data, the private regime (the estimator's defaults:
objective perturbation with residual weights per stage) with the total epsilon split across the stages in
each of the given ratios (``1:1`` equal, ``2:1`` twice as much to stage 1, ...). Reports, per split, the mean
and median over the runs of the true value of the released regime on a large test set (the regime applied as
it is used: stage 2's history built from the recommended stage-1 treatment) and of its agreement with the
non-private regime (both stages alike).

    python benchmarks/stage_split.py --n 2000 --epsilon 1 --runs 30 --splits 1:1,2:1,1:2
"""

from __future__ import annotations

import argparse
import time
from fractions import Fraction

import numpy as np


def one_run(seed: int, n: int, epsilon: float, splits, population, test) -> list:
    from pydpowl.estimators.multistage import DPMultiStageOWL

    rng = np.random.default_rng([seed, int(n)])
    X, A, R = population.draw(n, rng)
    H = population.histories(X, A[0])
    reward_bounds = [(0.0, 1e-9), (-float(population.T) - 4.0, float(population.T) + 4.0)]

    def fit(eps):
        return DPMultiStageOWL(epsilon=eps, feature_bounds=population.bounds(), reward_bounds=reward_bounds,
                               random_state=rng).fit(H, A, R, [0.5] * population.T)

    exact = population.recommend(fit(np.inf), test)
    rows = []
    for split in splits:
        model = fit([float(epsilon * s) for s in split])
        rec = population.recommend(model, test)
        rows.append((population.value(rec, test), float(np.mean(np.all(rec == exact, axis=1)))))
    return rows


def main(argv=None) -> int:
    from pydpowl.studies.multi_designs import KStageDesign

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--epsilon", type=float, default=1.0)
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--splits", default="1:1,2:1,1:2", help="stage-1:stage-2 ratios, comma-separated")
    ap.add_argument("--seed", type=int, default=2024)
    args = ap.parse_args(argv)
    texts = args.splits.split(",")
    splits = []
    for text in texts:
        parts = [Fraction(p) for p in text.split(":")]
        splits.append([p / sum(parts) for p in parts])
    population = KStageDesign(np.random.default_rng([args.seed, 0]))
    test = population.test_set(20000, np.random.default_rng([args.seed, 1]))
    t0 = time.perf_counter()
    results = np.array([one_run(args.seed * 1000 + r, args.n, args.epsilon, splits, population, test)
                        for r in range(args.runs)])  # (runs, splits, 2)
    print(f"kstage design, n = {args.n}, epsilon = {args.epsilon:g}, {args.runs} runs "
          f"({time.perf_counter() - t0:.0f} s); value of the optimal regime 2")
    print(f"{'split':>8} {'value mean (se)':>18} {'median':>8} {'agreement mean (se)':>21} {'median':>8}")
    for j, text in enumerate(texts):
        v, a = results[:, j, 0], results[:, j, 1]
        se = (lambda x: x.std(ddof=1) / np.sqrt(len(x))) if args.runs > 1 else (lambda x: float("nan"))
        print(f"{text:>8} {v.mean():>10.3f} ({se(v):.3f}) {np.median(v):>8.3f} {a.mean():>13.3f} ({se(a):.3f}) "
              f"{np.median(a):>8.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""The whole private analysis on the three-arm design of ``pydpowl simulate --design multiarm``.

For each run: draw n subjects of the design (three arms randomised 1/3 each, X ~ U[-1, 1]^5, benefit in
[0, 5]), run :func:`pydpowl.run_analysis` with total epsilon E on half of the rows for learning and half for
evaluation (a split fixed in advance, so that the non-private rule can be fitted on the same learning rows),
and measure on a large test set from the design the true value of the released rule, of the non-private rule
(epsilon = inf, the same mechanism settings, gamma and rows) and of each single arm (all 1 + 2/3 by symmetry;
the optimal rule has 3). Reports medians over the runs, the widths of the released intervals and how often the
value interval covers the released rule's true value.

    python benchmarks/multiarm_analysis.py --n 1500 --epsilon 1 --runs 50 [--mechanism output]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

#: the rule's release: DPOWL's default for K arms, or the paper's mechanism (the K-arm default before issue 25)
MECHANISMS = {"auto": dict(mechanism="auto", residual="auto"), "output": dict(mechanism="output", residual=False)}


def one_run(seed: int, n: int, epsilon: float, gamma_rule: str, test, mechanism: str = "auto") -> dict:
    from pydpowl import DPOWL
    from pydpowl.analysis import run_analysis
    from pydpowl.engine.multicategory import arm_scores, recommend
    from pydpowl.studies.multi_designs import MultiarmDesign

    rng = np.random.default_rng(seed)
    design = MultiarmDesign(rng)
    X, A, B = design.draw(n, rng)
    ev = np.sort(rng.permutation(n)[: n // 2])  # fixed in advance (data-independent)
    learn = np.setdiff1d(np.arange(n), ev)
    gamma = None if gamma_rule == "auto" else design.lam * learn.size
    res = run_analysis(X, A, B, feature_bounds=design.feature_bounds, benefit_bounds=design.benefit_bounds,
                       weights_upper_bound=design.benefit_bounds[1] * 3, total_epsilon=epsilon, propensity=1 / 3,
                       gamma=gamma, evaluation_rows=ev, random_state=rng, **MECHANISMS[mechanism])
    st = res.model_content["stages"][0]
    rec = recommend(arm_scores(test @ np.asarray(st["coef"]).T + np.asarray(st["intercept"]),
                               np.asarray(st["vertices"])))
    v_private = design.value(rec, test)
    exact = DPOWL(epsilon=np.inf, gamma=res.gamma, weights_upper_bound=design.benefit_bounds[1] * 3,
                  feature_bounds=design.feature_bounds, huber_h=res.model.huber_h_,
                  **MECHANISMS[mechanism]).fit(X[learn], A[learn], np.clip(B[learn], 0, 5), 1 / 3)
    v_exact = design.value(exact.predict(test), test)
    v = res.value
    return {"private": v_private, "nonprivate": v_exact,
            "arm": max(design.value(np.full(len(test), a), test) for a in range(3)),
            "estimate": v.value.estimate, "width_value": v.value.width, "width_gain": v.difference.width,
            "width_arm": float(np.median([iv.width for iv in v.arm_values.values()])),
            "covered": v.value.ci_low <= v_private <= v.value.ci_high,
            "gain_positive": v.difference.ci_low > 0, "gamma": res.gamma}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=1500)
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--mechanism", choices=tuple(MECHANISMS), default="auto",
                        help="auto: DPOWL's default (objective perturbation, residual weights); output: the "
                             "paper's mechanism with OWL weights")
    parser.add_argument("--gamma", choices=("auto", "design"), default="auto",
                        help="auto: DPOWL's public rule; design: the study's gamma = 0.05 n_learning")
    args = parser.parse_args()
    test = np.random.default_rng(10**6).uniform(-1, 1, (20000, 5))
    start = time.perf_counter()
    rows = [one_run(seed, args.n, args.epsilon, args.gamma, test, args.mechanism) for seed in range(args.runs)]
    med = {k: float(np.median([r[k] for r in rows])) for k in rows[0] if k not in ("covered", "gain_positive")}
    print(f"3-arm design, n = {args.n} (half learning, half evaluation), total epsilon = {args.epsilon:g}, "
          f"mechanism {args.mechanism}, gamma {args.gamma} (median {med['gamma']:.4g}), {args.runs} runs, medians:")
    print(f"  true value: private rule {med['private']:.3f}, non-private rule (same rows, settings and gamma) "
          f"{med['nonprivate']:.3f}, best single arm {med['arm']:.3f}, optimal 3.000")
    print(f"  released value estimate {med['estimate']:.3f}; interval widths: value {med['width_value']:.3f}, "
          f"gain over the best arm {med['width_gain']:.3f}, each arm's value {med['width_arm']:.3f}")
    print(f"  value interval covered the released rule's true value in {sum(r['covered'] for r in rows)} of "
          f"{args.runs} runs; gain over the best arm significant (lower bound > 0) in "
          f"{sum(r['gain_positive'] for r in rows)} of {args.runs}")
    print(f"  quartiles of the private rule's true value: {np.percentile([r['private'] for r in rows], [25, 75])}")
    print(f"  ({time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()

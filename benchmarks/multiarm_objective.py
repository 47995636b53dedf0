"""Utility of the K-arm release: weighted objective perturbation with residual weights vs output perturbation.

The three-arm design of ``pydpowl simulate --design multiarm``
(:class:`pydpowl.studies.multi_designs.MultiarmDesign`: X ~ U[-1, 1]^5, arms randomised 1/3 each, the best
arm set by the angle of (x1, x2) in three sectors, benefit in [0, 5], so W = 15; the optimal rule's value is
3, every single arm's 1 + 2/3). For each n, epsilon and repetition one dataset is drawn and two private rules
are fitted on it (four, below), each with DPOWL's public gamma rule:

* ``objective``: DPOWL's default for K arms with known propensities (weighted objective perturbation of
  vec(Theta), residual weights, the baseline on 10 % of epsilon, Huber h = 1);
* ``objective-owl``: weighted objective perturbation with the plain OWL weights B / P(A | x) (h = 1): which
  part of the gain is the mechanism's and which the residual weights';
* ``output-residual``: output perturbation with the residual weights (h = 0.5);
* ``output``: the paper's mechanism (output perturbation with OWL weights, h = 0.5; the K-arm default before).

Both are compared with the non-private rule on the same data (OWL weights, epsilon = inf, gamma = 1, h = 0.5):
true value on a test set of 20,000 subjects, regret (non-private value minus private value) and agreement
(share of the test set on which the two rules recommend the same arm). Reported: means with standard errors
over the repetitions, and medians of the regret.

    python benchmarks/multiarm_objective.py --runs 50                  # the grid of docs/utility.md
    python benchmarks/multiarm_objective.py --runs 5 --n 500 --epsilon 1  # a quick look
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

MECHANISMS = {"objective": dict(mechanism="auto", residual="auto"),
              "objective-owl": dict(mechanism="objective", residual=False),
              "output-residual": dict(mechanism="output", residual=True),
              "output": dict(mechanism="output", residual=False)}


def one_run(seed: int, n: int, epsilons, test) -> list:
    from pydpowl import DPOWL
    from pydpowl.studies.multi_designs import MultiarmDesign

    rng = np.random.default_rng([seed, n])
    design = MultiarmDesign(rng)
    X, A, B = design.draw(n, rng)
    W = design.benefit_bounds[1] * design.n_arms
    exact = DPOWL(epsilon=np.inf, gamma=1.0, weights_upper_bound=W, feature_bounds=design.feature_bounds,
                  mechanism="output", residual=False).fit(X, A, B, 1 / 3)
    ref = exact.predict(test)
    v_ref = design.value(ref, test)
    rows = []
    for eps in epsilons:
        for name, settings in MECHANISMS.items():
            m = DPOWL(epsilon=eps, weights_upper_bound=W, feature_bounds=design.feature_bounds, random_state=rng,
                      **settings).fit(X, A, B, 1 / 3)
            rec = m.predict(test)
            v = design.value(rec, test)
            rows.append({"seed": seed, "n": n, "epsilon": eps, "mechanism": name, "value": v,
                         "nonprivate": v_ref, "regret": v_ref - v, "agreement": float(np.mean(rec == ref)),
                         "gamma": float(m.gamma_)})
    return rows


def table(rows: list) -> str:
    lines = ["| n | epsilon | mechanism | value (se) | regret: mean (se), median | agreement (se) |",
             "|---|---|---|---|---|---|"]
    order = list(MECHANISMS)
    keys = sorted({(r["n"], r["epsilon"], r["mechanism"]) for r in rows},
                  key=lambda k: (k[0], k[1], order.index(k[2])))
    for n, eps, mech in keys:
        sel = [r for r in rows if (r["n"], r["epsilon"], r["mechanism"]) == (n, eps, mech)]
        k = len(sel)

        def ms(key):
            x = np.array([r[key] for r in sel])
            return x.mean(), x.std(ddof=1) / np.sqrt(k) if k > 1 else float("nan"), float(np.median(x))

        v, r, a = ms("value"), ms("regret"), ms("agreement")
        lines.append(f"| {n} | {eps:g} | {mech} | {v[0]:.3f} ({v[1]:.3f}) | {r[0]:.3f} ({r[1]:.3f}), {r[2]:.3f} "
                     f"| {a[0]:.3f} ({a[1]:.3f}) |")
    for n in sorted({r["n"] for r in rows}):
        ref = np.array([r["nonprivate"] for r in rows if r["n"] == n and r["mechanism"] == "output"])
        lines.append(f"\nnon-private rule (OWL weights, gamma 1), n = {n}: value {ref.mean():.3f}; optimal 3.000, "
                     "best single arm 1.667")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", default="500,1500,5000", help="comma-separated sample sizes")
    parser.add_argument("--epsilon", default="0.5,1,2,5", help="comma-separated budgets")
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--out", type=Path, default=Path("results/multiarm-objective"))
    args = parser.parse_args()
    sizes = [int(float(v)) for v in args.n.split(",")]
    epsilons = [float(v) for v in args.epsilon.split(",")]
    test = np.random.default_rng(10**6).uniform(-1, 1, (20000, 5))
    start = time.perf_counter()
    rows = []
    for n in sizes:
        for seed in range(args.runs):
            rows.extend(one_run(seed, n, epsilons, test))
    text = table(rows)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "rows.json").write_text(json.dumps(rows))
    (args.out / "table.md").write_text(text + "\n")
    print(f"3-arm design, {args.runs} repetitions per cell ({time.perf_counter() - start:.0f} s):")
    print(text)


if __name__ == "__main__":
    main()

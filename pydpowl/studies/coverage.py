"""Coverage of the private analysis's confidence intervals (``make coverage``).

For every cell (design, n, epsilon) and replication: draw a dataset of the
design (:mod:`pydpowl.studies.analysis_designs`), run the whole private analysis
(:func:`pydpowl.analysis.run_analysis`: split, private choice of gamma, the
rule, the value with its intervals) with total budget epsilon and the design's
known propensity, and compare the intervals with the truth *for the released
rule*: its exact value ``V(d)`` and its gain over the better single arm
``V(d) - max(V(+1), V(-1))``, both computed from the design's exact truth
(:class:`pydpowl.datasets.DesignTruth`).

Coverage is reported with its Monte-Carlo standard error
``sqrt(c (1 - c) / R)``, and the mean interval widths.

Run: ``python -m pydpowl.studies.coverage --out results/coverage`` (the full
grid, 500 replications per cell) or with ``--reps`` / ``--ns`` / ``--epsilons``
/ ``--designs`` for a smaller run.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path
from typing import Any, Dict, Optional, Sequence

import numpy as np
import pandas as pd

from .._progress import Progress
from .._validation import check_int, resolve_rng
from ..analysis import run_analysis
from .analysis_designs import get_design

__all__ = ["run_coverage", "summarise_coverage", "coverage_table", "main", "COVERAGE_NS", "COVERAGE_EPSILONS"]

COVERAGE_NS = (500, 2000, 10000)
COVERAGE_EPSILONS = (0.5, 1.0, 5.0)
COVERAGE_DESIGNS = ("synthetic", "cyp")


def run_coverage(*, designs: Sequence[str] = COVERAGE_DESIGNS, ns: Sequence[int] = COVERAGE_NS,
                 epsilons: Sequence[float] = COVERAGE_EPSILONS, reps: int = 500, level: float = 0.95,
                 propensity_model: Optional[str] = None, random_state: Any = None,
                 progress: bool = False) -> pd.DataFrame:
    """One row per (design, n, epsilon, replication): the intervals, the truth and whether it is covered.

    ``propensity_model="logistic"`` releases a DP propensity model instead of
    using the known propensity (a supplementary study: the interval does not
    cover that model's error).
    """
    reps = check_int("reps", reps, minimum=1)
    rng = resolve_rng(random_state)
    rows = []
    cells = [(get_design(d), int(n), float(e)) for d in designs for n in ns for e in epsilons]
    with Progress(len(cells) * reps, "coverage", enabled=progress) as bar:
        for design, n, eps in cells:
            truth = design.truth
            best_arm = max(truth.arm_value(1), truth.arm_value(-1))
            for r in range(reps):
                data = design.draw(n, rng)
                propensity: Dict[str, Any] = ({"propensity_model": propensity_model} if propensity_model else
                                              {"propensity": design.propensity(n)})
                res = run_analysis(
                    data.X, data.treatment, data.benefit, feature_bounds=design.feature_bounds,
                    benefit_bounds=design.benefit_bounds, weights_upper_bound=design.weights_upper_bound,
                    total_epsilon=eps, level=level, random_state=rng,
                    **propensity)
                mc = res.model_content
                v_true = truth.linear_rule_value(mc["intercept"], np.asarray(mc["coef"]))
                d_true = v_true - best_arm
                v, d = res.value.value, res.value.difference
                rows.append(dict(design=design.name, n=n, epsilon=eps, rep=r, gamma=res.gamma,
                                 value_true=v_true, value_est=v.estimate, value_low=v.ci_low, value_high=v.ci_high,
                                 value_covered=v.ci_low <= v_true <= v.ci_high, value_width=v.width,
                                 diff_true=d_true, diff_est=d.estimate, diff_low=d.ci_low, diff_high=d.ci_high,
                                 diff_covered=d.ci_low <= d_true <= d.ci_high, diff_width=d.width,
                                 optimal_value=truth.optimal_value, best_arm_value=best_arm,
                                 spent=res.epsilon_spent))
                bar.update()
    return pd.DataFrame(rows)


def summarise_coverage(rows: pd.DataFrame) -> pd.DataFrame:
    """Per cell: coverage +- Monte-Carlo SE and mean width, for the value and the gain; rule quality."""
    out = []
    for (design, n, eps), g in rows.groupby(["design", "n", "epsilon"], sort=False):
        R = len(g)
        cv, cd = g.value_covered.mean(), g.diff_covered.mean()
        out.append(dict(design=design, n=n, epsilon=eps, reps=R,
                        value_coverage=cv, value_mc_se=math.sqrt(cv * (1 - cv) / R), value_width=g.value_width.mean(),
                        diff_coverage=cd, diff_mc_se=math.sqrt(cd * (1 - cd) / R), diff_width=g.diff_width.mean(),
                        rule_value=g.value_true.mean(), optimal_value=g.optimal_value.iloc[0],
                        best_arm_value=g.best_arm_value.iloc[0], max_spent=g.spent.max()))
    return pd.DataFrame(out)


def coverage_table(summary: pd.DataFrame) -> str:
    """Markdown table of :func:`summarise_coverage`."""
    lines = ["| design | n | epsilon | reps | value: coverage ± MC SE | value: mean width | gain: coverage ± MC SE "
             "| gain: mean width | true value of the rule (mean) | optimal / best arm |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in summary.itertuples():
        lines.append(f"| {r.design} | {r.n} | {r.epsilon:g} | {r.reps} | {100 * r.value_coverage:.1f} ± "
                     f"{100 * r.value_mc_se:.1f} % | {r.value_width:.3f} | {100 * r.diff_coverage:.1f} ± "
                     f"{100 * r.diff_mc_se:.1f} % | {r.diff_width:.3f} | {r.rule_value:.3f} | "
                     f"{r.optimal_value:.3f} / {r.best_arm_value:.3f} |")
    return "\n".join(lines)


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pydpowl.studies.coverage", description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("results/coverage"))
    parser.add_argument("--reps", type=int, default=500)
    parser.add_argument("--ns", default=",".join(map(str, COVERAGE_NS)))
    parser.add_argument("--epsilons", default=",".join(f"{e:g}" for e in COVERAGE_EPSILONS))
    parser.add_argument("--designs", default=",".join(COVERAGE_DESIGNS))
    parser.add_argument("--propensity-model", choices=("logistic",), default=None)
    parser.add_argument("--seed", type=int, default=20240)
    parser.add_argument("--no-progress", action="store_true")
    args = parser.parse_args(argv)
    t0 = time.perf_counter()
    rows = run_coverage(designs=args.designs.split(","), ns=[int(v) for v in args.ns.split(",")],
                        epsilons=[float(v) for v in args.epsilons.split(",")], reps=args.reps,
                        propensity_model=args.propensity_model, random_state=args.seed,
                        progress=not args.no_progress)
    summary = summarise_coverage(rows)
    args.out.mkdir(parents=True, exist_ok=True)
    rows.to_csv(args.out / "coverage_replications.csv", index=False)
    summary.to_csv(args.out / "coverage.csv", index=False)
    what = "DP logistic propensity model" if args.propensity_model else "known propensities"
    text = (f"# Coverage of the private analysis ({what}; nominal 95 %)\n\n{coverage_table(summary)}\n\n"
            f"seed {args.seed}; {time.perf_counter() - t0:.0f} s\n")
    (args.out / "coverage.md").write_text(text, encoding="utf-8")
    print(text)
    low = summary[(summary.value_coverage < 0.93) | (summary.diff_coverage < 0.93)]
    if len(low):
        print(f"{len(low)} cell(s) below 93 % coverage", file=sys.stderr)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

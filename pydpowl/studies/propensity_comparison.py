"""Estimated propensities in DP-OWL: composition against Proposition 8 (``make propensity-study``).

Two ways to fit a private rule when the propensities must be estimated on the
private data, at the same total budget E:

* **composition**: release a DP logistic propensity model with ``rho E``
  (:class:`pydpowl.estimators.dp_propensity.DPLogisticPropensity`), then fit
  DP-OWL with the released propensities, ``C = 0``, and ``(1 - rho) E``;
* **Proposition 8**: fit a ridge logistic model non-privately on the same rows
  (:class:`pydpowl.LogisticPropensity`, on the features scaled to [-1, 1] by
  their public bounds so that ``C_x^2 = 1 + p``; ridge ``b_x``), then fit
  DP-OWL with E and the weight sensitivity
  ``C = n h``, the package's (:meth:`pydpowl.LogisticPropensity.weight_sensitivity`:
  the tight per-weight bound ``h = 2 C_B C_x^2 e^M / (n b_x)`` plus the
  certified fit's tolerance term, for each of the n weights) or, for
  reference, the paper's ``H = 2 C_B C_x^2 (1 + e^M)^2 / b_x``
  (:func:`pydpowl.proposition8_H`).

Both use the same logit bound M = log 9 and benefits clipped to the design's
public bounds; the reference is the rule fitted with the *known* propensity
(C = 0, all of E). Utility is the exact value of the released rule under the
design (:class:`pydpowl.datasets.DesignTruth`), averaged over replications.
Each method is shown at its best gamma from a common grid (an oracle choice,
the same for every method, so that a larger sensitivity is not penalised by a
gamma that suits a smaller one), and each method's own public constant
(``rho``, ``b_x``) is shown for every value of its grid.

Simulation of the release: for each replication and weight set, the exact
DP-OWL minimiser is computed once per gamma (batched certified solver) and the
output-perturbation noise for each epsilon and C is added, which has exactly
the law of a separate DP-OWL release (as in :mod:`pydpowl.studies.simulation`).
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np
import pandas as pd

from .._progress import Progress
from .._validation import check_int, resolve_rng
from ..engine.losses import HuberHingeLoss
from ..engine.solver import DEFAULT_TOL, solve_each
from ..engine.mechanisms import perturb
from ..engine.preprocessing import FeatureScaler
from ..estimators.dp_propensity import DEFAULT_LOGIT_BOUND, DPLogisticPropensity
from ..estimators.inputs import owl_weights
from ..estimators.propensity import LogisticPropensity, proposition8_H
from ..estimators.propensity_received import arm_propensity
from .analysis_designs import get_design

__all__ = ["run_propensity_comparison", "summarise_comparison", "comparison_table", "main"]

STUDY_NS = (500, 2000, 10000)
STUDY_EPSILONS = (0.5, 1.0, 5.0)
STUDY_GAMMAS = (30.0, 100.0, 300.0, 1000.0, 3000.0)
RHOS = (0.1, 0.2, 0.4)
RIDGES = (0.1, 1.0, 10.0)


def run_propensity_comparison(*, designs: Sequence[str] = ("synthetic", "cyp"), ns: Sequence[int] = STUDY_NS,
                              epsilons: Sequence[float] = STUDY_EPSILONS, gammas: Sequence[float] = STUDY_GAMMAS,
                              rhos: Sequence[float] = RHOS, ridges: Sequence[float] = RIDGES, reps: int = 100,
                              logit_bound: float = DEFAULT_LOGIT_BOUND, random_state: Any = None,
                              progress: bool = False) -> pd.DataFrame:
    """One row per (design, n, epsilon, method, parameter, gamma): the mean true value over replications."""
    reps = check_int("reps", reps, minimum=1)
    rng = resolve_rng(random_state)
    gammas = [float(g) for g in gammas]
    records: Dict[Tuple, List[float]] = {}
    with Progress(len(designs) * len(ns) * reps, "propensity study", enabled=progress) as bar:
        for name in designs:
            design = get_design(name)
            truth = design.truth
            lo, hi = design.benefit_bounds
            W = design.weights_upper_bound
            scaler = FeatureScaler.from_bounds(design.feature_bounds, design.feature_bounds[0].size)
            unit = np.maximum(np.abs(design.feature_bounds[0]), np.abs(design.feature_bounds[1]))
            for n in ns:
                for _ in range(reps):
                    data = design.draw(int(n), rng)
                    X, A = data.X.to_numpy(dtype=float), data.treatment
                    B = np.clip(data.benefit, lo, hi) - lo
                    Z, _ = scaler.transform_checked(X)
                    # weight sets: (method, parameter, epsilon or None, {C label: C}) -> weights
                    sets: List[Tuple[str, str, Optional[float], Dict[str, float], Any]] = [
                        ("known", "-", None, {"C = 0": 0.0},
                         owl_weights(B, arm_propensity(design.propensity(int(n)), A), W)[0])]
                    for ridge in ridges:
                        lp = LogisticPropensity(feature_bounds=(design.feature_bounds[0] / unit,
                                                                design.feature_bounds[1] / unit),
                                                benefit_bound=hi - lo, logit_bound=logit_bound,
                                                ridge=ridge).fit(X / unit, A)
                        p, _ = lp.probability_of(X / unit, A)
                        paper = proposition8_H(benefit_bound=hi - lo, feature_norm_bound=lp.feature_norm_bound_,
                                               logit_bound=logit_bound, hessian_lower_bound=ridge)
                        sets.append(("prop8", f"b_x={ridge:g}", None,  # tight: the package's C (hessian_H, n h)
                                     {"tight": lp.weight_sensitivity(int(n)), "paper": paper},
                                     owl_weights(B, p, W)[0]))
                    for eps in epsilons:
                        for rho in rhos:
                            dp = DPLogisticPropensity(epsilon=rho * eps, feature_bounds=design.feature_bounds,
                                                      logit_bound=logit_bound, random_state=rng).fit(X, A)
                            p, _ = dp.probability_of(X, A)
                            sets.append(("composition", f"rho={rho:g}", eps, {"C = 0": 0.0},
                                         owl_weights(B, p, W)[0]))
                    G = len(gammas)
                    w_all = np.concatenate([np.tile(s[4], (G, 1)) for s in sets])
                    theta = solve_each(np.broadcast_to(Z, (len(sets) * G,) + Z.shape), np.tile(A, (len(sets) * G, 1)),
                                       w_all, gamma=np.tile(gammas, len(sets)), loss=HuberHingeLoss(0.5),
                                       tol=DEFAULT_TOL)
                    for k, (method, param, eps_only, cs, _) in enumerate(sets):
                        for eps in epsilons if eps_only is None else [eps_only]:
                            eps_fit = eps * (1 - float(param.split("=")[1])) if method == "composition" else eps
                            for c_label, C in cs.items():
                                for j, gamma in enumerate(gammas):
                                    t = perturb(theta[k * G + j], epsilon=eps_fit, gamma=gamma,
                                                weights_upper_bound=W, C=C, n_samples=Z.shape[0],
                                                tol=DEFAULT_TOL, rng=rng)[0]
                                    full = scaler.coef_to_original(t)
                                    v = truth.linear_rule_value(full[0], full[1:])
                                    label = method if method != "prop8" else f"prop8-{c_label}"
                                    records.setdefault((name, int(n), eps, label, param, gamma), []).append(v)
                    bar.update()
    rows = [dict(design=k[0], n=k[1], epsilon=k[2], method=k[3], parameter=k[4], gamma=k[5], reps=len(v),
                 value=float(np.mean(v)), se=float(np.std(v, ddof=1) / math.sqrt(len(v))) if len(v) > 1 else math.nan)
            for k, v in records.items()]
    return pd.DataFrame(rows)


def summarise_comparison(rows: pd.DataFrame, *, default_rho: float = 0.2) -> pd.DataFrame:
    """Per (design, n, epsilon): each method at its best gamma, and the winner."""
    out = []
    for (design, n, eps), g in rows.groupby(["design", "n", "epsilon"], sort=False):
        best = g.loc[g.groupby(["method", "parameter"]).value.idxmax()]
        rec: Dict[str, Any] = dict(design=design, n=n, epsilon=eps)

        def pick(mask):
            r = best[mask].sort_values("value", ascending=False).iloc[0]
            return r.value, r.se, r.parameter, r.gamma

        rec["known"] = pick(best.method == "known")
        rec["composition_default"] = pick((best.method == "composition") & (best.parameter == f"rho={default_rho:g}"))
        rec["composition_best"] = pick(best.method == "composition")
        rec["prop8_tight_best"] = pick(best.method == "prop8-tight")
        rec["prop8_paper_best"] = pick(best.method == "prop8-paper")
        c, p8 = rec["composition_best"], rec["prop8_tight_best"]
        diff, se = c[0] - p8[0], math.hypot(c[1], p8[1])
        rec["winner"] = ("composition" if diff > 2 * se else "Proposition 8" if diff < -2 * se else "tie (within 2 SE)")
        out.append(rec)
    return pd.DataFrame(out)


def comparison_table(summary: pd.DataFrame, *, optimal: Optional[Dict[str, Tuple[float, float]]] = None) -> str:
    """Markdown: mean true value (SE) [parameter, gamma] of each method at its best gamma."""
    def cell(t, show_param=True):
        value, se, param, gamma = t
        extra = f"{param}, γ={gamma:g}" if show_param and param != "-" else f"γ={gamma:g}"
        return f"{value:.3f} ({se:.3f}) [{extra}]"

    lines = ["| design | n | ε | known propensity (reference) | composition, ρ = 0.2 | composition, best ρ "
             "| Prop. 8 tight C, best b_x | Prop. 8, the paper's (1 + e^M)^2 form, best b_x "
             "| winner (composition vs Prop. 8 tight) |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in summary.itertuples():
        lines.append(f"| {r.design} | {r.n} | {r.epsilon:g} | {cell(r.known, False)} | "
                     f"{cell(r.composition_default, False)} | {cell(r.composition_best)} | {cell(r.prop8_tight_best)} "
                     f"| {cell(r.prop8_paper_best)} | {r.winner} |")
    return "\n".join(lines)


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pydpowl.studies.propensity_comparison",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("results/propensity"))
    parser.add_argument("--reps", type=int, default=100)
    parser.add_argument("--ns", default=",".join(map(str, STUDY_NS)))
    parser.add_argument("--epsilons", default=",".join(f"{e:g}" for e in STUDY_EPSILONS))
    parser.add_argument("--designs", default="synthetic,cyp")
    parser.add_argument("--seed", type=int, default=20241)
    parser.add_argument("--no-progress", action="store_true")
    args = parser.parse_args(argv)
    t0 = time.perf_counter()
    rows = run_propensity_comparison(designs=args.designs.split(","), ns=[int(v) for v in args.ns.split(",")],
                                     epsilons=[float(v) for v in args.epsilons.split(",")], reps=args.reps,
                                     random_state=args.seed, progress=not args.no_progress)
    summary = summarise_comparison(rows)
    args.out.mkdir(parents=True, exist_ok=True)
    rows.to_csv(args.out / "propensity_by_gamma.csv", index=False)
    text = ("# Estimated propensities: composition vs Proposition 8 (mean true value of the released rule)\n\n"
            + comparison_table(summary)
            + f"\n\n{args.reps} replications per cell; seed {args.seed}; {time.perf_counter() - t0:.0f} s\n")
    (args.out / "propensity_comparison.md").write_text(text, encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

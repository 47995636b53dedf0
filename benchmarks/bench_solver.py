"""Benchmark: a non-private DP-OWL fit by pydpowl and by DPpack on the same data.

For each n (the paper's synthetic design, p = 4 features + intercept, W = 30,
propensity 1/2) it times

* DPpack: ``svmDP$fit`` (eps = Inf, linear kernel, Huber h = 0.5), timed inside R
  around ``fit`` alone (``Sys.time``), all repeats in one R call;
* pydpowl: ``DPOWL(epsilon=inf).fit`` end to end (validation, clipping, scaling,
  weights, solve), and the solver alone (``solve_weighted_erm`` on the prepared data);

and prints the best time of a few repeats for each (robust to other load on the
machine; the same rule for both engines), the ratios, and the precision each engine reached:
the gradient norm of F at its solution, computed by
``pydpowl.engine.solver.objective_gradient`` in DPpack's scaled space.

Run: ``python benchmarks/bench_solver.py`` (``make bench``); ``--help`` for options.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import List, Optional, Sequence

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from a checkout

from pydpowl import DPOWL, HuberHingeLoss  # noqa: E402
from pydpowl.datasets import make_synthetic_owl  # noqa: E402
from pydpowl.engine.solver import objective_gradient, solve_weighted_erm  # noqa: E402

DEFAULT_SIZES = (1459, 10_000, 20_000, 100_000, 1_000_000)
#: speed goals of issue 3: (smallest n, minimum ratio DPpack / pydpowl)
GOALS = ((20_000, 20.0), (1_000_000, 15.0))
PRECISION_GOAL = 1e-10


def _best_seconds(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def bench_one(n: int, *, repeats: int, gamma: float, seed: int, with_r: bool) -> dict:
    data = make_synthetic_owl(n, random_state=np.random.default_rng([seed, n]))
    X = data.X.to_numpy(dtype=float)
    A, B, prop = data.treatment, data.benefit, data.propensity
    W, bounds = data.weights_upper_bound, data.feature_bounds
    est = DPOWL(epsilon=np.inf, gamma=gamma, weights_upper_bound=W, feature_bounds=bounds, keep_nonprivate=True,
                weight_sensitivity=data.weight_sensitivity)
    est.fit(X, A, B, prop)  # warm-up (numba compilation, caches)
    Z, y, w, _, _, _ = est.prepare(X, A, B, prop)
    loss = HuberHingeLoss(0.5)
    row = {"n": n}
    row["py_fit"] = _best_seconds(lambda: est.fit(X, A, B, prop), repeats)
    res = solve_weighted_erm(Z, y, w, gamma=gamma, loss=loss)
    row["py_solve"] = _best_seconds(lambda: solve_weighted_erm(Z, y, w, gamma=gamma, loss=loss), repeats)
    row["py_nit"], row["backend"] = res.nit, res.backend
    row["py_grad"] = float(np.linalg.norm(objective_gradient(est.nonprivate_scaled_coef_, Z, y, w,
                                                             gamma=gamma, loss=loss)))
    if with_r:
        from r_reference import fit_svmdp

        fits = fit_svmdp(X, A, B / prop, epsilon=np.inf, gamma=gamma, weights_upper_bound=W,
                         feature_bounds=bounds, huber_h=0.5, fit_intercept=True, seeds=[1] * (repeats + 1))
        row["r_fit"] = float(min(fits.fit_seconds[1:]))  # the first fit warms R up
        row["r_grad"] = float(np.linalg.norm(objective_gradient(fits.scaled_coef[0], Z, y, w,
                                                                gamma=gamma, loss=loss)))
    return row


def _fmt_ms(s: Optional[float]) -> str:
    return "-" if s is None else f"{1e3 * s:.2f}"


def format_rows(rows: Sequence[dict]) -> str:
    head = ["n", "DPpack fit ms", "pydpowl fit ms", "ratio fit", "pydpowl solve ms", "ratio solve",
            "grad norm DPpack", "grad norm pydpowl", "Newton it", "backend"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        rf = r.get("r_fit")
        lines.append("| " + " | ".join([
            f"{r['n']:,}", _fmt_ms(rf), _fmt_ms(r["py_fit"]),
            "-" if rf is None else f"{rf / r['py_fit']:.1f}x", _fmt_ms(r["py_solve"]),
            "-" if rf is None else f"{rf / r['py_solve']:.1f}x",
            "-" if rf is None else f"{r['r_grad']:.1e}", f"{r['py_grad']:.1e}", str(r["py_nit"]), r["backend"],
        ]) + " |")
    return "\n".join(lines)


def goal_lines(rows: Sequence[dict]) -> List[str]:
    out = []
    for n_min, ratio in GOALS:
        sel = [r for r in rows if r["n"] >= n_min and "r_fit" in r]
        if not sel:
            continue
        fit_ok = all(r["r_fit"] / r["py_fit"] >= ratio for r in sel)
        solve_ok = all(r["r_fit"] / r["py_solve"] >= ratio for r in sel)
        out.append(f"goal >= {ratio:g}x at n >= {n_min:,}: solver {'met' if solve_ok else 'NOT met'}, "
                   f"whole fit {'met' if fit_ok else 'NOT met'}")
    prec = all(r["py_grad"] <= PRECISION_GOAL for r in rows)
    out.append(f"precision goal ||grad F|| <= {PRECISION_GOAL:g}: {'met' if prec else 'NOT met'}")
    return out


def main(argv: Optional[Sequence[str]] = None) -> int:
    p = argparse.ArgumentParser(description="Time non-private fits: pydpowl vs DPpack (one R call per n).")
    p.add_argument("--sizes", type=int, nargs="+", default=list(DEFAULT_SIZES), help="values of n")
    p.add_argument("--repeats", type=int, default=7, help="timed repeats per engine and n (best reported)")
    p.add_argument("--gamma", type=float, default=1.0, help="regularisation constant (DPpack convention)")
    p.add_argument("--seed", type=int, default=1, help="data seed")
    p.add_argument("--no-r", action="store_true", help="time pydpowl only (no R needed)")
    args = p.parse_args(argv)
    if args.repeats < 1:
        p.error(f"--repeats must be >= 1, got {args.repeats}")
    rows = []
    for n in args.sizes:
        print(f"[bench] n={n:,} ...", file=sys.stderr, flush=True)
        rows.append(bench_one(n, repeats=args.repeats, gamma=args.gamma, seed=args.seed, with_r=not args.no_r))
    print(f"Non-private fit, paper's synthetic design (p = 4 + intercept), gamma = {args.gamma:g}, "
          f"Huber h = 0.5, best of {args.repeats} repeats (DPpack timed inside R around fit only).")
    print(format_rows(rows))
    for line in goal_lines(rows):
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())

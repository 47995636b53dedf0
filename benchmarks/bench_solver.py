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

With ``--cold`` it also measures what a script meets: for each n and each
backend (numpy, numba), fresh processes that import pydpowl and fit once
(median of ``--cold-runs`` processes; numba loads its kernels from the on-disk
cache that set-up filled), and the warm per-fit time in the same processes.
With ``--batch`` it times the studies' many small solves (R problems of n rows,
``pydpowl.engine.solver.solve_each``) on both backends.

Run: ``python benchmarks/bench_solver.py`` (``make bench``); ``--help`` for options.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import List, Optional, Sequence

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from a checkout

from pydpowl import DPOWL, HuberHingeLoss, prepare_owl  # noqa: E402
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
                weight_sensitivity=data.weight_sensitivity, mechanism="output", residual=False, huber_h=0.5)
    est.fit(X, A, B, prop)  # warm-up (numba compilation, caches)
    problem = prepare_owl(X, A, B, prop, weights_upper_bound=W, feature_bounds=bounds,
                          weight_sensitivity=data.weight_sensitivity)
    Z, y, w = problem.Z, problem.labels, problem.weights
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


def _child(path: str, backend: str) -> None:
    """In a fresh process: import pydpowl and fit once (timed), then time warm fits; print JSON."""
    data = np.load(path)
    X, A, B, prop = data["X"], data["A"], data["B"], data["p"]
    t0 = time.perf_counter()
    from pydpowl import DPOWL
    from pydpowl.engine import kernels

    kernels.AUTO_MIN_ROWS = {"numpy": 2**62, "numba": 0}.get(backend, kernels.AUTO_MIN_ROWS)
    est = DPOWL(epsilon=1.0, gamma=1.0, weights_upper_bound=float(data["W"]),
                feature_bounds=(data["lo"], data["hi"]), mechanism="output", residual=False, huber_h=0.5,
                random_state=1)
    est.fit(X, A, B, prop)
    first = time.perf_counter() - t0
    numba_loaded = "numba" in sys.modules
    warm = []
    for _ in range(5):
        t = time.perf_counter()
        est.fit(X, A, B, prop)
        warm.append(time.perf_counter() - t)
    print(json.dumps({"first": first, "warm": float(np.median(warm)), "numba": numba_loaded}))


def bench_cold(sizes: Sequence[int], runs: int, seed: int) -> List[dict]:
    """Import + first fit in fresh processes (median of ``runs``) and warm per-fit time, by backend."""
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            data = make_synthetic_owl(n, random_state=np.random.default_rng([seed, n]))
            path = f"{tmp}/owl_{n}.npz"
            np.savez(path, X=data.X.to_numpy(dtype=float), A=data.treatment, B=data.benefit, p=data.propensity,
                     lo=data.feature_bounds[0], hi=data.feature_bounds[1], W=data.weights_upper_bound)
            row = {"n": n}
            for backend in ("numpy", "numba", "auto"):
                print(f"[bench] cold n={n:,} {backend} ...", file=sys.stderr, flush=True)
                out = [json.loads(subprocess.run([sys.executable, __file__, "--child", path, backend], check=True,
                                                 capture_output=True, text=True).stdout) for _ in range(runs)]
                row[f"{backend}_first"] = float(np.median([o["first"] for o in out]))
                row[f"{backend}_warm"] = float(np.median([o["warm"] for o in out]))
                row[f"{backend}_numba"] = out[0]["numba"]
            rows.append(row)
    return rows


def format_cold(rows: Sequence[dict], r_fit: dict) -> str:
    head = ["n", "numpy import+first fit ms", "numba import+first fit ms", "auto import+first fit ms",
            "numpy warm fit ms", "numba warm fit ms", "DPpack warm fit ms", "auto loads numba"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        lines.append("| " + " | ".join([
            f"{r['n']:,}", _fmt_ms(r["numpy_first"]), _fmt_ms(r["numba_first"]), _fmt_ms(r["auto_first"]),
            _fmt_ms(r["numpy_warm"]), _fmt_ms(r["numba_warm"]), _fmt_ms(r_fit.get(r["n"])),
            "yes" if r["auto_numba"] else "no"]) + " |")
    return "\n".join(lines)


def bench_batch(sizes: Sequence[int], reps: int, repeats: int, seed: int) -> str:
    """The studies' workload: ``reps`` problems of n rows solved by ``solve_each`` (best of ``repeats``)."""
    from pydpowl.engine.solver import solve_each
    from pydpowl.estimators.inputs import owl_weights

    loss = HuberHingeLoss(0.5)
    lines = ["| n | R | gamma | numpy s | numba s |", "|---|---|---|---|---|"]
    for n in sizes:
        data = make_synthetic_owl(n * reps, random_state=np.random.default_rng([seed, n]))
        X = data.X.to_numpy(dtype=float).reshape(reps, n, -1)
        w, _ = owl_weights(data.benefit.reshape(reps, n), np.full((reps, n), 0.5), 30.0)
        d = X.shape[2] + 1
        Z = np.concatenate([np.ones((reps, n, 1)), np.clip(X, 0, 1)], axis=2) / np.sqrt(d)
        y = data.treatment.reshape(reps, n).astype(float)
        for gamma in (1.0, 30.0):
            cells = [_best_seconds(lambda: solve_each(Z, y, w, gamma=gamma, loss=loss, backend=b), repeats)
                     for b in ("numpy", "numba")]
            lines.append(f"| {n:,} | {reps} | {gamma:g} | {cells[0]:.3f} | {cells[1]:.3f} |")
    return "\n".join(lines)


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
    p.add_argument("--cold", action="store_true", help="also time import + first fit in fresh processes")
    p.add_argument("--cold-runs", type=int, default=5, help="fresh processes per n and backend (median)")
    p.add_argument("--batch", action="store_true", help="also time the studies' many small solves")
    p.add_argument("--child", nargs=2, metavar=("DATA", "BACKEND"), help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        _child(*args.child)
        return 0
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
    if args.cold:
        cold = bench_cold(args.sizes, args.cold_runs, args.seed)
        print(f"\nA script's first fit (DPOWL, epsilon = 1): import pydpowl + fit in a fresh process, median of "
              f"{args.cold_runs} processes; warm fit: median of 5 more fits in those processes.")
        print(format_cold(cold, {r["n"]: r["r_fit"] for r in rows if "r_fit" in r}))
    if args.batch:
        print("\nStudies: R problems of n rows solved one by one (solve_each), best of 3.")
        print(bench_batch((200, 1000, 2500), 200, 3, args.seed))
    return 0


if __name__ == "__main__":
    sys.exit(main())

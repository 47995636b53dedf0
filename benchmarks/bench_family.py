"""Speed of DPpack's ERM family in pydpowl against DPpack, warm and as whole scripts.

**Warm** (one process each, DPpack through rpy2 in the same run): for every
configuration and n, the median over ``--repeats`` fits of pydpowl's public
``fit`` (after one warm-up fit) and of DPpack's ``fit`` timed inside R
(``Sys.time`` around ``$fit``, a fresh model object per fit), on the same data.
Goal: pydpowl at least 10 times faster from n = 20,000.

**Whole script** (``--cold``): a CSV of the data is written once; then
``python cold/family_pydpowl.py CONFIG CSV`` (the scikit-learn estimators),
``python cold/family_functions.py CONFIG CSV`` (the same fits through
``pydpowl.interop.dppack``, DPpack's classes as functions, which never import
scikit-learn) and ``Rscript cold/family_dppack.R CONFIG CSV`` run in fresh
processes, interleaved (read, fit once, print); medians of ``--repeats`` runs.
Goal: pydpowl not slower. The estimators' scripts carry ``import
sklearn.base`` (about 0.35 s here; the package's one estimator base).

Run: ``python benchmarks/bench_family.py`` (``make bench-family``); ``--help`` for options.
Timings on a shared machine are noisy: medians of several runs are reported.
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Dict, List, Optional

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

#: configuration -> (estimator factory name, DPpack arguments)
CONFIGS = ("svm_objective_linear", "svm_output_linear", "svm_objective_gaussian", "svm_output_gaussian_weighted",
           "logistic_objective", "logistic_output", "linreg_pure", "linreg_approx")
WARM_GOAL = 10.0


def make_data(n: int, seed: int = 7):
    rng = np.random.default_rng([seed, n])
    X = rng.uniform(-1.1, 1.1, (n, 2))
    y = (X[:, 0] + 0.6 * X[:, 1] ** 2 - 0.3 + 0.4 * rng.standard_normal(n) > 0).astype(float)
    w = rng.uniform(0.0, 1.2, n)
    t = 0.5 + X @ np.array([0.7, -0.4]) + 0.3 * rng.standard_normal(n)
    return X, y, w, t


def pydpowl_fit(config: str, X, y, w, t, seed: int, backend: str = "auto"):
    import pydpowl

    b = ([-1, -1], [1, 1])
    if config.startswith("svm"):
        gauss = "gaussian" in config
        est = pydpowl.DPSVM(epsilon=1.0, gamma=1.0, perturbation="output" if "output" in config else "objective",
                            kernel="gaussian" if gauss else "linear", n_components=20 if gauss else None,
                            feature_bounds=None if gauss else b, fit_intercept=not gauss,
                            weights_upper_bound=1.0 if "weighted" in config else None, random_state=seed,
                            backend=backend)
        return est.fit(X, y, w if "weighted" in config else None)
    if config.startswith("logistic"):
        return pydpowl.DPLogisticRegression(epsilon=1.0, gamma=1.0, perturbation=config.split("_")[1],
                                            feature_bounds=b, fit_intercept=True, random_state=seed,
                                            backend=backend).fit(X, y)
    return pydpowl.DPLinearRegression(epsilon=1.0, delta=0.0 if config == "linreg_pure" else 1e-3, gamma=1.0,
                                      feature_bounds=b, target_bounds=(-3, 3), fit_intercept=True,
                                      random_state=seed).fit(X, t)


def dppack_fit_seconds(config: str, X, y, w, t, repeats: int) -> List[float]:
    from r_reference.dppack_family import fit_dppack_model

    seeds = list(range(1, repeats + 1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if config.startswith("svm"):
            gauss = "gaussian" in config
            f = fit_dppack_model("svmDP", X, y, upper=[1, 1], lower=[-1, -1], add_bias=not gauss, eps=1.0, gamma=1.0,
                                 perturbation="output" if "output" in config else "objective",
                                 kernel="Gaussian" if gauss else "linear", D=20 if gauss else None,
                                 weights=w if "weighted" in config else None,
                                 weights_upper_bound=1.0 if "weighted" in config else None, seeds=seeds)
        elif config.startswith("logistic"):
            f = fit_dppack_model("LogisticRegressionDP", X, y, upper=[1, 1], lower=[-1, -1], add_bias=True, eps=1.0,
                                 gamma=1.0, perturbation=config.split("_")[1], seeds=seeds)
        else:
            f = fit_dppack_model("LinearRegressionDP", X, t, upper=[1, 1, 3], lower=[-1, -1, -3], add_bias=True,
                                 eps=1.0, gamma=1.0, delta=0.0 if config == "linreg_pure" else 1e-3, seeds=seeds)
    return list(f.fit_seconds)


def _median_fit(config, X, y, w, t, repeats: int, backend: str) -> float:
    pydpowl_fit(config, X, y, w, t, 0, backend)  # warm-up (and, for numba, loading the kernels)
    times = []
    for k in range(repeats):
        t0 = time.perf_counter()
        pydpowl_fit(config, X, y, w, t, k + 1, backend)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def warm(sizes: List[int], repeats: int, configs) -> List[tuple]:
    """Rows ``(config, n, pydpowl auto, pydpowl numba, DPpack)`` of median warm fit times (s)."""
    from pydpowl.engine.kernels import numba_available

    rows = []
    for n in sizes:
        X, y, w, t = make_data(n)
        for config in configs:
            r = dppack_fit_seconds(config, X, y, w, t, repeats if "gaussian" not in config else max(2, repeats // 2))
            r_m = statistics.median(r)
            auto = _median_fit(config, X, y, w, t, repeats, "auto")
            compiled = math.nan
            if numba_available() and not config.startswith("linreg"):  # linear regression has no kernels
                compiled = _median_fit(config, X, y, w, t, repeats, "numba")
            rows.append((config, n, auto, compiled, r_m))
            print(f"  warm {config:30s} n={n:>7,}: pydpowl {auto * 1e3:8.2f} ms (numba {compiled * 1e3:8.2f} ms), "
                  f"DPpack {r_m * 1e3:9.1f} ms", flush=True)
    return rows


def cold(n: int, repeats: int, configs, python: str) -> List[tuple]:
    rows = []
    env = dict(os.environ)
    with tempfile.TemporaryDirectory(prefix="pydpowl-family-") as tmp:
        X, y, w, t = make_data(n)
        csv = Path(tmp) / "data.csv"
        import pandas as pd

        pd.DataFrame({"x1": X[:, 0], "x2": X[:, 1], "y": y, "w": w, "t": t}).to_csv(csv, index=False)
        for config in configs:
            scripts = {"python": [python, "family_pydpowl.py", config, str(csv)],
                       "functions": [python, "family_functions.py", config, str(csv)],
                       "DPpack": ["Rscript", "family_dppack.R", config, str(csv)]}
            times: Dict[str, List[float]] = {k: [] for k in scripts}
            for _ in range(repeats):
                for name, cmd in scripts.items():
                    t0 = time.perf_counter()
                    res = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=str(HERE / "cold"))
                    times[name].append(time.perf_counter() - t0)
                    if res.returncode != 0:
                        raise SystemExit(f"bench_family: {' '.join(cmd)} failed:\n{res.stdout}\n{res.stderr}")
            med = {k: statistics.median(v) for k, v in times.items()}
            rows.append((config, n, med["python"], med["functions"], med["DPpack"]))
            print(f"  cold {config:30s} n={n:>7,}: python estimators {med['python']:.2f} s, python "
                  f"pydpowl.interop.dppack {med['functions']:.2f} s, Rscript+DPpack {med['DPpack']:.2f} s", flush=True)
    return rows


def main(argv: Optional[List[str]] = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sizes", type=lambda s: [int(float(v)) for v in s.split(",")], default=[20_000, 100_000])
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--configs", type=lambda s: s.split(","), default=list(CONFIGS))
    p.add_argument("--cold", action="store_true", help="also time whole scripts (fresh processes)")
    p.add_argument("--cold-n", type=int, default=20_000)
    p.add_argument("--python", default=str(ROOT / ".venv" / "bin" / "python"))
    args = p.parse_args(argv)
    bad = set(args.configs) - set(CONFIGS)
    if bad:
        print(f"error: unknown configs {sorted(bad)}; choose from {', '.join(CONFIGS)}", file=sys.stderr)
        return 2
    print("Warm fits (median of repeats; DPpack timed inside R around $fit):")
    rows = warm(args.sizes, args.repeats, args.configs)
    print()
    print("| configuration | n | pydpowl warm (auto) | pydpowl warm (numba) | DPpack warm | ratio auto | ratio best |")
    print("|---|---|---|---|---|---|---|")
    ok_auto = ok_best = True
    for config, n, auto, compiled, r in rows:
        best = min(auto, compiled) if not math.isnan(compiled) else auto
        ok_auto &= r / auto >= WARM_GOAL
        ok_best &= r / best >= WARM_GOAL
        cell = "-" if math.isnan(compiled) else f"{compiled * 1e3:.2f} ms"
        print(f"| {config} | {n:,} | {auto * 1e3:.2f} ms | {cell} | {r * 1e3:.1f} ms | {r / auto:.1f}x "
              f"| {r / best:.1f}x |")
    print(f"\ngoal: warm ratio >= {WARM_GOAL:g}x at every n >= 20,000: backend='auto' "
          f"{'met' if ok_auto else 'NOT met'}; best backend {'met' if ok_best else 'NOT met'}")
    if args.cold:
        print("\nWhole scripts (read CSV, fit once, print; median of repeats):")
        crows = cold(args.cold_n, args.repeats, args.configs, args.python)
        print()
        print("| configuration | n | Python, estimators | Python, pydpowl.interop.dppack | Rscript + DPpack "
              "| ratio estimators | ratio pydpowl.interop.dppack |")
        print("|---|---|---|---|---|---|---|")
        est_ok = fn_ok = True
        for config, n, py, fn, r in crows:
            est_ok &= py <= r
            fn_ok &= fn <= r
            print(f"| {config} | {n:,} | {py:.2f} s | {fn:.2f} s | {r:.2f} s | {r / py:.1f}x | {r / fn:.1f}x |")
        print(f"\ngoal: the Python script not slower than the R script: with pydpowl.interop.dppack "
              f"{'met' if fn_ok else 'NOT met'}; with the scikit-learn estimators {'met' if est_ok else 'NOT met'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

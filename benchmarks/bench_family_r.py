"""DPpack's ERM family from R: pydpowl's R drop-ins against DPpack, as whole scripts and warm.

For each n one data set is written to a CSV (x1, x2 uniform on [-1.2, 1.2] so some values are clipped,
0/1 labels y, weights w, a regression target t), and for each configuration the same R script
(``benchmarks/cold/family_r.R``: read the CSV, build the model with ``pkg::``, fit once, print the
coefficients) runs with ``DPpack`` and with ``pydpowl``, each in a fresh ``Rscript`` (data read and package
load included), interleaved so that load from other processes falls on both alike: median of
``--repeats`` runs. Warm: one R process per package and configuration fits once to warm up, then
takes ``--warm-repeats`` samples, each a batch of fits lasting about 50 ms or more (``system.time``
counts in milliseconds) divided by its size; the median time of one fit (model construction included,
as in a script).

The Gaussian kernel is measured up to ``--gaussian-max-n`` rows only: DPpack builds its random features
in an R loop over rows and features (O(n D) interpreted calls, about 2.5 s per fit at n = 20,000,
D = 20), so a fit at 200,000 rows takes tens of seconds per run.

Run: ``python benchmarks/bench_family_r.py`` (``make bench-family-r``); ``R_LIBS`` must reach the R
package pydpowl (``--rlib`` prepends a library). The machine has 2 shared cores: the load average is
printed with the table.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Dict, List, Sequence

import numpy as np

HERE = Path(__file__).resolve().parent
SCRIPT = HERE / "cold" / "family_r.R"
CONFIGS = ("svm_objective_linear", "svm_output_linear", "svm_objective_gaussian", "svm_output_gaussian_weighted",
           "logistic_objective", "logistic_output", "linreg_pure", "linreg_approx", "tune_classification",
           "tune_linear_regression")
DEFAULT_SIZES = (1459, 20_000, 200_000)


def write_data(n: int, path: Path) -> None:
    rng = np.random.default_rng([11, n])
    X = rng.uniform(-1.2, 1.2, (n, 2))
    y = (X[:, 0] + 0.6 * X[:, 1] ** 2 - 0.3 + 0.3 * rng.normal(size=n) > 0).astype(int)
    w = rng.uniform(0.0, 1.3, n)
    t = 0.4 * X[:, 0] - 0.3 * X[:, 1] + 0.2 * rng.normal(size=n)
    with open(path, "w") as f:
        f.write("x1,x2,y,w,t\n")
        for row in zip(X[:, 0], X[:, 1], y, w, t):
            f.write("%.17g,%.17g,%d,%.17g,%.17g\n" % row)


def run(args: Sequence[str], env: Dict[str, str]) -> subprocess.CompletedProcess:
    out = subprocess.run(["Rscript", str(SCRIPT), *args], env=env, capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"Rscript {' '.join(args)} failed:\n{out.stdout}\n{out.stderr}")
    return out


def wall(args: Sequence[str], env: Dict[str, str]) -> float:
    t0 = time.perf_counter()
    run(args, env)
    return time.perf_counter() - t0


def main(argv: Sequence[str] = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", type=int, nargs="+", default=list(DEFAULT_SIZES))
    p.add_argument("--configs", nargs="+", default=list(CONFIGS), choices=CONFIGS)
    p.add_argument("--repeats", type=int, default=5, help="whole-script runs per engine (median)")
    p.add_argument("--warm-repeats", type=int, default=5, help="warm fits per engine (median)")
    p.add_argument("--gaussian-max-n", type=int, default=20_000)
    p.add_argument("--no-warm", action="store_true")
    p.add_argument("--rlib", default=None, help="an R library holding the R package pydpowl (prepended to R_LIBS)")
    a = p.parse_args(argv)
    env = dict(os.environ)
    if a.rlib:
        env["R_LIBS"] = os.pathsep.join([a.rlib] + ([env["R_LIBS"]] if env.get("R_LIBS") else []))
    rows: List[str] = []
    print(f"load average before: {os.getloadavg()[0]:.2f} (2 shared cores)", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        for n in a.sizes:
            csv = Path(tmp) / f"family_{n}.csv"
            write_data(n, csv)
            for cfg in a.configs:
                if "gaussian" in cfg and n > a.gaussian_max_n:
                    continue
                times = {"DPpack": [], "pydpowl": []}
                for _ in range(a.repeats):
                    for pkg in ("DPpack", "pydpowl"):
                        times[pkg].append(wall([pkg, cfg, str(csv)], env))
                cold = {k: statistics.median(v) for k, v in times.items()}
                warm = {}
                if not a.no_warm:
                    for pkg in ("DPpack", "pydpowl"):
                        warm[pkg] = float(run([pkg, cfg, str(csv), str(a.warm_repeats)], env).stdout.split()[-1])
                line = (f"| {cfg} | {n:,} | {cold['DPpack']:.2f} s | {cold['pydpowl']:.2f} s | "
                        f"{cold['DPpack'] / cold['pydpowl']:.2f}x |")
                if warm:
                    line += (f" {warm['DPpack'] * 1e3:.1f} ms | {warm['pydpowl'] * 1e3:.1f} ms | "
                             f"{warm['DPpack'] / warm['pydpowl']:.1f}x |")
                rows.append(line)
                print(line, flush=True)
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    print("\n| configuration | n | DPpack script | pydpowl script | script speed-up | DPpack warm fit | "
          "pydpowl warm fit | warm speed-up |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    print("\n".join(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

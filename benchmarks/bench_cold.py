"""Cold start: whole processes, as a user runs them (read a CSV, fit once, print).

For each n, one CYP-GUIDES-style cohort is written to a CSV (age, male,
nonwhite, mdd, treatment, benefit, propensity = P(A_i | x_i)) and three
scripts run on it, each in a fresh process, data read included:

* ``python cold/fit_pydpowl.py``: pandas reads the CSV, ``pydpowl.DPOWL`` fits;
* ``Rscript cold/fit_svmDP.R DPpack``: ``read.csv`` and ``DPpack::svmDP``
  (output perturbation, OWL weights ``benefit / propensity``, ``add.bias``);
* ``Rscript cold/fit_svmDP.R pydpowl``: the same script with ``pydpowl::svmDP``;
* with ``--floor``, ``python cold/floor_python.py``: the Python script without
  pydpowl (pandas reads the CSV, scikit-learn's estimator base is imported): the
  part of the Python script's time that pydpowl does not control;
* with ``--before-python PY``, ``fit_pydpowl.py`` run by another checkout's
  Python, in the same interleaved rounds (the "before" of a change).

The runs are interleaved (one of each, then again) so that load from other
processes falls on all scripts alike; the table gives the median wall time of
``--repeats`` runs and the ratios to DPpack, and a second table their CPU
time (user + system, less sensitive to other load than wall time). A line before the table gives the
median time of ``import pydpowl`` alone in a fresh interpreter; the load
average before and after the runs and ``PYTHONDONTWRITEBYTECODE`` (when set, a
module without compiled bytecode on disk is compiled again by every process;
``make setup`` compiles pydpowl's) are printed with the table.

Run: ``python benchmarks/bench_cold.py`` (``make bench-cold``); ``--help`` for
options. ``--python`` and ``--rlib`` measure another checkout (its virtual
environment's Python and an R library holding its R front end);
``--before-python`` adds another checkout's Python script to the same rounds.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DEFAULT_SIZES = (1459, 20_000, 200_000)
#: the issue's goals: (smallest n, largest ratio to DPpack) for each script
PY_GOAL = 0.7
R_GOALS = ((20_000, 1.0), (0, 1.3))
IMPORT_GOAL = 0.25


def write_data(n: int, path: Path, python: str) -> float:
    """Write a CYP-GUIDES-style cohort of ``n`` rows to ``path``; return its public weight bound W."""
    code = (
        "import sys, numpy as np\n"
        "from pydpowl.datasets import make_cyp_guides_style\n"
        "d = make_cyp_guides_style(int(sys.argv[1]), random_state=np.random.default_rng([7, int(sys.argv[1])]))\n"
        "f = d.X.copy(); f['treatment'] = d.treatment; f['benefit'] = d.benefit; f['propensity'] = d.propensity\n"
        "f.to_csv(sys.argv[2], index=False)\n"
        "print(repr(float(d.weights_upper_bound)))\n"
    )
    out = subprocess.run([python, "-c", code, str(n), str(path)], check=True, capture_output=True, text=True,
                         cwd=ROOT)
    return float(out.stdout.strip())


def timed(cmd: Sequence[str], env: Dict[str, str]) -> Tuple[float, float]:
    """Wall time and CPU time (user + system, its children included) of one whole process; a failing
    process stops the benchmark with its output."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    res = subprocess.run(list(cmd), capture_output=True, text=True, env=env, cwd=str(HERE / "cold"))
    elapsed = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if res.returncode != 0:
        raise SystemExit(f"bench_cold: {' '.join(cmd)} failed:\n{res.stdout}\n{res.stderr}")
    return elapsed, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def wall(cmd: Sequence[str], env: Dict[str, str]) -> float:
    """Wall time of one whole process (:func:`timed`)."""
    return timed(cmd, env)[0]


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=lambda s: [int(float(v)) for v in s.split(",")], default=list(DEFAULT_SIZES))
    parser.add_argument("--repeats", type=int, default=5, help="runs of each script per size (median reported)")
    parser.add_argument("--python", default=str(ROOT / ".venv" / "bin" / "python"),
                        help="the Python whose pydpowl is measured (default: this checkout's .venv)")
    parser.add_argument("--rlib", default=None,
                        help="an R library to put first on R_LIBS (where the measured R front end is installed)")
    parser.add_argument("--skip-r-frontend", action="store_true", help="do not time pydpowl::svmDP")
    parser.add_argument("--floor", action="store_true",
                        help="also time the Python script without pydpowl (pandas, read_csv, sklearn.base)")
    parser.add_argument("--before-python", default=None,
                        help="also time fit_pydpowl.py with this Python (another checkout's venv), interleaved")
    args = parser.parse_args(argv)

    env = dict(os.environ)
    if args.rlib:
        env["R_LIBS"] = args.rlib + (os.pathsep + env["R_LIBS"] if env.get("R_LIBS") else "")
    py = args.python
    load_before = os.getloadavg()
    imports = [wall([py, "-c", "import pydpowl"], env) for _ in range(max(args.repeats, 5))]
    print(f"import pydpowl (fresh interpreter, median of {len(imports)}): {statistics.median(imports):.3f} s "
          f"(goal <= {IMPORT_GOAL} s)")
    rows: List[Tuple[int, Dict[str, float]]] = []
    cpu_rows: List[Tuple[int, Dict[str, float]]] = []
    with tempfile.TemporaryDirectory(prefix="pydpowl-cold-") as tmp:
        for n in args.sizes:
            csv = Path(tmp) / f"cohort_{n}.csv"
            W = write_data(n, csv, py)
            scripts = {
                "python": [py, "fit_pydpowl.py", str(csv), repr(W)],
                "DPpack": ["Rscript", "fit_svmDP.R", "DPpack", str(csv), repr(W)],
            }
            if not args.skip_r_frontend:
                scripts["R+pydpowl"] = ["Rscript", "fit_svmDP.R", "pydpowl", str(csv), repr(W)]
            if args.floor:
                scripts["floor"] = [py, "floor_python.py", str(csv)]
            if args.before_python:
                scripts["before"] = [args.before_python, "fit_pydpowl.py", str(csv), repr(W)]
            times: Dict[str, List[float]] = {k: [] for k in scripts}
            cpus: Dict[str, List[float]] = {k: [] for k in scripts}
            for _ in range(args.repeats):
                for name, cmd in scripts.items():
                    elapsed, cpu = timed(cmd, env)
                    times[name].append(elapsed)
                    cpus[name].append(cpu)
            med = {k: statistics.median(v) for k, v in times.items()}
            cpu_rows.append((n, {k: statistics.median(v) for k, v in cpus.items()}))
            rows.append((n, med))
            print(f"  n={n}: " + ", ".join(f"{k} {v:.2f} s" for k, v in med.items()), flush=True)

    load_after = os.getloadavg()
    print()
    print(f"Whole process, median of {args.repeats} (s; ratio to DPpack); load average (1, 5, 15 min) "
          f"{'/'.join(f'{v:.2f}' for v in load_before)} before, {'/'.join(f'{v:.2f}' for v in load_after)} after; "
          f"PYTHONDONTWRITEBYTECODE={'set' if os.environ.get('PYTHONDONTWRITEBYTECODE') else 'unset'}")
    print()
    extra = [(k, title) for k, title in (("before", "Python script, before"), ("floor", "Python floor (no pydpowl)"))
             if k in rows[0][1]] if rows else []
    print("| n | Python script + pydpowl | R script + DPpack | R script + pydpowl::svmDP |"
          + "".join(f" {title} |" for _, title in extra))
    print("|---|---|---|---|" + "---|" * len(extra))
    py_ok = r_ok = True
    for n, med in rows:
        dp = med["DPpack"]
        py_ratio = med["python"] / dp
        py_ok &= py_ratio <= PY_GOAL
        r_cell = "-"
        if "R+pydpowl" in med:
            r_ratio = med["R+pydpowl"] / dp
            goal = next(g for lo, g in R_GOALS if n >= lo)
            r_ok &= r_ratio <= goal
            r_cell = f"{med['R+pydpowl']:.2f} s ({r_ratio:.2f}x)"
        print(f"| {n:,} | {med['python']:.2f} s ({py_ratio:.2f}x) | {dp:.2f} s | {r_cell} |"
              + "".join(f" {med[k]:.2f} s ({med[k] / dp:.2f}x) |" for k, _ in extra))
    print()
    print(f"CPU time (user + system) of the same processes, median of {args.repeats} (s; ratio to DPpack): "
          "less sensitive than wall time to other load on the machine")
    print()
    names = list(cpu_rows[0][1]) if cpu_rows else []
    print("| n | " + " | ".join(names) + " |")
    print("|---|" + "---|" * len(names))
    for n, med in cpu_rows:
        print(f"| {n:,} | " + " | ".join(f"{med[k]:.2f} s ({med[k] / med['DPpack']:.2f}x)" for k in names) + " |")
    print()
    verdict = {True: "met", False: "NOT met"}
    print(f"goals: Python <= {PY_GOAL}x DPpack: {verdict[py_ok]}; R front end <= 1.0x at n >= 20,000 and "
          f"<= 1.3x below: " + (verdict[r_ok] if not args.skip_r_frontend else "not measured"))
    return 0


if __name__ == "__main__":
    sys.exit(main())

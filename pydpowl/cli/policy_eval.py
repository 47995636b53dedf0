"""``pydpowl policy-eval``: the DP-LSW / DP-LSL reference experiment."""

from __future__ import annotations

import argparse
import os
import sys
from typing import List

import pandas as pd

__all__ = ["add_parser", "run"]

QUICK_M = [10, 100, 1000]
QUICK_REPS = 3
QUICK_LAMBDA_GRID = [0.01, 1.0, 100.0, 1e4]

EPILOG = """\
Each repetition draws m fresh episodes from the lazy chain (N states, stay or
advance with probability 1/2, reward 1 on entering the absorbing last state,
uniform start, at most 200 transitions, gamma = 0.99) and fits LSW, DP-LSW,
GS-DP-LSW, LSL, DP-LSL and GS-DP-LSL on them, with
lambda = ||Phi||^2 ||rho||_inf + c m^p. The metric is the rho-weighted RMSE
against the true value function. A second panel sweeps c at m = --lambda-m.

Outputs: DIR/policy_eval.csv (one row per method, m, c and repetition) and
DIR/policy_eval.png (three panels); a summary table is printed.

examples:
  pydpowl policy-eval --quick --out results/
  pydpowl policy-eval --epsilon 0.1 --delta 0.1 --states 40 --reps 20 --seed 1 --out pe/
  pydpowl policy-eval --m 10,100,1000 --features aggregated --epsilon 1 --out pe_agg/
  pydpowl policy-eval --return-bound 1 --lambda-c 0.5 --lambda-p 0.6 --out pe_fmax/
"""


def _int_list(text: str) -> List[int]:
    try:
        vals = [int(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected comma-separated integers such as 10,100,1000, got {text!r}"
        ) from None
    if not vals or min(vals) < 1:
        raise argparse.ArgumentTypeError(f"batch sizes must be integers >= 1, got {text!r}")
    return vals


def _float_list(text: str) -> List[float]:
    try:
        vals = [float(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected comma-separated numbers such as 0.1,1,10, got {text!r}"
        ) from None
    if not vals or min(vals) <= 0:
        raise argparse.ArgumentTypeError(f"values must be positive numbers, got {text!r}")
    return vals


def add_parser(subparsers: "argparse._SubParsersAction") -> argparse.ArgumentParser:
    """Register the ``policy-eval`` command."""
    p = subparsers.add_parser(
        "policy-eval",
        help="reference experiment for DP-LSW / DP-LSL (differentially private policy evaluation)",
        description=(
            "Run the reference experiment of Balle, Gomrokchi & Precup (ICML 2016):\n"
            "error of differentially private policy evaluation (DP-LSW, DP-LSL) and\n"
            "its baselines against the number of episodes m."
        ),
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--m", type=_int_list, default=None, metavar="LIST",
                   help="comma-separated batch sizes (default: 10,50,100,500,1000,1500,"
                        "2000,2500,3000,4000; with --quick: 10,100,1000)")
    p.add_argument("--reps", type=int, default=None,
                   help="repetitions per batch size (default: 10; with --quick: 3)")
    p.add_argument("--epsilon", type=float, default=0.1, help="privacy epsilon (default: 0.1)")
    p.add_argument("--delta", type=float, default=0.1, help="privacy delta (default: 0.1)")
    p.add_argument("--states", type=int, default=40, help="number of chain states N (default: 40)")
    p.add_argument("--features", choices=("tabular", "aggregated"), default="tabular",
                   help="identity features, or one feature per pair of states (default: tabular)")
    p.add_argument("--lambda-c", type=float, default=0.5,
                   help="c in lambda = ||Phi||^2 ||rho||_inf + c m^p (default: 0.5)")
    p.add_argument("--lambda-p", type=float, default=0.4, help="exponent p (default: 0.4)")
    p.add_argument("--lambda-grid", type=_float_list, default=None, metavar="LIST",
                   help="values of c for the error-vs-lambda panel (default: 0.01,0.1,1,10,"
                        "100,1000,10000; with --quick: 0.01,1,100,10000)")
    p.add_argument("--lambda-m", type=int, default=1000,
                   help="batch size of the error-vs-lambda panel (default: 1000)")
    p.add_argument("--discount", type=float, default=0.99, help="discount gamma (default: 0.99)")
    p.add_argument("--return-bound", type=float, default=None, metavar="F_MAX",
                   help="public bound on returns instead of R_max/(1-gamma) = 100 (1 is valid "
                        "on the chain)")
    p.add_argument("--seed", type=int, default=0, help="random seed of the experiment (default: 0)")
    p.add_argument("--out", default=".", metavar="DIR",
                   help="output directory, created if needed (default: current directory)")
    p.add_argument("--quick", action="store_true",
                   help="small grid for a smoke run (see --m, --reps, --lambda-grid)")
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    """Run the experiment, write the CSV and PNG, print a summary table."""
    from ..policy_evaluation.experiment import (
        DEFAULT_LAMBDA_GRID,
        DEFAULT_M_VALUES,
        run_experiment,
        summarize_experiment,
    )
    from ..policy_evaluation.plotting import plot_experiment

    m_values = args.m if args.m is not None else (QUICK_M if args.quick else list(DEFAULT_M_VALUES))
    reps = args.reps if args.reps is not None else (QUICK_REPS if args.quick else 10)
    grid = args.lambda_grid
    if grid is None:
        grid = QUICK_LAMBDA_GRID if args.quick else list(DEFAULT_LAMBDA_GRID)
    table = run_experiment(
        m_values=m_values,
        n_reps=reps,
        epsilon=args.epsilon,
        delta=args.delta,
        n_states=args.states,
        features=args.features,
        discount=args.discount,
        reward_bound=None if args.return_bound is not None else 1.0,
        return_bound=args.return_bound,
        lambda_c=args.lambda_c,
        lambda_p=args.lambda_p,
        lambda_grid=grid,
        lambda_m=args.lambda_m,
        random_state=args.seed,
        progress=True,
    )
    os.makedirs(args.out, exist_ok=True)
    csv_path = os.path.join(args.out, "policy_eval.csv")
    png_path = os.path.join(args.out, "policy_eval.png")
    table.to_csv(csv_path, index=False)
    plot_experiment(table, png_path)

    summ = summarize_experiment(table)
    on_m = summ[summ["panel"] == "m"]
    out = sys.stdout
    setting = (
        f"{reps} repetitions (epsilon={args.epsilon:g}, delta={args.delta:g}, "
        f"N={args.states}, {args.features} features)"
    )
    with pd.option_context("display.width", 160, "display.float_format", "{:.4g}".format):
        for value, title in (("rmse_mean", "Mean rho-weighted RMSE"), ("mse_mean", "Mean MSE")):
            tab = on_m.pivot(index="m", columns="method", values=value)
            cols = [c for c in ("LSW", "DP-LSW", "GS-DP-LSW", "LSL", "DP-LSL", "GS-DP-LSL") if c in tab]
            out.write(f"{title} over {setting}:\n{tab[cols].to_string()}\n\n")
        by_lam = summ[summ["panel"] == "lambda"]
        if len(by_lam):
            lam_tab = by_lam.pivot(index="lambda_c", columns="method", values="rmse_mean")
            out.write(f"Mean RMSE against c at m={args.lambda_m}:\n{lam_tab.to_string()}\n")
    out.write(f"\nwrote {csv_path}\nwrote {png_path}\n")
    return 0

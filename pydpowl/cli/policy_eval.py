"""``pydpowl policy-eval``: the DP-LSW / DP-LSL reference experiment."""

from __future__ import annotations

import argparse
import os
import sys
from typing import List, Optional, TextIO, TypeVar

import numpy as np
import pandas as pd

__all__ = ["add_parser", "run"]

T = TypeVar("T")

QUICK_M = [10, 100, 1000, 10_000]
QUICK_EPSILONS = [0.1, 1.0, 10.0]
QUICK_REPS = 3
QUICK_LAMBDA_GRID = [0.01, 1.0, 100.0, 1e4]
QUICK_LAMBDA_M = 10_000
DEFAULT_REPS = 20

EPILOG = """\
Each repetition draws m fresh episodes from the lazy chain (N states, stay or
advance with probability 1/2, reward 1 on entering the absorbing last state,
uniform start, at most 200 transitions, gamma = 0.99) and fits, on the same
data, LSW and LSL (non-private) and, at every epsilon, DP-LSW and DP-LSL
(smooth sensitivity, the paper's constants) and the Gaussian mechanism on the
global sensitivity: GS-analytic (Balle & Wang 2018, exact for every epsilon)
and GS-classical (sigma = Delta sqrt(2 ln(1.25/delta)) / epsilon, only for
epsilon < 1). lambda = ||Phi||^2 ||rho||_inf + c m^p. The metric is the
rho-weighted RMSE against the true value function. A second panel sweeps c at
m = --lambda-m. Returns lie in [0, 1] on the chain, so the default public
bound is --return-bound 1.

Outputs: DIR/policy_eval.csv (one row per panel, method, m, epsilon, c and
repetition) and DIR/policy_eval.png (six panels); summary tables are printed.

examples:
  pydpowl policy-eval --quick --out results/
  pydpowl policy-eval --out results/policy-eval
  pydpowl policy-eval --epsilon 0.1,1 --delta 0.05 --reps 20 --seed 1 --out pe/
  pydpowl policy-eval --m 100,1000,10000 --features aggregated --out pe_agg/
  pydpowl policy-eval --reward-bound 1 --lambda-c 0.5 --lambda-p 0.4 --out pe_spec/
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
    if not vals:
        raise argparse.ArgumentTypeError(f"expected at least one number, got {text!r}")
    return vals


def _positive_list(text: str) -> List[float]:
    vals = _float_list(text)
    if min(vals) <= 0:
        raise argparse.ArgumentTypeError(f"values must be positive numbers, got {text!r}")
    return vals


def add_parser(subparsers: "argparse._SubParsersAction") -> argparse.ArgumentParser:
    """Register the ``policy-eval`` command."""
    from ..mdp_policy_evaluation.experiment import (
        DEFAULT_EPSILONS,
        DEFAULT_LAMBDA_C,
        DEFAULT_LAMBDA_M,
        DEFAULT_LAMBDA_P,
        DEFAULT_M_VALUES,
    )

    def _join(vals: object) -> str:
        return ",".join(f"{v:g}" for v in vals)  # type: ignore[attr-defined]

    p = subparsers.add_parser(
        "policy-eval",
        help="reference experiment for DP-LSW / DP-LSL (differentially private policy evaluation)",
        description=(
            "Run the reference experiment of Balle, Gomrokchi & Precup (ICML 2016):\n"
            "error of differentially private policy evaluation (DP-LSW, DP-LSL) and\n"
            "its baselines against the number of episodes m and against epsilon."
        ),
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--m", type=_int_list, default=None, metavar="LIST",
                   help=f"comma-separated batch sizes (default: {_join(DEFAULT_M_VALUES)}; "
                        f"with --quick: {_join(QUICK_M)})")
    p.add_argument("--epsilon", type=_float_list, default=None, metavar="LIST",
                   help=f"comma-separated privacy epsilons (default: {_join(DEFAULT_EPSILONS)}; "
                        f"with --quick: {_join(QUICK_EPSILONS)})")
    p.add_argument("--reps", type=int, default=None,
                   help=f"repetitions per batch size (default: {DEFAULT_REPS}; with --quick: "
                        f"{QUICK_REPS})")
    p.add_argument("--delta", type=float, default=0.1, help="privacy delta (default: 0.1)")
    p.add_argument("--states", type=int, default=40, help="number of chain states N (default: 40)")
    p.add_argument("--features", choices=("tabular", "aggregated"), default="tabular",
                   help="identity features, or one feature per pair of states (default: tabular)")
    p.add_argument("--lambda-c", type=float, default=DEFAULT_LAMBDA_C,
                   help=f"c in lambda = ||Phi||^2 ||rho||_inf + c m^p (default: {DEFAULT_LAMBDA_C:g})")
    p.add_argument("--lambda-p", type=float, default=DEFAULT_LAMBDA_P,
                   help=f"exponent p (default: {DEFAULT_LAMBDA_P:g})")
    p.add_argument("--lambda-grid", type=_positive_list, default=None, metavar="LIST",
                   help="values of c for the regularisation panel (default: 0.01,0.1,1,10,"
                        "100,1000,10000; with --quick: 0.01,1,100,10000)")
    p.add_argument("--lambda-m", type=int, default=None,
                   help=f"batch size of the regularisation panel (default: {DEFAULT_LAMBDA_M}; "
                        f"with --quick: {QUICK_LAMBDA_M})")
    p.add_argument("--discount", type=float, default=0.99, help="discount gamma (default: 0.99)")
    bound = p.add_mutually_exclusive_group()
    bound.add_argument("--return-bound", type=float, default=None, metavar="F_MAX",
                       help="public bound on every first-visit return (default: 1, the largest "
                            "return possible on the chain)")
    bound.add_argument("--reward-bound", type=float, default=None, metavar="R_MAX",
                       help="public bound on rewards instead; then F_max = R_max/(1-gamma) "
                            "(100 with R_max = 1, gamma = 0.99)")
    p.add_argument("--seed", type=int, default=0, help="random seed of the experiment (default: 0)")
    p.add_argument("--out", default=".", metavar="DIR",
                   help="output directory, created if needed (default: current directory)")
    p.add_argument("--quick", action="store_true",
                   help="small grid for a smoke run (see --m, --epsilon, --reps, --lambda-grid)")
    p.set_defaults(func=run)
    return p


def _pivot(summ: pd.DataFrame, index: str, methods: List[str]) -> pd.DataFrame:
    tab = summ.pivot(index=index, columns="method", values="rmse_mean")
    return tab[[c for c in methods if c in tab.columns]]


def print_summary(table: pd.DataFrame, out: TextIO, setting: str) -> None:
    """Print the mean RMSE by ``m`` (largest ``epsilon``), by ``epsilon`` (largest ``m``) and by ``c``."""
    from ..mdp_policy_evaluation.experiment import METHODS, summarize_experiment

    summ = summarize_experiment(table)
    grid = summ[summ["panel"] == "m"]
    private = grid[np.isfinite(grid["epsilon"])]
    if not len(private):
        return
    eps_max = float(private["epsilon"].max())
    m_max = int(grid["m"].max())
    nonpriv = grid[~np.isfinite(grid["epsilon"])]
    with pd.option_context("display.width", 200, "display.float_format", "{:.3g}".format):
        by_m = pd.concat([nonpriv, private[private["epsilon"] == eps_max]])
        tab = _pivot(by_m, "m", list(METHODS))
        out.write(f"Mean rho-weighted RMSE at epsilon={eps_max:g}, over {setting}:\n"
                  f"{tab.to_string()}\n\n")
        at = grid[grid["m"] == m_max]
        tab = _pivot(at[np.isfinite(at["epsilon"])], "epsilon", list(METHODS))
        for fam in ("LSW", "LSL"):
            ref = at.loc[at["method"] == fam, "rmse_mean"]
            if len(ref):
                tab[fam] = float(ref.iloc[0])
                if f"DP-{fam}" in tab:
                    tab[f"DP-{fam}/{fam}"] = tab[f"DP-{fam}"] / tab[fam]
        first = [c for c in METHODS if c in tab.columns]
        tab = tab[first + [c for c in tab.columns if c not in first]]
        out.write(f"Mean RMSE at m={m_max} by epsilon (ratios: private / non-private):\n"
                  f"{tab.to_string()}\n\n")
        lam = summ[summ["panel"] == "lambda"]
        if len(lam):
            lam = lam.sort_values(["method", "epsilon"], ascending=[False, True])
            lam = lam.assign(column=[
                meth if not np.isfinite(e) else f"{meth} eps={e:g}"
                for meth, e in zip(lam["method"], lam["epsilon"])
            ])
            lam_tab = lam.pivot(index="regularization", columns="column", values="rmse_mean")
            lam_tab = lam_tab[list(dict.fromkeys(lam["column"]))]
            out.write(f"Mean RMSE against lambda at m={int(lam['m'].iloc[0])}:\n{lam_tab.to_string()}\n")


def run(args: argparse.Namespace) -> int:
    """Run the experiment, write the CSV and PNG, print summary tables."""
    from ..mdp_policy_evaluation.experiment import (
        DEFAULT_EPSILONS,
        DEFAULT_LAMBDA_GRID,
        DEFAULT_LAMBDA_M,
        DEFAULT_M_VALUES,
        run_experiment,
    )
    from ..plotting.mdp_policy_evaluation import plot_experiment

    def pick(value: Optional[T], quick: T, default: T) -> T:
        return value if value is not None else (quick if args.quick else default)

    m_values = pick(args.m, QUICK_M, list(DEFAULT_M_VALUES))
    epsilons = pick(args.epsilon, QUICK_EPSILONS, list(DEFAULT_EPSILONS))
    reps = pick(args.reps, QUICK_REPS, DEFAULT_REPS)
    grid = pick(args.lambda_grid, QUICK_LAMBDA_GRID, list(DEFAULT_LAMBDA_GRID))
    lambda_m = pick(args.lambda_m, QUICK_LAMBDA_M, DEFAULT_LAMBDA_M)
    if args.reward_bound is not None:
        bounds = dict(reward_bound=args.reward_bound, return_bound=None)
        bound_text = f"R_max={args.reward_bound:g}"
    else:
        f_max = 1.0 if args.return_bound is None else args.return_bound
        bounds = dict(reward_bound=None, return_bound=f_max)
        bound_text = f"F_max={f_max:g}"
    table = run_experiment(
        m_values=m_values,
        epsilons=epsilons,
        n_reps=reps,
        delta=args.delta,
        n_states=args.states,
        features=args.features,
        discount=args.discount,
        lambda_c=args.lambda_c,
        lambda_p=args.lambda_p,
        lambda_grid=grid,
        lambda_m=lambda_m,
        random_state=args.seed,
        progress=True,
        **bounds,
    )
    os.makedirs(args.out, exist_ok=True)
    csv_path = os.path.join(args.out, "policy_eval.csv")
    png_path = os.path.join(args.out, "policy_eval.png")
    table.to_csv(csv_path, index=False)
    setting = (
        f"{reps} repetitions (delta={args.delta:g}, N={args.states}, {args.features} features, "
        f"gamma={args.discount:g}, {bound_text}, lambda = thr + {args.lambda_c:g} m^{args.lambda_p:g})"
    )
    plot_experiment(table, png_path, title=f"DP policy evaluation on the lazy chain: {setting}")
    out = sys.stdout
    print_summary(table, out, setting)
    out.write(f"\nwrote {csv_path}\nwrote {png_path}\n")
    return 0

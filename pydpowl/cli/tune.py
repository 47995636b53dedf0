"""``pydpowl tune``: choose the regularisation constant gamma (Algorithm 2, or without D0).

Algorithm 2 (--method public, the default) judges each candidate gamma by
training the private learner (same n, same epsilon, fresh noise) on resamples
of an independent dataset D0 and scoring it on a held-out part of D0; it
spends no privacy budget. Without D0, --method split-data selects gamma
privately on part of the private data and fits on the rest (epsilon in all),
and --method split-budget selects on all rows with epsilon1 and fits on all
rows with epsilon2 (epsilon1 + epsilon2 in all).
"""

from __future__ import annotations

import argparse
import math
import time
from pathlib import Path

from ._common import (add_budget_options, add_data_options, add_key_option, data_from_args, float_list, int_list,
                      open_budget, read_key, say, show_progress)
from ._disclosure import add_disclosure_options, budget_text, say_data, say_diagnostics

EPILOG = """examples:
  pydpowl tune                                   # table for the Fig. 1 grid on a synthetic D0 (n0 = 1000)
  pydpowl tune --n 1000 --eps 1 --r 500 --rule one-se
  pydpowl tune --design cyp --n 1459 --eps 0.5,1,2,5,inf          # D0 for the CYP-GUIDES-style study
  pydpowl tune --d0 public.csv --treatment A --benefit B --features x1,x2 --bounds 0:1,0:1 \\
               --weights-upper-bound 30 --n 800 --eps 1,5
  pydpowl tune --method split-budget --data private.csv --treatment A --benefit B --features x1,x2 \\
               --bounds 0:1,0:1 --weights-upper-bound 30 --epsilon-select 0.5 --epsilon-fit 1.5
  pydpowl tune --method split-data --data private.csv ... --epsilon 1

outputs (public D0): DIR/tuning_curves.csv (mean, SD, SE of the metric by gamma for every cell),
DIR/gamma_table.csv (chosen gamma per (n, epsilon); 'pydpowl simulate --gamma-table' reads it),
DIR/tuning.png. Without D0: DIR/model.json (the final private model) and DIR/tuning.txt (choice and
privacy budget charged); candidate scores are private and are not written.
"""


def add_parser(subparsers) -> argparse.ArgumentParser:
    from ..studies.config import FIG1_EPSILONS, FIG1_NS
    from ..studies.config import DEFAULT_GAMMA_GRID

    parser = subparsers.add_parser(
        "tune", help="choose gamma: Algorithm 2 on independent data D0, or by splitting data or budget",
        description=__doc__, epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--method", choices=("public", "split-data", "split-budget"), default="public",
                        help="public: Algorithm 2 on D0 (default); split-data / split-budget: no D0")
    parser.add_argument("--gammas", type=float_list, metavar="LIST",
                        help="candidates (default: " + ",".join(f"{g:g}" for g in DEFAULT_GAMMA_GRID)
                             + "; 10,30,75,150,300 without D0)")
    parser.add_argument("--metric", choices=("value", "accuracy"), default="value",
                        help="validation metric; accuracy needs a simulated D0 (default: value)")
    parser.add_argument("--seed", type=int, default=None, metavar="S",
                        help="random seed (default: 2024 for Algorithm 2; fresh OS entropy without D0, as a real "
                             "release needs: a known seed reveals the noise)")
    parser.add_argument("--out", type=Path, default=Path("results/tune"), metavar="DIR",
                        help="output folder (default: results/tune)")
    parser.add_argument("--no-progress", action="store_true", help="do not draw a progress bar")

    pub = parser.add_argument_group("Algorithm 2 (--method public)")
    pub.add_argument("--n", type=int_list, metavar="LIST", default=None,
                     help="training sizes of the private fits (default: the Fig. 1 sizes "
                          + ",".join(map(str, FIG1_NS)) + "; 1459 with --design cyp)")
    pub.add_argument("--eps", type=float_list, metavar="LIST", default=None,
                     help="budgets of the private fits, inf allowed (default: "
                          + ",".join(f"{e:g}" for e in FIG1_EPSILONS) + ",inf)")
    pub.add_argument("--design", choices=("synthetic", "cyp"), default="synthetic",
                     help="built-in D0: the paper's synthetic design or the CYP-GUIDES-style generator")
    pub.add_argument("--n0", type=int, default=1000, metavar="N0", help="size of the built-in D0 (default: 1000)")
    pub.add_argument("--d0-seed", type=int, default=20240, metavar="S",
                     help="seed of the built-in D0, independent of the private data (default: 20240)")
    pub.add_argument("--d0", metavar="CSV", help="your own D0 (with the data options below describing it)")
    pub.add_argument("--m", type=int, metavar="M", help="minimum validation size (default: n0 // 2)")
    pub.add_argument("--r", type=int, default=200, metavar="R", help="repetitions per candidate (default: 200)")
    pub.add_argument("--rule", choices=("max", "one-se"), default="max",
                     help="max: largest mean, ties to larger gamma; one-se: largest gamma within 1 SE of the best")
    pub.add_argument("--redraw-split", action="store_true",
                     help="draw a new pool/validation split of D0 in every repetition (default: one split)")
    pub.add_argument("--fresh-samples", action="store_true",
                     help="draw new training resamples for every candidate (the authors' code) instead of "
                          "sharing them across candidates")

    nod0 = parser.add_argument_group("without D0 (--method split-data / split-budget)")
    nod0.add_argument("--epsilon", type=float, metavar="E", help="split-data: budget of each disjoint part")
    nod0.add_argument("--epsilon-select", type=float, metavar="E1", help="split-budget: budget of the selection")
    nod0.add_argument("--epsilon-fit", type=float, metavar="E2", help="split-budget: budget of the final fit")
    nod0.add_argument("--select-fraction", type=float, default=0.5, metavar="Q",
                      help="split-data: share of rows for the selection (default: 0.5)")
    nod0.add_argument("--transfer", choices=("bound", "none"), default="bound",
                      help="map the gamma chosen for the candidates' (n, epsilon) to the final fit's: "
                           "bound = scale by sqrt(n ratio / epsilon ratio) (default), none = keep")
    add_data_options(parser, required=False,
                     data_help="the private data (split-data / split-budget), or describe --d0 with these options")
    add_budget_options(parser)
    add_disclosure_options(parser)
    add_key_option(parser, writes=True)  # with --data: the released model.json
    parser.set_defaults(func=run)
    return parser


def _d0(args):
    from ..datasets import make_cyp_guides_style, make_synthetic_owl

    if args.d0:
        args.data = args.d0
        return data_from_args(args, what="--d0")
    if args.design == "cyp":
        return make_cyp_guides_style(args.n0, random_state=args.d0_seed)
    return make_synthetic_owl(args.n0, random_state=args.d0_seed)


def run(args: argparse.Namespace) -> int:
    if args.method == "public":
        return _run_public(args)
    return _run_no_d0(args)


def _run_public(args: argparse.Namespace) -> int:
    from ..plotting.studies import plot_tuning_curves
    from ..studies.config import FIG1_EPSILONS, FIG1_NS
    from ..studies.config import DEFAULT_GAMMA_GRID
    from ..studies.gamma_tuning import tune_gamma_table

    if args.data and not args.d0:
        raise ValueError("--data is the private data of --method split-data/split-budget; "
                         "Algorithm 2 takes independent data with --d0.")
    start = time.perf_counter()
    d0 = _d0(args)
    ns = args.n or ([1459] if args.design == "cyp" and not args.d0 else list(FIG1_NS))
    eps = args.eps or list(FIG1_EPSILONS) + [math.inf]
    table, curves = tune_gamma_table(
        d0, ns, eps, gammas=args.gammas or DEFAULT_GAMMA_GRID, m=args.m, r=args.r, metric=args.metric,
        rule=args.rule, common_samples=not args.fresh_samples, redraw_split=args.redraw_split,
        random_state=2024 if args.seed is None else args.seed, progress=show_progress(args))
    args.out.mkdir(parents=True, exist_ok=True)
    curves_csv = args.out / "tuning_curves.csv"
    curves.to_csv(curves_csv, index=False)
    frame = table.to_frame()
    best = curves[curves.selected].set_index(["n", "epsilon"])
    frame["metric_mean"] = [best.loc[(r.n, r.epsilon), "mean"] for r in frame.itertuples()]
    frame["metric_se"] = [best.loc[(r.n, r.epsilon), "se"] for r in frame.itertuples()]
    table_csv = args.out / "gamma_table.csv"
    frame.to_csv(table_csv, index=False)
    png = plot_tuning_curves(curves, args.out / "tuning.png", metric=args.metric)
    first = curves.drop_duplicates("n").set_index("n")
    say("Algorithm 2: gamma chosen on independent data D0 (no privacy budget spent on the private data)")
    say(f"D0 ({d0.n} public rows): {d0.description}; m = {args.m or d0.n // 2}, r = {args.r}, "
        f"metric = {args.metric}, rule = {args.rule}, "
        f"{'fresh' if args.fresh_samples else 'shared'} training resamples across candidates, "
        f"{'a new split per repetition' if args.redraw_split else 'one pool/validation split'}")
    for n in ns:
        row = first.loc[n]
        say(f"  n = {n}: training pool {int(row['n_pool'])} rows, validation {int(row['n_val'])} rows, "
            f"resampling {'with' if bool(row['replace']) else 'without'} replacement")
    say()
    if len(ns) * len(eps) == 1:
        say(curves[["gamma", "mean", "sd", "se", "selected"]].to_string(index=False))
        say()
    pivot = frame.pivot(index="epsilon", columns="n", values="gamma")
    say("chosen gamma (rows epsilon, columns n):")
    say(pivot.to_string(float_format=lambda v: f"{v:g}"))
    say()
    say(f"wrote {curves_csv}, {table_csv} and {png} in {time.perf_counter() - start:.1f} s")
    return 0


def _run_no_d0(args: argparse.Namespace) -> int:
    from ..model_io import export_model
    from ..studies.gamma_tuning import tune_split_budget, tune_split_data

    if not args.data:
        raise ValueError(f"--method {args.method} needs the private data: --data CSV with its options.")
    start = time.perf_counter()
    key = read_key(args)
    budget = open_budget(args)
    if budget is not None:  # before the data are read
        planned = [args.epsilon] if args.method == "split-data" else [args.epsilon_select, args.epsilon_fit]
        if any(e is None for e in planned):
            raise ValueError(f"--method {args.method} needs its epsilon option(s) (see --help).")
        budget.check_split(planned, label=f"pydpowl tune --method {args.method}")
    data = data_from_args(args)
    gammas = args.gammas or (10, 30, 75, 150, 300)
    if args.method == "split-data":
        if args.epsilon is None:
            raise ValueError("--method split-data needs --epsilon (the budget of each disjoint part).")
        result = tune_split_data(data, epsilon=args.epsilon, gammas=gammas, select_fraction=args.select_fraction,
                                 metric=args.metric, transfer=args.transfer, random_state=args.seed)
    else:
        if args.epsilon_select is None or args.epsilon_fit is None:
            raise ValueError("--method split-budget needs --epsilon-select and --epsilon-fit (total = their sum).")
        result = tune_split_budget(data, epsilon_select=args.epsilon_select, epsilon_fit=args.epsilon_fit,
                                   gammas=gammas, metric=args.metric, transfer=args.transfer,
                                   random_state=args.seed)
    model = result.model
    if model is None:  # both private searches release the rule fitted with the chosen gamma
        raise RuntimeError(f"--method {args.method} released no model.")
    args.out.mkdir(parents=True, exist_ok=True)
    model_path = export_model(model, args.out / "model.json", feature_names=list(data.X.columns),
                              epsilon_total=result.epsilon_total,
                              tuning=f"{result.method}: {result.composition}", key=key)
    text = result.describe(public_n=args.public_n)
    (args.out / "tuning.txt").write_text(text + "\n", encoding="utf-8")
    if budget is not None:  # one charge: epsilon_total already applies the right composition
        budget.spend(result.epsilon_total, label=f"pydpowl tune --method {result.method}: {result.composition}",
                     delta=result.delta_total)
        budget.save(args.budget_file)
    say_data(data, args)
    say(text)
    say_diagnostics(args, data.diagnostics, {"n_clipped_weights": model.n_clipped_weights_,
                                             "n_clipped_features": model.n_clipped_features_,
                                             "n_iter": model.n_iter_})
    if budget is not None:
        say(f"privacy budget of {args.data}: spent {budget_text(budget)}")
    if args.seed is not None:
        say(f"warning: seed {args.seed} makes the noise reproducible; a release made with a known seed is not private")
    say(f"wrote {model_path} and {args.out / 'tuning.txt'} in {time.perf_counter() - start:.1f} s")
    return 0

"""``pydpowl simulate``: the paper's synthetic study (Fig. 1), or a multi-arm or multi-stage study.

Per (n, epsilon): mean and 95 % t-interval of the accuracy against the optimal
rule and of the empirical value on a fresh test set, plus the non-private
reference (epsilon inf). Writes results.csv and fig1.png.

``--design multiarm`` (three arms) and ``--design kstage`` (two stages,
DTRlearn2's sim_Kstage design): value and agreement with the non-private
rule by n and epsilon (pydpowl.studies.multi_designs); a reduced grid by
default, the full one (n = 500, 2000, 10000; 100 repetitions) with --full;
--mechanism output releases by output perturbation (the paper's mechanism)
instead of the estimators' defaults. Writes <design>.csv, <design>_raw.csv and
<design>.png.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from ._common import float_list, int_list, say, show_progress

EPILOG = """examples:
  pydpowl simulate                                     # the full Fig. 1 grid, 200 repetitions
  pydpowl simulate --n 200,1000 --eps 0.5,5,50 --reps 50 --out results/sim-small
  pydpowl simulate --gamma-table results/tune/gamma_table.csv   # gammas from 'pydpowl tune'
  pydpowl simulate --gamma-table pydpowl               # pydpowl's own tuned table
  pydpowl simulate --design multiarm                   # 3 arms: n 500, 2000; 20 repetitions
  pydpowl simulate --design kstage --full              # 2 stages: n 500, 2000, 10000; 100 repetitions
  pydpowl simulate --design kstage --mechanism output  # the same with output perturbation at every stage

gamma per (n, epsilon) comes from a table: 'authors' (default; the authors' tuned table,
simulation_study.R), 'pydpowl' (our Algorithm 2 run) or a CSV with columns n, epsilon, gamma.
Cells a table lacks take the nearest cell on the (log n, log epsilon) scale.
"""


def add_parser(subparsers) -> argparse.ArgumentParser:
    from ..studies.config import FIG1_EPSILONS, FIG1_NS

    parser = subparsers.add_parser(
        "simulate", help="synthetic study (Fig. 1): accuracy and value by n and epsilon",
        description=__doc__, epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--n", type=int_list, default=list(FIG1_NS), metavar="LIST",
                        help="training sizes (default: " + ",".join(map(str, FIG1_NS)) + ")")
    parser.add_argument("--eps", type=float_list, default=list(FIG1_EPSILONS), metavar="LIST",
                        help="privacy budgets; inf (non-private) is always added "
                             "(default: " + ",".join(f"{e:g}" for e in FIG1_EPSILONS) + ")")
    parser.add_argument("--reps", type=int, default=200, metavar="R", help="repetitions per n (default: 200)")
    parser.add_argument("--test-size", type=int, default=5000, metavar="T",
                        help="rows of each test set (default: 5000)")
    parser.add_argument("--seed", type=int, default=100, metavar="S", help="random seed (default: 100)")
    parser.add_argument("--gamma-table", default="authors", metavar="TABLE",
                        help="authors (default), pydpowl, or a CSV with columns n, epsilon, gamma")
    parser.add_argument("--out", type=Path, default=Path("results/simulate"), metavar="DIR",
                        help="output folder (default: results/simulate)")
    parser.add_argument("--design", choices=("fig1", "multiarm", "kstage"), default="fig1",
                        help="fig1 (default): the paper's study; multiarm: 3 arms; kstage: 2 stages")
    parser.add_argument("--full", action="store_true",
                        help="multiarm/kstage: the full grid (n 500, 2000, 10000; 100 repetitions) instead of the "
                             "reduced one (n 500, 2000; 20 repetitions); --n and --reps given explicitly win")
    parser.add_argument("--mechanism", choices=("auto", "output"), default="auto",
                        help="multiarm/kstage: auto (default; the estimators' defaults: objective perturbation with "
                             "residual weights per two-arm stage) or output (output perturbation, fixed lambda)")
    parser.add_argument("--no-progress", action="store_true", help="do not draw a progress bar")
    parser.set_defaults(func=run)
    return parser


def run_multi(args: argparse.Namespace, parser_defaults: dict) -> int:
    """``--design multiarm|kstage``."""
    from ..studies.multi_designs import run_multi_study
    from ..plotting.studies import plot_multi_study

    start = time.perf_counter()
    sizes = args.n if args.n != parser_defaults["n"] else ([500, 2000, 10000] if args.full else [500, 2000])
    reps = args.reps if args.reps != parser_defaults["reps"] else (100 if args.full else 20)
    eps = args.eps if args.eps != parser_defaults["eps"] else [0.5, 1.0, 2.0, 5.0]
    result = run_multi_study(args.design, sizes, list(eps) + [float("inf")], reps=reps,
                             test_size=max(args.test_size, 20000) if args.test_size == 5000 else args.test_size,
                             random_state=args.seed, mechanism=args.mechanism, progress=show_progress(args))
    args.out.mkdir(parents=True, exist_ok=True)
    csv = args.out / f"{args.design}.csv"
    result.table.to_csv(csv, index=False)
    result.raw.to_csv(args.out / f"{args.design}_raw.csv", index=False)
    png = plot_multi_study(result, args.out / f"{args.design}.png")
    say(f"{args.design} study (mechanism: {args.mechanism}): n in {sizes}, {reps} repetitions, epsilon in "
        f"{list(eps)} and inf")
    say()
    say(result.format_table())
    say()
    say(f"study time {result.seconds:.1f} s; wrote {csv} and {png} in {time.perf_counter() - start:.1f} s")
    return 0


def run(args: argparse.Namespace) -> int:
    if args.design != "fig1":
        from ..studies.config import FIG1_EPSILONS, FIG1_NS

        return run_multi(args, {"n": list(FIG1_NS), "reps": 200, "eps": list(FIG1_EPSILONS)})
    from ..plotting.studies import plot_simulation
    from ..studies.simulation import run_simulation

    start = time.perf_counter()
    result = run_simulation(args.n, args.eps, reps=args.reps, test_size=args.test_size,
                            gamma_table=args.gamma_table, random_state=args.seed, progress=show_progress(args))
    args.out.mkdir(parents=True, exist_ok=True)
    csv = args.out / "results.csv"
    result.table.to_csv(csv, index=False)
    png = plot_simulation(result.table, args.out / "fig1.png")
    say(f"Synthetic study: {len(args.n)} training sizes x {len(result.table.epsilon.unique())} budgets "
        f"(incl. inf) x {result.reps} repetitions, test sets of {result.test_size}")
    say(f"gamma table: {result.gamma_source}")
    say()
    say(result.format_table())
    say()
    for note in result.notes:
        say(f"note: {note}")
    say(f"study time {result.seconds:.1f} s; wrote {csv} and {png} in {time.perf_counter() - start:.1f} s")
    return 0

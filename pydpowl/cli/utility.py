"""``pydpowl utility``: which private DP-OWL mechanism gives the best rule, by design, n and epsilon.

Compares the paper's output perturbation, weighted objective perturbation,
both with residual weights, and DPOWL's default, each with its public gamma
rule and at its oracle gamma, on the paper's synthetic design, the
CYP-GUIDES-style design and Zhao et al.'s (2012) scenario 1. Reports regret
against the optimal rule and agreement with the non-private OWL rule. Writes
results.csv (every cell, rule and gamma) and utility.png.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from ._common import float_list, int_list, name_list, say, show_progress

EPILOG = """examples:
  pydpowl utility                          # reduced grid: n 500,1459; epsilon 0.5,1; 30 repetitions
  pydpowl utility --full --jobs 2          # the study's grid (n 500..20000, 5 epsilons, 100 repetitions)
  pydpowl utility --designs cyp --n 1459 --eps 1 --reps 200 --mechanisms output,default

A full run takes about an hour on two cores (docs/utility.md has its table).
"""


def add_parser(subparsers) -> argparse.ArgumentParser:
    from ..studies.utility import DESIGNS, MECHANISMS, REDUCED_EPSILONS, REDUCED_NS

    parser = subparsers.add_parser(
        "utility", help="utility study: regret of each private mechanism by design, n and epsilon",
        description=__doc__, epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--full", action="store_true",
                        help="the study's full grid (n 500,1459,5000,20000; epsilon 0.25,0.5,1,2,5; 100 repetitions)")
    parser.add_argument("--designs", type=name_list, default=list(DESIGNS), metavar="LIST",
                        help="designs (default: " + ",".join(DESIGNS) + ")")
    parser.add_argument("--mechanisms", type=name_list, default=list(MECHANISMS), metavar="LIST",
                        help="mechanisms (default: " + ",".join(MECHANISMS) + ")")
    parser.add_argument("--n", type=int_list, default=None, metavar="LIST",
                        help="training sizes (default: " + ",".join(map(str, REDUCED_NS)) + "; --full: all four)")
    parser.add_argument("--eps", type=float_list, default=None, metavar="LIST",
                        help="budgets (default: " + ",".join(f"{e:g}" for e in REDUCED_EPSILONS) + "; --full: five)")
    parser.add_argument("--reps", type=int, default=None, metavar="R",
                        help="repetitions per (design, n) (default: 30; --full: 100)")
    parser.add_argument("--seed", type=int, default=2024, metavar="S", help="random seed (default: 2024)")
    parser.add_argument("--jobs", type=int, default=1, metavar="J", help="worker processes (default: 1)")
    parser.add_argument("--backend", choices=("auto", "numpy", "numba"), default="auto",
                        help="solver backend (numba is faster for long runs; the releases are the same)")
    parser.add_argument("--out", type=Path, default=Path("results/utility"), metavar="DIR",
                        help="output folder (default: results/utility)")
    parser.add_argument("--no-progress", action="store_true", help="do not draw a progress bar")
    parser.set_defaults(func=run)
    return parser


def run(args: argparse.Namespace) -> int:
    from ..plotting.studies import plot_utility
    from ..studies.utility import REDUCED_EPSILONS, REDUCED_NS, UTILITY_EPSILONS, UTILITY_NS, run_utility

    start = time.perf_counter()
    ns = args.n or list(UTILITY_NS if args.full else REDUCED_NS)
    eps = args.eps or list(UTILITY_EPSILONS if args.full else REDUCED_EPSILONS)
    reps = args.reps or (100 if args.full else 30)
    result = run_utility(designs=args.designs, ns=ns, epsilons=eps, mechanisms=args.mechanisms, reps=reps,
                         seed=args.seed, jobs=args.jobs, backend=args.backend, progress=show_progress(args))
    args.out.mkdir(parents=True, exist_ok=True)
    csv = args.out / "results.csv"
    result.table.to_csv(csv, index=False)
    png = plot_utility(result.table, args.out / "utility.png")
    say(f"Utility study: designs {', '.join(args.designs)}; n {ns}; epsilon {eps}; {reps} repetitions")
    say()
    say("mean regret, public gamma rule (columns: mechanisms; non-private OWL and the better single arm last):")
    say(result.summary("public").to_string(float_format=lambda v: f"{v:.4f}"))
    say()
    say("mean regret at the oracle gamma:")
    say(result.summary("oracle").to_string(float_format=lambda v: f"{v:.4f}"))
    say()
    for note in result.notes:
        say(f"note: {note}")
    say(f"study time {result.seconds:.1f} s; wrote {csv} and {png} in {time.perf_counter() - start:.1f} s")
    return 0

"""``pydpowl casestudy``: Table 1 of the paper on CYP-GUIDES-style data (the main job)."""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

EPILOG = """examples:
  pydpowl casestudy                                  # built-in CYP-GUIDES-style data, gamma=75
  pydpowl casestudy --runs 50 --eps 0.5,1,5,inf --out results/cs
  pydpowl casestudy --data cyp_guides_clinical.csv   # your copy of the public trial file
"""


def _floats(text: str):
    try:
        return [math.inf if t.strip().lower() in ("inf", "infinity") else float(t) for t in text.split(",") if t.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a comma-separated list of numbers, got {text!r}") from None


def add_parser(subparsers) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "casestudy", help="case study (Table 1): DP-OWL value, concordance and allocation by epsilon",
        description=__doc__, epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--data", type=Path, help="the public CYP-GUIDES clinical CSV (default: built-in synthetic cohort)")
    parser.add_argument("--eps", type=_floats, default=[0.1, 0.5, 1, 2, 5, math.inf], help="privacy budgets (default: 0.1,0.5,1,2,5,inf)")
    parser.add_argument("--gamma", type=float, default=75.0, help="regularisation constant (default: 75)")
    parser.add_argument("--runs", type=int, default=200, help="DP runs per epsilon (default: 200)")
    parser.add_argument("--seed", type=int, default=2024, help="seed of the synthetic data and the noise (default: 2024)")
    parser.add_argument("--out", type=Path, default=Path("results/casestudy"), help="output folder (default: results/casestudy)")
    parser.add_argument("--no-progress", action="store_true", help="do not draw a progress bar")
    parser.set_defaults(func=run)
    return parser


def run(args: argparse.Namespace) -> int:
    import numpy as np

    from ..casestudy import run_case_study
    from ..datasets import load_cyp_guides, make_cyp_guides_style
    from ..plots import plot_case_study

    start = time.perf_counter()
    rng = np.random.default_rng(args.seed)
    data = load_cyp_guides(args.data) if args.data else make_cyp_guides_style(random_state=rng)
    result = run_case_study(data, epsilons=args.eps, gamma=args.gamma, n_runs=args.runs, random_state=rng,
                            progress=not args.no_progress and sys.stderr.isatty() or not args.no_progress)
    args.out.mkdir(parents=True, exist_ok=True)
    table_path = args.out / "table1.csv"
    result.table.to_csv(table_path, index=False)
    png = plot_case_study(result, args.out / "value_by_epsilon.png")
    print(f"Case study: {result.description}")
    print(f"gamma = {result.gamma:g}, W = {data.weights_upper_bound:.4f}, {result.n_runs} DP runs per epsilon")
    print("non-private rule: " + ", ".join(f"{n} {v:+.4f}" for n, v in zip(result.coefficient_names, result.nonprivate_coef)))
    print()
    print(result.format_table())
    print()
    for note in result.notes:
        print(f"note: {note}")
    print(f"wrote {table_path} and {png} in {time.perf_counter() - start:.1f} s")
    return 0

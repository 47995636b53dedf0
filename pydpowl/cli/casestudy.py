"""``pydpowl casestudy``: the case study (Table 1 and the gamma-sensitivity figure, Fig. 2 style).

For every epsilon: mean (SD) empirical value over DP runs, concordance with the
non-private rule, chi-squared p-value and allocation counts, evaluated
in-sample as in the paper; then value, concordance and allocation over a grid
of gamma. Runs on built-in CYP-GUIDES-style data by default, on the public
CYP-GUIDES clinical file with --data (the paper's coding, printed), or on your
own CSV with --data and the column options.
"""

from __future__ import annotations

import argparse
import math
import time
from pathlib import Path

from ._common import add_data_options, data_from_args, float_list, say, show_progress

EPILOG = """examples:
  pydpowl casestudy                                  # built-in CYP-GUIDES-style data, gamma=75
  pydpowl casestudy --runs 50 --eps 0.5,1,5,inf --out results/cs
  pydpowl casestudy --data cyp_guides_clinical.csv   # your copy of the public trial file (paper's coding)
  pydpowl casestudy --data mystudy.csv --treatment arm --treated new --benefit score \\
                    --features age,female --bounds age=18:90,female=0:1 --propensity 0.5 \\
                    --weights-upper-bound 40 --gamma 30
  pydpowl casestudy --sensitivity-gammas 1,10,30,75,150 --sensitivity-runs 200

outputs: DIR/table1.csv, DIR/value_by_epsilon.png, DIR/gamma_sensitivity.csv, DIR/gamma_sensitivity.png
"""


def add_parser(subparsers) -> argparse.ArgumentParser:
    from ..studies.config import DEFAULT_SENSITIVITY_GAMMAS

    parser = subparsers.add_parser(
        "casestudy", help="case study (Table 1, Fig. 2): DP-OWL value, concordance and allocation by epsilon",
        description=__doc__, epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--eps", type=float_list, default=[0.1, 0.5, 1, 2, 5, math.inf], metavar="LIST",
                        help="privacy budgets (default: 0.1,0.5,1,2,5,inf)")
    parser.add_argument("--gamma", type=float, default=75.0, help="regularisation constant (default: 75)")
    parser.add_argument("--runs", type=int, default=200, help="DP runs per epsilon (default: 200)")
    parser.add_argument("--seed", type=int, default=2024,
                        help="seed of the synthetic data and the noise (default: 2024)")
    parser.add_argument("--sensitivity-gammas", type=float_list, default=list(DEFAULT_SENSITIVITY_GAMMAS),
                        metavar="LIST", help="gamma grid of the sensitivity figure (default: "
                        + ",".join(f"{g:g}" for g in DEFAULT_SENSITIVITY_GAMMAS) + ")")
    parser.add_argument("--sensitivity-runs", type=int, default=100, metavar="R",
                        help="DP runs per (gamma, epsilon) in the sensitivity figure (default: 100)")
    parser.add_argument("--no-sensitivity", action="store_true", help="skip the gamma-sensitivity figure")
    parser.add_argument("--out", type=Path, default=Path("results/casestudy"),
                        help="output folder (default: results/casestudy)")
    parser.add_argument("--no-progress", action="store_true", help="do not draw a progress bar")
    add_data_options(parser, required=False,
                     data_help="a CSV: the public CYP-GUIDES clinical file alone (paper's coding), or any "
                               "CSV with the column options below (default: built-in synthetic cohort)")
    parser.set_defaults(func=run)
    return parser


def _data(args, rng):
    from ..datasets import load_cyp_guides, make_cyp_guides_style

    own = any(v is not None for v in (args.treatment, args.benefit, args.features, args.bounds,
                                      args.weights_upper_bound))
    if args.data and own:
        return data_from_args(args), "your data"
    if own:
        raise ValueError("the column options (--treatment, --benefit, ...) describe a CSV given with --data.")
    if args.data:
        return load_cyp_guides(args.data), "CYP-GUIDES clinical file, with the paper's coding"
    return make_cyp_guides_style(random_state=rng), "built-in CYP-GUIDES-style data"


def run(args: argparse.Namespace) -> int:
    import numpy as np

    from ..studies.casestudy import gamma_sensitivity, run_case_study
    from ..plotting.studies import plot_case_study, plot_gamma_sensitivity

    start = time.perf_counter()
    rng = np.random.default_rng(args.seed)  # the synthetic cohort, then the noise
    data, kind = _data(args, rng)
    progress = show_progress(args)
    result = run_case_study(data, epsilons=args.eps, gamma=args.gamma, n_runs=args.runs, random_state=rng,
                            progress=progress)
    args.out.mkdir(parents=True, exist_ok=True)
    table_path = args.out / "table1.csv"
    result.table.to_csv(table_path, index=False)
    written = [table_path, plot_case_study(result, args.out / "value_by_epsilon.png")]
    say(f"Case study ({kind}): {result.description}")
    for note in data.notes:
        say(f"coding: {note}")
    if data.diagnostics:  # a study, not a private release: it shows the non-private rule too
        say("data counts (not private; the case study is not a release): "
            + ", ".join(f"{k} {v}" for k, v in data.diagnostics.items()))
    say(f"gamma = {result.gamma:g}, W = {data.weights_upper_bound:.4f}, {result.n_runs} DP runs per epsilon")
    say("non-private rule: " + ", ".join(f"{n} {v:+.4f}" for n, v in zip(result.coefficient_names,
                                                                         result.nonprivate_coef)))
    say()
    say(result.format_table())
    say()
    for note in result.notes[len(data.notes):]:
        say(f"note: {note}")
    if not args.no_sensitivity:
        sens = gamma_sensitivity(data, gammas=args.sensitivity_gammas, epsilons=args.eps,
                                 n_runs=args.sensitivity_runs, random_state=rng, progress=progress)
        sens_path = args.out / "gamma_sensitivity.csv"
        sens.to_csv(sens_path, index=False)
        written += [sens_path, plot_gamma_sensitivity(sens, args.out / "gamma_sensitivity.png",
                                                      title=f"γ sensitivity: {result.description}")]
        say()
        say(f"gamma sensitivity (mean value over {args.sensitivity_runs} DP runs; rows gamma, columns epsilon):")
        pivot = sens.pivot(index="gamma", columns="epsilon", values="value_mean")
        pivot.columns = ["inf" if c == math.inf else f"{c:g}" for c in pivot.columns]
        say(pivot.to_string(float_format=lambda v: f"{v:.4f}"))
    say(f"wrote {', '.join(str(p) for p in written)} in {time.perf_counter() - start:.1f} s")
    return 0

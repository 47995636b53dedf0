"""``pydpowl fit``: fit a DP-OWL treatment rule on a CSV and release it as a JSON model.

The model file holds only the private output (noisy coefficients) and the
public settings (epsilon, gamma, W, bounds, feature names, h, the mechanism);
'pydpowl predict' applies it to new data. By default the mechanism, the
weights, h and gamma are DPOWL's defaults from the utility study
(docs/utility.md): objective perturbation when the propensities are known,
residual weights when the benefit's public range is given
(--benefit-upper-bound), gamma from a public rule; the output says which.
"""

from __future__ import annotations

import argparse
import contextlib
import time
from pathlib import Path

from ._common import (add_budget_options, add_data_options, add_key_option, add_mechanism_options, arm_labels,
                      data_from_args, mechanism_settings, open_budget, output_file, read_key, say)
from ._disclosure import add_disclosure_options, budget_text, say_data, say_diagnostics

EPILOG = """examples:
  pydpowl fit --data trial.csv --treatment arm --treated G --benefit benefit \\
              --features age,male,nonwhite,mdd --bounds age=18:89,male=0:1,nonwhite=0:1,mdd=0:1 \\
              --propensity 0.6667 --weights-upper-bound 27.2339 --epsilon 1 --gamma 75 --out model.json
  pydpowl fit --data sim.csv --treatment A --benefit B --features x1,x2,x3,x4 --bounds 0:1,0:1,0:1,0:1 \\
              --weights-upper-bound 30 --benefit-lower-bound -7.5 --benefit-upper-bound 7.5 --epsilon 1 \\
              --out model.json                       # DPOWL's defaults: residual weights, objective perturbation
  pydpowl fit ... --mechanism output --residual no --huber-h 0.5 --gamma 60   # the paper's Algorithm 1
  pydpowl fit --data trial3.csv --treatment dose --benefit B --features x1,x2 --bounds 0:1,0:1 \
              --weights-upper-bound 30 --propensity low=0.25,mid=0.25,high=0.5 --epsilon 1 --out model.json
                                                     # three or more arms: the angle-based K-arm rule
  pydpowl fit --data 'claims/*.csv' --engine dask --scheduler tcp://10.0.0.5:8786 --treatment A --benefit B \\
              --features x1,x2,x3,x4 --bounds 0:1,0:1,0:1,0:1 --weights-upper-bound 30 --epsilon 1 --gamma 600 \\
              --out model.json

Bounds, W and gamma must be fixed before looking at the data: values read off the data void the
privacy guarantee. Leave --seed out for a real release (fresh operating-system entropy). Only the
release and public settings are printed: n with --public-n, counts computed from the data (subjects
per arm, values clipped) with --diagnostics, labelled non-private.
"""


def add_parser(subparsers) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "fit", help="fit a private treatment rule on a CSV and write it as a JSON model",
        description=__doc__, epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_data_options(parser, required=True, data_help="CSV with one row per subject")
    g = parser.add_argument_group("privacy and model")
    g.add_argument("--epsilon", type=float, required=True, metavar="E", help="privacy budget (> 0)")
    g.add_argument("--gamma", type=float, default=None, metavar="G",
                   help="regularisation constant (DPpack's convention; default: the public rule of the mechanism)")
    add_mechanism_options(g)
    g.add_argument("--benefit-upper-bound", type=float, default=None, metavar="U",
                   help="public upper bound of the benefit (with --benefit-lower-bound, or 0): benefits are clipped "
                        "to it; it gives residual weights their range")
    g.add_argument("--labels", metavar="PLUS,MINUS",
                   help="names of the arms coded +1 and -1, stored in the model (default: from the data coding)")
    g.add_argument("--seed", type=int, default=None, metavar="S",
                   help="seed the noise (reproduction and tests only: a known seed reveals the noise)")
    g = parser.add_argument_group("engine")
    g.add_argument("--engine", choices=("memory", "dask"), default="memory",
                   help="memory: read the CSV into this process (default); dask: --data is a glob of CSV files "
                        "('dir/*.csv') read chunk by chunk by Dask workers, and each solver pass is blockwise")
    g.add_argument("--scheduler", metavar="ADDR",
                   help="with --engine dask: address of a running dask-scheduler (tcp://host:8786); default: a "
                        "local cluster of threads in this process")
    g.add_argument("--dask-timeout", type=float, default=None, metavar="SECONDS",
                   help="with --engine dask: stop the fit when no Dask worker has been connected for this long "
                        "(default: 60; inf: wait for workers forever)")
    add_budget_options(parser)
    add_disclosure_options(parser)
    parser.add_argument("--out", type=Path, required=True, metavar="FILE", help="model file to write (JSON)")
    add_key_option(parser, writes=True)
    parser.set_defaults(func=run)
    return parser


def run(args: argparse.Namespace) -> int:
    import math

    from ..model_io import export_model
    from ..estimators.owl import DPOWL

    start = time.perf_counter()
    if not (args.epsilon > 0 and math.isfinite(args.epsilon)):
        raise ValueError(f"--epsilon must be a finite number > 0 for a release, got {args.epsilon!r}.")
    for option, value in (("--scheduler", args.scheduler), ("--dask-timeout", args.dask_timeout)):
        if value is not None and args.engine != "dask":
            raise ValueError(f"{option} needs --engine dask.")
    key = read_key(args)  # before the data are read
    span = None  # the benefit's public range (checked before the data are read)
    if args.benefit_upper_bound is not None:
        span = args.benefit_upper_bound - (args.benefit_lower_bound or 0.0)
        if not (span > 0 and math.isfinite(span)):
            raise ValueError(f"--benefit-upper-bound must be finite and exceed the lower bound "
                             f"({args.benefit_lower_bound or 0.0:g}), got {args.benefit_upper_bound!r}.")
    budget = open_budget(args)
    label = f"pydpowl fit --epsilon {args.epsilon:g} -> {args.out.name}"
    if budget is not None:
        budget.check(args.epsilon, label=label)  # before the data are read
    with contextlib.ExitStack() as stack:
        if args.engine == "dask":
            from .dask_engine import chunked_data_from_args, dask_client

            say(f"dask: {stack.enter_context(dask_client(args.scheduler, worker_timeout=args.dask_timeout))}")
            data, coded = chunked_data_from_args(args)
        else:
            data, coded = data_from_args(args, with_labels=True)
        model = DPOWL(epsilon=args.epsilon, gamma="auto" if args.gamma is None else args.gamma,
                      weights_upper_bound=data.weights_upper_bound, feature_bounds=data.feature_bounds,
                      **mechanism_settings(args),
                      benefit_bounds=None if span is None else (0.0, span),  # benefits arrive shifted by L
                      weight_sensitivity=data.weight_sensitivity, random_state=args.seed)
        model.fit(data.X, data.treatment, data.benefit, data.propensity)
    names = list(data.feature_names) if args.engine == "dask" else list(data.X.columns)
    multi = len(coded) > 2
    if multi and args.labels:
        raise ValueError(f"--labels names the arms coded +1 and -1 of two; with {len(coded)} arms the labels are the "
                         "treatment column's values.")
    plus, minus = (None, None) if multi else arm_labels(args.labels, coded)
    path = export_model(model, output_file(args.out), feature_names=names, key=key,
                        **({} if multi else {"treatment_labels": (plus, minus)}))
    if budget is not None:  # spent only after the release succeeded
        budget.spend(args.epsilon, label=label, delta=model.privacy_spent_[1])
        budget.save(args.budget_file)
    say_data(data, args)
    say(str(model.summary()))
    say(f"mechanism: {model.mechanism_description_}; gamma = {model.gamma_:.6g}")
    if multi:
        say(f"released rule ({len(coded)} arms: {', '.join(coded)}): the arm a with the largest score "
            "<V_a, intercept + Theta x> (V_a: the arms' simplex vertices; model.json holds Theta and the vertices)")
    else:
        say(f"released rule: +1 ({plus}) where the decision value is > 0, else -1 ({minus})")
    say_diagnostics(args, data.diagnostics, {"n_clipped_weights": model.n_clipped_weights_,
                                             "n_clipped_features": model.n_clipped_features_,
                                             "n_iter": model.n_iter_})
    if args.seed is not None:
        say(f"warning: seed {args.seed} makes the noise reproducible; a release made with a known seed is not private")
    if budget is not None:
        say(f"privacy budget of {args.data}: spent {budget_text(budget)}")
    say(f"wrote {path} in {time.perf_counter() - start:.1f} s")
    return 0

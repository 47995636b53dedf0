"""``pydpowl predict``: apply a released DP-OWL model (JSON) to a CSV.

Writes one row per input row: the decision value, the recommended treatment
(+1 / -1) and the arm's name from the model. For a rule with three or more
arms: the recommended arm and each arm's score ``<V_a, intercept + Theta x>``
(score_ARM columns; the largest wins). For a multi-stage regime: one column
per stage (stageK_recommended), each stage's rule applied to its own history
columns, matched by name. Applying a released model costs
no privacy budget. Model files that are malformed or whose checksum does not
match (accidental edits) are rejected; the checksum does not protect against
deliberate changes (anyone can recompute it): with --key-file the model's
keyed signature is verified, and an unsigned or changed file is rejected.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from ._common import add_key_option, output_file, read_key, say

EPILOG = """examples:
  pydpowl predict --model model.json --data new_patients.csv --out assignments.csv
  pydpowl predict --model model.json --data new_patients.csv --id-column ID --out assignments.csv
  pydpowl predict --model model.json --key-file model.key --data new_patients.csv --out assignments.csv
"""


def add_parser(subparsers) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "predict", help="apply a released model (JSON) to a CSV and write the recommended treatments",
        description=__doc__, epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--model", type=Path, required=True, metavar="FILE", help="model written by 'pydpowl fit'")
    parser.add_argument("--data", type=Path, required=True, metavar="CSV",
                        help="CSV holding the model's feature columns")
    parser.add_argument("--id-column", metavar="COL", help="copy this column to the output")
    parser.add_argument("--out", type=Path, required=True, metavar="FILE", help="CSV to write")
    add_key_option(parser, writes=False)
    parser.set_defaults(func=run)
    return parser


def run(args: argparse.Namespace) -> int:
    import pandas as pd

    from ..model_io import ReleasedRegime, load_model
    from ..datasets.tabular import read_table

    start = time.perf_counter()
    key = read_key(args)
    model = load_model(args.model, key=key)
    frame = read_table(args.data)
    missing = [c for c in model.feature_names if c not in frame.columns]
    if missing:
        raise ValueError(f"{args.data.name}: missing the model's feature column(s) {missing}.")
    if args.id_column and args.id_column not in frame.columns:
        raise ValueError(f"{args.data.name}: no column {args.id_column!r} for --id-column.")
    X = frame[list(model.feature_names)].apply(pd.to_numeric, errors="coerce")
    bad = [c for c in X.columns if X[c].isna().any()]
    if bad:
        raise ValueError(f"{args.data.name}: feature column(s) {bad} have missing or non-numeric entries.")
    if isinstance(model, ReleasedRegime):
        return _run_regime(args, model, frame, X, start)
    decision = model.decision_function(X)
    rec = (decision > 0).astype(int) * 2 - 1
    out = pd.DataFrame({"decision_value": decision, "recommended": rec,
                        "recommended_label": [model.treatment_labels[0] if r > 0 else model.treatment_labels[1]
                                              for r in rec]})
    if args.id_column:
        out.insert(0, args.id_column, frame[args.id_column].to_numpy())
    out.to_csv(output_file(args.out), index=False)
    n_plus = int((rec > 0).sum())
    say(f"model: epsilon = {model.epsilon:g} (total {model.epsilon_total:g}), gamma = {model.gamma:g}, "
        f"features {list(model.feature_names)}; tuning: {model.tuning}")
    if model.signature_verified:
        say(f"model: signature verified with the key in {args.key_file}")
    say(f"{len(rec)} rows: {n_plus} recommended +1 ({model.treatment_labels[0]}), {len(rec) - n_plus} recommended "
        f"-1 ({model.treatment_labels[1]})")
    outside = model.outside_bounds(X)
    if outside:
        say(f"note: {outside} row(s) have features outside the model's public bounds (not clipped, as in DPpack)")
    say(f"wrote {args.out} in {time.perf_counter() - start:.1f} s")
    return 0


def _run_regime(args: argparse.Namespace, model, frame, X, start: float) -> int:
    """A K-arm rule (one stage: the recommended arm and each arm's score) or a multi-stage regime (each stage's
    recommendation from its own history columns, matched by name)."""
    import numpy as np
    import pandas as pd

    out = pd.DataFrame(index=range(len(X)))
    if model.n_stages == 1:
        stage = model.stages[0]
        scores = stage.scores(X)
        out["recommended"] = stage.predict(X)
        for k, arm in enumerate(stage.arms):
            out[f"score_{arm}"] = scores[:, k]
    else:
        for k, rec in enumerate(model.predict(X)):
            out[f"stage{k + 1}_recommended"] = rec
    if args.id_column:
        out.insert(0, args.id_column, frame[args.id_column].to_numpy())
    out.to_csv(output_file(args.out), index=False)
    say(f"model: {model.kind}, epsilon = {model.epsilon:g} (total {model.epsilon_total:g}); tuning: {model.tuning}")
    if model.signature_verified:
        say(f"model: signature verified with the key in {args.key_file}")
    if model.n_stages > 1:
        say(f"regime of {model.n_stages} stages, applied stage by stage (each stage reads its own history columns "
            "by name; the recommendation of a stage does not feed the next: later stages read the treatments "
            "received, as columns of the data)")
    for stage in model.stages:
        where = f"stage {stage.stage}" if model.n_stages > 1 else "rule"
        rec = out[f"stage{stage.stage}_recommended" if model.n_stages > 1 else "recommended"].to_numpy()
        counts = ", ".join(f"{int(np.count_nonzero(rec == a))} recommended {a}" for a in stage.arms)
        say(f"{where}: {len(stage.arms)} arms ({', '.join(str(a) for a in stage.arms)}), gamma = {stage.gamma:g}; "
            f"{where} reads {', '.join(stage.feature_names)}; {len(rec)} rows: {counts}")
        outside = stage.outside_bounds(X)
        if outside:
            say(f"note: {outside} row(s) have {where} features outside its public bounds (not clipped, as in DPpack)")
    say(f"wrote {args.out} in {time.perf_counter() - start:.1f} s")
    return 0

"""``pydpowl analyze --stages T``: the whole private analysis of a T-stage treatment regime.

The command-line form of :func:`pydpowl.analysis_regime.run_regime_analysis`,
with DTRlearn2's ``owl(H, AA, RR, n, K, pi)`` in mind: one treatment column
and one reward column per stage (``--treatment A1,A2``, ``--reward R1,R2``),
each stage's history columns (``--features-stage1 ... --features-stageT``),
every column matched by name. The settings that are public by construction
are given, never read off the data: the history columns' bounds (``--bounds
name=lo:hi``), each stage's reward bounds and design probabilities.
"""

from __future__ import annotations

import argparse
import math
import time
from fractions import Fraction
from typing import Any, Dict, List, Sequence, Tuple

from ._common import mechanism_settings, name_list, say, say_arm_values
from ._common import positive_option as _positive
from ._disclosure import rows_text, say_diagnostics

__all__ = ["add_stage_options", "stage_options_given", "run_regime", "MAX_STAGES"]

#: the largest T the command line takes (``--features-stage1`` ... ``--features-stage9``)
MAX_STAGES = 9


def add_stage_options(parser: argparse.ArgumentParser) -> None:
    """``--stages``, ``--reward``, ``--reward-bounds``, ``--features-stageK``, ``--stage-split``."""
    g = parser.add_argument_group(
        "several stages (a dynamic treatment regime; DTRlearn2's owl(H, AA, RR, n, K, pi))",
        "with --stages T, --treatment and --reward name one column per stage (comma-separated, stage 1 first), "
        "--features-stageK each stage's history columns (K = 1..T), --bounds every history column by name, "
        "--propensity one design for every stage or one per stage separated by ';'")
    g.add_argument("--stages", type=int, metavar="T", help="number of decision points (2 or more)")
    g.add_argument("--reward", metavar="COLS", help="the reward column of each stage (larger is better), e.g. R1,R2")
    g.add_argument("--reward-bounds", metavar="LO:HI,...",
                   help="public bounds of each stage's reward (values outside are clipped): one LO:HI for every "
                        "stage or one per stage, e.g. --reward-bounds=0:1,-3:3")
    for k in range(1, MAX_STAGES + 1):
        g.add_argument(f"--features-stage{k}", type=name_list, metavar="COLS", dest=f"features_stage{k}",
                       help=("stage K's history columns, e.g. --features-stage1 age,score0 --features-stage2 "
                             "age,score0,A1,score1 (K = 1.." f"{MAX_STAGES})") if k == 1 else argparse.SUPPRESS)
    g.add_argument("--stage-split", metavar="S1:S2:...",
                   help="ratios dividing the rule's share of E across the stages, e.g. 1:2 (a third to stage 1, two "
                        "thirds to stage 2; exact fractions); default equal")


def stage_options_given(args: argparse.Namespace) -> List[str]:
    """The multi-stage options given (they need ``--stages``)."""
    given = [flag for flag, v in (("--reward", args.reward), ("--reward-bounds", args.reward_bounds),
                                  ("--stage-split", args.stage_split)) if v is not None]
    return given + [f"--features-stage{k}" for k in range(1, MAX_STAGES + 1)
                    if getattr(args, f"features_stage{k}") is not None]


def _columns(option: str, text: Any, T: int) -> List[str]:
    names = [c.strip() for c in str(text).split(",") if c.strip()] if text is not None else []
    if len(names) != T:
        raise ValueError(f"{option} must name one column per stage (--stages {T}), got {len(names)}: {text!r}.")
    return names


def _reward_bounds(text: Any, T: int) -> List[Tuple[float, float]]:
    if text is None:
        raise ValueError(f"--reward-bounds is needed with --stages: the public bounds of each stage's reward, one "
                         f"LO:HI for every stage or {T} separated by commas.")
    items = [t.strip() for t in str(text).split(",") if t.strip()]
    if len(items) not in (1, T):
        raise ValueError(f"--reward-bounds must give one LO:HI for every stage or one per stage (--stages {T}), got "
                         f"{len(items)}: {text!r}.")
    out: List[Tuple[float, float]] = []
    for k, item in enumerate(items * T if len(items) == 1 else items):
        try:
            lo, hi = (float(v) for v in item.split(":"))
        except ValueError:
            lo = hi = math.nan
        if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
            raise ValueError(f"--reward-bounds: stage {k + 1}'s {item!r} must be LO:HI with LO < HI (finite).")
        out.append((lo, hi))
    return out


def _stage_split(text: Any, T: int):
    if text is None:
        return None
    parts = str(text).split(":")
    try:
        ratios = [Fraction(p.strip()) for p in parts]
    except (ValueError, ZeroDivisionError):
        ratios = []
    if len(ratios) != T or not all(r > 0 for r in ratios):
        raise ValueError(f"--stage-split must be T positive numbers separated by ':' (one per stage, --stages {T}), "
                         f"got {text!r}.")
    return ratios


def _propensities(text: Any, arms: Sequence[Sequence[str]]) -> List[Dict[str, float]]:
    """Each stage's design probabilities ``{arm: P}`` from ``--propensity`` (checked: every arm, summing to 1)."""
    from ..analysis_arms import design_probabilities
    from ..datasets.tabular import parse_arm_propensity

    T = len(arms)
    specs = [t.strip() for t in str(text).split(";")]
    if len(specs) not in (1, T) or not all(specs):
        raise ValueError(f"--propensity must give one specification for every stage or one per stage (--stages {T}), "
                         f"separated by ';', got {len(specs)}: {text!r}.")
    out = []
    for k, spec in enumerate(specs * T if len(specs) == 1 else specs):
        K = len(arms[k])
        try:
            value = parse_arm_propensity(spec, arms[k])
        except ValueError as exc:
            raise ValueError(f"--propensity (stage {k + 1}): {exc}") from None
        if not isinstance(value, dict):
            if not math.isclose(value, 1.0 / K, rel_tol=1e-9):
                raise ValueError(f"--propensity (stage {k + 1}): a number means balanced randomisation, 1/K = "
                                 f"{1.0 / K:.6g} for the {K} arms ({', '.join(arms[k])}); got {spec!r}. For unequal "
                                 "allocation give arm=P,... naming every arm.")
            value = {a: 1.0 / K for a in arms[k]}
        try:
            probs = design_probabilities(value, list(arms[k]))
        except (TypeError, ValueError) as exc:
            raise ValueError(f"--propensity (stage {k + 1}, arms {', '.join(arms[k])}): {exc}") from None
        out.append({a: float(q) for a, q in zip(arms[k], probs)})
    return out


def _numeric(frame, option: str, column: str, source: str):
    import numpy as np
    import pandas as pd

    values = pd.to_numeric(frame[column], errors="coerce").to_numpy(dtype=float)
    bad = int(np.count_nonzero(~np.isfinite(values)))
    if bad:
        raise ValueError(f"{option}: column {column!r} of {source} must be numeric and finite; {bad} entries are not "
                         "(code categories as numbers, remove missing values first).")
    return values


def run_regime(args: argparse.Namespace) -> int:
    """``pydpowl analyze --stages T``."""
    import numpy as np

    from ..analysis import BudgetSplit
    from ..analysis_output import number_text, write_regime_analysis
    from ..analysis_regime import run_regime_analysis
    from ..datasets.tabular import parse_bounds, read_table, treatment_levels

    start = time.perf_counter()
    T = args.stages
    if not (isinstance(T, int) and 2 <= T <= MAX_STAGES):
        raise ValueError(f"--stages must be a whole number >= 2 (at most {MAX_STAGES}), got --stages {T}; one stage "
                         "is the ordinary analysis (leave --stages out).")
    refused = {"--data-format cyp-guides": args.data_format != "csv",
               "--benefit": args.benefit is not None, "--treated": args.treated is not None,
               "--features": args.features is not None, "--benefit-bounds": args.benefit_bounds is not None,
               "--propensity-model": args.propensity_model is not None, "--gammas": args.gammas is not None,
               "--labels": args.labels is not None, "--benefit-definition": args.benefit_definition is not None}
    why = {"--benefit": "--benefit is the single-stage outcome; with --stages give --reward (one column per stage)",
           "--features": "--features is the single-stage history; with --stages give --features-stage1 ... "
                         f"--features-stage{T}",
           "--benefit-bounds": "--benefit-bounds is the single-stage outcome's; with --stages give --reward-bounds",
           "--weights-upper-bound": ""}
    for flag, given in refused.items():
        if given:
            raise ValueError(why.get(flag) or f"{flag} is not available with --stages (a regime's stages are coded "
                             "by their labels, with the design's probabilities, and gamma is fixed or DPOWL's public "
                             "rule).")
    if args.weights_upper_bound is not None:
        raise ValueError("--weights-upper-bound: with --stages each stage's W is computed from --reward-bounds and the "
                         "propensities (W_k = the range of the rewards from stage k on / the product of the smallest "
                         "design probabilities); leave it out.")
    beyond = [k for k in range(T + 1, MAX_STAGES + 1) if getattr(args, f"features_stage{k}") is not None]
    if beyond:
        raise ValueError(f"--features-stage{beyond[0]} names a stage beyond --stages {T}.")
    E = _positive("--total-epsilon", args.total_epsilon)
    level = _positive("--level", args.level, upper=1.0)
    if args.gamma is not None:
        _positive("--gamma", args.gamma)
    if args.huber_h is not None:
        _positive("--huber-h", args.huber_h)
    treatments = _columns("--treatment", args.treatment, T)
    rewards = _columns("--reward", args.reward, T)
    histories = []
    for k in range(1, T + 1):
        cols = getattr(args, f"features_stage{k}")
        if not cols:
            raise ValueError(f"--features-stage{k} is needed (stage {k}'s history columns; --stages {T}).")
        if len(set(cols)) != len(cols):
            raise ValueError(f"--features-stage{k} must not repeat a column, got {','.join(cols)!r}.")
        histories.append(list(cols))
    reward_bounds = _reward_bounds(args.reward_bounds, T)
    stage_split = _stage_split(args.stage_split, T)
    try:
        split = BudgetSplit.parse(args.budget_split)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"--budget-split {args.budget_split!r}: {exc}") from None
    if args.propensity is None:
        raise ValueError("--propensity is needed with --stages: each stage's design probabilities (1/K, or arm=P,... "
                         "naming every arm; one for every stage or one per stage separated by ';').")
    frame = read_table(args.data)
    source = args.data.name
    for option, names in (("--treatment", treatments), ("--reward", rewards)):
        for k, c in enumerate(names):
            if c not in frame.columns:
                raise ValueError(f"{option}: column {c!r} (stage {k + 1}) is not in {source} (columns: "
                                 f"{list(frame.columns)[:20]}).")
    for k, cols in enumerate(histories):
        absent = [c for c in cols if c not in frame.columns]
        if absent:
            raise ValueError(f"--features-stage{k + 1}: column {absent[0]!r} is not in {source} (columns: "
                             f"{list(frame.columns)[:20]}).")
    all_columns = list(dict.fromkeys(c for cols in histories for c in cols))
    if args.bounds is None or not all("=" in t for t in str(args.bounds).split(",") if t.strip()):
        raise ValueError(f"--bounds must name every column (name=lo:hi) with --stages (columns are matched by name, "
                         f"never by position): the history columns {all_columns}.")
    try:
        lower, upper = parse_bounds(args.bounds, all_columns)
    except ValueError as exc:
        text = str(exc).replace("feature(s)", "column(s)").replace("the features", "the history columns")
        raise ValueError("--" + text) from None
    bound_of = {c: (lo, hi) for c, lo, hi in zip(all_columns, lower, upper)}

    A, arms = [], []
    for k, c in enumerate(treatments):
        if frame[c].isna().any():
            raise ValueError(f"--treatment: stage {k + 1}'s column {c!r} has {int(frame[c].isna().sum())} missing "
                             "values; remove them first.")
        levels = treatment_levels(frame[c])
        if len(levels) < 2:
            raise ValueError(f"--treatment: stage {k + 1}'s column {c!r} has one level ({levels[0]}): a stage needs "
                             "at least two treatments.")
        A.append(frame[c].astype(str).str.strip().to_numpy(dtype=object))
        arms.append(levels)
    R = [_numeric(frame, "--reward", c, source) for c in rewards]
    H = [np.column_stack([_numeric(frame, f"--features-stage{k + 1}", c, source) for c in cols])
         for k, cols in enumerate(histories)]
    propensity = _propensities(args.propensity, arms)
    settings = mechanism_settings(args)
    result = run_regime_analysis(
        H, A, R, feature_bounds=[([bound_of[c][0] for c in cols], [bound_of[c][1] for c in cols])
                                 for cols in histories],
        reward_bounds=reward_bounds, propensity=propensity, total_epsilon=E,
        gamma="auto" if args.gamma is None else args.gamma, level=level, split=split, feature_names=histories,
        public_n=args.public_n, stage_split=stage_split, random_state=args.seed, **settings)
    description = (f"Data: {source}, {T} stages (treatments {', '.join(treatments)}; rewards {', '.join(rewards)})"
                   + (f"; {rows_text(len(frame), True)}." if args.public_n else "."))
    paths = write_regime_analysis(result, args.out, description=description)
    say(f"data: {source}; {rows_text(len(frame), args.public_n)}")
    for k in range(T):
        say(f"stage {k + 1}: treatment {treatments[k]!r} ({len(arms[k])} arms: {', '.join(arms[k])}; "
            + ", ".join(f"P({a}) = {q:.6g}" for a, q in propensity[k].items())
            + f"), reward {rewards[k]!r} in [{reward_bounds[k][0]:g}, {reward_bounds[k][1]:g}], history "
            + ", ".join(histories[k]))
    split_text = (f"{result.n_learning} learning rows, {result.n_evaluation} evaluation rows" if args.public_n
                  else f"a random {split.evaluation_fraction:g} of the rows for evaluation, the rest for learning")
    say(f"split: {split_text}; the rule's epsilon by stage: "
        + ", ".join(f"stage {k + 1} {number_text(float(e))}" for k, e in enumerate(result.stage_epsilons))
        + (f" (--stage-split {args.stage_split})" if stage_split is not None else " (equal)"))
    for k, st in enumerate(result.model_content["stages"]):
        rel = result.regime.stages_[k]
        say(f"stage {k + 1} rule ({rel.mechanism} perturbation{', residual weights' if rel.residual else ''}, "
            f"gamma {st['gamma']:.6g}): intercept {', '.join(f'{c:+.6g}' for c in st['intercept'])}; "
            + "; ".join(f"{name} {', '.join(f'{c[j]:+.6g}' for c in st['coef'])}"
                        for j, name in enumerate(st["feature_names"])))
    v = result.value
    say(f"value of the regime (mean total reward): {v.value.estimate:.4f}, {100 * level:g}% interval "
        f"[{v.value.ci_low:.4f}, {v.value.ci_high:.4f}]")
    say_arm_values(v, rule="regime", arm="fixed sequence")
    led = result.ledger()
    say(f"privacy: {led['guarantee']}: epsilon {number_text(led['spent'])} of {number_text(E)} ({result.composition} "
        "composition; one release per stage, then the value's two; ledger.json)")
    say_diagnostics(args, result.diagnostics)
    if args.seed is not None:
        say(f"warning: seed {args.seed} makes every draw reproducible; a release made with a known seed is not "
            "private")
    say(f"wrote {', '.join(p.name for p in paths)} to {args.out} in {time.perf_counter() - start:.1f} s")
    return 0

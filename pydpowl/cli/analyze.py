"""``pydpowl analyze``: a whole private treatment-rule analysis under one total epsilon.

Splits the rows into a learning and an evaluation part; on the learning part
releases the propensity model (when asked) and the rule (DP-OWL, by default
objective perturbation with residual weights and the public gamma rule; gamma
chosen privately among --gammas when given); on the evaluation part releases
the rule's value and its gain over the better single arm with confidence
intervals that account for sampling and privacy noise. Writes DIR/model.json
(for 'pydpowl predict'), DIR/ledger.json, DIR/value.json, DIR/report.md,
DIR/value.png and DIR/coefficients.png.
"""

from __future__ import annotations

import argparse
import math
import time
from pathlib import Path

from ._common import add_mechanism_options, arm_labels, mechanism_settings, name_list, say, say_arm_values
from ._common import positive_option as _positive
from ._disclosure import add_disclosure_options, rows_text, say_data, say_diagnostics

EPILOG = """examples:
  pydpowl analyze --data trial.csv --treatment arm --treated new --benefit score \\
                  --features age,male --bounds age=18:90,male=0:1 --benefit-bounds 0:10 \\
                  --weights-upper-bound 20 --propensity 0.5 --total-epsilon 1 --out results/analysis
  pydpowl analyze --data cohort.csv --treatment A --benefit B --features x1,x2 --bounds 0:1,0:1 \\
                  --benefit-bounds=-5:5 --weights-upper-bound 100 --propensity-model logistic \\
                  --total-epsilon 2 --out results/analysis
  pydpowl analyze --data cyp_guides_clinical.csv --data-format cyp-guides --benefit-bounds 0:9.0780 \\
                  --propensity 0.6667 --total-epsilon 1 --out results/analysis-cyp
  pydpowl analyze --data smart.csv --stages 2 --treatment A1,A2 --reward R1,R2 \\
                  --reward-bounds=0:1,-3:3 --features-stage1 age,score0 --features-stage2 age,score0,A1,score1 \\
                  --bounds age=18:90,score0=0:10,A1=-1:1,score1=0:10 --propensity 0.5 \\
                  --stage-split 1:1 --total-epsilon 2 --out results/regime

Several stages (--stages T, a dynamic treatment regime as DTRlearn2's owl(H, AA, RR, n, K, pi)): one
treatment and one reward column per stage (--treatment, --reward: comma-separated, stage 1 first; every
column matched by name), each stage's history columns (--features-stage1 ... --features-stageT: any
columns, the earlier treatments and rewards included) and the public bounds of every one of them by name
(--bounds name=lo:hi,...), each stage's reward bounds (--reward-bounds, one LO:HI for every stage or one
per stage) and design (--propensity: 1/K or arm=P,... for every stage, or one per stage separated by ';').
The regime is learnt last stage first on the learning part (each two-arm stage by objective perturbation
with residual weights by default), its value and every fixed treatment sequence's on the evaluation part;
the rule's share of E is split across the stages equally or by --stage-split 1:2 (exact ratios).

Default budget split (--budget-split): evaluation=0.4 of E for the evaluation part (the value and its
interval), 0.6 of E for the learning part; there propensity=0.2 and selection=0.2 of the part (when
used), the rule gets the rest; variance=0.3 of the evaluation part, the value gets the rest;
evaluation_fraction=0.5 of the rows. Every release is charged against E (composition=sequential) and
DIR/ledger.json lists them: they add up to E. composition=parallel gives each of the two disjoint parts
the whole E (parallel composition; the ledger says so). All bounds, W, M and gamma candidates must be
fixed before looking at the data. Leave --seed out for a real release. Only releases and public settings
are printed and written: the number of subjects with --public-n, counts computed from the data
(subjects per arm, values clipped) with --diagnostics (labelled non-private, never written to DIR).
"""

_FORMATS = ("csv", "cyp-guides")


def add_parser(subparsers) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "analyze", help="private end-to-end analysis: propensities, gamma, the rule, its value with an interval",
        description=__doc__, epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    g = parser.add_argument_group("data (a CSV and its public settings)")
    g.add_argument("--data", required=True, type=Path, metavar="CSV", help="one row per subject")
    g.add_argument("--data-format", choices=_FORMATS, default="csv",
                   help="csv: columns named by the options below (default); cyp-guides: the public CYP-GUIDES "
                        "clinical file, coded as in the paper (features age,male,nonwhite,mdd; benefit "
                        "log(24*365) - log(LOS); +1 = guided)")
    g.add_argument("--treatment", metavar="COL", help="treatment column (two values)")
    g.add_argument("--treated", metavar="VALUE", help="value of the treatment column coded +1")
    g.add_argument("--benefit", metavar="COL", help="benefit column (larger is better)")
    g.add_argument("--benefit-definition", metavar="TEXT",
                   help="what the benefit is, stated next to every value in the report (default: the column's "
                        "name; the cyp-guides format states its coding and the length of stay in hours)")
    g.add_argument("--features", type=name_list, metavar="COLS", help="comma-separated numeric feature columns")
    g.add_argument("--bounds", metavar="SPEC", help="public feature bounds: name=lo:hi,... or lo:hi,... in order")
    g.add_argument("--benefit-bounds", metavar="LO:HI",
                   help="public bounds of the benefit (values outside are clipped); write --benefit-bounds=-5:5 "
                        "when LO is negative (required for one stage)")
    g.add_argument("--weights-upper-bound", type=float, metavar="W",
                   help="public bound W on (benefit - LO) / P(A | x); larger weights are clipped")
    prop = g.add_mutually_exclusive_group(required=True)
    prop.add_argument("--propensity", metavar="P",
                      help="P(treatment = +1) of a randomised trial; with three or more arms the design's "
                           "probabilities, arm=P,arm=P,... naming every arm, or 1/K as a number")
    prop.add_argument("--propensity-model", choices=("logistic",),
                      help="release a DP logistic propensity model on the learning part")
    g.add_argument("--logit-bound", type=float, default=math.log(9.0), metavar="M",
                   help="propensity model: logits clipped to [-M, M] (default log 9: propensities in [0.1, 0.9])")
    g.add_argument("--propensity-gamma", type=float, metavar="G",
                   help="propensity model: regularisation (default sqrt(n_learning / epsilon_propensity))")
    p = parser.add_argument_group("privacy and model")
    p.add_argument("--total-epsilon", type=float, required=True, metavar="E", help="total privacy budget (> 0)")
    p.add_argument("--budget-split", metavar="SPEC", default="",
                   help="shares, e.g. propensity=0.2,selection=0.2,variance=0.3,evaluation_fraction=0.5")
    p.add_argument("--gamma", type=float, metavar="G",
                   help="fix gamma in advance (default: DPOWL's public rule in n, epsilon, d and W; no budget)")
    p.add_argument("--gammas", metavar="LIST", default=None,
                   help="choose gamma privately among these candidates (output-perturbation fits: the rule then "
                        "uses the paper's mechanism; e.g. 20,60,200,600,2000)")
    add_mechanism_options(p)
    p.add_argument("--level", type=float, default=0.95, metavar="L", help="confidence level (default: 0.95)")
    p.add_argument("--labels", metavar="PLUS,MINUS", help="names of the arms coded +1 and -1")
    p.add_argument("--seed", type=int, default=None, metavar="S",
                   help="seed every random draw (reproduction and tests only: a known seed reveals the noise)")
    from .analyze_regime import add_stage_options

    add_stage_options(parser)
    add_disclosure_options(parser)
    parser.add_argument("--out", type=Path, required=True, metavar="DIR", help="output folder")
    parser.set_defaults(func=run)
    return parser


def _benefit_bounds(text: str):
    parts = str(text).split(":")
    try:
        lo, hi = (float(v) for v in parts)
    except ValueError:
        raise ValueError(f"--benefit-bounds must be LO:HI with two numbers, got {text!r}.") from None
    if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
        raise ValueError(f"--benefit-bounds must satisfy LO < HI (finite), got {text!r}.")
    return lo, hi


def _gammas(text: str):
    from ._common import float_list

    try:
        values = float_list(text)
    except argparse.ArgumentTypeError as exc:
        raise ValueError(f"--gammas: {exc}") from None
    bad = [v for v in values if not (math.isfinite(v) and v > 0)]
    if bad:
        raise ValueError(f"--gammas must hold numbers in (0, inf), got {bad[0]!r} in {text!r}.")
    return values


def _data(args):
    """OWLData, the arm names and the benefit's scale from the options (nothing public is read off the data)."""
    from ..analysis import BenefitScale
    from ..datasets import load_cyp_guides
    from ..datasets.tabular import (owl_data_from_frame, parse_arm_propensity, read_table, treatment_codes,
                                    treatment_levels)

    if args.data_format == "cyp-guides":
        given = [flag for flag, v in (("--treatment", args.treatment), ("--treated", args.treated),
                                      ("--benefit", args.benefit), ("--features", args.features),
                                      ("--benefit-definition", args.benefit_definition)) if v is not None]
        if given:
            raise ValueError(f"--data-format cyp-guides codes the columns itself; drop {', '.join(given)}.")
        _two_arm_propensity(args)
        data = load_cyp_guides(args.data)
        if args.bounds is not None:
            from ..datasets.tabular import parse_bounds

            data = _replace(data, feature_bounds=parse_bounds(args.bounds, list(data.X.columns)))
        W = data.weights_upper_bound if args.weights_upper_bound is None else args.weights_upper_bound
        return _replace(data, weights_upper_bound=W), ("G (CYP2D6-guided)", "S (standard)"), \
            BenefitScale.known("los-hours")
    missing = [flag for flag, v in (("--treatment", args.treatment), ("--benefit", args.benefit),
                                    ("--features", args.features), ("--bounds", args.bounds),
                                    ("--weights-upper-bound", args.weights_upper_bound)) if v is None]
    if missing:
        raise ValueError(f"--data-format csv needs {', '.join(missing)} (public settings are never read off the "
                         "data).")
    frame = read_table(args.data)
    arms = treatment_levels(frame[args.treatment]) if args.treatment in frame.columns else []
    if len(arms) >= 3 and args.treated is None:  # K arms: the design's probabilities (1/K by default)
        if args.propensity_model is not None:
            raise ValueError(f"--propensity-model is a logistic model of two arms; {args.treatment!r} has {len(arms)} "
                             "arms: give the design's probabilities with --propensity arm=P,... (or leave it out "
                             "for 1/K each).")
        args.propensity = parse_arm_propensity(args.propensity, arms)
        propensity = args.propensity
    else:
        _two_arm_propensity(args)
        propensity = args.propensity if args.propensity is not None else 0.5  # the pipeline uses its own
    data = owl_data_from_frame(
        frame, treatment=args.treatment, benefit=args.benefit, features=args.features, bounds=args.bounds,
        weights_upper_bound=args.weights_upper_bound, propensity=propensity, treated=args.treated,
        source=str(args.data),
    )
    data = _replace(data, notes=tuple(n for n in data.notes if not n.startswith("propensity:")))
    scale = BenefitScale(definition=args.benefit_definition or f"benefit = column {args.benefit!r} (larger is better)")
    if len(arms) >= 3 and args.treated is None:
        return data, tuple(arms), scale
    _, plus, minus = treatment_codes(frame[args.treatment], args.treated)
    return data, (plus, minus), scale


def _two_arm_propensity(args) -> None:
    """``--propensity`` as P(treatment = +1) in (0, 1) for two arms (checked), or ``--propensity-model``."""
    if args.propensity is not None:
        try:
            args.propensity = float(args.propensity)
        except ValueError:
            raise ValueError(f"--propensity must be a number P(treatment = +1) with two arms, got "
                             f"{args.propensity!r}.") from None
        _positive("--propensity", args.propensity, upper=1.0)
    elif args.propensity_model is None:
        raise ValueError("give --propensity (P(treatment = +1) of a randomised trial) or --propensity-model.")


def _replace(data, **changes):
    from dataclasses import replace

    return replace(data, **changes)


def run(args: argparse.Namespace) -> int:
    from ..analysis import BudgetSplit, run_analysis
    from ..analysis_output import number_text, write_analysis
    from ..evaluation.private import PrivateArmValue
    from .analyze_regime import run_regime, stage_options_given

    start = time.perf_counter()
    if args.stages is not None:
        return run_regime(args)
    given = stage_options_given(args)
    if given:
        raise ValueError(f"{', '.join(given)} describe several stages and need --stages T (T >= 2 decision points).")
    E = _positive("--total-epsilon", args.total_epsilon)
    if args.benefit_bounds is None:
        raise ValueError("--benefit-bounds LO:HI is required (the public bounds of the benefit).")
    lo, hi = _benefit_bounds(args.benefit_bounds)
    if args.weights_upper_bound is not None:
        _positive("--weights-upper-bound", args.weights_upper_bound)
    if args.propensity is None:
        _positive("--logit-bound", args.logit_bound)
        if args.propensity_gamma is not None:
            _positive("--propensity-gamma", args.propensity_gamma)
    level = _positive("--level", args.level, upper=1.0)
    if args.huber_h is not None:
        _positive("--huber-h", args.huber_h)
    if args.gamma is not None:
        _positive("--gamma", args.gamma)
    gammas = None if args.gammas is None else _gammas(args.gammas)
    try:
        split = BudgetSplit.parse(args.budget_split)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"--budget-split {args.budget_split!r}: {exc}") from None
    data, coded, scale = _data(args)
    if len(coded) > 2 and args.labels:
        raise ValueError(f"--labels names the arms coded +1 and -1 of two; with {len(coded)} arms the labels are the "
                         "treatment column's values.")
    labels = coded if len(coded) > 2 else arm_labels(args.labels, coded)
    result = run_analysis(
        data.X, data.treatment, data.benefit, feature_bounds=data.feature_bounds, benefit_bounds=(lo, hi),
        weights_upper_bound=data.weights_upper_bound, total_epsilon=E, propensity=args.propensity,
        propensity_model=args.propensity_model, logit_bound=args.logit_bound,
        propensity_gamma=args.propensity_gamma, gamma=args.gamma, gammas=gammas,
        **mechanism_settings(args), level=level,
        split=split, feature_names=list(data.X.columns), treatment_labels=labels, public_n=args.public_n,
        benefit_scale=scale, random_state=args.seed,
    )
    paths = write_analysis(result, args.out, description=f"Data: {data.description}"
                           + (f"; {rows_text(data.n, True)}." if args.public_n else "."))
    v = result.value
    say_data(data, args)
    split_text = (f"{result.n_learning} learning rows, {result.n_evaluation} evaluation rows" if args.public_n
                  else f"a random {split.evaluation_fraction:g} of the rows for evaluation, the rest for learning")
    sel = result.gamma_selection
    say(f"split: {split_text}; "
        + (f"gamma = {result.gamma:.6g} (candidate {sel['selected']:g} of "
           f"{'/'.join(f'{g:g}' for g in sel['candidates'])} won the private selection)" if sel
           else result.model_content["tuning"]))
    say(f"rule released by {result.model.mechanism_description_}")
    say(result.weight_bound_note)
    if result.n_arms > 2:
        say(f"released rule ({result.n_arms} arms: {', '.join(labels)}; the arm a with the largest score "
            "<V_a, intercept + Theta x>): " + ", ".join(f"{n} {c:+.6g}" for n, c in result.coefficients()))
    else:
        say("released rule: " + ", ".join(f"{n} {c:+.6g}" for n, c in result.coefficients())
            + f"  (+1 = {labels[0]} where > 0, else {labels[1]})")
    say(f"benefit: {scale.definition}" + (f"; {scale.reading}" if scale.reading else ""))
    clinical = scale.value_text(v.value.estimate, v.value.ci_low, v.value.ci_high)
    say(f"value of the rule (mean benefit): {v.value.estimate:.4f}, {100 * level:g}% interval [{v.value.ci_low:.4f}, "
        f"{v.value.ci_high:.4f}]" + (f"; {clinical}" if clinical else ""))
    if isinstance(v, PrivateArmValue):  # K > 2 arms (two: a PrivateValue)
        say_arm_values(v, rule="rule", arm="single arm",
                       note=f" (the {result.n_arms} differences hold together at {100 * level:g}%)")
    else:
        clinical = scale.gain_text(v.difference.estimate, v.difference.ci_low, v.difference.ci_high)
        say(f"gain over the better single arm: {v.difference.estimate:.4f} [{v.difference.ci_low:.4f}, "
            f"{v.difference.ci_high:.4f}]" + (f"; {clinical}" if clinical else ""))
    led = result.ledger()
    say(f"privacy: {led['guarantee']}: epsilon {number_text(result.epsilon_spent)} of {number_text(E)} (learning "
        f"part {number_text(result.epsilon_learning)}, evaluation part {number_text(result.epsilon_evaluation)}; "
        f"{result.composition} composition); delta from the floating-point-safe rounding of each release "
        "(ledger.json)")
    say_diagnostics(args, data.diagnostics, result.diagnostics)
    if args.seed is not None:
        say(f"warning: seed {args.seed} makes every draw reproducible; a release made with a known seed is not "
            "private")
    say(f"wrote {', '.join(p.name for p in paths)} to {args.out} in {time.perf_counter() - start:.1f} s")
    return 0

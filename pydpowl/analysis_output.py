"""The files of a private analysis: model.json, ledger.json, value.json, report.md and two PNGs.

Everything written is a release or public: the rule (as :mod:`pydpowl.model_io`
writes it, readable by ``pydpowl predict``), the ledger (each release's
``(epsilon, delta)``), the value and its intervals on the benefit's stated
scale, and the public settings. The counts computed from the private data
(:attr:`AnalysisResult.diagnostics`) are not written; the sizes only when the
number of subjects was declared public (:attr:`AnalysisResult.public_n`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, List, Sequence, Union

from .analysis import AnalysisResult
from .evaluation.private import PrivateArmValue
from .plotting.analysis import plot_coefficients, plot_regime_value, plot_value

__all__ = ["write_analysis", "report_markdown", "write_regime_analysis", "regime_report_markdown"]


def _json(path: Path, content: Dict[str, Any]) -> Path:
    path.write_text(json.dumps(content, indent=2, ensure_ascii=False, allow_nan=False) + "\n", encoding="utf-8")
    return path


def write_analysis(result: AnalysisResult, out_dir: Union[str, Path], *, description: str = "") -> List[Path]:
    """Write ``model.json``, ``ledger.json``, ``value.json``, ``report.md``, ``value.png`` and ``coefficients.png``."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = [_json(out / "model.json", result.model_content), _json(out / "ledger.json", result.ledger()),
             _json(out / "value.json", result.value_summary())]
    pngs = [plot_value(result, out / "value.png"), plot_coefficients(result, out / "coefficients.png")]
    report = out / "report.md"
    report.write_text(report_markdown(result, description=description, figures=[p.name for p in pngs]),
                      encoding="utf-8")
    return paths + [report] + pngs


def _ci(iv) -> str:
    return f"{iv.estimate:.4f} [{iv.ci_low:.4f}, {iv.ci_high:.4f}]"


def _value(result: AnalysisResult, iv, *, gain: bool) -> str:
    """A value (or gain) with its interval, its scale and, for a known transform, its clinical reading."""
    scale = result.benefit_scale
    clinical = (scale.gain_text if gain else scale.value_text)(iv.estimate, iv.ci_low, iv.ci_high)
    return _ci(iv) + f" ({'difference in ' if gain else ''}mean benefit" + (f"; {clinical}" if clinical else "") + ")"


def _data_line(description: str, sizes: bool) -> str:
    """The report's data line: the description and, unless n was declared public, that n is not released."""
    return (description or "Data: the analyst's.") + ("" if sizes else " Number of subjects: n not released (not "
                                                      "declared public).")


def _ledger_table(led: Dict[str, Any], sizes: bool) -> List[str]:
    """The ledger's releases as a Markdown table (rows only when n was declared public)."""
    from .estimators.summary import delta_text

    return (["| release | epsilon | delta | part |" + (" rows |" if sizes else ""),
             "|---|---|---|---|" + ("---|" if sizes else "")]
            + [f"| {r['name']} | {number_text(r['epsilon'])} | {delta_text(r['delta'])} | {r['part']} |"
               + (f" {r['rows']} |" if sizes else "") for r in led["releases"]])


def number_text(x: float) -> str:
    """A budget as given: ``2``, ``1.2`` (the shortest repr; integers without ``.0``)."""
    text = repr(float(x))
    return text[:-2] if text.endswith(".0") else text


def gamma_text(result: AnalysisResult) -> str:
    """Which gamma the rule used and, when it was chosen privately, which candidate won."""
    sel = result.gamma_selection
    if sel is None:
        return result.model_content["tuning"]  # fixed in advance, or DPOWL's public rule (no budget either way)
    cands = ", ".join(f"**{g:g}**" if g == sel["selected"] else f"{g:g}" for g in sel["candidates"])
    return (f"gamma candidate **{sel['selected']:g}** won the private selection among {cands} (exponential "
            f"mechanism on the rule's value); transferred to gamma = {result.gamma:.6g} for the final fit "
            "(gamma ~ sqrt(n / epsilon))")


def report_markdown(result: AnalysisResult, *, description: str = "", figures: Sequence[str] = ()) -> str:
    """The report: the answer first, then the rule, the budget and the public settings."""
    from .estimators.summary import delta_text

    v = result.value
    plus, minus = result.treatment_labels[0], result.treatment_labels[-1]
    level = f"{100 * result.level:g}%"
    led = result.ledger()
    eps, delta = result.privacy_spent
    sizes = result.public_n
    lines = [
        "# Private treatment-rule analysis",
        "",
        _data_line(description, sizes),
        "",
        "## The answer",
        "",
        f"Benefit: {result.benefit_scale.definition}. Each value below is a mean benefit on that scale"
        + (f"; {result.benefit_scale.reading}." if result.benefit_scale.reading else "."),
        "",
        f"* **Value of the released rule** (mean benefit if everyone were treated by it), {level} interval: "
        f"{_value(result, v.value, gain=False)}.",
        *(_arm_answer(result, v, level) if isinstance(v, PrivateArmValue) else [  # K > 2 arms, or two
            f"* **Gain over giving everyone the better single arm** (difference in mean benefit): "
            f"{_value(result, v.difference, gain=True)}.",
            f"* Against everyone on {plus}: {_value(result, v.versus_plus, gain=True)}; against everyone on "
            f"{minus}: {_value(result, v.versus_minus, gain=True)} (both intervals hold together at {level})."]),
        f"* Privacy: the analysis is **({eps:g}, {delta_text(delta)})-DP** (total epsilon allowed "
        f"{result.total_epsilon:g}); delta comes from the floating-point-safe rounding of each release (see the "
        "ledger below).",
        "",
        "The value is estimated on the evaluation part, which the rule never saw; the intervals account for "
        "the sampling error and for the privacy noise. They assume the propensities are right "
        + (f"(known: a randomised trial with {_design_text(result.arm_probabilities)})."
           if result.arm_probabilities is not None else
           "(known: a randomised trial with P(+1) = " + f"{result.propensity:.6g})." if result.propensity is not None
           else "(here a released logistic model; its own estimation error is not covered)."),
        "",
        "## The rule",
        "",
        (f"Recommend, among the {result.n_arms} arms {', '.join(result.treatment_labels)}, the arm a with the largest "
         "score `<V_a, intercept + Theta x>` (Theta: the K - 1 rows f1, f2, ... below; V_a: the arms' simplex "
         "vertices, written in model.json)" if result.n_arms > 2 else
         f"Recommend **{plus}** where the decision value `intercept + x'coef` is > 0, otherwise **{minus}**")
        + f" (`pydpowl predict --model model.json` applies it). Released by {result.model.mechanism_description_}. "
        f"{gamma_text(result)}.",
        "",
        "| coefficient | released value |",
        "|---|---|",
    ]
    lines += [f"| {name} | {value:.6g} |" for name, value in result.coefficients()]
    lines += ["", "## Privacy budget (ledger.json)", "", led["composition"] + ".", ""]
    lines += _ledger_table(led, sizes)
    parts = {p["name"]: p for p in led["parts"]}
    rows = {k: (f"{parts[k]['rows']} rows, " if sizes else "") for k in parts}
    lines += ["", f"Learning part: {rows['learning']}epsilon {number_text(parts['learning']['epsilon'])}; evaluation "
              f"part: {rows['evaluation']}epsilon {number_text(parts['evaluation']['epsilon'])}; the analysis is "
              f"({number_text(led['spent'])}, {delta_text(led['spent_delta'])})-DP (total epsilon allowed "
              f"{number_text(led['total_epsilon'])}). Epsilons are the exact shares of the total given; delta is that "
              "of the "
              "floating-point-safe rounding of each release under the sampler model of docs/privacy_audit.md "
              "(column delta_source of ledger.json), rounded up here.", ""]
    lo, hi = result.benefit_bounds
    mc = result.model_content if result.n_arms == 2 else result.model_content["stages"][0]
    fb = mc["feature_bounds"]
    bounds = ", ".join(f"{n} [{a:g}, {b:g}]" for n, a, b in zip(mc["feature_names"], fb["lower"], fb["upper"]))
    split = (f"{result.n_evaluation} of {result.n} rows for evaluation" if sizes else
             f"a random {result.evaluation_fraction:g} of the rows for evaluation")
    lines += ["## Public settings", "",
              f"* Features and bounds: {bounds} (values outside are clipped by design).",
              f"* Benefit bounds [{lo:g}, {hi:g}] (clipped by design); {result.weight_bound_note}.",
              _propensity_line(result, plus),
              f"* Huber h = {mc['huber_h']:g}; split: {split}.",
              "", "## How to read the numbers", "",
              "Every number here is a differentially private release or a public setting. Counts computed from "
              "the private data (subjects per arm, values clipped by design) are not reported; the number of "
              "subjects only when the analyst declared it public. See docs/analysis.md for the derivations.", ""]
    for name in figures:
        lines += [f"![{name}]({name})", ""]
    return "\n".join(lines)


def _propensity_line(result: AnalysisResult, plus: str) -> str:
    """The public settings' line on the propensity: the design's (known), or the released logistic model."""
    if result.arm_probabilities is not None:
        return f"* Propensity: {_design_text(result.arm_probabilities)} (known)."
    if result.propensity is not None:
        return f"* Propensity: P({plus}) = {result.propensity:.6g} (known)."
    pm = result.propensity_model
    if pm is None:
        raise ValueError("the analysis holds no propensity: neither known probabilities nor a released model.")
    return (f"* Propensity: logistic model released with epsilon {result.epsilons['propensity']:.6g}, logits "
            f"clipped to [-{pm.logit_bound:.4g}, {pm.logit_bound:.4g}] (propensities >= {pm.propensity_floor:.4g}); "
            f"intercept {pm.intercept_:.4g}, coefficients "
            + ", ".join(f"{n} {c:.4g}" for n, c in zip(result.feature_names, pm.coef_)) + ".")


def _design_text(arm_probabilities: Dict[str, float]) -> str:
    return ", ".join(f"P({a}) = {q:.6g}" for a, q in arm_probabilities.items())


def _arm_answer(result: AnalysisResult, v: PrivateArmValue, level: str) -> List[str]:
    """The answer's lines with K arms: the gain over the best arm, then each arm's value and the rule's gain."""
    lines = [f"* **Gain over giving everyone the best single arm** (difference in mean benefit): "
             f"{_value(result, v.difference, gain=True)}."]
    lines += [f"* Everyone on {arm}: value {_value(result, v.arm_values[arm], gain=False)}; the rule minus it: "
              f"{_value(result, v.versus[arm], gain=True)}." for arm in v.arms]
    lines.append(f"* The {result.n_arms} differences hold together at {level}; each arm's value interval holds at "
                 f"{level} on its own.")
    return lines


# ---- a multi-stage regime (pydpowl.analysis_regime) --------------------------------------------------------------

def write_regime_analysis(result: Any, out_dir: Union[str, Path], *, description: str = "") -> List[Path]:
    """The files of a regime analysis (:class:`pydpowl.analysis_regime.RegimeAnalysisResult`): ``model.json``
    (the whole regime, for ``pydpowl predict``), ``ledger.json`` (one release per stage), ``value.json``,
    ``report.md`` and ``value.png``. Only releases and public settings; sizes only when declared public."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = [_json(out / "model.json", result.model_content), _json(out / "ledger.json", result.ledger()),
             _json(out / "value.json", result.value_summary())]
    png = plot_regime_value(result, out / "value.png")
    report = out / "report.md"
    report.write_text(regime_report_markdown(result, description=description, figures=[png.name]), encoding="utf-8")
    return paths + [report, png]


def regime_report_markdown(result: Any, *, description: str = "", figures: Sequence[str] = ()) -> str:
    """The regime's report: the answer (values with intervals), the stages' rules, the ledger, the settings."""
    from .estimators.summary import delta_text

    v = result.value
    level = f"{100 * result.level:g}%"
    led = result.ledger()
    eps, delta = result.privacy_spent
    sizes = result.public_n
    T = result.n_stages
    lines = [
        f"# Private analysis of a {T}-stage treatment regime",
        "",
        _data_line(description, sizes),
        "",
        "## The answer",
        "",
        "Outcome: the total reward, each stage's reward clipped to its public bounds. Treatment sequences are "
        "written stage 1 | stage 2" + (" | ..." if T > 2 else "") + ".",
        "",
        f"* **Value of the released regime** (mean total reward if everyone followed it), {level} interval: "
        f"{_ci(v.value)}.",
        f"* **Gain over the best fixed treatment sequence**: {_ci(v.difference)}.",
    ]
    lines += [f"* Everyone on {seq}: value {_ci(v.arm_values[seq])}; the regime minus it: {_ci(v.versus[seq])}."
              for seq in v.arms]
    lines += [f"* The {len(v.arms)} differences hold together at {level}; each sequence's value interval holds at "
              f"{level} on its own.",
              f"* Privacy: the analysis is **({eps:g}, {delta_text(delta)})-DP** (total epsilon allowed "
              f"{result.total_epsilon:g}); delta comes from the floating-point-safe rounding of each release.",
              "",
              "The values are estimated on the evaluation part, which the regime never saw (inverse probability "
              "weighting of the subjects whose whole received sequence is the one evaluated); the intervals account "
              "for the sampling error and for the privacy noise, and assume the design's propensities below.",
              "",
              "## The regime",
              "",
              "One rule per stage, learnt last stage first (backward OWL), each on its own history columns; "
              "`pydpowl predict --model model.json` applies them stage by stage. With two arms a stage recommends "
              "the second arm where `intercept + x'coef` > 0; with more, the arm a with the largest "
              "`<V_a, intercept + Theta x>` (vertices in model.json).",
              ""]
    for k, st in enumerate(result.model_content["stages"]):
        arms = ", ".join(str(a) for a in st["arms"])
        mech = result.regime.stages_[k]
        lines += [f"### Stage {k + 1}: arms {arms}",
                  "",
                  f"Released by {mech.mechanism} perturbation"
                  + (" with residual weights (a private mean baseline first)" if mech.residual else "")
                  + f", epsilon {number_text(result.stage_epsilons[k])}, gamma {st['gamma']:.6g}, Huber h "
                  f"{st['huber_h']:g}, weight bound W = {st['weights_upper_bound']:.6g}.",
                  "",
                  "| coefficient | " + " | ".join(f"f{j + 1}" for j in range(len(st["coef"]))) + " |",
                  "|---|" + "---|" * len(st["coef"])]
        rows = [("intercept", st["intercept"])] + [(name, [c[j] for c in st["coef"]])
                                                   for j, name in enumerate(st["feature_names"])]
        lines += [f"| {name} | " + " | ".join(f"{x:.6g}" for x in values) + " |" for name, values in rows]
        lines.append("")
    lines += ["## Privacy budget (ledger.json)", "", led["composition"] + ".", "",
              "The rule's share is divided across the stages in the ratios "
              + ":".join(number_text(s) for s in led["stage_split"])
              + (" (chosen by the analyst, public)." if result.stage_split is not None else " (equal, the default)."),
              ""]
    lines += _ledger_table(led, sizes)
    lines += ["", f"The analysis is ({number_text(led['spent'])}, {delta_text(led['spent_delta'])})-DP (total "
              f"epsilon allowed {number_text(led['total_epsilon'])}).", ""]
    split = (f"{result.n_evaluation} of {result.n} rows for evaluation" if sizes else
             "a random part of the rows for evaluation (sizes not released)")
    lines += ["## Public settings", ""]
    for k, st in enumerate(result.model_content["stages"]):
        fb = st["feature_bounds"]
        bounds = ", ".join(f"{n} [{a:g}, {b:g}]" for n, a, b in zip(st["feature_names"], fb["lower"], fb["upper"]))
        lo, hi = result.reward_bounds[k]
        design = ", ".join(f"P({a}) = {q:.6g}" for a, q in result.arm_probabilities[k].items())
        lines.append(f"* Stage {k + 1}: history {bounds}; reward bounds [{lo:g}, {hi:g}]; design {design} "
                     "(values outside the bounds are clipped by design).")
    lines += [f"* Split: {split}.", "", "## How to read the numbers", "",
              "Every number here is a differentially private release or a public setting. Counts computed from the "
              "private data (followers of the later rules, values clipped by design) are not reported; the number of "
              "subjects only when the analyst declared it public. See docs/multiarm_multistage.md.", ""]
    for name in figures:
        lines += [f"![{name}]({name})", ""]
    return "\n".join(lines)

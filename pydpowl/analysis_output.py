"""The files of a private analysis: model.json, ledger.json, value.json, report.md and two PNGs.

Everything written is a release or public: the rule (as :mod:`pydpowl.model_io`
writes it, readable by ``pydpowl predict``), the ledger, the value and its
intervals, and the public settings. The clip counts computed from the private
data (:attr:`AnalysisResult.diagnostics`) are not written.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Dict, List, Union

from ._plotting import pyplot, save_figure
from .analysis import AnalysisResult

__all__ = ["write_analysis", "report_markdown", "plot_value", "plot_coefficients"]


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


def report_markdown(result: AnalysisResult, *, description: str = "", figures: List[str] = ()) -> str:
    """The report: the answer first, then the rule, the budget and the public settings."""
    v = result.value
    plus, minus = result.treatment_labels
    level = f"{100 * result.level:g}%"
    led = result.ledger()
    lines = [
        "# Private treatment-rule analysis",
        "",
        description or f"{result.n} subjects",
        "",
        "## The answer",
        "",
        f"* **Value of the released rule** (mean benefit if everyone were treated by it): {_ci(v.value)} "
        f"({level} interval).",
        f"* **Gain over giving everyone the better single arm**: {_ci(v.difference)}.",
        f"* Against everyone on {plus}: {_ci(v.versus_plus)}; against everyone on {minus}: {_ci(v.versus_minus)} "
        f"(both intervals hold together at {level}).",
        f"* Total privacy budget: epsilon = {result.total_epsilon:g} (spent {result.epsilon_spent:g}).",
        "",
        "The value is estimated on the evaluation part, which the rule never saw; the intervals account for "
        "the sampling error and for the privacy noise. They assume the propensities are right "
        + ("(known: a randomised trial with P(+1) = " + f"{result.propensity:.6g})." if result.propensity is not None
           else "(here a released logistic model; its own estimation error is not covered)."),
        "",
        "## The rule",
        "",
        f"Recommend **{plus}** where the decision value `intercept + x'coef` is > 0, otherwise **{minus}** "
        f"(`pydpowl predict --model model.json` applies it). Released by {result.model.mechanism_description_}. "
        f"gamma = {result.gamma:.6g}; {result.model_content['tuning']}.",
        "",
        "| coefficient | released value |",
        "|---|---|",
    ]
    lines += [f"| {name} | {value:.6g} |" for name, value in result.coefficients()]
    lines += ["", "## Privacy budget (ledger.json)", "", led["composition"] + ".", "",
              "| release | epsilon | part | rows |", "|---|---|---|---|"]
    lines += [f"| {r['name']} | {r['epsilon']:.6g} | {r['part']} | {r['rows']} |" for r in led["releases"]]
    lines += ["", f"Learning part: {result.n_learning} rows, epsilon {result.epsilon_learning:.6g}; evaluation "
              f"part: {result.n_evaluation} rows, epsilon {result.epsilon_evaluation:.6g}; the analysis is "
              f"{result.epsilon_spent:.6g}-DP (total allowed {result.total_epsilon:g}).", ""]
    lo, hi = result.benefit_bounds
    mc = result.model_content
    bounds = ", ".join(f"{n} [{a:g}, {b:g}]" for n, a, b in zip(mc["feature_names"], mc["feature_bounds"]["lower"],
                                                                 mc["feature_bounds"]["upper"]))
    lines += ["## Public settings", "",
              f"* Features and bounds: {bounds} (values outside are clipped by design).",
              f"* Benefit bounds [{lo:g}, {hi:g}] (clipped by design); weight bound W = {mc['weights_upper_bound']:.6g}.",
              (f"* Propensity: P({plus}) = {result.propensity:.6g} (known)." if result.propensity is not None else
               f"* Propensity: logistic model released with epsilon {result.epsilons['propensity']:.6g}, logits "
               f"clipped to [-{result.propensity_model.logit_bound:.4g}, {result.propensity_model.logit_bound:.4g}] "
               f"(propensities >= {result.propensity_model.propensity_floor:.4g}); intercept "
               f"{result.propensity_model.intercept_:.4g}, coefficients "
               + ", ".join(f"{n} {c:.4g}" for n, c in zip(result.feature_names, result.propensity_model.coef_))
               + "."),
              f"* Huber h = {mc['huber_h']:g}; split: {result.n_evaluation} of {result.n} rows for evaluation.",
              "", "## How to read the numbers", "",
              "Every number here is a differentially private release or a public setting. Counts of clipped "
              "values are computed from the private data and are therefore not reported. See docs/analysis.md for "
              "the derivations.", ""]
    for name in figures:
        lines += [f"![{name}]({name})", ""]
    return "\n".join(lines)


def plot_value(result: AnalysisResult, path: Union[str, Path]) -> Path:
    """The value with its interval, and the gains over each single arm and the better one."""
    plt = pyplot()
    v = result.value
    plus, minus = result.treatment_labels
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8), gridspec_kw={"width_ratios": [1, 1.6]})
    ax = axes[0]
    ax.errorbar([0], [v.value.estimate], yerr=[[v.value.estimate - v.value.ci_low], [v.value.ci_high - v.value.estimate]],
                fmt="o", capsize=6, color="tab:blue")
    ax.set_xticks([0])
    ax.set_xticklabels(["released rule"])
    ax.set_ylabel("value (mean benefit)")
    ax.set_title(f"value, {100 * result.level:g}% interval")
    ax = axes[1]
    items = [("vs better arm", v.difference), (f"vs all {plus}", v.versus_plus), (f"vs all {minus}", v.versus_minus)]
    for k, (label, iv) in enumerate(items):
        ax.errorbar([iv.estimate], [k], xerr=[[iv.estimate - iv.ci_low], [iv.ci_high - iv.estimate]], fmt="o",
                    capsize=5, color="tab:orange" if k == 0 else "tab:grey")
    ax.axvline(0.0, color="k", lw=0.8, ls="--")
    ax.set_yticks(range(len(items)))
    ax.set_yticklabels([label for label, _ in items])
    ax.invert_yaxis()
    ax.set_xlabel("gain in value")
    ax.set_title("gain of the rule")
    fig.suptitle(f"private analysis, total epsilon = {result.total_epsilon:g}", fontsize=9)
    fig.tight_layout()
    return save_figure(fig, path)


def plot_coefficients(result: AnalysisResult, path: Union[str, Path]) -> Path:
    """The released coefficients, each times its feature's public range (comparable units)."""
    plt = pyplot()
    mc = result.model_content
    names = list(mc["feature_names"])
    spans = [b - a for a, b in zip(mc["feature_bounds"]["lower"], mc["feature_bounds"]["upper"])]
    effects = [c * s for c, s in zip(mc["coef"], spans)]
    fig, ax = plt.subplots(figsize=(6.4, 0.5 * len(names) + 2.0))
    colours = ["tab:green" if e > 0 else "tab:red" for e in effects]
    ax.barh(range(len(names)), effects, color=colours)
    ax.set_yticks(range(len(names)))
    ax.set_yticklabels(names)
    ax.invert_yaxis()
    ax.axvline(0.0, color="k", lw=0.8)
    plus, minus = result.treatment_labels
    ax.set_xlabel("coefficient x (upper - lower bound)")
    ax.set_title(f"released rule: > 0 favours {plus}\n(intercept {mc['intercept']:.3g}; gamma {result.gamma:.3g})",
                 fontsize=9)
    if not any(math.isfinite(e) and e != 0 for e in effects):
        ax.text(0.5, 0.5, "all coefficients are 0", transform=ax.transAxes, ha="center")
    fig.tight_layout()
    return save_figure(fig, path)

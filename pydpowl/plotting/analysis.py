"""The figures of a private analysis (``pydpowl analyze``, :func:`pydpowl.analysis_output.write_analysis`).

Drawn from the analysis' releases and public settings only (an
:class:`~pydpowl.analysis_base.AnalysisResult`): the value with its interval
and the rule's gains, and the released coefficients on comparable scales; for a
multi-stage regime (:func:`pydpowl.analysis_output.write_regime_analysis`) the
values of the regime and of each fixed treatment sequence and the regime's gains.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Union

from ..analysis_base import AnalysisResult
from .figure import pyplot, save_figure

__all__ = ["plot_value", "plot_coefficients", "plot_regime_value"]


def plot_value(result: AnalysisResult, path: Union[str, Path]) -> Path:
    """The value with its interval, and the gains over each single arm and the better one, on the benefit's scale
    (stated on the axes, with the clinical reading of a known transform)."""
    import textwrap

    plt = pyplot()
    v: Any = result.value  # a PrivateValue, or with three or more arms a PrivateArmValue
    scale = result.benefit_scale
    plus, minus = result.treatment_labels[0], result.treatment_labels[-1]
    fig, axes = plt.subplots(1, 2, figsize=(10, 4.4), gridspec_kw={"width_ratios": [1, 1.6]})
    ax = axes[0]
    shown = [("released rule", v.value)] + ([(f"all {a}", v.arm_values[a]) for a in v.arms]
                                            if result.n_arms > 2 else [])
    for k, (_, iv) in enumerate(shown):
        ax.errorbar([k], [iv.estimate], yerr=[[iv.estimate - iv.ci_low], [iv.ci_high - iv.estimate]], fmt="o",
                    capsize=6, color="tab:blue" if k == 0 else "tab:grey")
    ax.set_xticks(range(len(shown)))
    ax.set_xticklabels([label for label, _ in shown], fontsize=8)
    ax.set_ylabel("value = mean benefit\n" + "\n".join(textwrap.wrap(f"({scale.definition})", 40)), fontsize=8)
    ax.set_title(f"value, {100 * result.level:g}% interval")
    clinical = scale.value_text(v.value.estimate, v.value.ci_low, v.value.ci_high)
    if clinical:
        ax.text(0.5, -0.16, "\n".join(textwrap.wrap(clinical, 42)), transform=ax.transAxes, ha="center", va="top",
                fontsize=7)
    ax = axes[1]
    if result.n_arms > 2:
        items = [("vs best arm", v.difference)] + [(f"vs all {a}", v.versus[a]) for a in v.arms]
    else:
        items = [("vs better arm", v.difference), (f"vs all {plus}", v.versus_plus),
                 (f"vs all {minus}", v.versus_minus)]
    for k, (label, iv) in enumerate(items):
        ax.errorbar([iv.estimate], [k], xerr=[[iv.estimate - iv.ci_low], [iv.ci_high - iv.estimate]], fmt="o",
                    capsize=5, color="tab:orange" if k == 0 else "tab:grey")
    ax.axvline(0.0, color="k", lw=0.8, ls="--")
    ax.set_yticks(range(len(items)))
    ax.set_yticklabels([label for label, _ in items])
    ax.invert_yaxis()
    ax.set_xlabel("gain in value (difference in mean benefit)")
    ax.set_title("gain of the rule")
    clinical = scale.gain_text(v.difference.estimate, v.difference.ci_low, v.difference.ci_high)
    if clinical:
        ax.text(0.5, -0.2, "vs better arm: " + clinical, transform=ax.transAxes, ha="center", va="top", fontsize=7)
    sel = result.gamma_selection
    chosen = (f"gamma {result.gamma:.3g} (candidate {sel['selected']:g} won the private selection)" if sel else
              f"gamma {result.gamma:.3g} (fixed)")
    fig.suptitle(f"private analysis, total epsilon = {result.total_epsilon:g}; {chosen}", fontsize=9)
    fig.tight_layout()
    return save_figure(fig, path)


def plot_coefficients(result: AnalysisResult, path: Union[str, Path]) -> Path:
    """The released coefficients, each times its feature's public range (comparable units)."""
    plt = pyplot()
    if result.n_arms > 2:
        return _plot_arm_coefficients(result, path)
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


def _plot_arm_coefficients(result: AnalysisResult, path: Union[str, Path]) -> Path:
    """A K-arm rule's coefficients, row by row of Theta (f1, f2, ...), each times its feature's public range."""
    import numpy as np

    plt = pyplot()
    st = result.model_content["stages"][0]
    names = list(st["feature_names"])
    spans = np.array([b - a for a, b in zip(st["feature_bounds"]["lower"], st["feature_bounds"]["upper"])])
    coef = np.asarray(st["coef"]) * spans
    rows = coef.shape[0]
    fig, ax = plt.subplots(figsize=(6.4, 0.5 * len(names) * rows / 2 + 2.0))
    height = 0.8 / rows
    for r in range(rows):
        ax.barh(np.arange(len(names)) + r * height, coef[r], height=height, label=f"f{r + 1}")
    ax.set_yticks(np.arange(len(names)) + 0.4 - height / 2)
    ax.set_yticklabels(names)
    ax.invert_yaxis()
    ax.axvline(0.0, color="k", lw=0.8)
    ax.legend(fontsize=8)
    ax.set_xlabel("coefficient x (upper - lower bound)")
    ax.set_title(f"released {result.n_arms}-arm rule: the arm a with the largest <V_a, f(x)>\n(gamma "
                 f"{result.gamma:.3g}; arms {', '.join(result.treatment_labels)})", fontsize=9)
    fig.tight_layout()
    return save_figure(fig, path)


def plot_regime_value(result: Any, path: Union[str, Path]) -> Path:
    """The regime's value and each fixed sequence's with their intervals, and the regime's gains."""
    plt = pyplot()
    v = result.value
    fig, axes = plt.subplots(1, 2, figsize=(10, 4.4))
    shown = [("regime", v.value)] + [(seq, v.arm_values[seq]) for seq in v.arms]
    ax = axes[0]
    for k, (_, iv) in enumerate(shown):
        ax.errorbar([k], [iv.estimate], yerr=[[iv.estimate - iv.ci_low], [iv.ci_high - iv.estimate]], fmt="o",
                    capsize=6, color="tab:blue" if k == 0 else "tab:grey")
    ax.set_xticks(range(len(shown)))
    ax.set_xticklabels([label for label, _ in shown], fontsize=7, rotation=30)
    ax.set_ylabel("value = mean total reward")
    ax.set_title(f"value, {100 * result.level:g}% interval")
    ax = axes[1]
    items = [("vs best sequence", v.difference)] + [(f"vs all {seq}", v.versus[seq]) for seq in v.arms]
    for k, (_, iv) in enumerate(items):
        ax.errorbar([iv.estimate], [k], xerr=[[iv.estimate - iv.ci_low], [iv.ci_high - iv.estimate]], fmt="o",
                    capsize=5, color="tab:orange" if k == 0 else "tab:grey")
    ax.axvline(0.0, color="k", lw=0.8, ls="--")
    ax.set_yticks(range(len(items)))
    ax.set_yticklabels([label for label, _ in items], fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel("gain in value (difference in mean total reward)")
    ax.set_title("gain of the regime")
    fig.suptitle(f"private {result.n_stages}-stage regime analysis, total epsilon = {result.total_epsilon:g}",
                 fontsize=9)
    fig.tight_layout()
    return save_figure(fig, path)

"""PNG figures for the command-line studies (matplotlib, Agg backend, imported lazily)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Dict, Union

from .figure import pyplot, save_figure

__all__ = ["plot_case_study", "case_study_figure", "plot_simulation", "plot_gamma_sensitivity",
           "plot_tuning_curves", "plot_utility", "plot_multi_study"]


def plot_case_study(result, path: Union[str, Path]) -> Path:
    """:func:`case_study_figure` written as a PNG at ``path``."""
    return save_figure(case_study_figure(result), path)


def case_study_figure(result):
    """Value (mean +- SD over DP runs) and concordance (mean, bars from the runs' 2.5% to 97.5% quantiles,
    within [0, 1]) against epsilon; non-private as a line."""
    plt = pyplot()
    table = result.table
    finite = table[table.epsilon != math.inf]
    nonpriv = table[table.epsilon == math.inf]
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    ax = axes[0]
    ax.errorbar(finite.epsilon, finite.value_mean, yerr=finite.value_sd, marker="o", capsize=3,
                label="DP-OWL (mean ± SD)")
    if len(nonpriv):
        ax.axhline(float(nonpriv.value_mean.iloc[0]), color="k", ls="--", label="non-private")
    ax.set_xscale("log")
    ax.set_xlabel("privacy budget ε")
    ax.set_ylabel("empirical treatment value")
    ax.set_title(f"value vs ε (γ = {result.gamma:g}, {result.n_runs} runs)")
    ax.legend()
    ax = axes[1]
    if "concordance_lo" in finite:  # quantiles of the runs: inside [0, 1]
        lo, hi = finite.concordance_lo, finite.concordance_hi
        label = "DP-OWL (mean; bars: 2.5%-97.5% of runs)"
    else:  # a table from an older run: mean +- SD, cut at [0, 1]
        lo = (finite.concordance_mean - finite.concordance_sd).clip(0, 1)
        hi = (finite.concordance_mean + finite.concordance_sd).clip(0, 1)
        label = "DP-OWL (mean ± SD, cut at [0, 1])"
    yerr = [(finite.concordance_mean - lo).clip(lower=0), (hi - finite.concordance_mean).clip(lower=0)]
    ax.errorbar(finite.epsilon, finite.concordance_mean, yerr=yerr, marker="o", capsize=3, label=label)
    ax.set_xscale("log")
    ax.set_ylim(0, 1.05)
    ax.set_xlabel("privacy budget ε")
    ax.set_ylabel("concordance with non-private rule")
    ax.legend(loc="lower right")
    fig.suptitle(result.description, fontsize=9)
    fig.tight_layout()
    return fig


def _inf_position(finite_eps) -> float:
    return float(max(finite_eps)) * 4.0 if len(finite_eps) else 1.0


def plot_simulation(table, path: Union[str, Path], *, title: str = "") -> Path:
    """Fig. 1 style: accuracy and value against epsilon, one line per n, 95 % CIs as bands.

    The non-private reference (epsilon = inf) is drawn as a marker at the right
    end of the log axis, labelled "inf".
    """
    plt = pyplot()
    finite_eps = sorted(e for e in table.epsilon.unique() if e != math.inf)
    x_inf = _inf_position(finite_eps)
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for k, n in enumerate(sorted(table.n.unique())):
        sub = table[table.n == n].sort_values("epsilon")
        fin, inf = sub[sub.epsilon != math.inf], sub[sub.epsilon == math.inf]
        c = colours[k % len(colours)]
        for ax, col, scale in ((axes[0], "accuracy", 100.0), (axes[1], "value", 1.0)):
            ax.plot(fin.epsilon, scale * fin[f"{col}_mean"], marker="o", ms=3, color=c, label=f"n = {n}")
            ax.fill_between(fin.epsilon, scale * fin[f"{col}_lo"], scale * fin[f"{col}_hi"], color=c, alpha=0.15)
            if len(inf):
                ax.errorbar([x_inf], scale * inf[f"{col}_mean"],
                            yerr=[scale * (inf[f"{col}_mean"] - inf[f"{col}_lo"]),
                                  scale * (inf[f"{col}_hi"] - inf[f"{col}_mean"])],
                            marker="s", ms=4, color=c, capsize=2)
    for ax, label in ((axes[0], "accuracy vs optimal rule (%)"), (axes[1], "empirical value (test set)")):
        ax.set_xscale("log")
        ticks = [e for e in finite_eps] + [x_inf]
        ax.set_xticks(ticks)
        ax.set_xticklabels([f"{e:g}" for e in finite_eps] + ["inf"], rotation=60, fontsize=7)
        ax.minorticks_off()
        ax.set_xlabel("privacy budget ε (inf = non-private)")
        ax.set_ylabel(label)
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=7, loc="lower right")
    fig.suptitle(title or "DP-OWL on the paper's synthetic design (mean and 95% CI)", fontsize=10)
    fig.tight_layout()
    return save_figure(fig, path)


def plot_gamma_sensitivity(frame, path: Union[str, Path], *, title: str = "") -> Path:
    """Fig. 2 style: mean value and share allocated to +1 against gamma, one line per epsilon."""
    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    for eps in sorted(frame.epsilon.unique()):
        sub = frame[frame.epsilon == eps].sort_values("gamma")
        style: Dict[str, Any] = dict(ls="--", color="k") if eps == math.inf else dict(marker="o", ms=3)
        label = "non-private" if eps == math.inf else f"ε = {eps:g}"
        axes[0].plot(sub.gamma, sub.value_mean, label=label, **style)
        axes[1].plot(sub.gamma, sub.share_plus_mean, label=label, **style)
    axes[0].set_ylabel("empirical value (mean over DP runs)")
    axes[1].set_ylabel("share allocated to +1 (mean)")
    axes[1].set_ylim(-0.02, 1.02)
    for ax in axes:
        ax.set_xscale("log")
        ax.set_xlabel("regularisation constant γ")
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=7)
    fig.suptitle(title or "sensitivity of DP-OWL to γ", fontsize=10)
    fig.tight_layout()
    return save_figure(fig, path)


def plot_tuning_curves(curves, path: Union[str, Path], *, metric: str = "value", max_panels: int = 12) -> Path:
    """Algorithm 2 curves: mean score +- 1 SE against gamma, one panel per n, one line per epsilon."""
    plt = pyplot()
    ns = sorted(curves.n.unique())[:max_panels]
    cols = min(len(ns), 4)
    rows = int(math.ceil(len(ns) / cols))
    fig, axes = plt.subplots(rows, cols, figsize=(3.4 * cols, 2.9 * rows), squeeze=False)
    for ax, n in zip(axes.ravel(), ns):
        sub = curves[curves.n == n]
        for eps in sorted(sub.epsilon.unique()):
            c = sub[sub.epsilon == eps].sort_values("gamma")
            line = ax.errorbar(c.gamma, c["mean"], yerr=c.se, marker="o", ms=2, capsize=1, lw=1,
                               label="inf" if eps == math.inf else f"{eps:g}")
            chosen = c[c.selected]
            ax.plot(chosen.gamma, chosen["mean"], marker="*", ms=9, color=line[0].get_color())
        ax.set_xscale("log")
        ax.set_title(f"n = {n}", fontsize=9)
        ax.set_xlabel("γ", fontsize=8)
        ax.set_ylabel(metric, fontsize=8)
        ax.tick_params(labelsize=7)
    for ax in axes.ravel()[len(ns):]:
        ax.axis("off")
    axes.ravel()[0].legend(title="ε", fontsize=6, title_fontsize=7)
    fig.suptitle("Algorithm 2: validation score by γ (star = chosen)", fontsize=10)
    fig.tight_layout()
    return save_figure(fig, path)


def plot_utility(table, path: Union[str, Path]) -> Path:
    """The utility study: regret against epsilon per mechanism, one panel per (design, n).

    Solid lines: each mechanism with its public gamma rule; dotted: the
    paper's mechanism and the default at their oracle gamma; grey lines: the
    non-private OWL rule (dashed) and the better single arm (dash-dot).
    """
    plt = pyplot()
    designs = list(dict.fromkeys(table.design))
    ns = sorted(table.n.unique())
    fig, axes = plt.subplots(len(designs), len(ns), figsize=(3.2 * len(ns), 2.8 * len(designs)), squeeze=False,
                             sharex=True)
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    mechs = [m for m in dict.fromkeys(table.mechanism) if m not in ("nonprivate", "best-arm")]
    for i, design in enumerate(designs):
        for j, n in enumerate(ns):
            ax = axes[i][j]
            cell = table[(table.design == design) & (table.n == n)]
            for k, mech in enumerate(mechs):
                for rule, style in (("public", "-"), ("oracle", ":")):
                    if rule == "oracle" and mech not in ("output", "default"):
                        continue
                    sub = cell[(cell.mechanism == mech) & (cell.gamma_rule == rule)].sort_values("epsilon")
                    if len(sub):
                        ax.plot(sub.epsilon, sub.regret_mean, style, marker="o" if rule == "public" else None,
                                ms=3, color=colours[k % len(colours)],
                                label=f"{mech} ({'public' if rule == 'public' else 'oracle'} γ)")
            for mech, style in (("nonprivate", "--"), ("best-arm", "-.")):
                ref = cell[cell.mechanism == mech]
                if len(ref):
                    ax.axhline(float(ref.regret_mean.iloc[0]), color="grey", ls=style, lw=1,
                               label="non-private OWL" if mech == "nonprivate" else "better single arm")
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_title(f"{design}, n = {n}", fontsize=9)
            if j == 0:
                ax.set_ylabel("regret V* - V(rule)")
            if i == len(designs) - 1:
                ax.set_xlabel("ε")
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=4, fontsize=7)
    fig.tight_layout(rect=(0, 0.08, 1, 1))
    return save_figure(fig, path)


def _half_width(se) -> Any:
    """1.96 standard errors, or None (no bars) where there are none (one repetition gives NaN)."""
    return None if se.isna().any() else 1.96 * se


def plot_multi_study(result, path: Union[str, Path]) -> Path:
    """Value and agreement with the non-private rule against epsilon, one line per n
    (a :class:`~pydpowl.studies.multi_designs.MultiStudyResult`), written as a PNG at ``path``."""
    plt = pyplot()
    t = result.table
    finite = sorted(e for e in t.epsilon.unique() if math.isfinite(e))
    pos = {e: i for i, e in enumerate(finite)}
    inf_x = len(finite)
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for n, sub in t.groupby("n"):
        x = [pos.get(e, inf_x) for e in sub.epsilon]
        axes[0].errorbar(x, sub.value, yerr=_half_width(sub.value_se), marker="o", capsize=3, label=f"n = {n}")
        axes[1].errorbar(x, sub.agreement, yerr=_half_width(sub.agreement_se), marker="o", capsize=3,
                         label=f"n = {n}")
    labels = [f"{e:g}" for e in finite] + ["inf"]
    for ax, ylabel in zip(axes, ("value of the rule (test set)", "agreement with the non-private rule")):
        ax.set_xticks(range(len(labels)))
        ax.set_xticklabels(labels)
        ax.set_xlabel("epsilon")
        ax.set_ylabel(ylabel)
        ax.grid(alpha=0.3)
    axes[0].legend()
    title = {"multiarm": "3 arms (angle-based DP-OWL)", "kstage": "2 stages (DP backward OWL, sim_Kstage design)"}
    bars = "bars: 95% intervals of the mean" if result.reps > 1 else "one repetition: no standard errors, no bars"
    fig.suptitle(f"{title[result.design]}: {result.reps} repetition(s) per n ({bars})")
    fig.tight_layout()
    return save_figure(fig, path)

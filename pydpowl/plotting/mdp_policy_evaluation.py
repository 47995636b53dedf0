"""Figures for the reference experiment (matplotlib, Agg canvas, no pyplot state).

Lines are means over the repetitions; bands run from the 10% to the 90%
quantile of the repetitions, so they are positive and honest on log axes.
"""

from __future__ import annotations

import math
import os
from typing import Any, List, Optional, Sequence, Union

import numpy as np
import pandas as pd

from ..mdp_policy_evaluation.experiment import summarize_experiment

__all__ = ["plot_experiment", "highlighted_epsilons"]

_FAMILY_COLOR = {"LSW": "tab:blue", "LSL": "tab:red"}


def highlighted_epsilons(epsilons: Sequence[float]) -> List[float]:
    """The smallest, a middle and the largest ``epsilon`` (all of them if at most three)."""
    eps = sorted(float(e) for e in epsilons if np.isfinite(e))
    if len(eps) <= 3:
        return eps
    return [eps[0], eps[len(eps) // 2], eps[-1]]


def _shade(i: int, n: int) -> Any:
    from matplotlib import colormaps

    return colormaps["viridis"](0.85 * (1 - i / max(1, n - 1)))


def _band(ax: Any, sub: pd.DataFrame, x: str, label: str, **style: Any) -> None:
    if not len(sub):
        return
    sub = sub.sort_values(x)
    xs = sub[x].to_numpy(dtype=float)
    ax.plot(xs, sub["rmse_mean"].to_numpy(), label=label, ms=3, lw=1.2, **style)
    ax.fill_between(xs, sub["rmse_q10"].to_numpy(), sub["rmse_q90"].to_numpy(),
                    color=style.get("color"), alpha=0.12, lw=0)


def _finish(ax: Any, xlabel: str, title: str) -> None:
    if not ax.has_data():  # e.g. a table without these methods
        ax.text(0.5, 0.5, "no data for this panel", ha="center", va="center", fontsize=9)
        ax.set_title(title, fontsize=9)
        return
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel(xlabel, fontsize=8)
    ax.set_ylabel("rho-weighted RMSE (mean; band 10-90%)", fontsize=8)
    ax.set_title(title, fontsize=9)
    ax.tick_params(labelsize=7)
    ax.legend(fontsize=6, ncol=1)


def _classical_constant(delta: float) -> float:
    return math.sqrt(2.0 * math.log(1.25 / delta))


def plot_experiment(
    table: pd.DataFrame,
    path: Union[str, os.PathLike],
    *,
    dpi: int = 120,
    title: Optional[str] = None,
) -> str:
    """Write the six panels of the reference experiment to a PNG file.

    Panels (top row): error against ``m`` for LSW and DP-LSW, and for LSL and
    DP-LSL (with LSW for reference), at the smallest, a middle and the
    largest ``epsilon``; error
    against ``epsilon`` at the largest ``m`` for every method. Bottom row:
    the smoothed algorithms against the Gaussian mechanism on the global
    sensitivity (analytic, and classical where ``epsilon < 1``) for each
    family, against ``m``; and error against the regularisation ``lambda``
    (if the table has that panel).

    Parameters
    ----------
    table : pandas.DataFrame
        Output of :func:`~.experiment.run_experiment`.
    path : str or path-like
        Output file (``.png``).
    dpi : int, default=120
        Resolution.
    title : str, optional
        Figure title (e.g. the settings of the run).

    Returns
    -------
    str
        The path written.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    summ = summarize_experiment(table)
    by_m = summ[summ["panel"] == "m"]
    by_lam = summ[summ["panel"] == "lambda"]
    delta = float(table["delta"].iloc[0]) if "delta" in table and len(table) else float("nan")
    eps_all = sorted(e for e in by_m["epsilon"].unique() if np.isfinite(e))
    eps_hi = highlighted_epsilons(eps_all)
    fig = Figure(figsize=(15.0, 8.6))
    fig.subplots_adjust(left=0.05, right=0.99, bottom=0.07, top=0.92 if title else 0.96,
                        wspace=0.22, hspace=0.3)
    FigureCanvasAgg(fig)
    axes = fig.subplots(2, 3)

    def rows(frame: pd.DataFrame, method: str, eps: Optional[float] = None) -> pd.DataFrame:
        sub = frame[frame["method"] == method]
        if eps is not None:
            sub = sub[np.isclose(sub["epsilon"], eps)]
        return sub

    # (a), (b): private against non-private, against m
    for ax, fam in ((axes[0, 0], "LSW"), (axes[0, 1], "LSL")):
        _band(ax, rows(by_m, fam), "m", f"{fam} (non-private)", color="black", ls="--", marker="o")
        if fam == "LSL":  # LSL's own error is mostly regularisation bias: show the unregularised fit
            _band(ax, rows(by_m, "LSW"), "m", "LSW (non-private, no ridge)", color="gray", ls=":",
                  marker=".")
        for i, eps in enumerate(eps_hi):
            sub = rows(by_m, f"DP-{fam}", eps)
            if len(sub):
                _band(ax, sub, "m", f"DP-{fam}, ε={eps:g}", color=_shade(i, len(eps_hi)), marker="o")
        _finish(ax, "m (episodes)", f"DP-{fam} against {fam} (δ={delta:g})")

    # (c): every method against epsilon at the largest m
    ax = axes[0, 2]
    if len(by_m):
        m_max = int(by_m["m"].max())
        at = by_m[by_m["m"] == m_max]
        for fam in ("LSW", "LSL"):
            color = _FAMILY_COLOR[fam]
            ref = rows(at, fam)
            if len(ref) and eps_all:
                v = float(ref["rmse_mean"].iloc[0])
                ax.hlines(v, eps_all[0], eps_all[-1], colors="black" if fam == "LSW" else "gray",
                          linestyles="--", lw=1.2, label=f"{fam} (non-private)")
            styles = ((f"DP-{fam}", "-", "o", f"DP-{fam} (smooth)"),
                      (f"GS-analytic-{fam}", "--", "s", f"GS analytic Gaussian, {fam}"),
                      (f"GS-classical-{fam}", ":", "^",
                       f"GS classical σ={_classical_constant(delta):.3g}Δ/ε, {fam}"))
            for method, ls, marker, label in styles:
                sub = rows(at, method)
                if len(sub):
                    _band(ax, sub, "epsilon", label, color=color, ls=ls, marker=marker)
        _finish(ax, "ε", f"Error against ε at m={m_max:g}")

    # (d), (e): smoothing against the global sensitivity, against m
    for ax, fam in ((axes[1, 0], "LSW"), (axes[1, 1], "LSL")):
        for i, eps in enumerate(eps_hi):
            color = _shade(i, len(eps_hi))
            for method, ls, marker, label in (
                (f"DP-{fam}", "-", "o", f"DP-{fam} (smooth), ε={eps:g}"),
                (f"GS-analytic-{fam}", "--", "s", f"GS analytic, ε={eps:g}"),
                (f"GS-classical-{fam}", ":", "^",
                 f"GS classical σ={_classical_constant(delta):.3g}Δ/ε, ε={eps:g}"),
            ):
                sub = rows(by_m, method, eps)
                if len(sub):
                    _band(ax, sub, "m", label, color=color, ls=ls, marker=marker)
        _finish(ax, "m (episodes)", f"{fam}: smooth sensitivity vs Gaussian on global sensitivity")

    # (f): regularisation
    ax = axes[1, 2]
    if len(by_lam):
        m_fixed = int(by_lam["m"].iloc[0])
        _band(ax, rows(by_lam, "LSL"), "regularization", "LSL (non-private)", color="black", ls="--",
              marker="o")
        eps_lam = highlighted_epsilons(by_lam["epsilon"].unique())
        for i, eps in enumerate(eps_lam):
            sub = rows(by_lam, "DP-LSL", eps)
            if len(sub):
                _band(ax, sub, "regularization", f"DP-LSL, ε={eps:g}", color=_shade(i, len(eps_lam)),
                      marker="o")
        p = table.loc[table["panel"] == "lambda", "lambda_p"]
        p_txt = f"{float(p.iloc[0]):g}" if len(p) else "p"
        _finish(ax, f"λ = ||Φ||²||ρ||∞ + c·m^{p_txt}, c swept",
                f"Error against the regularisation λ (m={m_fixed:g})")
    else:
        ax.set_axis_off()
        ax.text(0.5, 0.5, "no regularisation panel in this run", ha="center", va="center", fontsize=9)
    if title:
        fig.suptitle(title, fontsize=10)
    fig.savefig(os.fspath(path), dpi=dpi)
    return os.fspath(path)

"""Figures for the reference experiment (matplotlib, Agg canvas, no pyplot state)."""

from __future__ import annotations

import os
from typing import Union

import numpy as np
import pandas as pd

from .experiment import summarize_experiment

__all__ = ["plot_experiment"]

_STYLE = {
    "LSW": dict(color="tab:blue", ls="--", marker="o"),
    "DP-LSW": dict(color="tab:blue", ls="-", marker="o"),
    "GS-DP-LSW": dict(color="tab:cyan", ls=":", marker="s"),
    "LSL": dict(color="tab:red", ls="--", marker="^"),
    "DP-LSL": dict(color="tab:red", ls="-", marker="^"),
    "GS-DP-LSL": dict(color="tab:orange", ls=":", marker="s"),
}


def _band(ax, x, mean, std, method: str) -> None:
    style = _STYLE.get(method, {})
    ax.plot(x, mean, label=method, ms=4, **style)
    lower = np.maximum(mean - std, mean * 1e-3)  # keep the band on a log axis
    ax.fill_between(x, lower, mean + std, color=style.get("color"), alpha=0.12, lw=0)


def plot_experiment(table: pd.DataFrame, path: Union[str, os.PathLike], *, dpi: int = 120) -> str:
    """Write the three panels of the reference experiment to a PNG file.

    Panels: (1) RMSE against ``m`` for LSW, DP-LSW, LSL and DP-LSL; (2) the
    smoothed against the global-sensitivity versions; (3) RMSE against the
    regularisation coefficient ``c`` for LSL and DP-LSL (if the table has that
    panel). Lines are means over repetitions; bands are +- one std.

    Parameters
    ----------
    table : pandas.DataFrame
        Output of :func:`~.experiment.run_experiment`.
    path : str or path-like
        Output file (``.png``).
    dpi : int, default=120
        Resolution.

    Returns
    -------
    str
        The path written.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    summ = summarize_experiment(table).fillna({"rmse_std": 0.0})
    by_m = summ[summ["panel"] == "m"]
    by_lam = summ[summ["panel"] == "lambda"]
    n_panels = 3 if len(by_lam) else 2
    fig = Figure(figsize=(5.0 * n_panels, 4.2), layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(1, n_panels)
    eps = table["epsilon"].iloc[0]
    delta = table["delta"].iloc[0]
    panels = [
        (axes[0], ("LSW", "DP-LSW", "LSL", "DP-LSL"), "Error against m"),
        (axes[1], ("DP-LSW", "GS-DP-LSW", "DP-LSL", "GS-DP-LSL"), "Smoothed vs global sensitivity"),
    ]
    for ax, methods, title in panels:
        for method in methods:
            sub = by_m[by_m["method"] == method].sort_values("m")
            if len(sub):
                _band(ax, sub["m"].to_numpy(), sub["rmse_mean"].to_numpy(),
                      sub["rmse_std"].to_numpy(), method)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("m (episodes)")
        ax.set_ylabel("rho-weighted RMSE")
        ax.set_title(f"{title} (eps={eps:g}, delta={delta:g})", fontsize=9)
        ax.legend(fontsize=7)
    if n_panels == 3:
        ax = axes[2]
        m_fixed = int(by_lam["m"].iloc[0])
        for method in ("LSL", "DP-LSL", "GS-DP-LSL"):
            sub = by_lam[by_lam["method"] == method].sort_values("lambda_c")
            if len(sub):
                _band(ax, sub["lambda_c"].to_numpy(), sub["rmse_mean"].to_numpy(),
                      sub["rmse_std"].to_numpy(), method)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("c in lambda = ||Phi||^2 ||rho||_inf + c m^p")
        ax.set_ylabel("rho-weighted RMSE")
        ax.set_title(f"Error against lambda (m={m_fixed})", fontsize=9)
        ax.legend(fontsize=7)
    fig.savefig(os.fspath(path), dpi=dpi)
    return os.fspath(path)

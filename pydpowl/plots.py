"""PNG figures for the command-line studies (matplotlib, Agg backend, imported lazily)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Union

__all__ = ["plot_case_study"]


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plot_case_study(result, path: Union[str, Path]) -> Path:
    """Value (mean +- SD over DP runs) and concordance against epsilon; non-private as a line."""
    plt = _pyplot()
    table = result.table
    finite = table[table.epsilon != math.inf]
    nonpriv = table[table.epsilon == math.inf]
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    ax = axes[0]
    ax.errorbar(finite.epsilon, finite.value_mean, yerr=finite.value_sd, marker="o", capsize=3, label="DP-OWL (mean ± SD)")
    if len(nonpriv):
        ax.axhline(float(nonpriv.value_mean.iloc[0]), color="k", ls="--", label="non-private")
    ax.set_xscale("log")
    ax.set_xlabel("privacy budget ε")
    ax.set_ylabel("empirical treatment value")
    ax.set_title(f"value vs ε (γ = {result.gamma:g}, {result.n_runs} runs)")
    ax.legend()
    ax = axes[1]
    ax.errorbar(finite.epsilon, finite.concordance_mean, yerr=finite.concordance_sd, marker="o", capsize=3)
    ax.set_xscale("log")
    ax.set_ylim(0, 1.05)
    ax.set_xlabel("privacy budget ε")
    ax.set_ylabel("concordance with non-private rule")
    fig.suptitle(result.description, fontsize=9)
    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path

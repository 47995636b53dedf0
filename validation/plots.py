"""Figures of the validation report (matplotlib, Agg backend, PNG files)."""

from __future__ import annotations

from pathlib import Path
from typing import Dict, List, Sequence

import numpy as np

from .checks import NonprivateSummary, direction_coordinate_law

__all__ = ["plot_noise_qq", "plot_direction_hist", "plot_coef_differences"]


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plot_noise_qq(path: Path, case: str, noises: Dict[str, np.ndarray], rate: float) -> Path:
    """QQ plot of the noise norms of each engine against Gamma(d, rate)."""
    from scipy import stats

    plt = _plt()
    fig, ax = plt.subplots(figsize=(4.6, 4.2))
    for (engine, noise), marker in zip(noises.items(), ("o", "x")):
        norms = np.sort(np.linalg.norm(noise, axis=1))
        k, d = noise.shape
        q = stats.gamma(a=d, scale=1.0 / rate).ppf((np.arange(1, k + 1) - 0.5) / k)
        ax.plot(q, norms, marker, ms=3, alpha=0.6, label=f"{engine} (K={k})")
    lim = ax.get_xlim()
    ax.plot(lim, lim, "k-", lw=0.8)
    ax.set_xlabel(f"Gamma(d={noise.shape[1]}, rate={rate:.3g}) quantile")
    ax.set_ylabel("noise norm (scaled space)")
    ax.set_title(f"{case}: noise norms", fontsize=10)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path


def plot_direction_hist(path: Path, case: str, noises: Dict[str, np.ndarray], coordinate: int = 1) -> Path:
    """Histograms of one direction coordinate for each engine with the exact density."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(4.6, 4.2))
    bins = np.linspace(-1, 1, 31)
    d = 2
    for engine, noise in noises.items():
        u = noise[:, coordinate] / np.linalg.norm(noise, axis=1)
        d = noise.shape[1]
        ax.hist(u, bins=bins, density=True, histtype="step", lw=1.5, label=engine)
    grid = np.linspace(-0.999, 0.999, 200)
    ax.plot(grid, direction_coordinate_law(d).pdf(grid), "k--", lw=1, label="exact law")
    ax.set_xlabel(f"direction coordinate u{coordinate}")
    ax.set_ylabel("density")
    ax.set_title(f"{case}: uniform direction", fontsize=10)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path


def plot_coef_differences(path: Path, summaries: Sequence[NonprivateSummary]) -> Path:
    """Per case: ||theta_R - theta_py|| against its strong-convexity bound, and max |diff|."""
    plt = _plt()
    names: List[str] = [s.case for s in summaries]
    x = np.arange(len(names))
    fig, ax = plt.subplots(figsize=(max(5.0, 0.9 * len(names) + 2), 4.2))
    ax.bar(x - 0.2, [max(s.distance, 1e-18) for s in summaries], 0.4, label="||theta_R - theta_py||")
    ax.bar(x + 0.2, [s.bound for s in summaries], 0.4, label="bound sqrt(2 gap/mu) + 1e-9")
    ax.plot(x, [max(s.max_abs_diff_original, 1e-18) for s in summaries], "kD", ms=5,
            label="max |coef diff| (original space)")
    ax.set_yscale("log")
    ax.set_xticks(x)
    ax.set_xticklabels(names, rotation=30, ha="right", fontsize=8)
    ax.set_title("non-private solutions: DPpack vs pydpowl (scaled space)", fontsize=10)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path

"""matplotlib for the package's PNG figures: imported lazily, Agg backend, one way to save."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Union


def pyplot() -> Any:
    """``matplotlib.pyplot`` on the Agg backend (no display needed), imported on first use."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save_figure(fig: Any, path: Union[str, Path]) -> Path:
    """Write ``fig`` as a 120-dpi PNG at ``path`` (parents created), close it and return the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    pyplot().close(fig)
    return path

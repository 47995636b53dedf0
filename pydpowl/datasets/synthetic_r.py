"""Draw the synthetic design from an R-compatible stream in the authors' order."""

from __future__ import annotations

from typing import Any


def draw_in_r_order(rng: Any, n: int, p: int):  # pragma: no cover - filled in by the RRandom work
    """Reproduce the authors' R data generation draw for draw (see issue on R streams)."""
    raise NotImplementedError(
        "generating the synthetic design from an RRandom stream is not available yet; "
        "pass a numpy Generator or an int as random_state."
    )

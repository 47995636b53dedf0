"""A minimal progress bar on stderr for long command-line runs.

Library functions take ``progress: bool``; only the CLI turns it on. The bar is
silent when disabled, so library code never prints.
"""

from __future__ import annotations

import sys
import time
from typing import Iterable, Iterator, Optional, TextIO, TypeVar

T = TypeVar("T")

__all__ = ["Progress", "progress_iter"]


class Progress:
    """Count work units and redraw a one-line bar at most every ``interval`` seconds.

    Parameters
    ----------
    total : int
        Number of units expected.
    label : str, default=""
        Text shown before the bar.
    enabled : bool, default=True
        When False every method is a no-op.
    stream : file-like, optional
        Where to draw; stderr by default.
    """

    def __init__(
        self,
        total: int,
        label: str = "",
        *,
        enabled: bool = True,
        stream: Optional[TextIO] = None,
        interval: float = 0.1,
    ) -> None:
        self.total = max(int(total), 1)
        self.label = label
        self.enabled = enabled
        self.stream = stream if stream is not None else sys.stderr
        self.interval = interval
        self.done = 0
        self._start = time.perf_counter()
        self._last = 0.0

    def update(self, k: int = 1) -> None:
        """Advance by ``k`` units."""
        self.done += k
        if not self.enabled:
            return
        now = time.perf_counter()
        if now - self._last >= self.interval or self.done >= self.total:
            self._last = now
            self._draw(now)

    def _draw(self, now: float) -> None:
        frac = min(self.done / self.total, 1.0)
        width = 30
        filled = int(round(frac * width))
        elapsed = now - self._start
        eta = elapsed / frac - elapsed if frac > 0 else float("nan")
        bar = "#" * filled + "-" * (width - filled)
        self.stream.write(
            f"\r{self.label} [{bar}] {self.done}/{self.total} "
            f"{elapsed:5.1f}s elapsed, ~{eta:4.1f}s left"
        )
        self.stream.flush()

    def close(self) -> None:
        """Finish the line."""
        if self.enabled:
            self._draw(time.perf_counter())
            self.stream.write("\n")
            self.stream.flush()

    def __enter__(self) -> "Progress":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def progress_iter(items: Iterable[T], total: int, label: str = "", enabled: bool = True) -> Iterator[T]:
    """Yield from ``items`` while drawing a bar."""
    with Progress(total, label, enabled=enabled) as bar:
        for item in items:
            yield item
            bar.update()

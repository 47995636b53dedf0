"""Tables of the regularisation constant gamma by training size n and budget epsilon.

DP makes the best gamma depend on both n and epsilon (Algorithm 2 of the paper
tunes it per cell). A :class:`GammaTable` holds such a table and answers
queries for any (n, epsilon), also for cells it lacks, by a stated rule:

**Nearest-cell rule.** For a finite epsilon, take the finite-epsilon cell
(n', eps') that minimises the Euclidean distance of
``(log n - log n', log eps - log eps')``; for ``epsilon = inf`` take the
``inf`` cell with the nearest ``log n``. Ties go to the larger gamma (less
privacy noise). Finite and infinite budgets never borrow from each other.

Two tables ship with the package:

* :func:`authors_gamma_table` (the default of ``pydpowl simulate``): the tuned
  table ``tuned.reg.constants`` of the authors' ``simulation_study.R``
  (default branch, 94 cells; ``tuning_algorithm2.md`` section 5.3). It covers
  every cell of the paper's Fig. 1 grid exactly.
* :func:`pydpowl_gamma_table`: our own run of Algorithm 2 on an independent
  draw D0 of the paper's design (the command is recorded in its ``source``);
  on the Fig. 1 grid it is up to 5 accuracy points better than the authors'
  table for epsilon <= 5 and within 0.6 points for epsilon >= 20.

Any table written by ``pydpowl tune`` (``gamma_table.csv``: columns ``n, epsilon, gamma``)
can be read with :meth:`GammaTable.from_csv`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Iterable, Tuple, Union

import numpy as np
import pandas as pd

from .._validation import check_epsilon, check_int, check_positive

__all__ = ["GammaTable", "authors_gamma_table", "pydpowl_gamma_table", "get_gamma_table"]

_INF = math.inf

# Authors' tuned table: {epsilon: {n: gamma}} (simulation_study.R, tuned.reg.constants, default branch).
_AUTHORS: Dict[float, Dict[int, float]] = {
    0.1: {200: 50, 500: 75, 800: 75, 1000: 110, 1500: 110, 2000: 175, 2500: 225},
    0.4: {50: 90},
    0.5: {200: 90, 500: 150, 800: 145, 1000: 125, 1500: 125, 2000: 225, 2500: 250},
    1.0: {200: 150, 500: 115, 800: 75, 1000: 75, 1500: 125, 2000: 225, 2500: 250},
    2.0: {100: 105, 200: 105, 500: 55, 800: 100, 1000: 150, 1500: 125, 2000: 225, 2500: 300},
    4.0: {50: 35},
    5.0: {200: 30, 500: 60, 800: 50, 1000: 75, 1500: 75, 2000: 125, 2500: 225},
    20.0: {200: 20, 500: 30, 800: 50, 1000: 60, 1500: 60, 2000: 100, 2500: 100},
    50.0: {200: 10, 500: 30, 800: 30, 1000: 30, 1500: 30, 2000: 35, 2500: 40},
    150.0: {200: 10, 500: 15, 800: 15, 1000: 15, 1500: 30, 2000: 20, 2500: 25},
    300.0: {200: 10, 500: 10, 800: 10, 1000: 15, 1500: 10, 2000: 40, 2500: 20},
    500.0: {200: 5, 500: 5, 800: 5, 1000: 10, 1500: 15, 2000: 10, 2500: 15},
    800.0: {200: 5, 500: 5, 800: 5, 1000: 5, 1500: 10, 2000: 5, 2500: 20},
    1000.0: {200: 4, 500: 10, 800: 1, 1000: 7, 1500: 5, 2000: 5, 2500: 10},
    _INF: {200: 2, 500: 1, 800: 1, 1000: 1, 1500: 2, 2000: 2, 2500: 1},
}

# pydpowl's own table: `pydpowl tune --r 500 --n0 3000 --m 500 --redraw-split` (seed 2024, D0 seed 20240):
# Algorithm 2 on an independent draw of the paper's design (p = 4, W = 30), metric value, rule max.
_PYDPOWL: Dict[float, Dict[int, float]] = {
    0.1: {200: 400, 500: 300, 800: 150, 1000: 600, 1500: 600, 2000: 400, 2500: 600},
    0.5: {200: 100, 500: 200, 800: 200, 1000: 400, 1500: 400, 2000: 400, 2500: 600},
    1.0: {200: 100, 500: 150, 800: 200, 1000: 200, 1500: 300, 2000: 400, 2500: 400},
    2.0: {200: 50, 500: 100, 800: 150, 1000: 200, 1500: 300, 2000: 300, 2500: 400},
    5.0: {200: 30, 500: 75, 800: 100, 1000: 150, 1500: 200, 2000: 200, 2500: 300},
    20.0: {200: 20, 500: 30, 800: 50, 1000: 50, 1500: 100, 2000: 100, 2500: 150},
    50.0: {200: 10, 500: 20, 800: 30, 1000: 50, 1500: 50, 2000: 100, 2500: 100},
    150.0: {200: 5, 500: 10, 800: 20, 1000: 20, 1500: 50, 2000: 50, 2500: 75},
    300.0: {200: 5, 500: 10, 800: 20, 1000: 20, 1500: 30, 2000: 50, 2500: 75},
    500.0: {200: 2, 500: 10, 800: 10, 1000: 20, 1500: 30, 2000: 50, 2500: 50},
    800.0: {200: 2, 500: 5, 800: 10, 1000: 10, 1500: 30, 2000: 50, 2500: 100},
    1000.0: {200: 2, 500: 5, 800: 10, 1000: 20, 1500: 20, 2000: 50, 2500: 100},
    _INF: {200: 1, 500: 5, 800: 5, 1000: 10, 1500: 20, 2000: 50, 2500: 100},
}
_PYDPOWL_SOURCE = ("pydpowl's Algorithm 2 table (D0: paper's design, n0=3000, m=500, r=500, split redrawn per "
                   "repetition, metric value, rule max; pydpowl tune --r 500 --n0 3000 --m 500 --redraw-split)")


@dataclass(frozen=True)
class GammaTable:
    """Gamma by (n, epsilon), with the nearest-cell rule for missing cells.

    Attributes
    ----------
    cells : tuple of (n, epsilon, gamma)
        The tabulated cells (epsilon may be ``inf``).
    source : str
        Where the table comes from (shown in outputs).
    """

    cells: Tuple[Tuple[int, float, float], ...]
    source: str = ""

    def __post_init__(self) -> None:
        if not self.cells:
            raise ValueError("a gamma table needs at least one cell (n, epsilon, gamma).")
        seen = set()
        for n, eps, gamma in self.cells:
            check_int("n", n, minimum=1)
            check_epsilon(eps)
            check_positive("gamma", gamma)
            if (n, eps) in seen:
                raise ValueError(f"gamma table has two cells for n={n}, epsilon={eps:g}.")
            seen.add((n, eps))

    @classmethod
    def from_mapping(cls, mapping: Dict[float, Dict[int, float]], source: str = "") -> "GammaTable":
        """Build from ``{epsilon: {n: gamma}}``."""
        cells = tuple((int(n), float(eps), float(g)) for eps, row in mapping.items() for n, g in row.items())
        return cls(cells=cells, source=source)

    @classmethod
    def from_frame(cls, frame: pd.DataFrame, source: str = "") -> "GammaTable":
        """Build from a frame with columns ``n``, ``epsilon``, ``gamma`` (other columns ignored)."""
        missing = [c for c in ("n", "epsilon", "gamma") if c not in frame.columns]
        if missing:
            raise ValueError(f"gamma table must have columns n, epsilon, gamma; missing {missing}.")
        cells = []
        for i, row in enumerate(frame[["n", "epsilon", "gamma"]].itertuples(index=False)):
            try:
                n_val, eps, gamma = float(row.n), _parse_eps(row.epsilon), float(row.gamma)
            except (TypeError, ValueError):
                raise ValueError(f"gamma table row {i + 1}: n, epsilon and gamma must be numbers "
                                 "(epsilon may be 'inf').") from None
            if not n_val.is_integer():
                raise ValueError(f"gamma table row {i + 1}: n must be a whole number, got {n_val!r}.")
            cells.append((int(n_val), eps, gamma))
        return cls(cells=tuple(cells), source=source)

    @classmethod
    def from_csv(cls, path: Union[str, Path]) -> "GammaTable":
        """Read a CSV written by ``pydpowl tune`` (``gamma_table.csv``; columns n, epsilon, gamma)."""
        path = Path(path)
        if not path.is_file():
            raise FileNotFoundError(f"gamma table not found: {path}")
        try:
            frame = pd.read_csv(path)
        except Exception as exc:
            raise ValueError(f"gamma table {path.name} is not a readable CSV: {exc}") from None
        return cls.from_frame(frame, source=f"file {path}")

    def to_frame(self) -> pd.DataFrame:
        """Cells as a frame sorted by epsilon then n."""
        frame = pd.DataFrame(list(self.cells), columns=["n", "epsilon", "gamma"])
        return frame.sort_values(["epsilon", "n"], kind="mergesort").reset_index(drop=True)

    def to_csv(self, path: Union[str, Path]) -> Path:
        """Write the cells (epsilon ``inf`` as the text inf)."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        self.to_frame().to_csv(path, index=False)
        return path

    def lookup_cell(self, n: int, epsilon: float) -> Tuple[float, int, float]:
        """``(gamma, n_used, epsilon_used)`` by the nearest-cell rule (exact cells first)."""
        n = check_int("n", n, minimum=1)
        eps = check_epsilon(epsilon)
        pool = [c for c in self.cells if (c[1] == _INF) == (eps == _INF)]
        if not pool:
            kind = "epsilon=inf" if eps == _INF else "finite epsilon"
            raise ValueError(f"gamma table ({self.source or 'unnamed'}) has no {kind} cells; cannot look up "
                             f"n={n}, epsilon={eps:g}.")

        def key(cell):
            dn = math.log(n) - math.log(cell[0])
            de = 0.0 if eps == _INF else math.log(eps) - math.log(cell[1])
            return (round(math.hypot(dn, de), 12), -cell[2])

        best = min(pool, key=key)
        return best[2], best[0], best[1]

    def lookup(self, n: int, epsilon: float) -> float:
        """Gamma for (n, epsilon) by the nearest-cell rule."""
        return self.lookup_cell(n, epsilon)[0]

    def grid(self, ns: Iterable[int], epsilons: Iterable[float]) -> pd.DataFrame:
        """Looked-up gamma for every (n, epsilon), with the cell used (``exact`` False when borrowed)."""
        rows = []
        for eps in epsilons:
            for n in ns:
                gamma, n_used, eps_used = self.lookup_cell(n, eps)
                rows.append(dict(n=int(n), epsilon=float(eps), gamma=gamma, n_used=n_used, epsilon_used=eps_used,
                                 exact=(n_used == int(n) and eps_used == float(eps))))
        return pd.DataFrame(rows)


def _parse_eps(value) -> float:
    if isinstance(value, str):
        text = value.strip().lower()
        if text in ("inf", "infinity", "∞"):
            return _INF
        return float(text)
    return float(value)


def authors_gamma_table() -> GammaTable:
    """The authors' tuned table (``simulation_study.R``, default branch; spec section 5.3)."""
    return GammaTable.from_mapping(_AUTHORS, source="authors' tuned table (simulation_study.R, tuned.reg.constants)")


def pydpowl_gamma_table() -> GammaTable:
    """pydpowl's own Algorithm 2 table (``docs/experiments.md`` gives the command that made it)."""
    return GammaTable.from_mapping(_PYDPOWL, source=_PYDPOWL_SOURCE)


def get_gamma_table(spec: Union[str, Path, GammaTable, None]) -> GammaTable:
    """``None`` or ``"authors"``: the authors' table; ``"pydpowl"``: ours; else a CSV path or a table."""
    if isinstance(spec, GammaTable):
        return spec
    if spec is None or str(spec) == "authors":
        return authors_gamma_table()
    if str(spec) == "pydpowl":
        return pydpowl_gamma_table()
    return GammaTable.from_csv(spec)


def gamma_array(table: GammaTable, n: int, epsilons: Iterable[float]) -> np.ndarray:
    """Gamma for each epsilon at training size ``n``."""
    return np.array([table.lookup(n, e) for e in epsilons], dtype=float)

"""Seeded releases are what they were before the engine rebuild (frozen corpus, tests/reference/engine_corpus.json).

The reference was written by ``tests/reference/engine_corpus.py`` at the commit
before the rebuild; the same cases run here on the current code. Coefficients
(released and non-private) must agree to 1e-12 relative to
the largest entry of each vector, and the random stream must be in the same
state after each fit (the same draws were taken).
"""

import importlib.util
import json

import numpy as np
import pytest

from pathlib import Path

HERE = Path(__file__).resolve().parents[1] / "reference"
_spec = importlib.util.spec_from_file_location("engine_corpus", HERE / "engine_corpus.py")
corpus = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(corpus)

REFERENCE = json.loads((HERE / "engine_corpus.json").read_text())
RTOL = 1e-12


def relative_gap(fresh, frozen) -> float:
    """max |fresh - frozen| / max(|frozen|_inf, 1e-300), NaN where both are NaN counts as equal."""
    a, b = np.asarray(fresh, dtype=float), np.asarray(frozen, dtype=float)
    assert a.shape == b.shape
    both_nan = np.isnan(a) & np.isnan(b)
    gap = np.where(both_nan, 0.0, np.abs(a - b))
    return float(np.max(gap) / max(np.max(np.abs(np.nan_to_num(b))), 1e-300))


def test_corpus_lists_every_case():
    assert sorted(name for name, _ in corpus.cases()) == sorted(REFERENCE)


@pytest.mark.parametrize("name, run", list(corpus.cases()), ids=[name for name, _ in corpus.cases()])
def test_release_is_unchanged(name, run):
    fresh, frozen = run(), REFERENCE[name]
    assert sorted(fresh) == sorted(frozen)
    for key, value in frozen.items():
        if isinstance(value, str):  # digest of the random stream after the fit
            assert fresh[key] == value, f"{name}: the random stream is not where it was ({key})"
        else:
            gap = relative_gap(fresh[key], value)
            assert gap <= RTOL, f"{name}: {key} differs by {gap:.2e} (relative) from the frozen release"

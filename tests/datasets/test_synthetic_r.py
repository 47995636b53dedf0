"""The synthetic design drawn from an R stream (pydpowl.datasets.synthetic_r), without R.

Reference values come from R itself: ``tests/reference/synthetic_generate_data.R``
ran the authors' ``generate.data`` (re-implemented in
``tests/reference/generate_data.R``) after ``set.seed`` and wrote every double
with ``sprintf("%a")``. The comparison is exact (bit for bit).
"""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest

from pydpowl import RRandom
from pydpowl.datasets import make_synthetic_owl, synthetic_decision
from pydpowl.datasets.synthetic_r import draw_in_r_order

REF = Path(__file__).resolve().parents[1] / "reference" / "synthetic_generate_data.csv"


def _r_cases():
    cases = {}
    with REF.open(newline="") as fh:
        for row in csv.DictReader(fh):
            key = (int(row["seed"]), int(row["n"]), int(row["p"]))
            case = cases.setdefault(key, {"X": [], "A": [], "B": [], "next": float.fromhex(row["next_runif"])})
            case["X"].append([float.fromhex(v) for v in row["X"].split()])
            case["A"].append(float(row["A"]))
            case["B"].append(float.fromhex(row["B"]))
    return cases


R_CASES = _r_cases()


def _hexes(a):
    return [float(v).hex() for v in np.ravel(a)]


@pytest.mark.parametrize("key", sorted(R_CASES), ids=lambda k: f"seed{k[0]}-n{k[1]}-p{k[2]}")
def test_generate_data_equals_r_bit_for_bit(key):
    seed, n, p = key
    ref = R_CASES[key]
    rng = RRandom(seed)
    d = make_synthetic_owl(n, n_noise_features=p - 4, random_state=rng)
    assert _hexes(d.X.to_numpy()) == _hexes(ref["X"]), "features differ from R's generate.data"
    assert d.treatment.tolist() == ref["A"], "treatments differ from R's sample(c(-1, 1), ...)"
    assert _hexes(d.benefit) == _hexes(ref["B"]), "benefits differ from R's rnorm(1, mu, 0.5) + shift"
    # the stream stands where R's does: the next uniform is R's next runif(1)
    assert rng.runif(1)[0].hex() == ref["next"].hex(), "stream position after generate.data differs from R"


@pytest.mark.parametrize("n, p", [(1, 4), (7, 4), (250, 4), (300, 10)])
def test_words_consumed_are_r_calls(n, p):
    # runif: 1 word per value; sample(c(-1, 1), prob) by inversion: 1 word per
    # draw; rnorm (Inversion): 2 words per value. Hence n*p + n + 2n words.
    rng = RRandom(11)
    make_synthetic_owl(n, n_noise_features=p - 4, random_state=rng)
    assert rng.words_used == n * p + 3 * n


def test_draw_order_features_then_treatments_then_normals():
    n, p = 9, 4
    X, A, z = draw_in_r_order(RRandom(5), n, p)
    ref = RRandom(5)
    assert _hexes(X) == _hexes(ref.runif(n * p))  # row by row = one runif(n * p)
    assert A.tolist() == ref.sample(np.array([-1.0, 1.0]), n, replace=True, prob=[0.5, 0.5]).tolist()
    assert _hexes(z) == _hexes(ref.rnorm(n))


def test_benefits_use_r_operation_order():
    # B = (0.01 + 0.02 x4 + (3 A) f(x)) + 0.5 z, then (B + |min B|) + 0.001;
    # the smallest benefit is then exactly 0 + 0.001.
    rng = RRandom(3)
    d = make_synthetic_owl(400, random_state=rng)
    X, A, z = draw_in_r_order(RRandom(3), 400, 4)
    raw = (0.01 + 0.02 * X[:, 3] + 3.0 * A * synthetic_decision(X)) + 0.5 * z
    assert raw.min() < 0
    expected = (raw + abs(raw.min())) + 0.001
    assert _hexes(d.benefit) == _hexes(expected)
    assert d.benefit.min() == 0.001


def test_numpy_generator_path_is_unchanged_by_r_routing():
    a = make_synthetic_owl(50, random_state=np.random.default_rng(8))
    b = make_synthetic_owl(50, random_state=8)
    np.testing.assert_array_equal(a.X.to_numpy(), b.X.to_numpy())
    np.testing.assert_array_equal(a.benefit, b.benefit)
    assert set(np.unique(a.treatment)) <= {-1.0, 1.0}

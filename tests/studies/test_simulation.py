"""Tests of pydpowl.studies.simulation: the synthetic study of Fig. 1 (reduced grids, fixed seeds)."""

import math
import time

import numpy as np
import pytest

from pydpowl import DPOWL, accuracy, empirical_value
from pydpowl.datasets import make_synthetic_owl
from pydpowl.studies.gamma_table import authors_gamma_table
from pydpowl.studies.simulation import FIG1_EPSILONS, FIG1_NS, paper_shift, run_simulation, t_interval

NS = (200, 1000, 2500)
EPS = (0.1, 0.5, 5, 50)


@pytest.fixture(scope="module")
def reduced():
    return run_simulation(NS, EPS, reps=100, test_size=2000, random_state=11)


def test_paper_shift_matches_the_generator():
    a = make_synthetic_owl(300, shift=None, random_state=5)
    b = make_synthetic_owl(300, shift="paper", random_state=5)
    assert a.benefit.min() < 0, "the draw should need a shift for this test to mean something"
    np.testing.assert_array_equal(paper_shift(a.benefit[None, :])[0], b.benefit)


def test_t_interval_by_hand():
    mean, lo, hi, sd = t_interval(np.array([1.0, 2.0, 3.0, 4.0]))
    # sd = sqrt(5/3) = 1.2909944; t_{0.975, 3} = 3.1824463; half-width = 3.1824463 * 1.2909944 / 2
    assert mean == 2.5
    assert sd == pytest.approx(1.2909944487, rel=1e-9)
    assert hi - mean == pytest.approx(3.1824463053 * 1.2909944487 / 2, rel=1e-8)
    assert mean - lo == pytest.approx(hi - mean)


def test_columns_and_non_private_row(reduced):
    t = reduced.table
    assert list(t.columns[:8]) == ["n", "epsilon", "accuracy_mean", "accuracy_lo", "accuracy_hi", "value_mean",
                                   "value_lo", "value_hi"]
    assert len(t) == len(NS) * (len(EPS) + 1), "one row per (n, epsilon) plus the non-private reference"
    assert set(t[t.epsilon == math.inf].n) == set(NS)
    assert ((t.accuracy_lo <= t.accuracy_mean) & (t.accuracy_mean <= t.accuracy_hi)).all()


def test_accuracy_and_value_increase_with_epsilon(reduced):
    t = reduced.table
    for n in NS:
        sub = t[t.n == n].sort_values("epsilon")
        for col in ("accuracy_mean", "value_mean"):
            v = sub[col].to_numpy()
            # allow a dip of 1 point of accuracy (0.02 in value) between neighbours where the curve is flat
            slack = 0.01 if col == "accuracy_mean" else 0.02
            assert np.all(np.diff(v) > -slack), f"n={n}: {col} by epsilon {np.round(v, 4)} should rise (slack {slack})"
            assert v[-1] - v[0] > (0.2 if col == "accuracy_mean" else 0.8), \
                f"n={n}: {col} from epsilon 0.1 to inf rises by {v[-1] - v[0]:.3f}, expected a large gain"


def test_accuracy_increases_with_n_and_approaches_non_private(reduced):
    t = reduced.table.set_index(["n", "epsilon"])
    for eps in (0.5, 5, 50, math.inf):
        acc = [t.loc[(n, eps), "accuracy_mean"] for n in NS]
        assert acc[0] < acc[1] < acc[2], f"epsilon={eps}: accuracy by n {np.round(acc, 3)} should increase"
    for n in NS:
        gap50 = t.loc[(n, math.inf), "accuracy_mean"] - t.loc[(n, 50), "accuracy_mean"]
        gap05 = t.loc[(n, math.inf), "accuracy_mean"] - t.loc[(n, 0.5), "accuracy_mean"]
        assert 0 <= gap50 < 0.05 < gap05, f"n={n}: gap to non-private {gap50:.3f} at eps=50 vs {gap05:.3f} at 0.5"
    coin = t.loc[(200, 0.1), "accuracy_mean"]
    assert 0.45 < coin < 0.56, f"n=200, epsilon=0.1 should be a coin flip, got accuracy {coin:.3f}"
    top = t.loc[(2500, math.inf), "accuracy_mean"]
    assert 0.93 < top < 0.975, f"non-private accuracy at n=2500 is {top:.3f}; the design gives about 0.95"


def test_non_private_runs_match_dpowl_fits_scored_independently():
    # rebuild the study's draws (training block, then test block, from one generator) and score
    # DPOWL(epsilon=inf) fits with pydpowl.accuracy / empirical_value
    n, reps, size = 300, 3, 500
    res = run_simulation([n], [1.0], reps=reps, test_size=size, random_state=42)
    rng = np.random.default_rng(42)
    train = make_synthetic_owl(n * reps, shift=None, random_state=rng)
    test = make_synthetic_owl(size * reps, shift=None, random_state=rng)
    gamma = authors_gamma_table().lookup(n, math.inf)
    acc_runs, val_runs = res.runs[(n, math.inf)]
    for j in range(reps):
        tr, te = slice(j * n, (j + 1) * n), slice(j * size, (j + 1) * size)
        model = DPOWL(epsilon=math.inf, gamma=gamma, weights_upper_bound=30, feature_bounds=train.feature_bounds,
                      mechanism="output", residual=False, huber_h=0.5)
        model.fit(train.X.iloc[tr], train.treatment[tr], paper_shift(train.benefit[None, tr])[0], 0.5)
        rule = model.predict(test.X.iloc[te])
        assert acc_runs[j] == pytest.approx(accuracy(rule, test.optimal[te]), abs=1e-12)
        assert val_runs[j] == pytest.approx(
            empirical_value(rule, test.treatment[te], paper_shift(test.benefit[None, te])[0], 0.5), abs=1e-10)


def test_reproducible_with_a_seed():
    a = run_simulation([200], [1.0], reps=5, test_size=300, random_state=3).table
    b = run_simulation([200], [1.0], reps=5, test_size=300, random_state=3).table
    c = run_simulation([200], [1.0], reps=5, test_size=300, random_state=4).table
    assert a.equals(b)
    assert not a.equals(c)


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="reps must be"):
        run_simulation([200], [1.0], reps=1)
    with pytest.raises(ValueError, match="epsilons must be in"):
        run_simulation([200], [0.0], reps=3)


@pytest.mark.slow
def test_full_fig1_grid_under_20_cpu_seconds():
    start = time.process_time()
    res = run_simulation(FIG1_NS, FIG1_EPSILONS, reps=200, test_size=5000, random_state=100)
    cpu = time.process_time() - start
    assert cpu < 20, f"full Fig. 1 grid took {cpu:.1f} CPU seconds (threshold 20)"
    t = res.table.set_index(["n", "epsilon"])
    # section 7 reference runs (authors' R script): n = 1000, epsilon = 5: 84.81 %; inf: 94.29 %
    for (n, eps), ref in {(1000, 5.0): 0.8481, (1000, math.inf): 0.9429, (200, 5.0): 0.6766}.items():
        row = t.loc[(n, eps)]
        half = row.accuracy_hi - row.accuracy_mean
        assert abs(row.accuracy_mean - ref) < 3 * half + 0.01, \
            f"n={n}, eps={eps}: accuracy {row.accuracy_mean:.4f} vs authors' run {ref} (3 CI half-widths + 0.01)"

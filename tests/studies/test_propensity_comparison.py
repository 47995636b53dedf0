"""Tests of pydpowl.studies.propensity_comparison (a tiny run; the full study is ``make propensity-study``)."""

import math

import pytest

from pydpowl import LogisticPropensity
from pydpowl.estimators.propensity import hessian_H
from pydpowl.studies.propensity_comparison import (comparison_table, main, run_propensity_comparison,
                                                   summarise_comparison)


def test_tight_constant_is_the_per_weight_bound_times_n():
    C = hessian_H(benefit_bound=20.0, feature_norm_bound=math.sqrt(5), logit_bound=math.log(9),
                  hessian_lower_bound=10.0)
    assert C == pytest.approx(2 * 20 * 5 * 9 / 10)
    # the paper's H = 2 C_B C_x^2 (1 + e^M)^2 / b_x is larger by (1 + e^M)^2 / e^M >= 4
    from pydpowl import proposition8_H

    H = proposition8_H(benefit_bound=20.0, feature_norm_bound=math.sqrt(5), logit_bound=math.log(9),
                       hessian_lower_bound=10.0)
    assert H / C == pytest.approx(100 / 9)


def test_tight_constant_bounds_the_weight_changes_of_a_refit():
    # replacing one subject and refitting the ridge model moves the other weights by less than C in total
    import numpy as np

    rng = np.random.default_rng(0)
    n, ridge, M = 60, 1.0, 1.0
    X = rng.uniform(-1, 1, (n, 2))
    A = rng.choice([-1.0, 1.0], n)
    B = rng.uniform(0, 2, n)
    bounds = (-np.ones(2), np.ones(2))

    def weights(X, A):
        lp = LogisticPropensity(feature_bounds=bounds, benefit_bound=2.0, logit_bound=M, ridge=ridge).fit(X, A)
        return B / lp.probability_of(X, A)[0], lp

    w0, lp = weights(X, A)
    C = lp.weight_sensitivity(n)  # the package's C: n times the per-weight bound (hessian_H / n plus the tol term)
    assert C == pytest.approx(hessian_H(benefit_bound=2.0, feature_norm_bound=lp.feature_norm_bound_, logit_bound=M,
                                        hessian_lower_bound=ridge), rel=1e-6)
    worst = 0.0
    for _ in range(30):
        X1, A1 = X.copy(), A.copy()
        X1[0], A1[0] = rng.choice([-1.0, 1.0], 2), -A[0]
        w1, _ = weights(X1, A1)
        worst = max(worst, np.abs(w1[1:] - w0[1:]).sum())
    assert 0 < worst <= C


def test_tiny_run_and_table(tmp_path):
    rows = run_propensity_comparison(designs=("synthetic",), ns=(300,), epsilons=(1.0,), gammas=(100.0, 1000.0),
                                     rhos=(0.2,), ridges=(1.0,), reps=2, random_state=1)
    assert set(rows.method) == {"known", "composition", "prop8-tight", "prop8-paper"}
    assert (rows.reps == 2).all() and len(rows) == 4 * 2
    s = summarise_comparison(rows)
    assert len(s) == 1 and s.winner.iloc[0] in ("composition", "Proposition 8", "tie (within 2 SE)")
    assert comparison_table(s).count("\n") == 2
    assert main(["--out", str(tmp_path), "--reps", "2", "--ns", "200", "--epsilons", "1", "--designs", "cyp",
                 "--no-progress"]) == 0
    assert (tmp_path / "propensity_comparison.md").is_file()

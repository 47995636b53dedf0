"""Tests of pydpowl.studies.casestudy: Table 1 by epsilon and the gamma-sensitivity study (Fig. 2 style)."""

import math

import numpy as np
import pytest

from pydpowl import DPOWL, concordance, empirical_value
from pydpowl.studies.casestudy import gamma_sensitivity, run_case_study
from pydpowl.datasets import make_cyp_guides_style


@pytest.fixture(scope="module")
def cohort():
    return make_cyp_guides_style(random_state=7)


def _nonprivate(data, gamma):
    return DPOWL(epsilon=math.inf, gamma=gamma, weights_upper_bound=data.weights_upper_bound,
                 feature_bounds=data.feature_bounds, weight_sensitivity=data.weight_sensitivity,
                 mechanism="output", residual=False, huber_h=0.5).fit(
        data.X, data.treatment, data.benefit, data.propensity)


def test_table1_trends_and_non_private_row(cohort):
    res = run_case_study(cohort, epsilons=(0.1, 1, 5, math.inf), gamma=30, n_runs=60, random_state=1)
    t = res.table.set_index("epsilon")
    rule0 = _nonprivate(cohort, 30).predict(cohort.X)
    assert t.loc[math.inf, "value_mean"] == pytest.approx(
        empirical_value(rule0, cohort.treatment, cohort.benefit, cohort.propensity), abs=1e-12)
    assert t.loc[math.inf, "n_plus_mean"] == (rule0 > 0).sum()
    conc = t.loc[[0.1, 1, 5], "concordance_mean"].to_numpy()
    assert conc[0] < conc[1] < conc[2], f"concordance by epsilon {np.round(conc, 3)} should rise"
    gap = np.abs(t.loc[[0.1, 5], "n_plus_mean"].to_numpy() - (rule0 > 0).sum())
    assert gap[1] < gap[0], f"allocation should approach the non-private split as epsilon grows, gaps {gap}"


def test_gamma_sensitivity_table(cohort):
    gammas, eps = (5, 30, 150), (0.5, 5, math.inf)
    sens = gamma_sensitivity(cohort, gammas=gammas, epsilons=eps, n_runs=50, random_state=3)
    assert len(sens) == len(gammas) * len(eps)
    for g in gammas:
        row = sens[(sens.gamma == g) & (sens.epsilon == math.inf)].iloc[0]
        model = _nonprivate(cohort, g)
        rule0 = model.predict(cohort.X)
        assert row.value_mean == pytest.approx(
            empirical_value(rule0, cohort.treatment, cohort.benefit, cohort.propensity), abs=1e-12)
        assert row.concordance_mean == 1.0 and row.share_plus_mean == pytest.approx((rule0 > 0).mean())
        assert concordance(rule0, rule0) == 1.0
    big = sens[sens.gamma == 150].set_index("epsilon")
    assert big.loc[5, "concordance_mean"] > big.loc[0.5, "concordance_mean"], \
        "at gamma=150 the DP rules should agree more with the non-private rule at epsilon=5 than at 0.5"
    assert (sens[sens.epsilon != math.inf].value_sd > 0).all()


def test_gamma_sensitivity_rejects_empty_grids(cohort):
    with pytest.raises(ValueError, match="gammas must hold at least one value"):
        gamma_sensitivity(cohort, gammas=(), n_runs=5)

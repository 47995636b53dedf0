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


def _result(**row):
    import pandas as pd

    from pydpowl.studies.casestudy import CaseStudyResult

    base = dict(epsilon=1.0, value_mean=4.2, value_sd=0.1, concordance_mean=0.97, concordance_sd=0.06,
                concordance_lo=0.85, concordance_hi=1.0, allocation_p_median=0.0, association_p_median=0.0,
                n_plus_mean=700.0, n_plus_sd=10.0, n_minus_mean=759.0)
    base.update(row)
    return CaseStudyResult(table=pd.DataFrame([base]), gamma=75.0, n_runs=20, description="test",
                           nonprivate_coef=(0.0,), coefficient_names=("(intercept)",))


def test_a_p_value_below_the_float_range_prints_as_a_bound():
    """Issue 22.5: a chi-squared p that underflows to 0 printed as 0."""
    from pydpowl.studies.casestudy import format_p_value

    text = _result(allocation_p_median=0.0).format_table()
    assert "< 1e-300" in text and " 0 " not in text
    assert format_p_value(0.0) == "< 1e-300" and format_p_value(3e-301) == "< 1e-300"
    assert format_p_value(0.0123) == "0.0123" and format_p_value(float("nan")) == "nan"


def test_run_records_concordance_quantiles_within_zero_one(cohort):
    res = run_case_study(cohort, epsilons=(5, math.inf), gamma=30, n_runs=30, random_state=2)
    row = res.table.set_index("epsilon").loc[5]
    assert 0 <= row.concordance_lo <= row.concordance_mean <= row.concordance_hi <= 1

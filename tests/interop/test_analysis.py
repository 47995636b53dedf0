"""Tests of pydpowl.interop.analysis: the private analysis with plain values in and out (R's dpowl_analysis())."""

import math

import pytest

from pydpowl.datasets import make_cyp_guides_style
from pydpowl.interop.analysis import analyze_arrays

LOG_YEAR = math.log(24 * 365)


@pytest.fixture(scope="module")
def cyp():
    return make_cyp_guides_style(1000, random_state=4)


def test_analyze_arrays_returns_plain_python(cyp, tmp_path):
    out = analyze_arrays(cyp.X.to_numpy().tolist(), cyp.treatment.tolist(), cyp.benefit.tolist(),
                         lower=[18, 0, 0, 0], upper=[89, 1, 1, 1], benefit_lower=0.0, benefit_upper=LOG_YEAR,
                         weights_upper_bound=27.2339, total_epsilon=1.0, propensity=2 / 3,
                         feature_names=["age", "male", "nonwhite", "mdd"], treatment_labels=["G", "S"], seed=3,
                         split="evaluation_fraction=0.4", out_dir=str(tmp_path / "out"))

    def plain(x):
        if isinstance(x, dict):
            return all(isinstance(k, str) and plain(v) for k, v in x.items())
        if isinstance(x, list):
            return all(plain(v) for v in x)
        return x is None or isinstance(x, (str, int, float, bool))

    assert plain(out)
    assert set(out["value"]) >= {"estimate", "ci_low", "ci_high", "level"}
    assert out["n_evaluation"] == 400 and list(out["coefficients"])[0] == "(intercept)"
    assert out["public_n"] is False and out["privacy_spent"][0] == 1.0 and 0 < out["privacy_spent"][1] < 1e-5
    assert all("rows" not in p for p in out["ledger"]["parts"] + out["ledger"]["releases"])
    shown = analyze_arrays(cyp.X.to_numpy(), cyp.treatment, cyp.benefit, lower=[18, 0, 0, 0], upper=[89, 1, 1, 1],
                           benefit_lower=0.0, benefit_upper=LOG_YEAR, weights_upper_bound=27.2339, total_epsilon=1.0,
                           propensity=2 / 3, seed=3, public_n=True, benefit_definition="log-LOS benefit")
    assert shown["ledger"]["parts"][0]["rows"] > 0 and shown["value"]["benefit"] == "log-LOS benefit"
    assert sorted(p.rsplit("/", 1)[1] for p in out["files"]) == sorted(
        ["model.json", "ledger.json", "value.json", "report.md", "value.png", "coefficients.png"])
    with pytest.raises(TypeError, match="seed must be an integer"):
        analyze_arrays([[1.0]], [1], [1.0], lower=[0], upper=[1], benefit_lower=0, benefit_upper=1,
                       weights_upper_bound=2, total_epsilon=1, propensity=0.5, seed=1.5)

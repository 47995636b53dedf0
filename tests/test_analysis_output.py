"""Tests of pydpowl.analysis_output: the files of an analysis hold releases and public settings only."""

import json
import math

import numpy as np
import pytest

from pydpowl.analysis import run_analysis
from pydpowl.analysis_output import report_markdown, write_analysis
from pydpowl.datasets import make_cyp_guides_style
from pydpowl.model_io import load_model


@pytest.fixture(scope="module")
def result():
    d = make_cyp_guides_style(800, random_state=5)
    return run_analysis(d.X, d.treatment, d.benefit, feature_bounds=d.feature_bounds,
                        benefit_bounds=(0.0, math.log(8760)), weights_upper_bound=d.weights_upper_bound,
                        total_epsilon=2.0, propensity=2 / 3, treatment_labels=("G", "S"), random_state=2), d


def test_writes_the_six_files_and_the_model_loads(result, tmp_path):
    res, _ = result
    paths = write_analysis(res, tmp_path)
    assert sorted(p.name for p in paths) == sorted(["model.json", "ledger.json", "value.json", "report.md",
                                                    "value.png", "coefficients.png"])
    model = load_model(tmp_path / "model.json")
    assert model.treatment_labels == ("G", "S")
    value = json.loads((tmp_path / "value.json").read_text())
    assert {"estimate", "ci_low", "ci_high", "level"} <= set(value)
    assert value["ci_low"] <= value["estimate"] <= value["ci_high"] and value["level"] == 0.95
    ledger = json.loads((tmp_path / "ledger.json").read_text())
    assert ledger["total_epsilon"] == 2.0 and ledger["spent"] <= 2.0
    assert all(set(r) >= {"name", "epsilon"} for r in ledger["releases"])
    for png in ("value.png", "coefficients.png"):
        assert (tmp_path / png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_report_states_the_answer_and_no_private_counts(result):
    res, _ = result
    text = report_markdown(res)
    v = res.value.value
    assert f"{v.estimate:.4f} [{v.ci_low:.4f}, {v.ci_high:.4f}]" in text
    assert "better single arm" in text and "sequential: every release" in text
    for key in res.diagnostics:
        assert key not in text, "clip counts come from the private data and must not be written"


def test_files_hold_no_training_data(result, tmp_path):
    res, d = result
    write_analysis(res, tmp_path)
    blob = "".join((tmp_path / f).read_text() for f in ("model.json", "ledger.json", "value.json", "report.md"))
    for b in np.round(d.benefit[:50], 6):
        assert f"{b:.6f}" not in blob


def test_report_states_the_benefit_next_to_every_value_and_the_length_of_stay(cyp_scaled):
    """Issue 22.5: "value 4.2001 (mean benefit)" had no unit and no link to the clinical scale."""
    res = cyp_scaled
    text = report_markdown(res)
    assert "Benefit: benefit = log(24*365) - log(length of stay in hours)" in text
    for iv, gain in ((res.value.value, False), (res.value.difference, True), (res.value.versus_plus, True),
                     (res.value.versus_minus, True)):
        line = next(ln for ln in text.splitlines() if f"{iv.estimate:.4f} [{iv.ci_low:.4f}, {iv.ci_high:.4f}]" in ln)
        if gain:
            assert f"length of stay x {math.exp(-iv.estimate):.3g} [{math.exp(-iv.ci_high):.3g}, " in line
        else:
            hours = [24 * 365 * math.exp(-x) for x in (iv.estimate, iv.ci_high, iv.ci_low)]
            assert f"geometric-mean length of stay {hours[0]:.3g} hours [{hours[1]:.3g}, {hours[2]:.3g}]" in line


def test_report_says_which_gamma_candidate_won(cyp_scaled):
    res = cyp_scaled
    sel = res.gamma_selection
    assert f"gamma candidate **{sel['selected']:g}** won the private selection" in report_markdown(res)


def test_report_states_epsilon_and_delta_and_no_sizes_by_default(cyp_scaled, mentions):
    """Issues 21.5 and 21.1: (epsilon, delta)-DP with delta's source; n only when declared public."""
    from pydpowl.estimators.summary import delta_text

    res = cyp_scaled
    text = report_markdown(res)
    assert f"**(2, {delta_text(res.delta_spent)})-DP**" in text and "floating-point-safe rounding" in text
    assert "| release | epsilon | delta | part |" in text and "| 0.96 |" in text
    assert f"the analysis is (2, {delta_text(res.delta_spent)})-DP (total epsilon allowed 2)" in text
    assert "n not released" in text and not mentions(text, 400) and not mentions(text, 800)
    assert "the analysis is 2-DP" not in text


def test_report_without_any_propensity_says_so(result):
    # an AnalysisResult holds the known propensity or the released model; with neither the report refuses
    from dataclasses import replace

    res, _ = result
    assert "* Propensity: P(G) = 0.666667 (known)." in report_markdown(res)
    with pytest.raises(ValueError, match="holds no propensity: neither known probabilities nor a released model"):
        report_markdown(replace(res, propensity=None, propensity_model=None))

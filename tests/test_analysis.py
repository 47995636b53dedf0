"""Tests of pydpowl.analysis: the end-to-end private analysis and its budget."""

import json
import math

import numpy as np
import pytest

from pydpowl.estimators.summary import delta_text
from pydpowl.analysis import (DEFAULT_GAMMAS, BudgetSplit, allocate_budget, fit_rule,
                              run_analysis)
from pydpowl.datasets import make_cyp_guides_style, make_synthetic_owl
from pydpowl.exceptions import BudgetExceededError
from pydpowl.privacy.accountant import BudgetAccountant

LOG_YEAR = math.log(24 * 365)


@pytest.fixture(scope="module")
def cyp():
    return make_cyp_guides_style(1000, random_state=4)


def _run(data, **kw):
    settings = dict(feature_bounds=data.feature_bounds, benefit_bounds=(0.0, LOG_YEAR),
                    weights_upper_bound=data.weights_upper_bound, total_epsilon=1.0, propensity=2 / 3,
                    random_state=1)
    settings.update(kw)
    return run_analysis(data.X, data.treatment, data.benefit, **settings)


def test_default_budget_split_and_its_allocation():
    s = BudgetSplit()
    assert (s.propensity, s.selection, s.variance, s.evaluation_fraction) == (0.2, 0.2, 0.3, 0.5)
    assert (s.evaluation, s.composition) == (0.4, "sequential")
    eps = allocate_budget(2.0, s, propensity_model=True, tune=True)  # learning part 1.2, evaluation part 0.8
    assert eps == pytest.approx(dict(propensity=0.24, selection=0.24, rule=0.72, value=0.56, variance=0.24))
    assert math.fsum(eps.values()) == pytest.approx(2.0)
    eps = allocate_budget(2.0, BudgetSplit(composition="parallel"), propensity_model=True, tune=True)
    assert eps == pytest.approx(dict(propensity=0.4, selection=0.4, rule=1.2, value=1.4, variance=0.6))
    eps = allocate_budget(2.0, s, propensity_model=False, tune=False)
    assert eps == pytest.approx(dict(propensity=0.0, selection=0.0, rule=1.2, value=0.56, variance=0.24))
    assert BudgetSplit.parse("selection=0.1, evaluation_fraction=0.3") == BudgetSplit(selection=0.1,
                                                                                      evaluation_fraction=0.3)


@pytest.mark.parametrize("text, match", [("selection", "NAME=SHARE"), ("magic=0.1", "NAME=SHARE"),
                                         ("variance=x", "does not hold a number"), ("variance=1.0", "variance"),
                                         ("propensity=0.6,selection=0.5", "propensity \\+ selection"),
                                         ("composition=serial", "composition must be one of")])
def test_bad_budget_split_is_named(text, match):
    with pytest.raises(ValueError, match=match):
        BudgetSplit.parse(text)


def test_default_ledger_releases_add_up_to_at_most_the_total(cyp):
    res = _run(cyp, total_epsilon=1.5, propensity=None, propensity_model="logistic", gammas=DEFAULT_GAMMAS)
    led = res.ledger()
    assert res.composition == "sequential" and led["composition"].startswith("sequential: every release")
    assert math.fsum(r["epsilon"] for r in led["releases"]) == pytest.approx(1.5)
    assert math.fsum(r["epsilon"] for r in led["releases"]) <= 1.5 * (1 + 1e-12) and led["spent"] <= 1.5 * (1 + 1e-12)
    parts = {p["name"]: p["epsilon"] for p in led["parts"]}
    assert parts["evaluation"] == pytest.approx(0.4 * 1.5) and parts["learning"] == pytest.approx(0.6 * 1.5)
    assert len(led["releases"]) == 5


def test_parallel_ledger_composes_the_two_disjoint_parts_and_never_exceeds_the_total(cyp):
    res = _run(cyp, total_epsilon=1.5, propensity=None, propensity_model="logistic", gammas=DEFAULT_GAMMAS,
               split=BudgetSplit(composition="parallel"), public_n=True)
    led = res.ledger()
    assert led["total_epsilon"] == 1.5
    parts = {p["name"]: p for p in led["parts"]}
    assert parts["learning"]["rows"] + parts["evaluation"]["rows"] == cyp.n == res.n
    for name, part in parts.items():
        mine = [r["epsilon"] for r in led["releases"] if r["part"] == name]
        assert math.fsum(mine) == pytest.approx(part["epsilon"]) and part["epsilon"] <= 1.5 * (1 + 1e-12)
        assert all(r["rows"] == part["rows"] for r in led["releases"] if r["part"] == name)
    assert led["spent"] == pytest.approx(max(p["epsilon"] for p in led["parts"])) and led["spent"] <= 1.5 + 1e-12
    names = [r["name"] for r in led["releases"]]
    assert len(names) == 5 and any("propensity" in n for n in names) and any("gamma" in n for n in names)
    json.dumps(led)  # JSON-ready


@pytest.mark.parametrize("total, parts, releases", [
    (3.0, {"learning": 1.8, "evaluation": 1.2}, [0.36, 0.36, 1.08, 0.84, 0.36]),
    (0.7, {"learning": 0.42, "evaluation": 0.28}, [0.084, 0.084, 0.252, 0.196, 0.084]),
])
def test_ledger_prints_the_budgets_exactly(cyp, total, parts, releases):
    """Issue 22.5: ledger.json showed 1.2000000000000002 (binary rounding of 0.4 * 3); the shares are the exact
    decimals of the budget given, they add up to it exactly, and each mechanism uses at most its share."""
    from fractions import Fraction

    res = _run(cyp, total_epsilon=total, propensity=None, propensity_model="logistic", gammas=DEFAULT_GAMMAS)
    text = json.dumps(res.ledger())
    led = json.loads(text)
    assert {p["name"]: p["epsilon"] for p in led["parts"]} == parts
    assert [r["epsilon"] for r in led["releases"]] == releases and led["spent"] == led["total_epsilon"] == total
    assert "0000000" not in text and "9999999" not in text
    for key, share in res.shares.items():
        assert Fraction(res.epsilons[key]) <= share  # the mechanism spends at most what the ledger states
    assert sum(res.shares.values()) == Fraction(repr(total))


def test_ledger_composes_epsilon_and_delta(cyp):
    """Issue 21.5: every release carries its delta (the floating-point-safe rounding's), the ledger composes them
    (sum; the larger part's under parallel composition) and states (epsilon, delta) with where delta comes from."""
    res = _run(cyp, total_epsilon=2.0, propensity=None, propensity_model="logistic", gammas=DEFAULT_GAMMAS)
    led = res.ledger()
    deltas = {r["name"].split(" (")[0]: r["delta"] for r in led["releases"]}
    assert len(deltas) == 5 and all(0 < d < 1e-6 for d in deltas.values())
    assert all(r["delta_source"] for r in led["releases"])
    assert deltas["treatment rule"] == res.model.privacy_spent_[1]
    assert deltas["propensity model"] == res.propensity_model.privacy_spent_[1]
    assert led["spent_delta"] == math.fsum(deltas.values()) == res.delta_spent
    assert led["guarantee"] == f"(2, {delta_text(res.delta_spent)})-DP" and res.privacy_spent == (2.0, res.delta_spent)
    par = _run(cyp, total_epsilon=2.0, split=BudgetSplit(composition="parallel"))
    parts = {p["name"]: p["delta"] for p in par.ledger()["parts"]}
    assert par.delta_spent == max(parts.values()) > 0 and par.ledger()["spent"] == 2.0
    acc = BudgetAccountant(total_epsilon=4.0)
    _run(cyp, total_epsilon=2.0, accountant=acc)
    assert acc.releases[0].delta > 0 and acc.privacy_spent[0] == 2.0


def test_sizes_are_stated_only_when_n_is_declared_public(cyp):
    """Issue 21.1: n (and the sizes derived from it) is printed only when the analyst declares it public."""
    hidden = json.dumps(_run(cyp).ledger()) + json.dumps(_run(cyp).value_summary()) + _run(cyp).model_content["tuning"]
    assert '"rows"' not in hidden and "n not released" in hidden and str(cyp.n // 2) not in hidden
    shown = _run(cyp, public_n=True, gammas=DEFAULT_GAMMAS)
    assert {p["name"]: p["rows"] for p in shown.ledger()["parts"]} == {"learning": cyp.n - cyp.n // 2,
                                                                       "evaluation": cyp.n // 2}
    assert f"n={shown.gamma_selection['n_part']}" in shown.model_content["tuning"]


def test_fixed_gamma_spends_nothing_on_selection(cyp):
    res = _run(cyp, gamma=75.0)
    assert res.gamma == 75.0 and res.gamma_selection is None
    assert res.epsilons["selection"] == 0.0 and res.epsilons["rule"] == pytest.approx(0.6)
    assert not any("gamma" in r["name"] for r in res.ledger()["releases"])


def test_default_rule_uses_the_studys_mechanism_and_public_gamma_without_a_selection(cyp):
    """Known propensities: objective perturbation with residual weights, gamma from the public rule (no budget);
    the ledger and the model file name the mechanism."""
    res = _run(cyp)
    assert res.gamma_selection is None and res.epsilons["selection"] == 0.0
    assert res.epsilons["rule"] == pytest.approx(0.6)
    m = res.model
    assert m.mechanism_ == "objective" and m.residual_ and m.huber_h_ == 1.0
    assert m.epsilon_baseline_ + m.epsilon_rule_ == pytest.approx(0.6)
    assert res.gamma == m.gamma_ and "public rule" in res.model_content["tuning"]
    rule = [r["name"] for r in res.ledger()["releases"] if r["part"] == "learning"]
    assert len(rule) == 1 and "objective perturbation" in rule[0] and "residual weights" in rule[0]
    assert res.model_content["mechanism"] == m.mechanism_description_ == res.to_dict()["mechanism"]
    with pytest.raises(ValueError, match="output-perturbation fits"):
        _run(cyp, gammas=DEFAULT_GAMMAS, mechanism="objective")


def test_selected_gamma_is_a_transferred_candidate(cyp):
    res = _run(cyp, gammas=DEFAULT_GAMMAS)
    assert res.model.mechanism_ == "output" and not res.model.residual_  # candidates are output-perturbation fits
    sel = res.gamma_selection
    assert sel["selected"] in DEFAULT_GAMMAS
    expected = sel["selected"] * math.sqrt((res.n_learning / sel["n_part"]) * (0.2 / 0.8))
    assert res.gamma == pytest.approx(expected)


def test_the_value_is_that_of_the_exported_rule_on_the_evaluation_rows(cyp):
    # with a (practically) infinite evaluation budget the release is the non-private Horvitz-Thompson estimate
    res = _run(cyp, total_epsilon=1.0, split=BudgetSplit(variance=0.5))
    res_big = _run(cyp, total_epsilon=1e9, gamma=75.0, split=BudgetSplit(evaluation_fraction=0.5))
    perm = np.random.default_rng(1).permutation(cyp.n)  # the analysis draws the split first from its generator
    ev = np.sort(perm[: cyp.n // 2])
    mc = res_big.model_content
    rule = np.where(cyp.X.to_numpy()[ev] @ np.asarray(mc["coef"]) + mc["intercept"] > 0, 1, -1)
    A, B = cyp.treatment[ev], np.clip(cyp.benefit[ev], 0, LOG_YEAR)
    p = np.where(A > 0, 2 / 3, 1 / 3)
    c = LOG_YEAR / 2
    assert res_big.value.value.estimate == pytest.approx(c + np.mean((rule == A) * (B - c) / p), abs=1e-6)
    assert res.value.value.ci_low < res.value.value.estimate < res.value.value.ci_high


def test_model_content_is_the_released_rule_and_round_trips(cyp, tmp_path):
    from pydpowl.model_io import load_model

    res = _run(cyp, treatment_labels=("G", "S"))
    path = tmp_path / "m.json"
    path.write_text(json.dumps(res.model_content))
    model = load_model(path)
    assert model.treatment_labels == ("G", "S") and model.epsilon_total == 1.0
    np.testing.assert_allclose(model.coef, res.model_content["coef"])
    assert res.coefficients()[0][0] == "(intercept)"


def test_an_accountant_is_checked_first_and_charged_the_composed_total_once(cyp):
    acc = BudgetAccountant(total_epsilon=1.0)
    acc.spend(0.5, label="earlier release")
    with pytest.raises(BudgetExceededError):
        _run(cyp, accountant=acc)
    assert acc.spent == 0.5, "a refused analysis must spend nothing"
    acc = BudgetAccountant(total_epsilon=2.0)
    res = _run(cyp, accountant=acc)
    assert acc.spent == pytest.approx(res.epsilon_spent) == pytest.approx(1.0) and len(acc.releases) == 1


def test_settings_are_checked_before_the_data(cyp):
    bad_X = np.full((10, 4), np.nan)
    with pytest.raises(ValueError, match="total_epsilon must be in"):
        run_analysis(bad_X, np.ones(10), np.ones(10), feature_bounds=cyp.feature_bounds, benefit_bounds=(0, 1),
                     weights_upper_bound=3, total_epsilon=0.0, propensity=0.5)
    with pytest.raises(ValueError, match="benefit_bounds must satisfy lower < upper"):
        run_analysis(bad_X, np.ones(10), np.ones(10), feature_bounds=cyp.feature_bounds, benefit_bounds=(2, 1),
                     weights_upper_bound=3, total_epsilon=1.0, propensity=0.5)


@pytest.mark.parametrize("kw, match", [
    (dict(propensity=None), "exactly one of propensity"),
    (dict(propensity_model="logistic"), "exactly one of propensity"),
    (dict(propensity=None, propensity_model="probit"), "propensity_model must be one of"),
    (dict(propensity=1.0), "propensity must be in"),
    (dict(gammas=[10, 10]), "must not repeat"),
    (dict(gamma=-1.0), "gamma must be in"),
    (dict(weights_upper_bound=0.0), "weights_upper_bound must be in"),
    (dict(level=1.0), "level must be in"),
    (dict(split=BudgetSplit(evaluation_fraction=0.999)), "leave"),
])
def test_bad_arguments_are_named(cyp, kw, match):
    with pytest.raises(ValueError, match=match):
        _run(cyp, **kw)


def test_propensity_model_route_uses_the_released_model_everywhere(cyp):
    res = _run(cyp, propensity=None, propensity_model="logistic", logit_bound=1.0)
    assert res.propensity_model is not None and res.propensity is None
    floor = 1 / (1 + math.e)
    assert res.value.propensity_floor == pytest.approx((floor, floor))
    assert res.to_dict()["propensity"]["model"] == "logistic"


def test_fit_rule_states_the_weight_sensitivity():
    d = make_synthetic_owl(300, random_state=2)
    p = np.full(300, 0.5)
    paper = dict(mechanism="output", residual=False, huber_h=0.5)
    m0 = fit_rule(d.X, d.treatment, d.benefit, p, epsilon=1.0, gamma=50.0, weights_upper_bound=30.0,
                  feature_bounds=d.feature_bounds, weight_sensitivity=0.0, random_state=1, **paper)
    m1 = fit_rule(d.X, d.treatment, d.benefit, p, epsilon=1.0, gamma=50.0, weights_upper_bound=30.0,
                  feature_bounds=d.feature_bounds, weight_sensitivity=12.0, random_state=1, **paper)
    assert m0.weight_sensitivity_ == 0.0 and m0.sensitivity_ == pytest.approx(60.0 / 50.0)
    assert m1.weight_sensitivity_ == 12.0 and m1.sensitivity_ == pytest.approx(72.0 / 50.0)
    with pytest.raises(ValueError, match="weight_sensitivity must be in"):
        fit_rule(d.X, d.treatment, d.benefit, p, epsilon=1.0, gamma=50.0, weights_upper_bound=30.0,
                 feature_bounds=d.feature_bounds, weight_sensitivity=-1.0)


def test_same_seed_same_analysis_and_results_differ_without_seed(cyp):
    a, b = _run(cyp, random_state=7), _run(cyp, random_state=7)
    assert a.model_content == b.model_content and a.value.value == b.value.value
    c, d = _run(cyp, random_state=None), _run(cyp, random_state=None)
    assert c.value.value.estimate != d.value.value.estimate


def test_a_fixed_split_is_used_as_given(cyp):
    ev = np.arange(0, 1000, 4)
    res = _run(cyp, evaluation_rows=ev)
    assert res.n_evaluation == 250 and res.n_learning == 750
    with pytest.raises(ValueError, match="evaluation_rows must be distinct row indices"):
        _run(cyp, evaluation_rows=[0, 0, 1])
    with pytest.raises(ValueError, match="evaluation_rows must be distinct row indices"):
        _run(cyp, evaluation_rows=[5, 1000])


def _leaves(obj, seen=None):
    seen = set() if seen is None else seen
    if id(obj) in seen:
        return
    seen.add(id(obj))
    yield obj
    if isinstance(obj, dict):
        for v in obj.values():
            yield from _leaves(v, seen)
    elif isinstance(obj, (list, tuple)):
        for v in obj:
            yield from _leaves(v, seen)
    elif hasattr(obj, "__dict__") and not isinstance(obj, type):
        for v in vars(obj).values():
            yield from _leaves(v, seen)


@pytest.mark.parametrize("kw", [dict(), dict(propensity=None, propensity_model="logistic")])
def test_result_holds_no_generator_and_no_training_rows(cyp, kw):
    # a live generator can be rewound to regenerate the noise (docs/privacy_audit.md): the result must not keep one
    import pickle

    res = _run(cyp, random_state=np.random.default_rng(5), **kw)
    for leaf in _leaves(res):
        assert not isinstance(leaf, np.random.Generator), "the result keeps a random generator"
        if isinstance(leaf, np.ndarray):
            assert cyp.n not in leaf.shape and res.n_evaluation not in leaf.shape and res.n_learning not in leaf.shape
    blob = pickle.dumps(res)
    assert pickle.loads(blob).value.value == res.value.value


def test_a_loose_weight_bound_is_tightened_to_the_public_maximum_weight(cyp):
    # (U - L) / min(P, 1 - P) = log(8760) / (1/3): any larger W only adds noise
    res = _run(cyp, weights_upper_bound=1000.0, gamma=75.0, mechanism="output", residual=False)
    assert res.model_content["weights_upper_bound"] == pytest.approx(LOG_YEAR * 3)
    assert res.model.sensitivity_ == pytest.approx(2 * LOG_YEAR * 3 / 75.0)
    tight = _run(cyp, weights_upper_bound=10.0, gamma=75.0)
    assert tight.model_content["weights_upper_bound"] == 10.0


def test_a_lowered_weight_bound_is_said_in_the_result_the_report_and_the_json(cyp, tmp_path):
    """Nothing is changed silently: the W given and the W used are both kept and every output states them."""
    from pydpowl.analysis_output import write_analysis

    used = LOG_YEAR * 3  # (U - L) / min(P, 1 - P), both public
    res = _run(cyp, weights_upper_bound=1000.0, gamma=75.0, mechanism="output", residual=False)
    assert res.weights_upper_bound_given == 1000.0 and res.weights_upper_bound_used == pytest.approx(used)
    line = (f"weights_upper_bound: 1000 given; {used:.6g} used = (U - L) / smallest public propensity (the weights "
            "cannot exceed it)")
    assert res.weight_bound_note == line
    assert res.to_dict()["weights_upper_bound"] == {"given": 1000.0, "used": res.weights_upper_bound_used,
                                                    "note": line}
    write_analysis(res, tmp_path)
    assert line in (tmp_path / "report.md").read_text()
    assert json.loads((tmp_path / "ledger.json").read_text())["weights_upper_bound"]["note"] == line
    kept = _run(cyp, weights_upper_bound=10.0, gamma=75.0)
    assert (kept.weights_upper_bound_given, kept.weights_upper_bound_used) == (10.0, 10.0)
    assert kept.weight_bound_note == "weights_upper_bound: 10 given and used"


def test_bounds_by_name_are_matched_to_the_columns(cyp):
    """Issue 22.1: a dict of bounds in another order than X's columns gives the analysis of positional bounds."""
    named = {c: (lo, hi) for c, lo, hi in reversed(list(zip(cyp.X.columns, *cyp.feature_bounds)))}
    a, b = _run(cyp, random_state=7), _run(cyp, random_state=7, feature_bounds=named)
    assert a.model_content == b.model_content and a.value.value == b.value.value


@pytest.mark.parametrize("split, kw, match", [
    ("propensity=0.5", {}, r"budget split's propensity=0.5 .* would be ignored: the propensity is known"),
    ("selection=0.3", dict(gamma=75.0), r"budget split's selection=0.3 .* would be ignored: gamma is fixed"),
])
def test_a_share_no_release_uses_is_refused(cyp, split, kw, match):
    """Issue 22.5: --budget-split propensity=0.5 with a known propensity was ignored silently."""
    with pytest.raises(ValueError, match=match):
        _run(cyp, split=BudgetSplit.parse(split), **kw)
    assert _run(cyp, split=BudgetSplit.parse(split), **(dict(gammas=DEFAULT_GAMMAS) if kw else dict(
        propensity=None, propensity_model="logistic"))).value


def test_public_n_must_be_a_bool_and_features_are_named_by_column(cyp):
    """public_n is checked (a string such as "no" would otherwise state n); non-finite features name their column."""
    with pytest.raises(TypeError, match=r"^public_n must be"):
        _run(cyp, public_n="no")
    X = cyp.X.to_numpy(dtype=float)
    X[2, 1] = np.inf
    with pytest.raises(ValueError, match=r"^X must be finite.* in column\(s\) 'male'"):
        run_analysis(X, cyp.treatment, cyp.benefit, feature_bounds=cyp.feature_bounds, benefit_bounds=(0.0, LOG_YEAR),
                     weights_upper_bound=cyp.weights_upper_bound, total_epsilon=1.0, propensity=2 / 3,
                     feature_names=list(cyp.X.columns))

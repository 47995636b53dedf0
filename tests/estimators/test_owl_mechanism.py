"""One private OWL rule (pydpowl.estimators.owl_mechanism): plans, refusals and DPOWL's releases."""

import math

import numpy as np
import pytest

from pydpowl import DPOWL, LogisticPropensity
from pydpowl.datasets import make_synthetic_owl
from pydpowl.engine.losses import HuberHingeLoss
from pydpowl.engine.mechanisms import release_weighted_objective
from pydpowl.estimators.owl import prepare_owl
from pydpowl.estimators.owl_defaults import default_gamma
from pydpowl.estimators.owl_mechanism import plan_rule
from pydpowl.estimators.residual import ResidualWeights, release_baseline, residual_problem

BOUNDS = (np.zeros(4), np.ones(4))
PLAN = dict(mechanism="auto", residual="auto", gamma="auto", huber_h="auto", epsilon=1.0, n_samples=1000, dim=5,
            weights_upper_bound=32.0, C=0.0, reproduce_dppack=False, benefit_range=16.0)


@pytest.fixture(scope="module")
def synth():
    return make_synthetic_owl(600, shift=None, random_state=3)


def test_known_propensities_get_the_studys_defaults():
    plan = plan_rule(**PLAN)
    assert plan.mechanism == "objective" and plan.residual == ResidualWeights() and plan.huber_h == 1.0
    assert plan.epsilon_baseline == pytest.approx(0.1) and plan.epsilon_rule == pytest.approx(0.9)
    assert plan.weights_upper_bound == 32.0 / 16.0 and plan.owl_weights_upper_bound == 32.0
    assert plan.gamma == default_gamma(perturbation="objective", n_samples=1000, epsilon=plan.epsilon_rule, dim=5,
                                       weights_upper_bound=2.0, huber_h=1.0)
    assert len(plan.reasons) == 4 and "residual weights" in plan.describe()


def test_weights_that_move_with_other_records_and_dppack_replays_keep_the_papers_mechanism():
    for change in (dict(C=3.0), dict(reproduce_dppack=True)):
        plan = plan_rule(**dict(PLAN, **change))
        assert (plan.mechanism, plan.residual, plan.huber_h) == ("output", None, 0.5)
        assert plan.epsilon_rule == 1.0 and plan.weights_upper_bound == 32.0
        assert plan.gamma == default_gamma(perturbation="output", n_samples=1000, epsilon=1.0, dim=5,
                                           weights_upper_bound=32.0, huber_h=0.5)
    assert plan_rule(**dict(PLAN, benefit_range=None)).residual is None  # no public range: plain weights
    assert plan_rule(**dict(PLAN, chunked=True)).residual is None


@pytest.mark.parametrize("change, message", [
    (dict(mechanism="objective", C=1.0), "C = 0"),
    (dict(mechanism="objective", reproduce_dppack=True), "DPpack has no objective"),
    (dict(residual=True, C=1.0), "residual weights cannot be used"),
    (dict(residual=True, benefit_range=None), "benefit's public range"),
    (dict(mechanism="laplace"), "mechanism"),
    (dict(residual="yes"), "residual must be"),
    (dict(gamma=-1.0), "gamma"),
])
def test_choices_without_a_proof_are_refused_with_the_reason(change, message):
    with pytest.raises(ValueError, match=message):
        plan_rule(**dict(PLAN, **change))


def test_default_dpowl_is_the_baseline_then_weighted_objective_perturbation(synth):
    """The release is the composition, in order, of the DP baseline and the weighted objective release."""
    W, lo, hi = 30.0, -7.5, 7.5
    model = DPOWL(epsilon=1.0, weights_upper_bound=W, feature_bounds=BOUNDS, benefit_bounds=(lo, hi),
                  random_state=11).fit(synth.X, synth.treatment, synth.benefit, 0.5)
    shifted = np.clip(synth.benefit, lo, hi) - lo
    problem = prepare_owl(synth.X, synth.treatment, shifted, 0.5, weights_upper_bound=W, feature_bounds=BOUNDS)
    rng = np.random.default_rng(11)
    base = release_baseline(shifted, benefit_bounds=(0.0, hi - lo), epsilon=0.1, rng=rng)
    res = residual_problem(synth.treatment, shifted, problem.propensity_received, baseline=base.value,
                           benefit_bounds=(0.0, hi - lo), weights_upper_bound=W, clip_share=1 / 16)
    gamma = default_gamma(perturbation="objective", n_samples=600, epsilon=0.9, dim=5, weights_upper_bound=W / 16,
                          huber_h=1.0)
    rel = release_weighted_objective(problem.Z, res.labels, res.weights, epsilon=0.9, gamma=gamma,
                                     weights_upper_bound=W / 16, loss=HuberHingeLoss(1.0), tol=1e-10, rng=rng)
    np.testing.assert_array_equal(model.scaled_coef_, rel.coef)
    assert model.baseline_ == base.value and model.gamma_ == gamma and model.ridge_ == rel.calibration.ridge
    assert (model.mechanism_, model.residual_, model.huber_h_) == ("objective", True, 1.0)
    assert math.isnan(model.sensitivity_) and model.rule_weights_upper_bound_ == W / 16
    assert model.n_clipped_benefits_ == int(np.count_nonzero((synth.benefit < lo) | (synth.benefit > hi)))
    assert model.n_clipped_residuals_ == res.n_clipped_residuals > 0
    assert "objective perturbation" in str(model.summary())
    # the bound the rule's noise is calibrated to is not the W given: the summary says so (nothing silent)
    assert (f"the rule's residual weights are bounded by W_r = W x 0.0625 = {W / 16:g} (rule_weights_upper_bound_; "
            f"weights_upper_bound W = {W:g} bounds the OWL weights)") in model.summary().notes


def test_paper_settings_and_dppack_replays_are_unchanged(synth):
    B = synth.benefit - synth.benefit.min()  # (only the identity of the two fits matters here)
    paper = DPOWL(epsilon=1.0, gamma=20.0, weights_upper_bound=30.0, feature_bounds=BOUNDS, huber_h=0.5,
                  mechanism="output", residual=False, random_state=4).fit(synth.X, synth.treatment, B, 0.5)
    with pytest.warns(Warning):
        replay = DPOWL(epsilon=1.0, gamma=20.0, weights_upper_bound=30.0, feature_bounds=BOUNDS,
                       reproduce_dppack=True, random_state=4).fit(synth.X, synth.treatment, B, 0.5)
    assert (replay.mechanism_, replay.residual_, replay.huber_h_) == ("output", False, 0.5)
    assert paper.sensitivity_ == pytest.approx(60.0 / 20.0, rel=1e-6)
    np.testing.assert_allclose(replay.scaled_coef_, paper.scaled_coef_, atol=paper.release_grid_)


def test_a_propensity_model_on_the_same_data_keeps_output_perturbation(synth):
    B = np.clip(synth.benefit, 0, 10)
    prop = LogisticPropensity(feature_bounds=BOUNDS, benefit_bound=10.0, ridge=1.0).fit(synth.X, synth.treatment)
    m = DPOWL(epsilon=1.0, weights_upper_bound=30.0, feature_bounds=BOUNDS, random_state=0).fit(
        synth.X, synth.treatment, B, prop)
    assert m.weight_sensitivity_ > 0 and (m.mechanism_, m.residual_) == ("output", False)
    with pytest.raises(ValueError, match="C = 0"):
        DPOWL(epsilon=1.0, weights_upper_bound=30.0, feature_bounds=BOUNDS, mechanism="objective").fit(
            synth.X, synth.treatment, B, prop)


def test_three_arms_use_dpowls_plan_objective_with_residual_weights_by_default():
    """Issue 25 (K-arm objective perturbation): K arms get two-arm DPOWL's plan; what has no proof is refused."""
    rng = np.random.default_rng(0)
    X = rng.uniform(0, 1, (300, 4))
    A = rng.choice(["a", "b", "c"], 300)
    B = rng.uniform(0, 2, 300)
    m = DPOWL(epsilon=1.0, weights_upper_bound=6.0, feature_bounds=BOUNDS, random_state=1).fit(X, A, B, 1 / 3)
    assert (m.mechanism_, m.residual_, m.huber_h_) == ("objective", True, 1.0) and m.gamma_ > 0
    assert m.rule_weights_upper_bound_ == 6.0 / 16 and m.epsilon_baseline_ == pytest.approx(0.1)
    assert 0.0 <= m.baseline_ <= 6.0 / 3  # the released mean of the benefits, range W min_a p_a = 2
    out = DPOWL(epsilon=1.0, weights_upper_bound=6.0, feature_bounds=BOUNDS, mechanism="output", residual=False,
                random_state=1).fit(X, A, B, 1 / 3)
    assert (out.mechanism_, out.residual_, out.huber_h_) == ("output", False, 0.5)
    # received-arm probabilities with a stated C > 0: output perturbation only, as for two arms
    P = np.full(300, 1 / 3)
    c = DPOWL(epsilon=1.0, weights_upper_bound=6.0, feature_bounds=BOUNDS, weight_sensitivity=0.5,
              random_state=1).fit(X, A, B, P)
    assert (c.mechanism_, c.residual_) == ("output", False)
    with pytest.raises(ValueError, match=r"^mechanism='objective' needs C = 0"):
        DPOWL(epsilon=1.0, weights_upper_bound=6.0, feature_bounds=BOUNDS, mechanism="objective",
              weight_sensitivity=0.5).fit(X, A, B, P)
    with pytest.raises(ValueError, match=r"^residual weights cannot be used here: the benefit's public range"):
        DPOWL(epsilon=1.0, weights_upper_bound=6.0, feature_bounds=BOUNDS, residual=True,
              weight_sensitivity=0.0).fit(X, A, B, P)

"""validation.audit.exact: the exact-law checks of the exponential mechanism pass, and can fail."""

import math

import numpy as np

from validation.audit import exact


def test_exponential_checks_pass():
    checks = exact.exponential_checks(depth=16)
    assert [c.passed for c in checks] == [True] * len(checks)
    assert any("replay" in c.config for c in checks) and "ratio inf" in checks[-1].detail


def test_the_replay_check_fails_when_no_delta_is_accounted(monkeypatch):
    """The inversion is not pure: with delta = 0 accounted the check flags it."""
    monkeypatch.setattr(exact, "exponential_mechanism_delta", lambda **kw: 0.0)
    assert not exact.exponential_checks(depth=12)[-1].passed


def test_the_exact_check_fails_for_a_sampler_twice_as_sharp(monkeypatch):
    """A mechanism calibrated for 2 eps while claiming eps (exponents doubled) is flagged."""
    real = exact._exponents
    monkeypatch.setattr(exact, "_exponents", lambda s, eps, sens: [2 * x for x in real(s, eps, sens)])
    assert not all(c.passed for c in exact.exponential_checks(depth=16)[:-1])


def test_inversion_law_sums_to_one():
    q = exact.inversion_law([0.0, -1.0, -3.0], 1.0, 1.0)
    assert math.isclose(q.sum(), 1.0, rel_tol=0, abs_tol=1e-15) and np.all(q > 0)


def test_value_rounding_check_passes_and_the_float_sum_would_fail():
    check = exact.value_rounding_check(n=600)
    assert check.passed and check.detail.startswith("0 of 600")
    assert int(check.detail.split("would differ in ")[1]) > 0  # the former rounding of fl(S + L) is caught


def test_r_stream_radius_check_passes():
    check = exact.r_stream_radius_check(n=5000)
    assert check.passed, check.detail


def test_policy_evaluation_grid_check_passes():
    check = exact.policy_evaluation_grid_check(n_releases=300)
    assert check.passed, check.detail


def test_kst_certificate_check_passes_and_catches_a_radius_below_the_proven_one(monkeypatch):
    check = exact.kst_certificate_check(n_releases=4)
    assert check.passed, check.detail
    import pydpowl.engine.mechanisms.objective as objective

    monkeypatch.setattr(objective, "ball_error_radius", lambda tol, mu, radius, curvature=None: 1e-3 * tol / mu)
    monkeypatch.setattr(objective, "linear_term_shift", lambda **kw: 0.0)
    assert not exact.kst_certificate_check(n_releases=4).passed
